"""Issue 41: a topic's protocol fields through both doors (``PUT``/``GET /topics/{t}/protocol``, ``reviewdepth topic
protocol``): entered once, read back, refused with the field named (422, or one line and exit 2), and printed by
the validation packet — each field "not recorded" when absent."""

from __future__ import annotations

import io
import json

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.report.validation_render import render_document
from reviewdepth.services.answers.report import ReportOptions
from reviewdepth.services.answers.validation import build_validation
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample

from .conftest import Api


def _topic(api: Api, tmp_path: object) -> None:
    from pathlib import Path

    run = Path(str(tmp_path)) / "run.txt"
    run.write_text("".join(f"t Q0 d{r} {r} {1000 - r} x\n" for r in range(1, 201)))
    import_run(api.engine, str(run))
    record_judgments(api.engine, "t", [(f"d{r}", "1" if r % 4 == 0 and r < 60 else "0") for r in range(1, 101)],
                     reviewer="rev")
    sample = draw_sample(api.engine, "t", 60, frame="unreviewed", seed=3)
    record_judgments(api.engine, "t", [(d, "0") for d in sample.doc_ids], reviewer="senior", role="sample")


def _pdf_text(content: bytes) -> str:
    from pypdf import PdfReader

    return " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(content)).pages).split())


def test_protocol_fields_through_the_api_and_into_the_packet(api: Api, tmp_path: object) -> None:
    _topic(api, tmp_path)
    empty = api.client.get("/topics/t/protocol", headers=api.writer)
    assert empty.status_code == 200 and empty.json()["recorded_at"] is None
    assert empty.json()["fields"] and not any(v is not None for v in empty.json()["fields"].values())
    before = build_validation(api.engine, "t", ReportOptions(targets=["0.8"]))
    flat = _pdf_text(render_document(before, "pdf"))
    for label in ("Workflow", "TAR platform", "Custodians", "Date range", "Acceptance criterion (agreed in advance)",
                  "Reviewer roster", "Validation sample coded blind", "Produced"):
        assert f"{label} not recorded" in flat, label

    body = {"workflow": "TAR 2.0", "platform": "Platform X", "model": "CAL", "version": "9.1",
            "custodians": ["ana", "bo"], "date_from": "2019-01-01", "date_to": "2020-06-30",
            "excluded_types": ["audio"], "processing_exceptions": "12 encrypted files", "duplicates_removed": 300,
            "threaded": 40, "acceptance": {"form": "elusion", "value": 0.02, "confidence": 0.95},
            "reviewers": [{"name": "senior", "role": "validation coder"}], "blind": True, "produced": 25,
            "withheld": 2}
    put = api.client.put("/topics/t/protocol", json=body, headers=api.writer)
    assert put.status_code == 200, put.text
    assert put.json()["fields"] == body and put.json()["recorded_by"] == "ana"
    assert api.client.get("/topics/t/protocol", headers=api.writer).json() == put.json()

    doc = build_validation(api.engine, "t", ReportOptions(targets=["0.8"]))
    assert doc.protocol_fields is not None and doc.protocol_fields.fields.as_fields() == body
    check = doc.acceptance
    assert check is not None and check.form == "elusion" and check.bound == doc.results.elusion_rate_upper
    assert check.bound is not None and check.met == (check.bound <= 0.02)
    flat = _pdf_text(render_document(doc, "pdf"))
    assert "Workflow TAR 2.0" in flat and "Custodians ana; bo" in flat and "Date range 2019-01-01 to 2020-06-30" in flat
    assert "Removed by de-duplication 300 documents" in flat and "Withheld (privilege) 2 documents" in flat
    assert "the upper 95 % bound of the elusion rate is at most 2 % of the discard pile" in flat
    assert ("Acceptance criterion, read against the evidence " + ("met" if check.met else "not met")) in flat

    # refused: the field named, 422; an unknown topic 404; a PUT replaces (left out: not recorded)
    bad = api.client.put("/topics/t/protocol", json={"workflow": "TAR 3"}, headers=api.writer)
    assert bad.status_code == 422 and "workflow" in bad.text
    bad = api.client.put("/topics/t/protocol", json={"date_from": "2020-13-01"}, headers=api.writer)
    assert bad.status_code == 422 and "date_from" in bad.text
    assert api.client.put("/topics/nope/protocol", json={}, headers=api.writer).status_code == 404
    assert api.client.put("/topics/t/protocol", json={"produced": 1}, headers=api.new_key("r", "read")
                          ).status_code == 403
    smaller = api.client.put("/topics/t/protocol", json={"produced": 30}, headers=api.writer)
    assert {k: v for k, v in smaller.json()["fields"].items() if v is not None} == {"produced": 30}


def test_protocol_fields_through_the_command_line(api: Api, tmp_path: object) -> None:
    _topic(api, tmp_path)
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str, str]:
        done = runner.invoke(create_cli(), ["topic", "protocol", "t", *args, "--db", api.url])
        return done.exit_code, done.stdout, done.stderr

    code, out, _ = run()
    assert code == 0 and "workflow: not recorded" in out and "acceptance: not recorded" in out
    code, out, err = run("--workflow", "linear", "--acceptance", "recall>=0.8@0.95", "--reviewer", "ana:lead",
                         "--custodian", "x", "--custodian", "y", "--not-blind", "--by", "counsel")
    assert code == 0, err
    assert "workflow: linear" in out and "custodians: x; y" in out and "blind: no" in out
    code, out, _ = run("--produced", "5", "--format", "json")  # the others are kept
    fields = json.loads(out)["fields"]
    assert fields["workflow"] == "linear" and fields["produced"] == 5
    assert fields["acceptance"] == {"form": "recall", "value": 0.8, "confidence": 0.95}
    code, out, _ = run("--clear", "produced", "--format", "json")
    assert "produced" not in json.loads(out)["fields"]
    for args, field in ((["--acceptance", "recall 0.8"], "acceptance"), (["--reviewer", "nobody"], "reviewers"),
                        (["--date-from", "2021-01-01", "--date-to", "2020-01-01"], "date_to"),
                        (["--duplicates-removed", "-1"], "duplicates_removed")):
        code, _, err = run(*args)
        assert code == 2 and err.count("\n") == 1 and field in err and "Traceback" not in err, (args, err)


def test_methods_route_gives_the_command_s_text(api: Api, tmp_path: object) -> None:
    _topic(api, tmp_path)
    for style in ("prisma", "raise", "protocol"):
        got = api.client.get(f"/topics/t/methods?style={style}&target=0.8", headers=api.writer)
        assert got.status_code == 200 and got.headers["content-type"].startswith("text/plain")
        done = CliRunner().invoke(create_cli(), ["methods", "t", "--style", style, "--target", "0.8", "--db",
                                                 api.url])
        assert done.exit_code == 0 and got.text == done.stdout
    data = api.client.get("/topics/t/methods?format=json&target=0.8", headers=api.writer).json()
    assert data["style"] == "prisma" and data["facts"] and all(f["source"] for f in data["facts"])
    assert api.client.get("/topics/t/methods?style=nope", headers=api.writer).status_code == 422
    assert api.client.get("/topics/nope/methods", headers=api.writer).status_code == 404
