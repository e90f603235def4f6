"""The PRISMA 2020 flow diagram through the doors (issue 28, item 1): SYNERGY's ADHD review (Cohen 2006, 851
records) ranked in a random order and dual-screened down to a stop, with conflicts adjudicated; `reviewdepth
prisma --format svg|png|html` and ``GET /topics/{t}/prisma?format=…`` show the numbers of `prisma --format json`,
which are recounted here from the SYNERGY labels; bad topics and formats are refused in one line / a problem."""

from __future__ import annotations

import csv
import gzip
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from tests.api.conftest import Api
from tests.conftest import shared_data

SVG = "{http://www.w3.org/2000/svg}"
STOP = 300  # the team screens ranks 1..300 of the random ranking, then stops


def screen_adhd(engine: Engine) -> dict[str, int]:
    """ADHD ranked in a random order (seed 28), ranks 1..STOP screened by ana and ben; ben flips every 40th
    decision, carol adjudicates those conflicts back to the SYNERGY label. Returns the counts recounted from the
    labels."""
    with gzip.open(shared_data("synergy", "Cohen_2006_ADHD_ids.csv.gz"), "rt") as source:
        rows = list(csv.DictReader(source))
    truth = {r["pmid"].rsplit("/", 1)[-1]: r["label_included"] for r in rows}
    docs = list(truth)
    order = [docs[i] for i in np.random.default_rng(28).permutation(len(docs))]
    create_topic(engine, "ADHD")
    store_ranking(engine, "ADHD", "random", [RankedDocument(d) for d in order])
    screened = order[:STOP]
    flipped = screened[::40]
    record_batch(engine, "ADHD", [BatchItem(d, truth[d]) for d in screened], reviewer="ana", source="test")
    ben = record_batch(engine, "ADHD", [BatchItem(d, str(1 - int(truth[d])) if d in flipped else truth[d])
                                        for d in screened], reviewer="ben", source="test")
    record_batch(engine, "ADHD", [BatchItem(d, truth[d], role="adjudication") for d in flipped], reviewer="carol",
                 source="test")
    included = sum(truth[d] == "1" for d in screened)
    # before carol, under the latest decision: ben's flips count
    included_before = sum((truth[d] == "1") != (d in flipped) for d in screened)
    return {"identified": len(docs), "screened": STOP, "included": included, "excluded_by_reviewers": STOP - included,
            "not_screened_review_stopped": len(docs) - STOP, "stopped_at_rank": STOP, "conflicts": len(flipped),
            "_included_before": included_before, "_ben_last": ben.ids[-1]}


def invoke(*args: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout_bytes, result.stderr


def svg_numbers(svg: bytes) -> dict[str, int]:
    """Each count of the diagram by the JSON field its element names (each field shows one value)."""
    root = ET.fromstring(svg)
    found: dict[str, set[int]] = {}
    for span in root.iter(f"{SVG}tspan"):
        if span.get("class") == "count":
            field = (span.get("data-field") or "").replace("reviewers_per_record.", "reviewers/")
            found.setdefault(field, set()).add(int((span.text or "").replace(",", "")))
    assert all(len(v) == 1 for v in found.values()), found
    return {k: v.pop() for k, v in found.items()}


def in_json(data: dict[str, object], field: str) -> object:
    name, _, key = field.partition("/")
    value = data["reviewers_per_record" if key else name]
    return value[key] if isinstance(value, dict) else value


def test_the_cli_diagram_shows_the_json_counts_of_a_synergy_review(api: Api, tmp_path: Path) -> None:
    expected = {k: v for k, v in screen_adhd(api.engine).items() if not k.startswith("_")}
    db = ("--db", api.url)
    code, out, err = invoke("prisma", "ADHD", "--format", "json", *db)
    assert code == 0, err
    data = json.loads(out)
    assert {k: data[k] for k in expected} == expected  # the JSON, recounted from SYNERGY's labels

    code, svg, err = invoke("prisma", "ADHD", "--format", "svg", *db)
    assert code == 0, err
    shown = svg_numbers(svg)
    assert shown == {k: in_json(data, k) for k in shown}
    assert set(shown) == {"identified", "screened", "included", "excluded_by_reviewers",
                          "not_screened_review_stopped", "stopped_at_rank", "reviewers/2", "conflicts",
                          "conflicts_resolved"}
    assert shown["reviewers/2"] == STOP and shown["conflicts"] == shown["conflicts_resolved"] == expected["conflicts"]
    assert invoke("prisma", "ADHD", "--format", "svg", *db)[1] == svg  # the same bytes again

    png = tmp_path / "adhd.png"
    code, _, err = invoke("prisma", "ADHD", "--format", "png", "-o", str(png), *db)
    assert code == 0 and err == f"wrote {png}\n"
    first = png.read_bytes()
    assert first.startswith(b"\x89PNG") and invoke("prisma", "ADHD", "--format", "png", *db)[1] == first

    code, html, err = invoke("prisma", "ADHD", "--format", "html", *db)
    assert code == 0 and svg.decode() in html.decode() and html.startswith(b"<!DOCTYPE html>")

    # the listing formats are what they were: csv still prints the JSON, the table one line per field
    assert invoke("prisma", "ADHD", "--format", "csv", *db)[1] == out
    code, table, _ = invoke("prisma", "ADHD", *db)
    assert code == 0 and table.decode().splitlines()[0] == f"identified\t{expected['identified']}"

    # refusals: one line, exit 2
    code, _, err = invoke("prisma", "NOPE", "--format", "svg", *db)
    assert code == 2 and err.count("\n") == 1 and err.startswith("reviewdepth: error: ") and "NOPE" in err
    code, _, err = invoke("prisma", "ADHD", "--format", "pdf", *db)
    errors = [line for line in err.splitlines() if line.startswith("Error")]
    assert code == 2 and len(errors) == 1 and "'--format'" in errors[0] and "svg" in errors[0]
    code, _, err = invoke("prisma", "ADHD", "--format", "json", "-o", str(tmp_path / "x.json"), *db)
    assert code == 2 and err.count("\n") == 1 and "-o/--output" in err and not (tmp_path / "x.json").exists()


def test_the_api_serves_the_counts_and_the_diagram(api: Api) -> None:
    truth = screen_adhd(api.engine)
    reader = api.new_key("ana", "read")
    code, out, _ = invoke("prisma", "ADHD", "--format", "json", "--db", api.url)
    assert code == 0
    as_json = api.client.get("/topics/ADHD/prisma", headers=reader)
    assert as_json.status_code == 200 and as_json.headers["content-type"] == "application/json"
    assert as_json.content == out  # the bytes of `prisma --format json`

    svg = api.client.get("/topics/ADHD/prisma", params={"format": "svg"}, headers=reader)
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    assert svg.content == invoke("prisma", "ADHD", "--format", "svg", "--db", api.url)[1]
    data = json.loads(out)
    assert svg_numbers(svg.content) == {k: in_json(data, k) for k in svg_numbers(svg.content)}
    png = api.client.get("/topics/ADHD/prisma", params={"format": "png"}, headers=reader)
    assert png.headers["content-type"] == "image/png" and png.content.startswith(b"\x89PNG")
    html = api.client.get("/topics/ADHD/prisma", params={"format": "html"}, headers=reader)
    assert html.headers["content-type"].startswith("text/html") and svg.text in html.text

    # the as-of point and the policy reach the diagram: before carol's adjudications, ben's latest decisions count
    before = api.client.get("/topics/ADHD/prisma", params={"format": "svg", "policy": "latest",
                                                             "as_of": truth["_ben_last"]}, headers=reader)
    shown = svg_numbers(before.content)
    assert shown["included"] == truth["_included_before"] != truth["included"]
    assert shown["excluded_by_reviewers"] == STOP - truth["_included_before"]

    for params, status, word in (({"format": "pdf"}, 422, "format"), ({"format": "svg"}, 404, "NOPE")):
        path = "/topics/NOPE/prisma" if status == 404 else "/topics/ADHD/prisma"
        response = api.client.get(path, params=params, headers=reader)
        assert response.status_code == status and response.headers["content-type"] == "application/problem+json"
        assert word in response.text and re.search(r'"detail"', response.text)
    assert api.client.get("/topics/ADHD/prisma").status_code == 401
