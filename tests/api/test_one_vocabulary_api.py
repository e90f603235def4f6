"""Issue 39, item 4, through the API: ``GET /topics/{t}/prisma`` takes the report's label policy by default
(``latest``), so its counts are the report's PRISMA section; a header-only CSV is refused by ``imports/csv`` with a
problem body naming the file, as by ``judge --file``, and nothing is stored."""

from __future__ import annotations

from sqlalchemy import func, select

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.judgments import record_judgment
from reviewdepth.store.models import ImportRecord, Judgment
from tests.api.conftest import Api


def test_prisma_takes_the_reports_policy_and_a_header_only_file_is_refused(api: Api) -> None:
    create_topic(api.engine, "t")
    store_ranking(api.engine, "t", "q", [RankedDocument(f"d{i}") for i in range(4)])
    # a title-abstract conflict adjudicated "include", then excluded at full text: excluded, as its final decision
    record_judgment(api.engine, "t", "d0", "include", reviewer="ana")
    record_judgment(api.engine, "t", "d0", "exclude", reviewer="bo")
    record_judgment(api.engine, "t", "d0", "include", reviewer="cy", role="adjudication")
    record_judgment(api.engine, "t", "d0", "exclude", reviewer="ana", stage="full-text")
    reader = api.new_key("ana", "read")
    prisma = api.client.get("/topics/t/prisma", headers=reader)
    report = api.client.get("/topics/t/report", headers=reader)
    assert prisma.status_code == report.status_code == 200, (prisma.text, report.text)
    in_report = report.json()["prisma"]
    assert prisma.json()["label_policy"] == in_report["label_policy"] == "latest"
    assert prisma.json()["included"] == in_report["included"] == 0

    def stored() -> tuple[int, int]:
        with api.engine.connect() as conn:
            return (conn.execute(select(func.count()).select_from(Judgment)).scalar_one(),
                    conn.execute(select(func.count()).select_from(ImportRecord)).scalar_one())

    before = stored()
    refused = api.client.post("/topics/t/imports/csv", content=b"doc,label\n",
                              headers={**api.writer, "Content-Type": "text/csv"})
    assert 400 <= refused.status_code < 500, refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert "no rows" in refused.json()["detail"]
    assert stored() == before
