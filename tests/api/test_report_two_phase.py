"""``GET /topics/{t}/report?produce_to=RANK``: the report with its two-phase section, the bytes of `reviewdepth
report --produce-to RANK --format json`; without it the report has no ``two_phase`` key; a bad cutoff is a
problem body (issue 29)."""

from __future__ import annotations

import json

from reviewdepth.report.render import render
from reviewdepth.services.answers.report import ReportOptions, build_report
from tests.api.conftest import Api
from tests.api.test_validation_route import _topic


def test_the_report_route_takes_produce_to(api: Api) -> None:
    ana = _topic(api)
    answer = api.client.get("/topics/t/report", params={"format": "json", "produce_to": 40}, headers=ana)
    assert answer.status_code == 200, answer.text
    expected = render(build_report(api.engine, "t", ReportOptions(produce_to=40)), "json")
    assert answer.text == expected
    assert json.loads(answer.text)["two_phase"]["cutoff"] == 40
    plain = api.client.get("/topics/t/report", params={"format": "json"}, headers=ana)
    assert plain.status_code == 200 and "two_phase" not in plain.json()
    for params in ({"produce_to": 61}, {"produce_to": 0}):
        bad = api.client.get("/topics/t/report", params={"format": "json", **params}, headers=ana)
        assert 400 <= bad.status_code < 500, params
        assert bad.headers["content-type"].startswith("application/problem+json")
        assert "produce" in bad.text
