"""The simulate use case (issue 17, items 2 and 4): the store and the files give the same figures for the same data
(on SQLite and PostgreSQL); the figures do not depend on the executor (in-process, two worker processes, a Dask
LocalCluster: byte-identical JSON); an interrupted run returns the complete replicates, equal to a shorter run;
topics not fully judged and bad plans are refused naming the topic or option, the database unchanged."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.estimation.replay import CHUNK, RULES, replay, rules_for, summarise
from reviewdepth.report.render import render
from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.files.imports import import_qrels, import_run
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.simulation import simulate
from reviewdepth.services.simulation.simulate import (
    NamedQueue,
    SimulationSource,
    build_plan,
    file_source,
    parse_looks,
    queues_from_files,
    run_simulation,
    store_source,
    topic_key,
)
from reviewdepth.store.models import Judgment, Queue

DATA = Path(__file__).resolve().parents[1] / "data" / "clef2019"
QRELS = DATA / "CD012551.abs.qrels"
RUN = DATA / "CD012551.sheffield-baseline.run"


def plan(replicates: int = 20, **changes: object) -> object:
    settings: dict[str, object] = {"design": "audit", "every": 10, "look_every": 50, "replicates": replicates,
                                   "seed": 7}
    settings.update(changes)
    return build_plan(**settings)  # type: ignore[arg-type]


def labels_by_hand() -> np.ndarray:
    """CD012551's labels in the run's line order, read without the package's readers."""
    relevant = {line.split()[2] for line in QRELS.read_text().splitlines() if line.strip() and int(line.split()[3]) > 0}
    return np.array([int(line.split()[2] in relevant) for line in RUN.read_text().splitlines() if line.strip()],
                    dtype=np.int8)


def test_files_read_as_the_run_and_qrels_say() -> None:
    [queue] = queues_from_files(str(QRELS), str(RUN))
    expected = labels_by_hand()
    assert queue.name == "CD012551" and queue.unlabelled == 0
    assert np.array_equal(queue.labels, expected) and queue.relevant == 68


def test_store_and_files_give_the_same_figures(engine: Engine) -> None:
    import_run(engine, str(RUN))
    import_qrels(engine, str(QRELS))
    the_plan = plan()
    from_store = run_simulation(store_source(engine, ["CD012551"]), the_plan)
    from_files = run_simulation(file_source(str(QRELS), str(RUN)), the_plan)
    assert from_store.rules == from_files.rules and from_store.charts == from_files.charts
    assert [t.oracle_depth for t in from_store.topics] == [t.oracle_depth for t in from_files.topics]
    # the oracle depth by hand: the rank of the ceil(0.95 · 68) = 65th relevant document
    labels = labels_by_hand()
    assert from_store.topics[0].needed == math.ceil(0.95 * 68) == 65
    assert from_store.topics[0].oracle_depth == int(np.flatnonzero(labels)[64]) + 1
    # the engine's own replay of the same queue under the topic's key, summarised
    direct = summarise([replay(labels, the_plan, topic_key("CD012551"))], the_plan.confidence)
    assert [r.rule for r in from_store.rules] == [s.rule for s in direct] == list(rules_for("audit"))
    assert rules_for("audit")[:6] == ("monitor", "fixed", "qbcb", "target", "knee", "budget")
    for row, summary in zip(from_store.rules, direct, strict=True):
        assert (row.stops, row.failures, row.runs) == (summary.stops, summary.failures, 20)
        assert row.kind == RULES[row.rule].kind_under("audit")
    # on a growing audit sample QBCB and the target method are one-sample rules used at every look
    assert {row.rule: row.kind for row in from_store.rules}["qbcb"] == "invalid"
    assert not from_store.partial and from_store.settings.replicates_done == 20
    # the queue by name (the run's tag), and one the topic does not have
    named = store_source(engine, ["CD012551"], queue="baseline", policy="adjudicated")
    assert np.array_equal(named.queues[0].labels, labels)
    with pytest.raises(NotFound, match="topic 'CD012551' has no queue 'other'"):
        store_source(engine, ["CD012551"], queue="other")
    with pytest.raises(Invalid, match="policy: unknown label policy 'newest'"):
        store_source(engine, ["CD012551"], policy="newest")


def test_a_topic_not_fully_judged_is_refused_and_nothing_is_written(engine: Engine) -> None:
    import_run(engine, str(RUN))
    docs = [line.split()[2] for line in RUN.read_text().splitlines()[:30]]
    record_batch(engine, "CD012551", [BatchItem(d, "0") for d in docs], reviewer="ana", source="test")
    with engine.connect() as conn:
        before = (conn.execute(select(func.count()).select_from(Judgment)).scalar_one(),
                  conn.execute(select(func.count()).select_from(Queue)).scalar_one())
    with pytest.raises(Invalid, match=r"topic 'CD012551': queue .* has 561 unjudged documents of 591"):
        store_source(engine, ["CD012551"])
    with pytest.raises(NotFound, match="unknown topic 'nope'"):
        store_source(engine, ["nope"])
    with pytest.raises(Conflict, match="no topic of the store has a fully judged queue"):
        store_source(engine)
    with engine.connect() as conn:
        after = (conn.execute(select(func.count()).select_from(Judgment)).scalar_one(),
                 conn.execute(select(func.count()).select_from(Queue)).scalar_one())
    assert before == after


def two_topics() -> SimulationSource:
    """CD012551 and the same documents in reverse order under another name: two different queues."""
    labels = labels_by_hand()
    return SimulationSource((NamedQueue("CD012551", labels, "run"), NamedQueue("reversed", labels[::-1].copy(), "run")),
                            "two topics")


def test_two_workers_give_the_same_bytes() -> None:
    source, the_plan = two_topics(), plan(replicates=CHUNK + 10)  # two chunks per topic: four jobs
    local = render(run_simulation(source, the_plan), "json")
    seen: list[tuple[int, int]] = []
    pooled = run_simulation(source, the_plan, workers=2, progress=lambda done, total: seen.append((done, total)))
    assert render(pooled, "json") == local
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_dask_local_cluster_gives_the_same_bytes() -> None:
    distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed (the [dask] extra)")
    source, the_plan = two_topics(), plan(replicates=CHUNK + 10)
    local = render(run_simulation(source, the_plan), "json")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        assert render(run_simulation(source, the_plan, dask_address=cluster.scheduler_address), "json") == local


def test_dask_unreachable_scheduler_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed", reason="dask[distributed] is not installed (the [dask] extra)")
    monkeypatch.setattr(simulate, "DASK_CONNECT_SECONDS", 0.5)  # the default waits 10 s for a scheduler
    with pytest.raises(Invalid, match=r"dask: cannot reach a Dask scheduler at 'tcp://127\.0\.0\.1:1'"):
        run_simulation(two_topics(), plan(), dask_address="tcp://127.0.0.1:1")


def test_an_interrupted_run_keeps_the_complete_replicates() -> None:
    source = two_topics()

    def stop_after(jobs: int) -> object:
        def progress(done: int, total: int) -> None:
            if done == jobs:
                raise KeyboardInterrupt
        return progress

    partial = run_simulation(source, plan(replicates=CHUNK + 10), progress=stop_after(2))
    assert partial.partial and partial.settings.replicates_done == CHUNK
    assert any(n.startswith(f"interrupted: {CHUNK} of {CHUNK + 10} replicates") for n in partial.notes)
    shorter = run_simulation(source, plan(replicates=CHUNK))
    assert partial.rules == shorter.rules and partial.charts == shorter.charts
    # one topic's first chunk only: no replicate is complete on every topic
    nothing = run_simulation(source, plan(replicates=CHUNK + 10), progress=stop_after(1))
    assert nothing.partial and nothing.settings.replicates_done == 0 and nothing.rules == []
    for fmt in ("table", "json", "csv", "html"):
        assert render(nothing, fmt)  # type: ignore[arg-type]


def test_unlabelled_documents_and_topics_without_relevant(tmp_path: Path) -> None:
    lines = QRELS.read_text().splitlines()
    kept = [line for line in lines if line.split()[2] not in {"21436307", "23010344"}]  # the run's first two
    qrels = tmp_path / "q"
    qrels.write_text("\n".join(kept) + "\n")
    run = tmp_path / "r"
    run.write_text(RUN.read_text() + "".join(f"EMPTY 0 e{i} {i} 1.0 x\n" for i in range(1, 30)))
    source = file_source(str(qrels), str(run))
    lost = int(labels_by_hand()[:2].sum())  # the relevant documents among the two without a qrels line now
    assert [(q.name, q.unlabelled, q.relevant) for q in source.queues] == [("CD012551", 2, 68 - lost),
                                                                           ("EMPTY", 29, 0)]
    report = run_simulation(source, plan(replicates=3))
    assert [t.topic for t in report.topics] == ["CD012551"]
    assert "left out, no relevant document (recall undefined): EMPTY" in report.notes
    assert "2 documents of the run have no qrels line (or a negative grade) and count as non-relevant" \
        in report.notes
    with pytest.raises(Invalid, match="topic: 'other' is not a topic of the run"):
        file_source(str(qrels), str(run), ["other"])
    assert [q.name for q in file_source(str(qrels), str(run), ["EMPTY"]).queues] == ["EMPTY"]


@pytest.mark.parametrize(("changes", "message"), [
    ({"rules": ["nope"]}, "rule: unknown rule 'nope'"),
    ({"design": "none", "rules": ["monitor"]}, "rule: 'monitor' does not apply to the design 'none'"),
    ({"design": "sideways"}, "design: unknown design 'sideways'"),
    ({"replicates": 0}, "replicates: must be a whole number >= 1"),
    ({"replicates": 10**7}, "replicates: at most 1,000,000 per topic"),
    ({"target": "1.2"}, r"target: the target recall must be in \(0, 1\], not 1.2"),
    ({"target": "most"}, "target: 'most' is not a number"),
    ({"confidence": 1.0}, "confidence: must be a number from 0.5 to 0.999999"),
    ({"every": 0}, "every: the audit design needs one audit document per every >= 1"),
    ({"design": "rest", "every": 0}, "sample_size: the rest design needs a positive sample size"),
])
def test_bad_plans_name_the_option(changes: dict[str, object], message: str) -> None:
    with pytest.raises(Invalid, match=message):
        plan(**changes)


def test_looks() -> None:
    assert parse_looks("every:25") == 25
    for bad in ("25", "every:0", "every:", "each:5", "every:x"):
        with pytest.raises(Invalid, match="looks: expected every:K"):
            parse_looks(bad)


def test_default_rules_are_the_designs() -> None:
    assert plan(design="none").rules == rules_for("none") and rules_for("none")[:2] == ("knee", "budget")
    assert plan(design="rest", sample_size=20).rules == rules_for("rest")
    assert rules_for("rest")[:4] == ("elusion", "hypergeometric", "knee", "budget")
    assert plan(rules=["budget", "monitor"]).rules == ("budget", "monitor")


def test_dask_without_the_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if dask[distributed] were not installed
    with pytest.raises(Invalid, match=r"dask: --dask needs the optional dependency: pip install 'reviewdepth\[dask\]'"):
        run_simulation(two_topics(), plan(), dask_address="tcp://127.0.0.1:8786")


def test_chunks_are_joined_as_they_arrive_whatever_their_order() -> None:
    """A run keeps each topic's finished chunks as a few joined arrays (not one object per chunk: issue 26), and
    the runs are those of the whole replay, whatever order the chunks came in."""
    labels = labels_by_hand()
    chosen = build_plan(design="population", sample_size=3, replicates=200 * CHUNK, seed=3)
    whole = replay(labels, chosen, simulate.topic_key("t"))
    chunks = [simulate.replay_chunk(labels, chosen, c, simulate.topic_key("t")) for c in range(200)]
    collected = simulate._Collected(2)
    order = [c + 1 if c % 2 == 0 else c - 1 for c in range(200)]  # 1, 0, 3, 2, …
    for c in order:
        collected.add((0, c), chunks[c])
    held = collected._joined[0]
    assert collected.received == 200 and len(held) <= simulate._Collected.JOIN_EVERY and not collected._waiting
    assert collected.complete() == 0  # topic 1 has nothing yet
    collected.add((1, 0), chunks[0])
    assert collected.complete() == 1
    for rule, runs in collected.runs(0, 120).items():
        assert np.array_equal(runs.depth, whole[rule].depth[:120]) and len(runs.stopped) == 120
    for rule, runs in collected.runs(0, 200 * CHUNK).items():
        for name in ("stopped", "depth", "found", "sampled"):
            assert np.array_equal(getattr(runs, name), getattr(whole[rule], name))
