"""PRISMA 2020 identification per source (issue 41, item 3): a systematic-review topic assembled from three
searches (MEDLINE and Embase RIS exports, a ClinicalTrials.gov register CSV; three works found twice), through the
CLI and the API, on SQLite and PostgreSQL. Each declared source adds its records to the topic's population; the
duplicates across sources are found by ``dedupe`` and removed before screening; ``prisma`` (table, JSON, SVG), the
API's prisma route and the report's prisma section show the same per-source counts, which add up. A bad source is
one line naming the option (exit 2) or a 4xx problem, and the database is left as it was."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.store.models import ImportRecord, Judgment, Queue, QueueEntry, RecordFields, Topic

from .conftest import Api
from .test_auth_and_errors import problem

SOURCES = Path(__file__).resolve().parents[1] / "data" / "screening" / "sources"
SVG = "{http://www.w3.org/2000/svg}"
# the three searches: (file, --source-type, --source-name, records); the files share three works: Embase's L2001
# and L2002 are MEDLINE's 31000002 and 31000004 (same DOI), the register's NCT05000001 is Embase's L2004 (same
# title, year and first author, neither with a DOI)
SEARCHES = (("medline.ris", "database", "MEDLINE", 5), ("embase.ris", "database", "Embase", 4),
            ("clinicaltrials.csv", "register", "ClinicalTrials.gov", 3))
SHARED = 3


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def state(engine: Engine) -> tuple[object, ...]:
    """Every row an import writes, and the population sizes."""
    with engine.connect() as conn:
        counts = tuple(conn.execute(select(func.count()).select_from(t)).scalar_one()
                       for t in (Topic, Queue, QueueEntry, Judgment, ImportRecord, RecordFields))
        sizes = tuple(conn.execute(select(Topic.name, Topic.population_size).order_by(Topic.name)).all())
    return counts, sizes


def import_args(file: str, source_type: str, source_name: str) -> list[str]:
    command = "ris" if file.endswith(".ris") else "records"
    return ["import", command, str(SOURCES / file), "--topic", "lbp", "--source-type", source_type,
            "--source-name", source_name]


def assemble_by_cli(url: str) -> list[str]:
    """The three searches imported, then the duplicates flagged; the lines the imports printed."""
    lines = []
    for file, source_type, source_name, _ in SEARCHES:
        code, out, err = invoke(*import_args(file, source_type, source_name), "--db", url)
        assert code == 0, err
        lines.append(out.strip())
    code, _, err = invoke("dedupe", "lbp", "--queue", "MEDLINE", "--apply", "--reviewer", "ana", "--db", url)
    assert code == 0, err
    return lines


def expected_identification() -> dict[str, object]:
    total = sum(n for *_, n in SEARCHES)
    return {"identified": total, "identified_source": "topic population",
            "identified_per_source": {f"{t}: {name}": n for _, t, name, n in SEARCHES},
            "identified_from_databases": sum(n for _, t, _, n in SEARCHES if t == "database"),
            "identified_from_registers": sum(n for _, t, _, n in SEARCHES if t == "register"),
            "identified_from_other_methods": 0, "identified_source_not_recorded": 0,
            "duplicates_removed": SHARED, "after_duplicates_removed": total - SHARED, "arithmetic_problems": []}


def svg_fields(svg: str) -> dict[str, int]:
    """Each number the diagram shows by the JSON field it names (each field one value); a digit outside a count
    element (a source's name aside) fails."""
    found: dict[str, set[int]] = {}
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        if group.get("class") != "box":
            continue
        for text in group.iter(f"{SVG}text"):
            rest = text.text or ""
            for span in text.iter(f"{SVG}tspan"):
                if span.get("class") == "count":
                    found.setdefault(span.get("data-field") or "", set()).add(int((span.text or "").replace(",", "")))
                rest += span.tail or ""
            assert not re.search(r"[0-9]", rest), rest
    assert all(len(v) == 1 for v in found.values()), found
    return {k: v.pop() for k, v in found.items()}


def test_three_searches_make_one_population_counted_per_source_at_every_door(api: Api) -> None:
    lines = assemble_by_cli(api.url)
    # each search added its records to the one population, in a queue named after it
    assert [re.match(r"added (\d+) records? from (\w+) '([^']+)' to the population of topic 'lbp' \(now (\d+)\) "
                     r"\(queue '([^']+)'", line).groups() for line in lines] == [  # type: ignore[union-attr]
        ("5", "database", "MEDLINE", "5", "MEDLINE"), ("4", "database", "Embase", "9", "Embase"),
        ("3", "register", "ClinicalTrials.gov", "12", "ClinicalTrials.gov")]
    db = ("--db", api.url)
    code, out, err = invoke("prisma", "lbp", "--queue", "MEDLINE", "--format", "json", *db)
    assert code == 0, err
    data = json.loads(out)
    want = expected_identification()
    assert {k: data[k] for k in want} == want
    assert data["not_screened_review_stopped"] == data["after_duplicates_removed"]  # no one has screened yet
    # the identification is the topic's, whichever queue is read
    for queue in ("Embase", "ClinicalTrials.gov"):
        other = json.loads(invoke("prisma", "lbp", "--queue", queue, "--format", "json", *db)[1])
        assert {k: other[k] for k in want} == want

    # the table prints the same numbers, the sources in import order
    table = dict(line.split("\t") for line in invoke("prisma", "lbp", "--queue", "MEDLINE", *db)[1].splitlines())
    assert table["identified per source"] == ("database: MEDLINE: 5, database: Embase: 4, "
                                              "register: ClinicalTrials.gov: 3")
    assert (table["identified from databases"], table["identified from registers"],
            table["identified source not recorded"], table["arithmetic problems"]) == ("9", "3", "0", "none")

    # the diagram: every number is the JSON field it names, each source under its type
    code, svg, err = invoke("prisma", "lbp", "--queue", "MEDLINE", "--format", "svg", *db)
    assert code == 0, err
    shown = svg_fields(svg)
    for field, value in shown.items():
        name, _, key = field.partition(".")
        assert value == (data[name][key] if key else data[name]), field
    assert {f for f in shown if f.startswith("identified")} == {
        "identified", "identified_from_databases", "identified_from_registers", "identified_from_other_methods",
        "identified_per_source.database: MEDLINE", "identified_per_source.database: Embase",
        "identified_per_source.register: ClinicalTrials.gov"}
    box = next(g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("data-box") == "identified")
    words = [" ".join("".join(t.itertext()).split()) for t in box.iter(f"{SVG}text")]
    assert words[1:8] == ["n = 12", "from databases: 9", "MEDLINE (n = 5)", "Embase (n = 4)", "from registers: 3",
                          "ClinicalTrials.gov (n = 3)", "from other methods: 0"]

    # the report's prisma section and the API's prisma route are the same counts
    code, report, err = invoke("report", "lbp", "--queue", "MEDLINE", "--format", "json", *db)
    assert code == 0, err
    assert json.loads(report)["prisma"] == data
    reader = api.new_key("ana", "read")
    served = api.client.get("/topics/lbp/prisma", params={"queue": "MEDLINE"}, headers=reader)
    assert served.status_code == 200 and served.content.decode() == out
    # the report's CSV rows (its table and HTML page share them)
    code, report_csv, err = invoke("report", "lbp", "--queue", "MEDLINE", "--format", "csv", *db)
    assert code == 0, err
    rows = {row[1]: row[3] for row in csv.reader(io.StringIO(report_csv)) if row[0] == "prisma"}
    assert {k: int(v) for k, v in rows.items() if k.startswith("identified_per_source.")} == {
        f"identified_per_source.{k}": v for k, v in want["identified_per_source"].items()}  # type: ignore[attr-defined]
    assert rows["identified_from_databases"] == "9" and rows["identified_source_not_recorded"] == "0"
    # the methods text's flow footnote, each number a fact naming its field of the report
    code, methods, err = invoke("methods", "lbp", "--queue", "MEDLINE", "--format", "json", *db)
    assert code == 0, err
    facts = {fact["source"]: fact["value"] for fact in json.loads(methods)["facts"]}
    assert {k: facts[f"report:prisma.{k}"] for k in ("identified_from_databases", "identified_from_registers",
                                                      "identified_from_other_methods")} == {
        k: data[k] for k in ("identified_from_databases", "identified_from_registers", "identified_from_other_methods")}
    assert "Of 12 records identified (from databases 9, registers 3, other methods 0)," in invoke(
        "methods", "lbp", "--queue", "MEDLINE", *db)[1]


def test_the_api_imports_declare_their_source_as_the_cli_does(api: Api) -> None:
    ana = api.writer
    for file, source_type, source_name, records in SEARCHES:
        route = "ris" if file.endswith(".ris") else "records"
        r = api.client.post(f"/topics/lbp/imports/{route}", content=(SOURCES / file).read_bytes(),
                            params={"source_type": source_type, "source_name": source_name},
                            headers={**ana, "Content-Type": "application/octet-stream" if route == "ris" else
                                     "text/csv"})
        assert r.status_code == 201, r.text
        body = r.json()
        assert (body["rows"], body["source_type"], body["source_name"], body["queues"]) == (
            records, source_type, source_name, [source_name])
    assert body["population_size"] == sum(n for *_, n in SEARCHES)
    code, _, err = invoke("dedupe", "lbp", "--queue", "MEDLINE", "--apply", "--reviewer", "ana", "--db", api.url)
    assert code == 0, err
    data = api.client.get("/topics/lbp/prisma", params={"queue": "Embase"}, headers=ana).json()
    want = expected_identification()
    assert {k: data[k] for k in want} == want


def test_a_bad_source_is_one_line_or_a_problem_and_changes_nothing(api: Api) -> None:
    db = ("--db", api.url)
    code, _, err = invoke(*import_args("medline.ris", "database", "MEDLINE"), *db)
    assert code == 0, err
    before = state(api.engine)

    def refused(args: list[str], *words: str) -> None:
        code, out, err = invoke(*args, *db)
        assert (code, out) == (2, ""), (code, out, err)
        assert err.count("\n") == 1 and err.startswith("reviewdepth: error: "), err
        assert all(w in err for w in words), err
        assert state(api.engine) == before

    embase = str(SOURCES / "embase.ris")
    # an unknown source type, named with the option and the three it may be
    refused(import_args("embase.ris", "journal", "Embase"), "--source-type", "'journal'", "database, register or other")
    # half a source
    refused(["import", "ris", embase, "--topic", "lbp", "--source-type", "database"], "--source-name")
    refused(["import", "ris", embase, "--topic", "lbp", "--source-name", "Embase"], "--source-type")
    # a file without a source would replace the population the sources' counts describe
    refused(["import", "ris", embase, "--topic", "lbp", "--queue", "embase"], "--source-type", "database: MEDLINE")
    # so would a screening tool's export, which declares no source
    refused(["import", "rayyan", str(SOURCES.parent / "rayyan_articles.csv"), "--topic", "lbp"],
            "assembled from declared sources", "would replace its population")
    # the same record ids again: refused at the record's line
    refused([*import_args("medline.ris", "database", "MEDLINE again"), "--again"], "medline.ris:1:", "'31000001'",
            "MEDLINE")

    ana = api.writer
    for params, field in (({"source_type": "journal", "source_name": "Embase"}, "source_type"),
                          ({"source_type": "database"}, "--source-name")):
        body = problem(api.client.post("/topics/lbp/imports/ris", content=(SOURCES / "embase.ris").read_bytes(),
                                       params=params, headers={**ana, "Content-Type": "text/plain"}), 422)
        assert field in json.dumps(body)
        assert state(api.engine) == before


def test_records_of_no_declared_source_are_counted_as_not_recorded(api: Api) -> None:
    db = ("--db", api.url)
    labelled = Path(__file__).resolve().parents[1] / "data" / "screening" / "labelled.ris"
    code, _, err = invoke("import", "ris", str(labelled), "--topic", "lbp", *db)
    assert code == 0, err
    before = json.loads(invoke("prisma", "lbp", "--format", "json", *db)[1])
    # no source declared: the three boxes are not recorded
    assert before["identified_per_source"] == {} and before["identified_source_not_recorded"] is None
    assert before["identified_from_databases"] is None and before["arithmetic_problems"] == []
    svg = invoke("prisma", "lbp", "--format", "svg", *db)[1]
    assert "from databases: not recorded" in svg and "from registers: not recorded" in svg
    code, _, err = invoke(*import_args("medline.ris", "database", "MEDLINE"), *db)
    assert code == 0, err
    data = json.loads(invoke("prisma", "lbp", "--queue", "MEDLINE", "--format", "json", *db)[1])
    assert (data["identified"], data["identified_per_source"], data["identified_from_databases"],
            data["identified_from_registers"], data["identified_source_not_recorded"],
            data["arithmetic_problems"]) == (before["identified"] + 5, {"database: MEDLINE": 5}, 5, 0,
                                             before["identified"], [])
    svg = invoke("prisma", "lbp", "--queue", "MEDLINE", "--format", "svg", *db)[1]
    assert svg_fields(svg)["identified_source_not_recorded"] == before["identified"]
