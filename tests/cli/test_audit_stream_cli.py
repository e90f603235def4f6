"""`reviewdepth sample stream` and `reviewdepth next` on the bundled demo topic and on bad input (exit 2, one line
naming the field, nothing stored)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.demo import DEMO_TOPIC, demo_labels
from reviewdepth.services.review.audit_stream import audit_doc_ids, load_audit
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.models import AuditStream


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def as_json(*args: str) -> Any:
    code, out, err = invoke(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def streams(db: str) -> int:
    engine = create_engine_for(db)
    try:
        with engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(AuditStream)).scalar_one())
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo.db'}"
    assert invoke("db", "upgrade", "--db", db)[0] == 0
    code, _, err = invoke("demo", "--db", db, "--format", "json")
    assert code == 0, err
    return db


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store with topic T: one 50-document queue, no judgments, no stream."""
    folder = tmp_path_factory.mktemp("small")
    db = f"sqlite:///{folder / 'small.db'}"
    assert invoke("db", "upgrade", "--db", db)[0] == 0
    run = folder / "t.run"
    run.write_text("".join(f"T Q0 d{i} {i + 1} {50 - i} sys\n" for i in range(50)))
    assert invoke("import", "run", str(run), "--db", db)[0] == 0
    return db


def test_a_stream_on_the_demo_topic_serves_and_counts_audit_judgments(demo: str) -> None:
    code, out, err = invoke("sample", "stream", "start", DEMO_TOPIC, "--every", "10", "--seed", "2024", "--db", demo)
    assert code == 0, err
    assert "5,220 documents of queue waterloo-A (every 10), seed 2024" in out
    code, _, err = invoke("sample", "stream", "start", DEMO_TOPIC, "--rate", "0.1", "--db", demo)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "already has an active audit stream (stream 1)" in lines[0]

    batch = as_json("next", DEMO_TOPIC, "--count", "5", "--db", demo)
    # 1,000 reviewed before the stream started: 100 audit documents due at once
    assert batch["reviewed"] == 1000 and batch["stream"]["due"] == 100
    assert [d["role"] for d in batch["documents"]] == ["audit"] * 5
    assert batch["stream"]["served"] == 5 and batch["stream"]["position"] >= 5
    labels = demo_labels()
    for d in batch["documents"][:3]:
        code, _, err = invoke("judge", DEMO_TOPIC, d["doc_id"], labels[d["doc_id"]], "--role", "audit",
                              "--queue", "waterloo-A", "--reviewer", "aud", "--db", demo)
        assert code == 0, err
    shown = as_json("sample", "stream", "show", DEMO_TOPIC, "--db", demo)
    assert shown["id"] == 1 and shown["served"] == 5 and shown["pending"] == [
        d["doc_id"] for d in batch["documents"][3:]]
    engine = create_engine_for(demo)
    try:
        evidence = load_audit(engine, DEMO_TOPIC)
        order = audit_doc_ids(engine, DEMO_TOPIC)
    finally:
        engine.dispose()
    assert evidence is not None and shown["judged"] == evidence.judged >= 3
    assert batch["documents"][2]["doc_id"] in evidence.doc_ids  # the prefix ends where the gap begins
    assert order[evidence.judged] == batch["documents"][3]["doc_id"]
    assert shown["relevant"] == sum(labels[d] == "1" for d in evidence.doc_ids)
    again = as_json("next", DEMO_TOPIC, "--count", "2", "--db", demo)
    assert [(d["doc_id"], d["again"]) for d in again["documents"]] == [
        (d["doc_id"], True) for d in batch["documents"][3:5]]
    code, out, _ = invoke("next", DEMO_TOPIC, "--count", "2", "--db", demo)
    assert code == 0 and "(again)" in out and "--role ROLE --queue waterloo-A" in out

    code, out, err = invoke("sample", "stream", "void", DEMO_TOPIC, "--reason", "demo over", "--reviewer", "lead",
                            "--db", demo)
    assert code == 0 and "(voided)" in out and "demo over" in out, err
    code, out, err = invoke("sample", "stream", "start", DEMO_TOPIC, "--rate", "0.2", "--db", demo)
    assert code == 0 and "audit stream 2" in out and ", seed " in out, err  # a random seed, printed


@pytest.mark.parametrize("args, words", [
    (["--rate", "0"], "rate"), (["--rate", "1"], "rate"), (["--rate", "nan"], "rate"), (["--every", "0"], "every"),
    (["--every", "5", "--rate", "0.1"], "not both"), ([], "every, rate"), (["--every", "5", "--seed", "-1"], "seed"),
    (["--every", "5", "--seed", str(2**63)], "seed"), (["--every", "5", "--queue", "nope"], "queue"),
])
def test_bad_stream_options_exit_2_and_store_nothing(small: str, args: list[str], words: str) -> None:
    db = small
    code, _, err = invoke("sample", "stream", "start", "T", *args, "--db", db)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("reviewdepth: error: ") and words in lines[0], err
    assert "Traceback" not in err and streams(db) == 0


def test_pace_changes_the_active_streams_k_and_void_stops_it(tmp_path: Any) -> None:
    db = f"sqlite:///{tmp_path / 'pace.db'}"
    assert invoke("db", "upgrade", "--db", db)[0] == 0
    run = tmp_path / "t.run"
    run.write_text("".join(f"T Q0 d{i} {i + 1} {50 - i} sys\n" for i in range(50)))
    assert invoke("import", "run", str(run), "--db", db)[0] == 0
    code, _, err = invoke("sample", "stream", "pace", "T", "4", "--db", db)
    assert code == 2 and "no active audit stream" in err and len(err.strip().splitlines()) == 1, err
    assert as_json("sample", "stream", "start", "T", "--every", "5", "--seed", "7", "--db", db)["every"] == 5
    code, _, err = invoke("sample", "stream", "pace", "T", "four", "--db", db)
    assert code == 2 and "K: a whole number K >= 1 or auto, not 'four'" in err, err
    paced = as_json("sample", "stream", "pace", "T", "4", "--db", db)
    assert paced["every"] == 4 and paced["id"] == 1 and paced["seed"] == 7
    code, out, err = invoke("sample", "stream", "void", "T", "--reason", "done", "--db", db)
    assert code == 0 and "(voided)" in out and "done" in out, err
    assert as_json("sample", "stream", "show", "T", "--db", db)["voided"] is True


@pytest.mark.parametrize("args", [
    ["T", "--every", "5"], ["T", "--show"], ["T", "--void", "--reason", "x"], ["T", "--pace", "3"],  # the old forms
    ["show", "T", "--every", "5"], ["void", "T"], ["void", "T", "--reason", "x", "--seed", "1"],
    ["pace", "T"], ["pace", "T", "3", "--rate", "0.1"], ["start", "T", "--reason", "x"],
])
def test_each_stream_subcommand_takes_only_its_options(small: str, args: list[str]) -> None:
    code, out, err = invoke("sample", "stream", *args, "--db", small)
    assert code == 2 and out == "" and "Usage: reviewdepth sample stream" in err and "Error: " in err, err
    assert "Traceback" not in err and streams(small) == 0


def test_next_and_show_name_what_is_wrong(small: str) -> None:
    db = small
    for args, words in [(["next", "T", "--count", "0"], "count"), (["next", "nope"], "unknown topic"),
                        (["next", "T", "--queue", "nope"], "queue"),
                        (["sample", "stream", "show", "T"], "no audit stream"),
                        (["sample", "stream", "start", "nope", "--every", "3"], "unknown topic")]:
        code, _, err = invoke(*args, "--db", db)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, (args, err)
    plain = as_json("next", "T", "--count", "3", "--db", db)
    assert plain["stream"] is None and [d["doc_id"] for d in plain["documents"]] == ["d0", "d1", "d2"]
    code, _, err = invoke("judge", "T", "d0", "1", "--role", "audit", "--db", db)
    assert code == 0, err
    code, _, err = invoke("judge", "T", "d1", "1", "--role", "auditor", "--db", db)
    assert code == 2 and "audit" in err
