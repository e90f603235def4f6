"""``GET /topics/{t}/validation`` answers the bytes of `reviewdepth validation` (issue 29, item 1), and bad input
a problem body."""

from __future__ import annotations

import io
import json

from reviewdepth.report.validation_render import render_document
from reviewdepth.services.answers.report import ReportOptions
from reviewdepth.services.answers.validation import build_validation
from tests.api.conftest import Api


def _topic(api: Api) -> dict[str, str]:
    """60 ranked documents, the first 30 judged, then a sample of 10 of the rest judged: every third relevant in
    the reviewed part, none in the sample."""
    ana = api.writer
    assert api.client.post("/topics", json={"name": "t", "population_size": 60}, headers=ana).status_code == 201
    ranking = {"documents": [{"doc_id": f"d{i}", "score": 100.0 - i} for i in range(60)]}
    assert api.client.put("/topics/t/queues/q", json=ranking, headers=ana).status_code == 201
    judgments = [{"doc_id": f"d{i}", "label": "1" if i % 3 == 0 else "0"} for i in range(30)]
    assert api.client.post("/topics/t/judgments", json={"judgments": judgments}, headers=ana).status_code == 201
    drawn = api.client.post("/topics/t/samples", json={"size": 10, "frame": "unreviewed", "seed": 3}, headers=ana)
    assert drawn.status_code == 201, drawn.text
    docs = [d["doc_id"] if isinstance(d, dict) else d for d in drawn.json()["documents"]]
    sampled = [{"doc_id": d, "label": "0", "role": "sample"} for d in docs]
    assert api.client.post("/topics/t/judgments", json={"judgments": sampled}, headers=ana).status_code == 201
    return ana


def test_the_route_answers_the_commands_bytes(api: Api) -> None:
    from pypdf import PdfReader

    ana = _topic(api)
    document = build_validation(api.engine, "t", ReportOptions(targets=["0.8"]))
    for fmt, media in (("pdf", "application/pdf"), ("html", "text/html"), ("json", "application/json")):
        answer = api.client.get("/topics/t/validation", params={"format": fmt, "target": "0.8"}, headers=ana)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith(media)
        assert answer.content == render_document(document, fmt), fmt
    data = json.loads(render_document(document, "json"))
    (sample,) = data["evidence"]["samples"]
    assert sample["seed"] == 3 and sample["coders"] == [{"reviewer": "ana", "documents": 10}]
    assert data["cutoff"]["rank"] == 30 and data["cutoff"]["discard_pile"] == 30
    text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(
        api.client.get("/topics/t/validation", params={"target": "0.8"}, headers=ana).content)).pages)
    assert "Validation of the stop decision: topic t, queue q" in text


def test_bad_input_is_a_problem_body(api: Api) -> None:
    ana = api.writer
    missing = api.client.get("/topics/nope/validation", headers=ana)
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("application/problem+json")
    assert "nope" in missing.json()["detail"]
    ana = _topic(api)
    for params in ({"target": "1"}, {"format": "docx"}, {"confidence": "2"}):
        answer = api.client.get("/topics/t/validation", params=params, headers=ana)
        assert answer.status_code == 422, params
        assert answer.headers["content-type"].startswith("application/problem+json")


def test_an_audit_stream_is_evidence_and_decides(api: Api) -> None:
    from pypdf import PdfReader

    from tests.api.test_confidence_domain import seed_topics

    seed_topics(api)  # topic T: 20 reviewed, a judged rest sample (seed 3), an audit stream (seed 0) 12 judged
    ana = api.writer
    document = json.loads(api.client.get("/topics/T/validation", params={"format": "json"}, headers=ana).content)
    report = api.client.get("/topics/T/report", params={"target": "0.95"}, headers=ana).json()
    (stream,) = document["evidence"]["audit_streams"]
    assert (stream["seed"], stream["pace"], stream["voided"]) == (0, "every 1", False)
    figure = next(f for f in report["answer"]["topic_status"]["figures"] if f["basis"] == "audit stream")
    assert stream["recall_lower"] == figure["recall_lower"] and stream["certifies"] == figure["certifies"]
    assert document["decision"]["decided_by"] == report["answer"]["topic_status"]["decided_by"]
    assert document["decision"]["status"] == report["answer"]["status"]
    assert [s["seed"] for s in document["evidence"]["samples"]] == [3]
    pdf = api.client.get("/topics/T/validation", headers=ana).content
    text = " ".join("".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages).split())
    assert f"{stream['id']} 0 every 1 {stream['population']} {stream['served']} {stream['created_at']} no" in text


def test_produce_to_adds_the_two_phase_section(api: Api) -> None:
    """The unreviewed-rest sample (frame: ranks 31..60) covers both strata of a cutoff at 40: one sample, its
    documents above and below the cutoff each a stratum sample."""
    ana = _topic(api)
    document = build_validation(api.engine, "t", ReportOptions(targets=["0.8"]), produce_to=40)
    answer = api.client.get("/topics/t/validation", params={"format": "json", "target": "0.8", "produce_to": 40},
                            headers=ana)
    assert answer.status_code == 200, answer.text
    assert answer.content == render_document(document, "json")
    section = json.loads(answer.content)["two_phase"]
    assert (section["cutoff"], section["coded"], section["coded_relevant"], section["uncoded_above"],
            section["discard_pile"]) == (40, 30, 10, 10, 20)
    found, eluded = section["found_uncoded"], section["eluded"]
    assert found["sample_id"] == eluded["sample_id"] is not None
    assert found["sample_size"] + eluded["sample_size"] == 10
    assert section["recall"] is not None and section["precision"] is not None
    for params in ({"produce_to": 61}, {"produce_to": 0}):
        bad = api.client.get("/topics/t/validation", params={"format": "json", **params}, headers=ana)
        assert 400 <= bad.status_code < 500, params
        assert bad.headers["content-type"].startswith("application/problem+json")
