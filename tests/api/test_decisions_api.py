"""Screening decisions through the API (issue 28): maybe, skip, reasons and stages on ``POST
/topics/{topic}/judgments`` (fast path and standard handler alike), the topic's reasons and conflict rule at
``/topics/{topic}/screening``, conflicts with maybes; bad input a 422/409 problem naming the field, nothing
recorded."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select

from reviewdepth.services.files.imports import import_run
from reviewdepth.store.models import Judgment, Topic, TopicReason

from .conftest import Api
from .test_auth_and_errors import problem


def _state(api: Api) -> tuple[object, ...]:
    with api.engine.connect() as conn:
        return (conn.execute(select(func.count()).select_from(Judgment)).scalar_one(),
                conn.execute(select(Topic.chain_head, Topic.conflict_rule)).all(),
                conn.execute(select(TopicReason.reason).order_by(TopicReason.id)).scalars().all())


def test_decisions_reasons_stages_and_rules(api: Api, tmp_path: Path) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i} {i} {9 - i} s\n" for i in range(1, 9)))
    import_run(api.engine, str(run))
    ana, bob, reader = api.new_key("ana", "write"), api.new_key("bob", "write"), api.new_key("rita", "read")
    settings = api.client.patch("/topics/T/screening", json={"add_reasons": ["wrong population"]}, headers=ana)
    assert settings.status_code == 200
    assert settings.json() == {"topic": "T", "reasons": ["wrong population"], "conflict_rule": "rayyan"}
    assert api.client.patch("/topics/T/screening", json={"conflict_rule": "strict"}, headers=reader).status_code == 403

    posted = api.client.post("/topics/T/judgments", json={"judgments": [
        {"doc_id": "d1", "label": "maybe"}, {"doc_id": "d2", "label": "skip"},
        {"doc_id": "d3", "label": "0", "reason": "wrong population", "stage": "full-text"},
        {"doc_id": "d4", "label": "exclude"}]}, headers=ana)
    assert posted.status_code == 201
    # a batch mixing a decision and a maybe (the row-by-row path; a plain batch goes as columns)
    assert api.client.post("/topics/T/judgments", json={"judgments": [{"doc_id": "d1", "label": "1"},
                                                                      {"doc_id": "d4", "label": "maybe"}]},
                           headers=bob).status_code == 201
    log = api.client.get("/topics/T/judgments", headers=reader).json()["judgments"]
    assert [(j["doc_id"], j["reviewer"], j["decision"], j["relevant"], j["reason"], j["stage"]) for j in log] == [
        ("d1", "ana", "maybe", None, None, "title-abstract"), ("d2", "ana", "skip", None, None, "title-abstract"),
        ("d3", "ana", "exclude", False, "wrong population", "full-text"),
        ("d4", "ana", "exclude", False, None, "title-abstract"), ("d1", "bob", "include", True, None, "title-abstract"),
        ("d4", "bob", "maybe", None, None, "title-abstract")]
    # rayyan: include vs maybe (d1) is a conflict, exclude vs maybe (d4) is not; strict: both
    conflicts = api.client.get("/topics/T/conflicts", headers=reader).json()["conflicts"]
    assert [c["doc_id"] for c in conflicts] == ["d1"]
    assert [v["decision"] for v in conflicts[0]["votes"]] == ["include", "maybe"]
    assert api.client.patch("/topics/T/screening", json={"conflict_rule": "strict"}, headers=ana).status_code == 200
    assert [c["doc_id"] for c in api.client.get("/topics/T/conflicts", headers=reader).json()["conflicts"]] == \
        ["d1", "d4"]
    assert api.client.get("/topics/T/screening", headers=reader).json()["conflict_rule"] == "strict"

    before = _state(api)
    for body, status, parts in [
        ({"judgments": [{"doc_id": "d5", "label": "1"}, {"doc_id": "d6", "label": "1", "reason": "wrong population"}]},
         422, ("judgments[1].reason", "only an exclude carries a reason")),
        ({"judgments": [{"doc_id": "d5", "label": "0", "reason": "off topic"}]},
         422, ("judgments[0].reason", "'off topic' is not an exclusion reason")),
        ({"judgments": [{"doc_id": "d5", "label": "0", "stage": "abstract"}]}, 422, ("stage",)),
    ]:
        problem(api.client.post("/topics/T/judgments", json=body, headers=ana), status, *parts)
    problem(api.client.patch("/topics/T/screening", json={"add_reasons": ["wrong population"]}, headers=ana), 409,
            "already an exclusion reason")
    problem(api.client.patch("/topics/T/screening", json={"remove_reasons": ["wrong population"],
                                                          "conflict_rule": "rayyan"}, headers=ana), 409,
            "carried by 1 judgment")
    problem(api.client.patch("/topics/T/screening", json={"conflict_rule": "lenient"}, headers=ana), 422)
    problem(api.client.get("/topics/nope/screening", headers=reader), 404, "unknown topic")
    assert _state(api) == before
