"""The report route renders through the one table of renderers (`reviewdepth.report.render.RENDERERS`)."""

from __future__ import annotations

from reviewdepth.report.render import render
from reviewdepth.services.answers.report import ReportOptions, build_report
from tests.api.conftest import Api


def test_the_report_route_answers_the_commands_bytes(api: Api) -> None:
    """``GET /topics/{t}/report`` renders through the same table as ``reviewdepth report --format``."""
    ana = api.writer
    assert api.client.post("/topics", json={"name": "t", "population_size": 100}, headers=ana).status_code == 201
    ranking = {"documents": [{"doc_id": f"d{i}", "score": 100.0 - i} for i in range(60)]}
    assert api.client.put("/topics/t/queues/q", json=ranking, headers=ana).status_code == 201
    judgments = [{"doc_id": f"d{i}", "label": "1" if i % 3 == 0 else "0"} for i in range(30)]
    assert api.client.post("/topics/t/judgments", json={"judgments": judgments}, headers=ana).status_code == 201
    report = build_report(api.engine, "t", ReportOptions())
    for fmt in ("json", "csv", "html"):
        answer = api.client.get("/topics/t/report", params={"format": fmt}, headers=ana)
        assert answer.status_code == 200 and answer.text == render(report, fmt), fmt
