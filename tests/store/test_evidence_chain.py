"""The evidence chain (`reviewdepth.store.evidence`): what a report rests on besides the judgments.

After a realistic workflow (a run imported, qrels, a sample drawn and judged, an audit stream started and its
pace changed, more judgments), someone with database access tampers with raw SQL, as an attacker would: a sample's
seed changed, a drawn document replaced, a sample deleted, a ranking entry changed or reordered, every topic
deleted, an audit stream's seed or pace changed. ``audit verify`` names the altered or missing object and exits 1,
without an anchor and with one (``audit verify TOPIC --head``), on SQLite and PostgreSQL. The judgment log is not
touched in any of these: its own check stays intact, which is why none of them was caught before."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import Connection, DateTime, Engine, text
from sqlalchemy.exc import DBAPIError
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.files.imports import import_qrels, import_run
from reviewdepth.services.review.audit import verify_chains
from reviewdepth.services.review.audit_stream import change_pace, create_stream, next_documents, void_stream
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.sample_void import void_sample
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.chain import canonical_time

TOPIC = "CD008803"
DOCS = [f"{TOPIC}-{i:03d}" for i in range(1, 81)]
OTHER = [f"B-{i:03d}" for i in range(1, 31)]


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


def url_of(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def workflow(engine: Engine, tmp_path: Path) -> dict[str, int]:
    """A run of two topics imported, qrels, a sample drawn and judged, an audit stream with a pace change, more
    judgments: the ids of the objects the tampering aims at."""
    run = tmp_path / "ranker.run"
    run.write_text("".join(f"{TOPIC} Q0 {d} {i} {100 - i / 7:.6f} ranker\n" for i, d in enumerate(DOCS, start=1))
                   + "".join(f"B Q0 {d} {i} {50 - i} ranker\n" for i, d in enumerate(OTHER, start=1)))
    import_run(engine, str(run))
    qrels = tmp_path / "topic.qrels"
    qrels.write_text("".join(f"{TOPIC} 0 {d} {int(i % 4 == 0)}\n" for i, d in enumerate(DOCS[:12], start=1)))
    import_qrels(engine, str(qrels))
    sample = draw_sample(engine, TOPIC, 8, frame="below-rank:12", seed=2024)
    record_judgments(engine, TOPIC, [(d, "1" if i % 3 == 0 else "0") for i, d in enumerate(sample.doc_ids)],
                     reviewer="ana", role="sample")
    stream = create_stream(engine, TOPIC, every=5, seed=99, reviewer="ana")
    batch = next_documents(engine, TOPIC, count=10)
    record_judgments(engine, TOPIC, [(d.doc_id, "0") for d in batch.documents[:4]], reviewer="bo")
    change_pace(engine, TOPIC, every=3)
    record_judgments(engine, TOPIC, [(d.doc_id, "0") for d in batch.documents[4:8]], reviewer="bo")
    with engine.connect() as conn:
        queue = conn.execute(text("SELECT q.id FROM queues q JOIN topics t ON t.id = q.topic_id WHERE t.name = :t"),
                             {"t": TOPIC}).scalar_one()
    return {"sample": sample.id, "stream": stream.id, "queue": int(queue)}


def event_of(engine: Engine, kind: str, object_id: int) -> int | None:
    """The seq of the object's latest evidence event (what the verdict names); None on a store without the
    evidence chain (revision 0018 and earlier), where the verdict is then what fails."""
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT max(seq) FROM evidence_events WHERE kind = :k AND object_id = :i"),
                                    {"k": kind, "i": object_id}).scalar_one())
    except DBAPIError:
        return None


def anchor_file(engine: Engine, tmp_path: Path) -> Path:
    code, out, err = cli("audit", "head", TOPIC, "--db", url_of(engine))
    assert code == 0, err
    path = tmp_path / "anchor.txt"
    path.write_text(out)
    return path


def verdict(engine: Engine, anchor: Path | None) -> tuple[int, str, str]:
    if anchor is None:
        return cli("audit", "verify", "--db", url_of(engine))
    return cli("audit", "verify", TOPIC, "--head", str(anchor), "--db", url_of(engine))


def sql(engine: Engine, *statements: str, **params: object) -> None:
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement), params)


def judgment_logs_intact(engine: Engine) -> bool:
    return all(c.intact for c in verify_chains(engine))


def test_no_tampering_verifies_clean(engine: Engine, tmp_path: Path) -> None:
    ids = workflow(engine, tmp_path)
    anchor = anchor_file(engine, tmp_path)
    assert re.search(r" evidence_seq=\d+ evidence_hash=[0-9a-f]{64}$", anchor.read_text().strip())
    code, out, err = verdict(engine, None)
    assert code == 0, err
    with engine.connect() as conn:
        events = conn.execute(text("SELECT kind, action FROM evidence_events ORDER BY seq")).all()
    # two topics and two queues (the run), the sample, the stream and its pace change: one event each
    assert [tuple(e) for e in events] == [("topic", "created")] * 2 + [("queue", "created")] * 2 + [
        ("sample", "created"), ("stream", "created"), ("stream", "pace")]
    assert f"evidence chain\tintact\t{len(events)} events" in out and err == ""
    code, out, err = verdict(engine, anchor)
    assert code == 0 and "extends the anchored head" in out, err
    # the store grows on: a second sample and more judgments; the anchor is still extended
    second = draw_sample(engine, TOPIC, 5, frame="below-rank:12", seed=7)
    record_judgments(engine, TOPIC, [(DOCS[40], "1")], reviewer="ana")
    assert verdict(engine, anchor)[0] == 0 and verdict(engine, None)[0] == 0
    # voids are changes the application makes: chained, so still clean; undoing one by hand is named
    void_sample(engine, TOPIC, second.id, reason="drawn from the wrong frame", reviewer="ana")
    void_stream(engine, TOPIC, reason="ranking replaced", reviewer="ana")
    code, out, err = verdict(engine, None)
    assert code == 0 and f"evidence chain\tintact\t{len(events) + 3} events" in out, err
    assert verdict(engine, anchor)[0] == 0
    sql(engine, "UPDATE samples SET voided_at = NULL, void_reason = NULL, voided_by = NULL, void_judgment_id = NULL "
                "WHERE id = :i", i=second.id)
    code, _, err = verdict(engine, None)
    assert code == 1 and (f"sample {second.id} of topic {TOPIC}: void_judgment_id, void_reason, voided_at, "
                          "voided_by differ from the chained draw") in err, err
    assert ids["stream"] > 0


Tamper = Callable[[Engine, dict[str, int]], str]


def seed_changed(engine: Engine, ids: dict[str, int]) -> str:
    sql(engine, "UPDATE samples SET seed = seed + 1 WHERE id = :i", i=ids["sample"])
    return f"sample {ids['sample']} of topic {TOPIC}: seed differs from the chained draw"


def drawn_document_replaced(engine: Engine, ids: dict[str, int]) -> str:
    with engine.connect() as conn:
        drawn = set(conn.execute(text("SELECT doc_id FROM sample_items WHERE sample_id = :i"),
                                 {"i": ids["sample"]}).scalars())
    stranger = next(d for d in reversed(DOCS) if d not in drawn)
    sql(engine, "UPDATE sample_items SET doc_id = :d WHERE sample_id = :i AND position = 3", d=stranger,
        i=ids["sample"])
    return f"sample {ids['sample']} of topic {TOPIC}: drawn documents differ from the chained draw"


def sample_deleted(engine: Engine, ids: dict[str, int]) -> str:
    sql(engine, "DELETE FROM sample_items WHERE sample_id = :i", "DELETE FROM samples WHERE id = :i",
        i=ids["sample"])
    return f"sample {ids['sample']} of topic {TOPIC} (chained at event {event_of(engine, 'sample', ids['sample'])}) " \
           "is missing"


def ranking_reordered(engine: Engine, ids: dict[str, int]) -> str:
    # two neighbours swap places in the entries and in the ranking index alike, as a careful attacker would
    sql(engine, "UPDATE queue_entries SET rank = -1 WHERE queue_id = :q AND rank = 20",
        "UPDATE queue_entries SET rank = 20 WHERE queue_id = :q AND rank = 21",
        "UPDATE queue_entries SET rank = 21 WHERE queue_id = :q AND rank = -1", q=ids["queue"])
    return f"queue {ids['queue']} 'ranker' of topic {TOPIC}: ranking entries differ from the chained ranking"


def ranking_entry_edited(engine: Engine, ids: dict[str, int]) -> str:
    sql(engine, "UPDATE queue_entries SET score = 1000 WHERE queue_id = :q AND rank = 30", q=ids["queue"])
    return f"queue {ids['queue']} 'ranker' of topic {TOPIC}: ranking entries differ from the chained ranking"


def ranking_index_edited(engine: Engine, ids: dict[str, int]) -> str:
    sql(engine, "UPDATE queues SET ranking_blob = NULL WHERE id = :q", q=ids["queue"])
    return f"queue {ids['queue']} 'ranker' of topic {TOPIC}: ranking index differs from the chained ranking"


def topics_deleted(engine: Engine, ids: dict[str, int]) -> str:
    chained = event_of(engine, "topic", ids["topic"])
    sql(engine, "DELETE FROM topics")
    return f"topic {TOPIC} (chained at event {chained}) is missing"


def stream_seed_changed(engine: Engine, ids: dict[str, int]) -> str:
    sql(engine, "UPDATE audit_streams SET seed = 12345 WHERE id = :i", i=ids["stream"])
    return f"audit stream {ids['stream']} of topic {TOPIC}: seed differs from the chained stream"


def stream_pace_changed(engine: Engine, ids: dict[str, int]) -> str:
    sql(engine, "UPDATE audit_streams SET every_k = 50 WHERE id = :i", i=ids["stream"])
    return f"audit stream {ids['stream']} of topic {TOPIC}: pace (every K) differs from the chained stream " \
           f"(event {event_of(engine, 'stream', ids['stream'])})"


TAMPERING = [seed_changed, drawn_document_replaced, sample_deleted, ranking_reordered, ranking_entry_edited,
             ranking_index_edited, topics_deleted, stream_seed_changed, stream_pace_changed]


@pytest.mark.parametrize("anchored", [False, True], ids=["plain", "anchored"])
@pytest.mark.parametrize("tamper", TAMPERING, ids=[t.__name__ for t in TAMPERING])
def test_tampering_is_named(engine: Engine, tmp_path: Path, tamper: Tamper, anchored: bool) -> None:
    ids = workflow(engine, tmp_path)
    with engine.connect() as conn:
        ids["topic"] = int(conn.execute(text("SELECT id FROM topics WHERE name = :t"), {"t": TOPIC}).scalar_one())
    anchor = anchor_file(engine, tmp_path) if anchored else None
    expected = tamper(engine, ids)
    if tamper is not topics_deleted:
        assert judgment_logs_intact(engine)  # the judgment log alone cannot tell
    code, out, err = verdict(engine, anchor)
    assert code == 1, (out, err)
    assert expected in err, err
    assert "Traceback" not in err
    if anchored:
        assert "DOES NOT extend the anchored head" in out
    else:
        assert "evidence chain\tALTERED" in out
        if tamper is topics_deleted:
            assert "no topics in the store" in out


def test_a_resealed_evidence_chain_is_caught_by_the_anchor(engine: Engine, tmp_path: Path) -> None:
    """The documented limit: rewrite the sample, its event and every later hash, and only the anchor can tell."""
    from reviewdepth.store.evidence import canonical_state, event_hash, evidence_genesis, sample_state

    ids = workflow(engine, tmp_path)
    anchor = anchor_file(engine, tmp_path)
    sql(engine, "UPDATE samples SET seed = 1 WHERE id = :i", i=ids["sample"])
    with engine.begin() as conn:
        reseal(conn, ids["sample"], sample_state, canonical_state, event_hash, evidence_genesis())
    assert verdict(engine, None)[0] == 0  # consistent again: a plain verify cannot see a full rewrite
    code, _, err = verdict(engine, anchor)
    assert code == 1 and "the evidence chain was rewritten and re-sealed" in err, err


def reseal(conn: Connection, sample_id: int, state_of: Callable[..., object], canonical: Callable[..., str],
           link: Callable[..., str], head: str) -> None:
    found = state_of(conn, sample_id)
    assert isinstance(found, tuple)
    rows = conn.execute(text("SELECT seq, kind, object_id, topic, action, state, recorded_at FROM evidence_events "
                             "ORDER BY seq").columns(recorded_at=DateTime(timezone=True))).all()
    for seq, kind, object_id, topic, action, state, when in rows:
        if kind == "sample" and object_id == sample_id:
            state = canonical(found[1])
        moment = when if isinstance(when, datetime) else datetime.fromisoformat(str(when))
        head = link(head, seq, kind, object_id, topic, action, canonical_time(moment), state)
        conn.execute(text("UPDATE evidence_events SET state = :s, chain_hash = :h WHERE seq = :q"),
                     {"s": state, "h": head, "q": seq})
    conn.execute(text("UPDATE evidence_chain SET head = :h"), {"h": head})


def test_deleted_evidence_events_are_a_break(engine: Engine, tmp_path: Path) -> None:
    ids = workflow(engine, tmp_path)
    seq = event_of(engine, "sample", ids["sample"])
    sql(engine, "DELETE FROM evidence_events WHERE seq = :s", s=seq)
    code, _, err = verdict(engine, None)
    assert code == 1 and f"evidence event(s) {seq}–{seq} are missing from the chain" in err, err
    # the sample is still compared with something: with its event gone, it is not in the chain at all
    assert f"sample {ids['sample']} of topic {TOPIC} is not in the evidence chain" in err


def test_empty_store_says_so(engine: Engine) -> None:
    code, out, err = verdict(engine, None)
    assert code == 0, err
    assert "no topics in the store" in out and "evidence chain\tintact\t0 events" in out


def test_anchor_json_carries_the_evidence_head(engine: Engine, tmp_path: Path) -> None:
    workflow(engine, tmp_path)
    code, out, _ = cli("audit", "head", TOPIC, "--format", "json", "--db", url_of(engine))
    head = json.loads(out)
    with engine.connect() as conn:
        length, digest = conn.execute(text("SELECT length, head FROM evidence_chain")).one()
    assert (head["evidence_seq"], head["evidence_hash"]) == (length, digest)
    (tmp_path / "head.json").write_text(out)
    assert verdict(engine, tmp_path / "head.json")[0] == 0
    sql(engine, "UPDATE audit_streams SET rate = 0.5, every_k = NULL")
    code, _, err = verdict(engine, tmp_path / "head.json")
    assert code == 1 and "pace (every K), pace (rate) differ from the chained stream" in err, err
