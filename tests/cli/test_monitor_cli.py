"""`reviewdepth watch` on SQLite and PostgreSQL: --once exits 0 when the stop is certified and 1 otherwise, its
JSON is the service's object, bad input exits 2 with one line naming the field; watching re-prints only when the
topic changed and ends with 0 once certified; Ctrl-C ends it with 1 and no traceback."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli import monitor_cmds
from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers import monitor as monitor_service
from reviewdepth.services.answers.monitor import build_monitor
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit_stream import create_stream, next_documents
from reviewdepth.services.review.batches import BatchItem, record_batch

DOCS = [f"d{i:02d}" for i in range(40)]
RELEVANT = {"d00", "d01", "d02", "d04", "d07", "d24"}


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def judge(engine: Engine, docs: list[str], role: str = "review") -> None:
    record_batch(engine, "T", [BatchItem(d, str(int(d in RELEVANT)), role=role) for d in docs], reviewer="ana",
                 source="test")


def served(engine: Engine) -> list[str]:
    """Topic T (40 documents, the top 20 reviewed) and an audit stream whose first 12 served documents are
    returned, not judged yet (the same topic as tests/services/test_monitor_service.py)."""
    create_topic(engine, "T")
    store_ranking(engine, "T", "q", [RankedDocument(d, float(-i)) for i, d in enumerate(DOCS)])
    judge(engine, DOCS[:20])
    create_stream(engine, "T", every=1, seed=0, reviewer="ana")
    return [d.doc_id for d in next_documents(engine, "T", count=12).documents]


def test_once_exit_codes_and_output(engine: Engine, empty_db_url: str) -> None:
    judge_later = served(engine)
    db = ("--db", empty_db_url)
    code, out, _ = invoke("watch", "T", "--once", "--target", "0.6", *db)
    # the topic's status line first (the report and the dashboard print it too), then the monitor's own signal
    assert code == 1 and out.startswith("60% recall: not reached — recall ≥") and "monitor: CONTINUE: recall ≥" in out
    assert "judge the 12 audit documents served and not yet judged" in out
    assert "valid for one look only" in out
    judge(engine, judge_later, "audit")
    code, out, _ = invoke("watch", "T", "--once", "--target", "0.6", "--format", "json", *db)
    assert code == 0
    shown = json.loads(out)
    assert shown == build_monitor(engine, "T", target="0.6").to_dict()
    assert shown["status"] == "stop certified"
    code, out, _ = invoke("watch", "T", "--once", *db)
    assert code == 1 and out.startswith("95% recall: not reached — recall ≥ 0.600 (audit stream")
    assert "monitor: CONTINUE: recall ≥ 0.600 at 95 % (anytime-valid), below the target 0.95" in out
    for args, field in [(("--target", "1.5"), "target"), (("--target", "x"), "target"),
                        (("--confidence", "1"), "confidence"), (("--interval", "0"), "--interval"),
                        (("--queue", "nope"), "no queue 'nope'")]:
        code, out, err = invoke("watch", "T", "--once", *args, *db)
        assert code == 2 and out == "" and field in err and "Traceback" not in err, (args, err)
    code, _, err = invoke("watch", "nope", "--once", *db)
    assert code == 2 and "unknown topic 'nope'" in err


def test_watching_reprints_on_change_until_certified(engine: Engine, empty_db_url: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    judge_later = served(engine)
    outcome: dict[str, Any] = {}
    # the judgments must land after the watcher's first answer (else that answer already has them), however slow
    # the machine: wait for it rather than for a fixed time
    first_answer = threading.Event()
    real_build = monitor_service.build_monitor

    def build_and_signal(*args: Any, **kwargs: Any) -> Any:
        report = real_build(*args, **kwargs)
        first_answer.set()
        return report

    monkeypatch.setattr(monitor_service, "build_monitor", build_and_signal)

    def run() -> None:
        outcome["result"] = invoke("watch", "T", "--target", "0.6", "--interval", "0.05", "--format", "json",
                                   "--db", empty_db_url)

    watcher = threading.Thread(target=run, daemon=True)
    watcher.start()
    assert first_answer.wait(timeout=60)
    time.sleep(0.3)  # a few polls with nothing changed: none of them prints
    judge(engine, judge_later, "audit")
    watcher.join(timeout=60)
    assert not watcher.is_alive()
    code, out, _ = outcome["result"]
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [line["status"] for line in lines] == ["continue", "stop certified"]


def test_ctrl_c_ends_with_exit_1(engine: Engine, empty_db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    served(engine)

    def interrupted(_seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(monitor_cmds.time, "sleep", interrupted)
    code, out, err = invoke("watch", "T", "--db", empty_db_url)
    assert code == 1 and "CONTINUE" in out and "watch stopped" in err and "Traceback" not in err
