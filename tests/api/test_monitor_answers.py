"""``GET /topics/{topic}/monitor`` keeps its answer while the topic is unchanged
(`reviewdepth.services.answers.monitor_answers`): a second read is served from the kept answer, and every kind of write
to the topic between two reads — a judgment through the API, a sample drawn, a sample voided, an audit stream
voided, its population set — makes the next read compute again and answer what the service computes now.
SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import text

from reviewdepth.services.answers.monitor import build_monitor
from reviewdepth.services.review.audit_stream import void_stream
from reviewdepth.services.review.sample_void import void_sample
from reviewdepth.services.review.samples import draw_sample

from .conftest import Api
from .test_monitor_api import DOCS, topics


def answers(api: Api) -> Any:
    return api.client.app.state.monitor_answers  # type: ignore[attr-defined]


def read(api: Api, headers: dict[str, str]) -> dict[str, Any]:
    response = api.client.get("/topics/T/monitor", headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_an_unchanged_topic_is_answered_from_the_kept_answer(api: Api) -> None:
    topics(api)
    reader = api.new_key("rita", "read")
    first = read(api, reader)
    computed = api.client.app.state.renders.computed  # type: ignore[attr-defined]
    assert read(api, reader) == first and answers(api).hits == 1
    assert api.client.app.state.renders.computed == computed  # type: ignore[attr-defined]
    # another topic's write is not this topic's change; other parameters are another answer
    api.client.post("/topics/U/judgments", json={"judgments": [{"doc_id": DOCS[30], "label": "0"}]},
                    headers=api.writer)
    assert api.client.get("/topics/T/monitor?target=0.6", headers=reader).status_code == 200
    assert api.client.get("/topics/nope/monitor", headers=reader).status_code == 404


def _judged(api: Api) -> None:
    response = api.client.post("/topics/T/judgments", json={"judgments": [{"doc_id": DOCS[20], "label": "1"}]},
                               headers=api.writer)
    assert response.status_code == 201, response.text


def _sampled(api: Api) -> None:
    draw_sample(api.engine, "T", 5, frame="unreviewed", seed=3)


def _sample_voided(api: Api) -> None:
    sample = draw_sample(api.engine, "T", 4, frame="unreviewed", seed=4)
    read(api, api.new_key("rita", "read"))  # kept with the sample, then voided
    void_sample(api.engine, "T", sample.id, reason="drawn from the wrong queue", reviewer="ana")


def _stream_voided(api: Api) -> None:
    void_stream(api.engine, "T", reason="restarted", reviewer="ana")


def _population_set(api: Api) -> None:
    with api.engine.begin() as conn:  # (the column the monitor's estimates read; set here as any writer would)
        conn.execute(text("UPDATE topics SET population_size = 400 WHERE name = 'T'"))


@pytest.mark.parametrize("write", [_judged, _sampled, _sample_voided, _stream_voided, _population_set])
def test_a_write_between_two_reads_is_seen(api: Api, write: Callable[[Api], None]) -> None:
    topics(api)
    reader = api.new_key("rita", "read")
    before = read(api, reader)
    assert before == build_monitor(api.engine, "T", target="0.95", confidence=0.95).to_dict()
    write(api)
    misses = answers(api).misses
    after = read(api, reader)
    assert answers(api).misses == misses + 1  # computed again, not the kept answer
    assert after == build_monitor(api.engine, "T", target="0.95", confidence=0.95).to_dict()
    assert read(api, reader) == after and answers(api).hits >= 1
