"""Issue 28 item 4: the imports, exports and compare of the CLI over HTTP, on SQLite and PostgreSQL. Each import is
the CLI's service (same counts, same refusals: a bad line is a 422 naming the file, line and field, and leaves the
database as it was); each export is the bytes the CLI writes; a file imported, exported and imported again gives
the same judgments; compare answers what `reviewdepth compare --format json` prints."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.cli.app import create_cli
from reviewdepth.estimation.plural import counted
from reviewdepth.services.admin.keys import create_key
from reviewdepth.store.models import ImportRecord, Judgment, Queue, Topic, TopicReason

from .conftest import Api
from .test_auth_and_errors import problem

DATA = Path(__file__).resolve().parents[1] / "data"
SCREENING = DATA / "screening"
ARTICLES = SCREENING / "rayyan_articles.csv"
CSV = {"Content-Type": "text/csv"}
OCTETS = {"Content-Type": "application/octet-stream"}
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def state(engine: Engine) -> tuple[int, ...]:
    """Rows of every table an import writes."""
    with engine.connect() as conn:
        return tuple(conn.execute(select(func.count()).select_from(table)).scalar_one()
                     for table in (Topic, Queue, Judgment, ImportRecord, TopicReason))


def log(api: Api, topic: str) -> list[tuple[Any, ...]]:
    r = api.client.get(f"/topics/{topic}/judgments", headers=api.writer)
    assert r.status_code == 200, r.text
    return [(j["doc_id"], j["reviewer"], j["label"], j["decision"], j["reason"], j["note"], j["role"])
            for j in r.json()["judgments"]]


def cli(engine: Engine, *args: str) -> str:
    result = CliRunner().invoke(create_cli(), [*args, "--db", engine.url.render_as_string(hide_password=False)])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_csv_import_export_round_trip(api: Api) -> None:
    ana = api.writer
    csv = b"doc,label,reviewer\nd1,1,bob\nd2,0,bob\nd3,maybe,bob\nd4,,bob\n"
    mapped = {"allow_unqueued": "true", "map": "doc=doc,label=label,reviewer=reviewer"}
    r = api.client.post("/topics/A/imports/csv", content=csv, params=mapped, headers={**ana, **CSV})
    assert r.status_code == 201, r.text
    body = r.json()
    assert (body["rows"], body["stored"], body["unlabelled"], body["topics"], body["file"]) == (4, 3, 1, ["A"], "csv")
    assert log(api, "A") == [("d1", "bob", "1", "include", None, None, "review"),
                             ("d2", "bob", "0", "exclude", None, None, "review"),
                             ("d3", "bob", "maybe", "maybe", None, None, "review")]
    # the same bytes again: refused (409), nothing stored; again=true stores them once more
    before = state(api.engine)
    problem(api.client.post("/topics/A/imports/csv", content=csv, params=mapped, headers={**ana, **CSV}), 409,
            "already imported")
    assert state(api.engine) == before

    r = api.client.get("/topics/A/export", params={"format": "csv"}, headers=ana)
    assert r.status_code == 200 and r.headers["content-type"] == "text/csv; charset=utf-8"
    assert r.headers["content-disposition"] == "attachment; filename=\"A.labels.csv\"; filename*=UTF-8''A.labels.csv"
    exported = r.content
    assert exported == cli(api.engine, "export", "labels", "A", "--format", "csv").encode()
    # re-imported into another topic (the file's topic column says A: the path's topic must match it)
    problem(api.client.post("/topics/B/imports/csv", content=exported, headers={**ana, **CSV}), 422,
            "'A' is not --topic 'B'")
    renamed = exported.replace(b"\nA,", b"\nB,")
    r = api.client.post("/topics/B/imports/csv", content=renamed, params={"allow_unqueued": "true"},
                        headers={**ana, **CSV})
    assert r.status_code == 201, r.text
    again = api.client.get("/topics/B/export", params={"format": "csv"}, headers=ana).text
    # the labels (a maybe decides none: it is exported as unjudged, and an unjudged row is not a judgment)
    assert [row for row in again.splitlines() if not row.endswith(",")] == [
        row for row in renamed.decode().splitlines() if not row.endswith(",")] == ["topic,doc_id,label", "B,d1,1",
                                                                                   "B,d2,0"]


BAD_CSV = [  # (file, line, field, words of the detail)
    (b"doc,label\nd1,1\nd2,perhaps\n", 3, "label", "'perhaps'"),
    (b"doc,label\nd1,1\n,0\n", 3, "doc", "empty document id"),
    (b"doc,label\nd1,1\nd1,0\n", 3, "doc", "duplicate document"),
    (b"doc,label,kind\nd1,1,boss\n", 2, "kind", "role must be one of"),
    (b"doc,label\nd\x001,1\n", 2, "doc", "control character"),
]


def test_bad_csv_lines_are_422_naming_line_and_field_and_store_nothing(api: Api) -> None:
    before = state(api.engine)
    for text, line, field, words in BAD_CSV:
        body = problem(api.client.post("/topics/A/imports/csv", content=text, params={
            "allow_unqueued": "true", "map": "doc=doc,label=label" + (",role=kind" if b"kind" in text else "")},
            headers={**api.writer, **CSV}), 422, words)
        assert (body["file"], body["line"], body["field"]) == ("csv", line, field), body
        assert str(body["detail"]).startswith(f"csv:{line}: field {field}"), body
    # documents in no queue of the topic: refused unless allow_unqueued (the CLI's --allow-unqueued)
    problem(api.client.post("/topics/A/imports/csv", content=b"doc,label\nd1,1\n", headers={**api.writer, **CSV}),
            409, "has no queue")
    assert state(api.engine) == before


def test_rayyan_import_xlsx_export_and_reimport_give_the_same_judgments(api: Api) -> None:
    pytest.importorskip("openpyxl")
    ana = api.writer
    r = api.client.post("/topics/S/imports/rayyan", content=ARTICLES.read_bytes(), headers={**ana, **CSV})
    assert r.status_code == 201, r.text
    body = r.json()
    assert (body["rows"], body["stored"], body["maybe"], body["reviewers"], body["reasons"], body["unlabelled"]) == (
        5, 8, 2, 3, 2, 1)
    assert body["reasons_added"] == ["wrong population", "wrong outcome"]
    imported = log(api, "S")
    assert [(d, who, label, decision, reason) for d, who, label, decision, reason, _, _ in imported] == [
        ("r101", "Alice", "1", "include", None), ("r101", "Bob", "1", "include", None),
        ("r102", "Alice", "0", "exclude", "wrong population"), ("r102", "Bob", "maybe", "maybe", None),
        ("r102", "Chen Wei", "0", "exclude", "wrong population"), ("r104", "Bob", "0", "exclude", None),
        ("r104", "Alice", "1", "include", None), ("r105", "Chen Wei", "maybe", "maybe", None)]

    r = api.client.get("/topics/S/judgments/export", params={"format": "xlsx"}, headers=ana)
    assert r.status_code == 200 and r.headers["content-type"] == XLSX
    assert r.headers["content-disposition"].startswith('attachment; filename="S.judgments.xlsx"')
    book = r.content
    # a topic of the same articles (queue rayyan) and reasons, then the workbook: the same judgments
    assert api.client.post("/topics", json={"name": "T"}, headers=ana).status_code == 201
    docs = {"documents": [{"doc_id": f"r10{i}"} for i in range(1, 6)]}
    assert api.client.put("/topics/T/queues/rayyan", json=docs, headers=ana).status_code == 201
    assert api.client.patch("/topics/T/screening", json={"add_reasons": ["wrong population"]},
                            headers=ana).status_code == 200
    r = api.client.post("/topics/T/imports/xlsx", content=book, headers={**ana, "Content-Type": XLSX})
    assert r.status_code == 201, r.text
    assert r.json()["stored"] == 8 and r.json()["last_id"] - r.json()["first_id"] == 7
    assert log(api, "T") == imported


def test_bad_rayyan_and_xlsx_files_store_nothing(api: Api) -> None:
    pytest.importorskip("openpyxl")
    ana = api.writer
    text = ARTICLES.read_bytes()
    before = state(api.engine)
    bad = text.replace(b'""Bob""=>""Maybe""', b'""Bob""=>""Perhaps""', 1)
    body = problem(api.client.post("/topics/S/imports/rayyan", content=bad, headers={**ana, **CSV}), 422, "'Perhaps'")
    assert (body["file"], body["line"], body["field"]) == ("rayyan", 5, "notes")
    # add_reasons=false: a reason the topic does not list refuses the file at its article
    body = problem(api.client.post("/topics/S/imports/rayyan", content=text, params={"add_reasons": "false"},
                                   headers={**ana, **CSV}), 422, "'wrong population' is not an exclusion reason")
    assert (body["line"], body["field"]) == (5, "notes")
    assert state(api.engine) == before
    # a workbook with a bad row; one for a topic that does not exist
    from reviewdepth.formats.xlsx import write_xlsx

    assert api.client.post("/topics", json={"name": "T"}, headers=ana).status_code == 201
    before = state(api.engine)
    book = write_xlsx(("doc", "label"), [("d1", "1"), ("d2", "perhaps")])
    body = problem(api.client.post("/topics/T/imports/xlsx", content=book, params={"allow_unqueued": "true"},
                                   headers={**ana, "Content-Type": XLSX}), 422, "'perhaps'")
    assert (body["file"], body["line"], body["field"]) == ("xlsx", 3, "label")
    good = write_xlsx(("doc", "label"), [("d1", "1")])
    problem(api.client.post("/topics/nope/imports/xlsx", content=good, headers={**ana, **OCTETS}), 404, "nope")
    problem(api.client.post("/topics/T/imports/xlsx", content=b"PK\x03\x04 no workbook", headers={**ana, **OCTETS}),
            422, "not an Excel")
    assert state(api.engine) == before


def test_ris_import_export_round_trip(api: Api) -> None:
    pytest.importorskip("rispy")
    ana = api.writer
    r = api.client.post("/topics/A/imports/ris", content=(SCREENING / "labelled.ris").read_bytes(),
                        headers={**ana, "Content-Type": "application/x-research-info-systems"})
    assert r.status_code == 201, r.text
    assert (r.json()["rows"], r.json()["stored"], r.json()["queues"]) == (5, 3, ["records"])
    r = api.client.get("/topics/A/export", params={"format": "ris"}, headers=ana)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-research-info-systems")
    assert r.content == cli(api.engine, "export", "ris", "A").encode()
    r = api.client.post("/topics/B/imports/ris", content=r.content, headers={**ana, "Content-Type": "text/plain"})
    assert r.status_code == 201, r.text
    assert [row[:3] for row in log(api, "B")] == [row[:3] for row in log(api, "A")]
    before = state(api.engine)
    both = b"TY  - JOUR\nID  - x\nN1  - ASReview_relevant\nN1  - ASReview_irrelevant\nER  - \n"
    body = problem(api.client.post("/topics/C/imports/ris", content=both, headers={**ana, **OCTETS}), 422)
    assert (body["file"], body["line"], body["field"]) == ("ris", 1, "N1")
    assert state(api.engine) == before


def test_asreview_project_import_and_labels_round_trip(api: Api) -> None:
    ana = api.writer
    project = (DATA / "asreview" / "small.asreview").read_bytes()
    r = api.client.post("/topics/A/imports/asreview", content=gzip.compress(project),
                        params={"reviewer": "lab"}, headers={**ana, "Content-Type": "application/zip"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["topics"] == ["A"] and body["queues"] == ["asreview"] and body["stored"] >= body["labelled"] > 0
    assert body["file"] == "asreview" and body["kind"] == "asreview"
    # the same counts as the CLI's summary of the same file, in a topic of its own
    line = cli(api.engine, "import", "asreview", str(DATA / "asreview" / "small.asreview"), "--topic", "C",
               "--reviewer", "lab", "--again")
    assert f"stored {counted(body['stored'], 'judgment')} ({counted(body['labelled'], 'current decision')}, " \
           f"{body['relevant']:,} relevant; {counted(body['replaced'], 'replaced decision')})" in line
    # ASReview's CSV (export labels --format asreview) back in through imports/csv: the same labels
    exported = api.client.get("/topics/A/export", params={"format": "asreview"}, headers=ana)
    assert exported.status_code == 200 and exported.headers["content-disposition"].startswith(
        'attachment; filename="A.asreview.csv"')
    r = api.client.post("/topics/B/imports/csv", content=exported.content, params={"allow_unqueued": "true"},
                        headers={**ana, **CSV})
    assert r.status_code == 201, r.text

    def labels(topic: str) -> list[str]:
        text = api.client.get(f"/topics/{topic}/export", params={"format": "asreview"}, headers=ana).text
        return sorted(line for line in text.splitlines()[1:] if not line.endswith(","))

    assert labels("B") == labels("A") and labels("A")
    before = state(api.engine)
    damaged = project[: len(project) // 2]
    body = problem(api.client.post("/topics/D/imports/asreview", content=damaged, headers={**ana, **OCTETS}), 422)
    assert body["file"] == "asreview"
    problem(api.client.post("/topics/D/imports/asreview", content=b"", headers={**ana, **OCTETS}), 422, "empty")
    assert state(api.engine) == before


def test_covidence_lists_as_a_form(api: Api) -> None:
    folder = SCREENING / "covidence"
    files = {name: (path.name, path.read_bytes()) for name, path in (
        ("irrelevant", folder / "review_4242_irrelevant_csv_20260101120000.csv"),
        ("included", folder / "review_4242_included_csv_20260101120001.csv"),
        ("excluded", folder / "review_4242_excluded_csv_20260101120002.csv"),
        ("fulltext", folder / "review_4242_full_text_review_csv_20260101120003.csv"))}
    r = api.client.post("/topics/C/imports/covidence", files=files, headers=api.writer)
    assert r.status_code == 201, r.text
    body = r.json()
    assert (body["rows"], body["stored"], body["unlabelled"]) == (6, 4, 2)
    assert body["lists"] == {"irrelevant": 2, "included": 1, "excluded": 1, "fulltext": 2}
    before = state(api.engine)
    problem(api.client.post("/topics/D/imports/covidence", data={"level": "final"}, headers=api.writer), 422,
            "at least one list")
    problem(api.client.post("/topics/C/imports/covidence", files=files, headers=api.writer), 409, "already imported")
    assert state(api.engine) == before


def test_queue_export_reads_back_as_a_run(api: Api) -> None:
    ana = api.writer
    assert api.client.post("/topics", json={"name": "A"}, headers=ana).status_code == 201
    ranking = {"documents": [{"doc_id": f"d{i}", "score": 10.0 - i} for i in range(5)]}
    assert api.client.put("/topics/A/queues/q", json=ranking, headers=ana).status_code == 201
    r = api.client.get("/topics/A/queues/q/export", params={"format": "trec"}, headers=ana)
    assert r.status_code == 200 and r.headers["content-type"] == "text/plain; charset=utf-8"
    assert r.headers["content-disposition"].startswith('attachment; filename="A.q.trec.run"')
    assert r.text == cli(api.engine, "export", "queue", "A", "--queue", "q", "--format", "trec")
    back = api.client.put("/topics/A/queues/again", content=r.content, headers={**ana, "Content-Type": "text/plain"})
    assert back.status_code == 201 and back.json()["size"] == 5
    problem(api.client.get("/topics/A/queues/none/export", headers=ana), 404)


def test_export_names_a_unicode_topic(api: Api) -> None:
    ana = api.writer
    assert api.client.post("/topics", json={"name": "Ünï \"x\""}, headers=ana).status_code == 201
    r = api.client.get("/topics/Ünï \"x\"/export", params={"format": "overlay"}, headers=ana)
    assert r.status_code == 200, r.text
    assert r.headers["content-disposition"] == ("attachment; filename=\"_n___x_.overlay.csv\"; "
                                                "filename*=UTF-8''%C3%9Cn%C3%AF%20%22x%22.overlay.csv")
    problem(api.client.get("/topics/nope/export", headers=ana), 404)
    problem(api.client.get("/topics/nope/judgments/export", headers=ana), 404)
    problem(api.client.get("/topics/A/export", params={"format": "xlsx"}, headers=ana), 422, "format")


def test_scopes_media_types_and_sizes(api: Api) -> None:
    from reviewdepth.api.gate import TEXT_TYPES
    from reviewdepth.formats.importers import IMPORT_TYPES

    assert {t.encode() for t in IMPORT_TYPES} <= TEXT_TYPES  # every import body falls under the upload limit
    reader = api.new_key("rita", "read")
    problem(api.client.post("/topics/A/imports/csv", content=b"doc,label\nd1,1\n", headers={**reader, **CSV}), 403)
    problem(api.client.post("/topics/A/imports/csv", content=b"doc,label\nd1,1\n",
                            headers={**api.writer, "Content-Type": "application/json"}), 415, "text/csv")
    problem(api.client.post("/topics/A/imports/asreview", content=b"x", headers={**api.writer, **CSV}), 415)
    assert state(api.engine) == (0, 0, 0, 0, 0)


@pytest.fixture
def small(engine: Engine, empty_db_url: str) -> Iterator[TestClient]:
    app = create_app(ApiSettings(database_url=empty_db_url, max_import_bytes=2_000, max_decompressed_bytes=50_000))
    with TestClient(app) as client:
        client.headers.update({"Authorization": f"Bearer {create_key(engine, 'ana', 'write')[1]}"})
        yield client


def test_import_size_limits(small: TestClient, engine: Engine) -> None:
    exact = b"doc,label\n" + b"".join(b"d%03d,1\n" % i for i in range(284))
    exact += b"\n" * (2_000 - len(exact))
    assert len(exact) == 2_000
    r = small.post("/topics/A/imports/csv", content=exact, params={"allow_unqueued": "true"}, headers=CSV)
    assert r.status_code == 201, r.text
    problem(small.post("/topics/B/imports/csv", content=exact + b"\n", headers=CSV), 413, "2,000",
            "REVIEWDEPTH_MAX_IMPORT_BYTES")

    def chunked() -> Iterator[bytes]:
        yield exact
        yield b"\n"

    problem(small.post("/topics/B/imports/csv", content=chunked(), headers=CSV), 413, "2,000")
    problem(small.post("/topics/B/imports/csv", content=gzip.compress(exact + b"\n"), headers=CSV), 413, "2,000")
    # a zip whose members would decompress past the gunzip cap is refused before it is opened
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("results.db", bytes(60_000))
    assert len(packed.getvalue()) < 2_000
    problem(small.post("/topics/B/imports/asreview", content=packed.getvalue(), headers=OCTETS), 413,
            "REVIEWDEPTH_MAX_DECOMPRESSED_BYTES")
    big = {"included": ("i.csv", b"Covidence #\n" + b"#1\n" * 700)}
    problem(small.post("/topics/B/imports/covidence", files=big), 413, "2,000", "REVIEWDEPTH_MAX_IMPORT_BYTES")
    assert state(engine)[0] == 1


def test_compare_answers_what_the_cli_prints(api: Api, tmp_path: Path) -> None:
    reader = api.new_key("rita", "read")
    qrels, run_a, run_b = DATA / "seed" / "seed.qrels", DATA / "seed" / "seed.runA", DATA / "seed" / "seed.runB"
    files = [("qrels", (qrels.name, qrels.read_bytes())), ("run", (run_a.name, run_a.read_bytes())),
             ("run", (run_b.name, gzip.compress(run_b.read_bytes())))]
    for form, options in (({}, []), ({"test": "randomization", "permutations": "500", "seed": "3", "measure": "P_5"},
                                     ["--test", "randomization", "--permutations", "500", "--seed", "3", "-m", "P_5"]),
                          ({"suite": "tar"}, ["--suite", "tar"])):
        r = api.client.post("/compare", files=files, data=form, headers=reader)
        assert r.status_code == 200, r.text
        result = CliRunner().invoke(create_cli(), ["compare", str(qrels), str(run_a), str(run_b), "--format", "json",
                                                   *options])
        assert result.exit_code == 0, result.output
        expected = json.loads(result.stdout)
        expected["runs"] = [run_a.name, run_b.name]  # the CLI names runs by their files, as the API by uploads
        expected["cells"] = [{**c, "run": Path(c["run"]).name} for c in expected["cells"]]
        expected["baseline"] = run_a.name
        expected["method"] = expected["method"].replace(str(run_a), run_a.name)
        assert r.json() == expected
    problem(api.client.post("/compare", files=files[:2], headers=reader), 422, "at least two runs")
    problem(api.client.post("/compare", files=files, data={"measure": "nonsense"}, headers=reader), 422, "measure")
    problem(api.client.post("/compare", files=files, data={"compat": "clef2017"}, headers=reader), 422,
            "suite tar only")
    bad = [files[0], files[1], ("run", ("bad", b"1 Q0 d1 1 abc r\n"))]
    body = problem(api.client.post("/compare", files=bad, headers=reader), 422)
    assert body["file"] == "bad" and body["line"] == 1, body


def test_records_import_over_http(api: Api) -> None:
    """``imports/records`` is `reviewdepth import records`: ASReview's generic_labels.csv (its id column repeats)
    becomes the topic's population numbered from 0 with its labels; a label ASReview does not read is a 422
    naming file, line and field, and changes nothing."""
    ana = api.writer
    data = (DATA / "asreview" / "demo_data" / "generic_labels.csv").read_bytes()
    r = api.client.post("/topics/A/imports/records", content=data, headers={**ana, **CSV})
    assert r.status_code == 201, r.text
    body = r.json()
    assert (body["rows"], body["stored"], body["relevant"], body["id_source"], body["queues"]) == (
        6, 6, 3, "position", ["records"])
    assert "repeats '12345' at lines 2 and 3" in body["ids"]
    assert [row[:3] for row in log(api, "A")] == [(str(i), "asreview", str(1 - i % 2)) for i in range(6)]
    r = api.client.post("/topics/A2/imports/records", params={"ids": "id"}, content=data, headers={**ana, **CSV})
    body = problem(r, 422)
    assert (body["file"], body["line"], body["field"]) == ("records", 3, "id")
    before = state(api.engine)
    r = api.client.post("/topics/B/imports/records", content=b"title,label\nA,1\nB,perhaps\n",
                        headers={**ana, **OCTETS})
    body = problem(r, 422)
    assert (body["file"], body["line"], body["field"]) == ("records", 3, "label")
    r = api.client.post("/topics/B/imports/records", content=b"TY  - JOUR\nID  - a\nER  - \n",
                        headers={**ana, **OCTETS})
    assert "import ris" in problem(r, 422)["detail"]
    assert state(api.engine) == before
