"""The fast path of ``POST /topics/{topic}/judgments`` (`reviewdepth.api.recording`): its body validator accepts
exactly what the models accept, with the same values; it answers common requests with the bytes the standard
handler gives; everything else (errors included) is the standard handler's answer."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from reviewdepth.api import recording, schemas
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.write_gate import WriteGate

from .conftest import Api
from .test_auth_and_errors import seeded

BOUNDARY = ["", "a", "x" * 100, "x" * 101, "y" * 200, "y" * 201, "z" * 300, "z" * 301, "n" * 10_000, "n" * 10_001,
            " ", "é✓", "\u0000", "review", "qc", "1", "0"]
values = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False),
                   st.sampled_from(BOUNDARY), st.text(max_size=4))
judgment = st.dictionaries(st.sampled_from(["doc_id", "label", "role", "note", "queue", "extra"]), values, max_size=6)
judgment_list = st.one_of(st.lists(judgment, max_size=3),
                          st.lists(st.fixed_dictionaries({"doc_id": st.sampled_from(BOUNDARY[1:]),
                                                          "label": st.sampled_from(BOUNDARY[1:])}), min_size=1,
                                   max_size=3), values)
bodies = st.one_of(
    st.dictionaries(st.sampled_from(["judgments", "idempotency_key", "reviewer", "queue", "allow_unqueued", "other"]),
                    st.one_of(judgment_list, values), max_size=6),
    st.fixed_dictionaries({"judgments": judgment_list},
                          optional={"idempotency_key": values, "reviewer": values, "queue": values,
                                    "allow_unqueued": values}),
    values, st.lists(judgment, max_size=2))


def standard(raw: bytes) -> Any:
    """What FastAPI makes of the body: ``json.loads``, then the model; None when it refuses."""
    try:
        model = schemas.JudgmentBatchIn.model_validate(json.loads(raw))
    except (ValueError, ValidationError):
        return None
    return ([(j.doc_id, j.label, j.role, j.note, j.queue) for j in model.judgments], model.idempotency_key,
            model.reviewer, model.queue, model.allow_unqueued)


def fast(raw: bytes) -> Any:
    try:
        body = schemas.judgment_batch_validator().validate_json(raw)
    except ValidationError:
        return None
    return ([(j.doc_id, j.label, j.role, j.note, j.queue) for j in body["judgments"]], body.get("idempotency_key"),
            body.get("reviewer"), body.get("queue"), body.get("allow_unqueued", False))


def fast_path(raw: bytes) -> Any:
    """What the fast path reads (`recording.fast_body`: the lean validator, the bulk check, the full one)."""
    body = recording.fast_body(raw)
    if body is None:
        return None
    return ([(j.doc_id, j.label, j.role, j.note, j.queue) for j in body["judgments"]], body.get("idempotency_key"),
            body.get("reviewer"), body.get("queue"), body.get("allow_unqueued", False))


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(body=bodies)
def test_fast_validator_accepts_what_the_models_accept(body: object) -> None:
    for raw in (json.dumps(body).encode(), json.dumps(body, ensure_ascii=False).encode()):
        assert fast(raw) == standard(raw)
        assert fast_path(raw) == standard(raw)


@pytest.mark.parametrize("raw", [
    b'{"judgments":[{"doc_id":"a","label":"1"}],"judgments":[{"doc_id":"b","label":"0"}]}',
    b'{"judgments":[{"doc_id":"a","label":"1","doc_id":"c"}]}',
    b' \n{"judgments":[{"doc_id":"a","label":"1"}]}\t',
    b'{"judgments":[{"doc_id":"a","label":"1"}]} trailing',
    b'{"judgments":[{"doc_id":"\\ud800","label":"1"}]}',
    b'{"judgments":[{"doc_id":"\xff","label":"1"}]}',
    '{"judgments":[{"doc_id":"a","label":"1"}]}'.encode("utf-16"),
    b'{"judgments":[{"doc_id":"a","label":"1","note":NaN}]}',
    b'{"judgments":[{"doc_id":"a","label":"1"}],"idempotency_key":1e400}',
    b"",
])
def test_odd_bytes_are_never_read_differently(raw: bytes) -> None:
    """Where the fast validator accepts, the standard path reads the same values; else the standard path runs."""
    for got in (fast(raw), fast_path(raw)):
        assert got is None or got == standard(raw)


def normalised(response: Any) -> tuple[int, str, str | None, str]:
    return (response.status_code, response.headers["content-type"], response.headers.get("idempotent-replayed"),
            re.sub(r'"ids":\[[0-9,]*\]', '"ids":[…]', response.text).replace("'ak'", "'k'").replace("'bk'", "'k'"))


def test_fast_and_standard_answers_are_the_same(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    ana = seeded(api)  # ana's key is verified and cached by now
    reader = api.new_key("rita", "read")
    api.client.get("/whoami", headers=reader)
    requests: list[tuple[str, dict[str, str], bytes]] = []
    for name, body in [
        ("t", {"judgments": [{"doc_id": "d1", "label": "1"}]}),
        ("t", {"judgments": [{"doc_id": f"d{i}", "label": "yes", "role": "qc", "note": "é ✓"} for i in range(5)],
               "reviewer": "ana"}),
        ("t", {"judgments": [{"doc_id": "d1", "label": "1"}], "idempotency_key": "k"}),
        ("t", {"judgments": [{"doc_id": "d1", "label": "1"}], "idempotency_key": "k"}),  # replayed
        ("t", {"judgments": [{"doc_id": "d2", "label": "0"}], "idempotency_key": "k"}),  # 409
        ("t", {"judgments": [{"doc_id": "d1", "label": "perhaps"}]}),  # 422 from the service
        ("t", {"judgments": [{"doc_id": "d1", "label": "1", "role": "boss"}]}),
        ("t", {"judgments": [{"doc_id": "d1", "label": "1"}], "reviewer": "mallory"}),  # 403
        ("nope", {"judgments": [{"doc_id": "d1", "label": "1"}]}),  # 404
        ("t", {"judgments": []}),
        ("t", {"judgments": [{"doc_id": "d1", "label": "1", "extra": 1}]}),
        ("t", {"judgments": [{"doc_id": "", "label": "1"}]}),
    ]:
        requests.append((name, ana, json.dumps(body).encode()))
    requests += [("t", {**ana, "Content-Type": "text/plain"}, b'{"judgments":[{"doc_id":"d","label":"1"}]}'),
                 ("t", ana, b"{not json"), ("t", ana, b""),
                 ("t", reader, b'{"judgments":[{"doc_id":"d","label":"1"}]}'),
                 ("t", {"Authorization": "Bearer rd_unknown"}, b'{"judgments":[{"doc_id":"d","label":"1"}]}'),
                 ("t", {**ana, "Content-Type": "application/json; charset=utf-8"},
                  b'{"judgments":[{"doc_id":"d","label":"1"}]}')]

    def answers(prefix: str) -> list[tuple[int, str, str | None, str]]:
        out = []
        for topic, headers, raw in requests:
            headers = {"Content-Type": "application/json", **headers}
            raw = raw.replace(b'"k"', f'"{prefix}k"'.encode())
            out.append(normalised(api.client.post(f"/topics/{topic}/judgments", content=raw, headers=headers)))
        return out

    taken: list[bool] = []
    real = recording.fast_post_judgments

    async def spy(request: Any) -> Any:
        answer = await real(request)
        taken.append(answer is not None)
        return answer

    monkeypatch.setattr(recording, "fast_post_judgments", spy)
    with_fast = answers("a")
    assert taken[:4] == [True, True, True, True] and any(taken) and not all(taken)

    async def never(request: Any) -> None:
        return None

    monkeypatch.setattr(recording, "fast_post_judgments", never)
    assert answers("b") == with_fast
    assert [a[0] for a in with_fast[:12]] == [201, 201, 201, 201, 409, 422, 422, 403, 404, 422, 422, 422]
    assert with_fast[3][2] == "true" and with_fast[2][2] is None


def test_reply_bytes_are_the_response_models(api: Api) -> None:
    ana = api.new_key("ana", "write")
    topic = 'tøpic "✓"'
    assert api.client.post("/topics", json={"name": topic}, headers=ana).status_code == 201
    for _ in range(2):  # the standard path (the key is new), then the fast path
        r = api.client.post("/topics/tøpic \"✓\"/judgments", headers=ana,
                            json={"judgments": [{"doc_id": "é", "label": "1"}, {"doc_id": "b", "label": "0"}],
                                  "allow_unqueued": True})
        assert r.status_code == 201 and r.headers["content-type"] == "application/json"
        assert r.content == schemas.JudgmentBatchOut.model_validate(r.json()).model_dump_json().encode()
        assert r.json()["topic"] == topic and r.json()["recorded"] == 2


def test_write_gate_excludes_other_holders(tmp_path: Any) -> None:
    import fcntl
    import os

    engine = create_engine_for(f"sqlite:///{tmp_path / 'gate.db'}")
    gate = WriteGate(engine)
    assert gate.path == f"{tmp_path / 'gate.db'}.api-write.lock"
    other = os.open(gate.path, os.O_RDWR)
    try:
        with gate:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(other, fcntl.LOCK_UN)
    finally:
        os.close(other)
        gate.close()
        engine.dispose()
    assert WriteGate(create_engine_for("sqlite://")).path is None


@pytest.mark.sqlite_only
def test_a_sqlite_database_locked_elsewhere_is_waited_for_in_the_threadpool(api: Api) -> None:
    """The inline write fails at once on the lock (busy timeout 0, nothing written) and runs again in a thread,
    which waits for the lock with the engine's usual timeout (inline writes are SQLite's)."""
    assert api.url.startswith("sqlite")
    import sqlite3
    import threading
    import time

    ana = seeded(api)
    writes = api.client.app.state.writes  # type: ignore[attr-defined]
    holder = sqlite3.connect(api.url.split("///", 1)[1], isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process's write transaction

    def release_once_the_write_has_fallen_back() -> None:
        deadline = time.monotonic() + 30
        while writes.fallbacks == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        holder.execute("ROLLBACK")

    releaser = threading.Thread(target=release_once_the_write_has_fallen_back)
    releaser.start()
    try:
        r = api.client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d1", "label": "1"}]},
                            headers=ana)
    finally:
        releaser.join()
        holder.close()
    assert r.status_code == 201 and r.json()["recorded"] == 1 and writes.fallbacks == 1
    again = api.client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d2", "label": "1"}]},
                            headers=ana)
    assert again.status_code == 201 and writes.fallbacks == 1
    log = api.client.get("/topics/t/judgments", headers=ana).json()["judgments"]
    assert [j["doc_id"] for j in log] == ["d1", "d2"]


def test_long_batches_are_written_off_the_event_loop(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    import anyio.to_thread

    from reviewdepth.services.review.batches import record_batch

    ana = seeded(api)
    threaded: list[int] = []
    real = anyio.to_thread.run_sync

    async def spy(function: Any, *args: Any, **kwargs: Any) -> Any:
        called = getattr(function, "__wrapped__", function)  # a write runs wrapped in its lock-wait deadline
        if getattr(called, "func", None) is record_batch:
            threaded.append(len(called.args[2]))
        return await real(function, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", spy)
    monkeypatch.setattr(recording, "INLINE_JUDGMENTS", 2)
    for size in (1, 2, 3):
        body = {"judgments": [{"doc_id": f"d{i}", "label": "1"} for i in range(size)]}
        assert api.client.post("/topics/t/judgments", json=body, headers=ana).json()["recorded"] == size
    # PostgreSQL writes always go to the threadpool; SQLite's only when longer than INLINE_JUDGMENTS
    assert threaded == ([3] if api.url.startswith("sqlite") else [1, 2, 3])


def test_a_large_body_is_read_into_columns_with_the_same_answers(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """A body over `recording.INLINE_BODY_BYTES` reaches the service as one `BatchColumns` (no object per
    judgment), and every answer — stored, refused naming the judgment, replayed — is the standard handler's, with
    nothing written by a refused one."""
    from sqlalchemy import text

    from reviewdepth.services.review.batches import BatchColumns

    ana = api.new_key("ana", "write")
    assert api.client.post("/topics", json={"name": "t"}, headers=ana).status_code == 201
    docs = [{"doc_id": f"doc{i:05d}"} for i in range(6_000)]
    assert api.client.put("/topics/t/queues/q", json={"documents": docs}, headers=ana).status_code == 201
    big = [{"doc_id": f"doc{i:05d}", "label": "1" if i % 7 == 0 else "0"} for i in range(3_000)]

    def spoiled(at: int, **change: object) -> list[dict[str, object]]:
        return [*big[:at], {**big[at], **change}, *big[at + 1:]]

    bodies: list[bytes] = [json.dumps(body).encode() for body in [
        {"judgments": big},
        {"judgments": big, "idempotency_key": "k"},
        {"judgments": big, "idempotency_key": "k"},  # replayed
        {"judgments": spoiled(2_999, label="0" if big[2_999]["label"] == "1" else "1"), "idempotency_key": "k"},
        {"judgments": spoiled(2_500, label="perhaps")},  # the service's 422
        {"judgments": spoiled(2_501, label=1.5)},  # the model's 422
        {"judgments": spoiled(2_502, extra=1)},
        {"judgments": spoiled(2_503, queue="nope")},
        {"judgments": spoiled(2_504, doc_id="elsewhere")},
        {"judgments": spoiled(2_505, role="adjudication")},  # 403 for a write key
        {"judgments": spoiled(2_506, note="\u0000")},
        {"judgments": big, "reviewer": "mallory"},
    ]]
    repeated = json.dumps({"judgments": big[:10]})[:-1] + ', "judgments": ' + json.dumps(big[10:]) + "}"
    bodies.append(repeated.encode())
    assert all(len(raw) > recording.INLINE_BODY_BYTES for raw in bodies)
    seen: list[str] = []
    real = recording.record_batch

    def spy(engine: Any, topic: str, items: Any, **kwargs: Any) -> Any:
        seen.append(type(items).__name__)
        return real(engine, topic, items, **kwargs)

    monkeypatch.setattr(recording, "record_batch", spy)

    def log() -> tuple[object, ...]:
        with api.engine.connect() as conn:
            return tuple(conn.execute(text("SELECT count(*), max(id), max(seq) FROM judgments")).one())

    def answers(prefix: str) -> list[tuple[int, str, str | None, str]]:
        out = []
        for raw in bodies:
            before = log()
            response = api.client.post("/topics/t/judgments", content=raw.replace(b'"k"', f'"{prefix}k"'.encode()),
                                       headers={**ana, "Content-Type": "application/json"})
            if response.status_code != 201:
                assert log() == before, response.text
            out.append(normalised(response))
        return out

    with_fast = answers("a")
    assert seen[:3] == [BatchColumns.__name__] * 3
    assert [a[0] for a in with_fast] == [201, 201, 201, 409, 422, 422, 422, 409, 409, 403, 422, 403, 201]
    assert "judgments[2500].label" in with_fast[4][3] and "judgments[2503].queue" in with_fast[7][3]
    assert "judgments[2504].doc_id" in with_fast[8][3] and with_fast[2][2] == "true"

    async def never(request: Any) -> None:
        return None

    monkeypatch.setattr(recording, "fast_post_judgments", never)
    seen.clear()
    assert answers("b") == with_fast
    assert BatchColumns.__name__ not in seen
