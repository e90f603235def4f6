"""``GET /topics``, ``GET /topics/{topic}`` and ``GET /topics/{topic}/queues`` on SQLite and PostgreSQL: the rows
of the services that ``reviewdepth topics`` and ``queue list`` print."""

from __future__ import annotations

from reviewdepth.services.admin.topics import create_topic, list_topics
from reviewdepth.services.answers.monitor import build_monitor
from reviewdepth.services.answers.queues import list_queues
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch

from .conftest import Api
from .test_auth_and_errors import problem


def test_topic_and_queue_rows(api: Api) -> None:
    create_topic(api.engine, "T")
    create_topic(api.engine, "empty")
    for queue in ("q1", "q2"):
        store_ranking(api.engine, "T", queue, [RankedDocument(f"d{i}") for i in range(8)])
    record_batch(api.engine, "T", [BatchItem("d0", "1"), BatchItem("d1", "0"), BatchItem("d3", "1")],
                 reviewer="ana", source="test")
    reader = api.new_key("rita", "read")
    body = api.client.get("/topics?status=false", headers=reader).json()
    assert body == {"topics": [t.as_dict() for t in list_topics(api.engine)]}
    t = body["topics"][0]
    assert (t["queues"], t["newest_queue"], t["queue_size"], t["reviewed"], t["relevant_found_in_reviewed"],
            t["judgments"]) == (["q1", "q2"], "q2", 8, 3, 2, 3)  # d3 reviewed out of order counts (issue 25)
    assert api.client.get("/topics?offset=1", headers=reader).json()["topics"][0]["name"] == "empty"
    # the status comes by default, as `reviewdepth topics` prints it (issue 39: it was null unless asked for)
    assert api.client.get("/topics", headers=reader).json() == api.client.get("/topics?status=true",
                                                                             headers=reader).json()
    answer = api.client.get("/topics", headers=reader)
    assert answer.status_code == 200, answer.text
    with_status = answer.json()["topics"]
    assert [(t["name"], t["status"]) for t in with_status] == [("T", "unknown"), ("empty", "no queue")]
    assert with_status[0]["status_text"] == build_monitor(api.engine, "T").topic_status.text
    assert t["status"] is None  # left out when asked to (status=false)
    many = [create_topic(api.engine, f"x{i:03d}") for i in range(205)]
    assert len(api.client.get("/topics?status=true&limit=1000", headers=reader).json()["topics"]) == 200
    assert len(api.client.get("/topics?status=false&limit=1000", headers=reader).json()["topics"]) == len(many) + 2
    assert api.client.get("/topics/T?status=false", headers=reader).json() == t
    assert api.client.get("/topics/T", headers=reader).json() == with_status[0]
    queues = api.client.get("/topics/T/queues", headers=reader).json()
    assert queues == {"queues": [q.as_dict() for q in list_queues(api.engine, "T")]}
    assert [(q["name"], q["newest"]) for q in queues["queues"]] == [("q1", False), ("q2", True)]
    assert api.client.get("/topics/empty/queues", headers=reader).json() == {"queues": []}
    problem(api.client.get("/topics/nope/queues", headers=reader), 404, "unknown topic 'nope'")
