"""The library gives the CLI's numbers: `rd.evaluate` from DataFrames and dicts prints the same trec_eval lines as
``reviewdepth eval`` on trec_eval's own test files and a CLEF 2017 run; `rd.compare` gives ``compare``'s JSON; and
the depth report and stop plan of a SYNERGY labels column are those ``report`` and ``plan`` give after the same
labels are imported with ``import run`` and ``import csv``."""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import reviewdepth as rd

from ..conftest import shared_data


def cli(*args: str, db: Path | None = None, codes: tuple[int, ...] = (0,)) -> str:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if db is not None:
        env["REVIEWDEPTH_DATABASE_URL"] = f"sqlite:///{db}"
    # run away from the checkout: from its root, `-m` would find the source folder reviewdepth/ (without the
    # installed reviewdepth.cli) ahead of the installed package
    done = subprocess.run([sys.executable, "-m", "reviewdepth.cli.app", *args], capture_output=True, text=True,
                          env=env, timeout=600, cwd=tempfile.gettempdir())
    assert done.returncode in codes, done.stderr
    return done.stdout


def qrels_frame(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep=r"\s+", header=None, names=["query_id", "iteration", "doc_id", "relevance"],
                       dtype={"query_id": str, "doc_id": str})


def run_frame(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, sep=r"\s+", header=None, usecols=range(6),
                        names=["query_id", "q0", "doc_id", "rank", "score", "run_id"],
                        dtype={"query_id": str, "doc_id": str, "q0": str, "run_id": str})
    return frame


@pytest.mark.parametrize(("qrels", "run", "options"), [
    ("qrels.test", "results.test", ["-m", "all_trec"]),
    ("qrels.rel_level", "results.test", ["-m", "all_trec", "-l", "2"]),
    ("qrels.test", "results.trunc", ["-m", "official", "-c"]),
])
def test_evaluate_from_dataframes_prints_what_eval_prints(qrels: str, run: str, options: list[str]) -> None:
    qrels_path = shared_data("trec_eval-test", qrels)
    run_path = shared_data("trec_eval-test", run)
    level = int(options[options.index("-l") + 1]) if "-l" in options else 1
    result = rd.evaluate(qrels_frame(qrels_path), run_frame(run_path), measures=options[1], per_query=True,
                         relevance_level=level, complete="-c" in options)
    assert result.to_trec() == cli("eval", "-q", *options, str(qrels_path), str(run_path))


def test_evaluate_from_dicts_and_records_matches_paths() -> None:
    qrels_path = shared_data("trec_eval-test", "qrels.test")
    run_path = shared_data("trec_eval-test", "results.test")
    qrels = qrels_frame(qrels_path)
    run = run_frame(run_path)
    nested_qrels: dict[str, dict[str, int]] = {}
    for q, d, r in zip(qrels.query_id, qrels.doc_id, qrels.relevance, strict=True):
        nested_qrels.setdefault(q, {})[d] = int(r)
    nested_run: dict[str, dict[str, float]] = {}
    for q, d, s in zip(run.query_id, run.doc_id, run.score, strict=True):
        nested_run.setdefault(q, {})[d] = float(s)
    from collections import namedtuple

    qrel = namedtuple("qrel", "query_id doc_id relevance iteration")
    records = [qrel(q, d, r, "0") for q, d, r in zip(qrels.query_id, qrels.doc_id, qrels.relevance, strict=True)]
    by_path = rd.evaluate(qrels_path, run_path, per_query=True)
    for given_qrels in (nested_qrels, records):
        result = rd.evaluate(given_qrels, nested_run, per_query=True)
        assert {m: v for m, v in result.summary.items() if m != "runid"} == \
               {m: v for m, v in by_path.summary.items() if m != "runid"}
        assert result.per_query == by_path.per_query


def test_evaluate_refuses_a_frame_without_a_score_column_in_one_line() -> None:
    frame = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"]})
    with pytest.raises(ValueError, match="no score column"):
        rd.evaluate({"1": {"a": 1}}, frame)
    with pytest.raises(ValueError, match="row 1: field doc_id"):
        rd.evaluate({"1": {"a b": 1}}, {"1": {"a": 1.0}})


def test_evaluate_a_clef_2017_run_from_dataframes_prints_what_eval_prints() -> None:
    qrels_path = shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz")
    run_path = shared_data("clef-tar-2017", "runs", "iiit.run1.gz")
    result = rd.evaluate(qrels_frame(qrels_path), run_frame(run_path), measures=["all_trec"], per_query=True)
    assert result.to_trec() == cli("eval", "-q", "-m", "all_trec", str(qrels_path), str(run_path))


def test_compare_gives_compare_s_json() -> None:
    qrels_path = shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz")
    runs = [shared_data("clef-tar-2017", "runs", name) for name in ("iiit.run1.gz", "ecnu.run2.gz")]
    expected = json.loads(cli("compare", str(qrels_path), *map(str, runs), "--format", "json"))
    by_path = rd.compare(qrels_path, runs)
    assert by_path.to_dict() == expected
    named = {path.name.removesuffix(".gz"): run_frame(path) for path in runs}
    from_frames = rd.compare(qrels_frame(qrels_path), named)
    assert from_frames.to_dict() == expected
    assert from_frames.cell("map", "ecnu.run2").mean == expected["cells"][1]["mean"]


# ---- the review side ----------------------------------------------------------------------------------------------

VOLATILE = {"generated_at", "created_at", "database", "digest", "digests", "chain_head", "recorded_at", "at",
            "judged_at", "last_judgment_at", "provenance",  # provenance: the hash chain covers times and names
            "last_activity", "judgment_chain_head",
            "coded", "coding"}  # how a sample was coded names its door: the library, or the CLI's judge --file


def stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def synergy(tmp_path: Path, reviewed: int | None) -> tuple[list[str], list[int], Path]:
    """The ADHD set's pmids and labels in file order, and a store holding them through the CLI: the file order as
    the ranking (``import run``), the first ``reviewed`` labels as review judgments (``import csv``)."""
    with gzip.open(shared_data("synergy", "Cohen_2006_ADHD_ids.csv.gz"), "rt") as handle:
        rows = list(csv.DictReader(handle))
    docs = [row["pmid"] for row in rows]
    labels = [int(row["label_included"]) for row in rows]
    db = tmp_path / "cli.sqlite3"
    cli("db", "upgrade", db=db)
    run = tmp_path / "ranking.run"
    run.write_text("".join(f"topic Q0 {d} {i} {len(docs) - i + 1} ranking\n" for i, d in enumerate(docs, start=1)))
    cli("import", "run", str(run), "--queue", "queue", db=db)
    judged = tmp_path / "labels.csv"
    count = len(docs) if reviewed is None else reviewed
    judged.write_text("doc,label\n" + "".join(f"{d},{y}\n" for d, y in zip(docs[:count], labels[:count],
                                                                         strict=True)))
    cli("import", "csv", str(judged), "--topic", "topic", db=db)
    return docs, labels, db


def test_depth_of_a_synergy_labels_column_is_the_cli_report(tmp_path: Path) -> None:
    docs, labels, db = synergy(tmp_path, None)
    result = rd.depth(pd.Series(labels), target=[0.9, 0.95], doc_ids=docs)
    expected = json.loads(cli("report", "topic", "--target", "0.9", "--target", "0.95", "--format", "json", db=db))
    assert stable(result.to_dict()) == stable(expected)
    assert result.kind == "report" and result.decision is result.model.answer.topic_status


def test_plan_of_a_synergy_review_in_progress_is_the_cli_plan(tmp_path: Path) -> None:
    docs, labels, db = synergy(tmp_path, 400)
    partial = [*labels[:400], *[None] * (len(labels) - 400)]
    result = rd.plan(partial, doc_ids=docs)
    expected = json.loads(cli("plan", "topic", "--format", "json", db=db))
    assert stable(result.to_dict()) == stable(expected)


def test_evaluate_from_polars_frames_prints_what_eval_prints() -> None:
    import polars as pl

    qrels_path = shared_data("trec_eval-test", "qrels.test")
    run_path = shared_data("trec_eval-test", "results.test")
    # polars' own reader, under ir_measures' other spellings (qid, docno, rel)
    qrels = pl.read_csv(qrels_path, separator=" ", has_header=False, new_columns=["qid", "iteration", "docno", "rel"],
                        schema_overrides={"qid": pl.String})
    run = pl.DataFrame([line.split() for line in run_path.read_text().splitlines()],
                       schema=["qid", "q0", "docno", "rank", "score", "run_id"], orient="row")
    run = run.with_columns(pl.col("score").cast(pl.Float64))
    result = rd.evaluate(qrels, run, measures="official", per_query=True)
    assert result.to_trec() == cli("eval", "-q", "-m", "official", str(qrels_path), str(run_path))


def test_evaluate_from_frames_with_ties_non_ascii_ids_and_graded_levels_prints_what_eval_prints(
        tmp_path: Path) -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    queries = [f"q{i}" for i in range(1, 6)] + ["ü-1"]
    docs = [f"d{i}" for i in range(60)] + ["dé", "文書", "d\u00a0x"]  # a no-break space is part of an id
    run_rows = [(q, d, float(rng.integers(0, 5))) for q in queries for d in rng.choice(docs, 40, replace=False)]
    qrels_rows = [(q, d, int(rng.integers(-1, 4))) for q in queries for d in rng.choice(docs, 30, replace=False)]
    run = pd.DataFrame(run_rows, columns=["qid", "docno", "score"])  # integral scores: many ties
    qrels = pd.DataFrame(qrels_rows, columns=["qid", "docno", "rel"])
    run_path, qrels_path = tmp_path / "run", tmp_path / "qrels"
    run.assign(q0="Q0", rank=1, tag="t")[["qid", "q0", "docno", "rank", "score", "tag"]].to_csv(
        run_path, sep=" ", header=False, index=False)
    qrels.assign(it=0)[["qid", "it", "docno", "rel"]].to_csv(qrels_path, sep=" ", header=False, index=False)
    for level in ("1", "2"):
        result = rd.evaluate(qrels, run.assign(tag="t"), measures="all_trec", per_query=True,
                             relevance_level=int(level))
        assert result.to_trec() == cli("eval", "-q", "-m", "all_trec", "-l", level, str(qrels_path), str(run_path))


@pytest.mark.parametrize("audit_seed", [1, 2, 3])
def test_monitor_with_an_audit_stream_never_overstates_the_reviewed_set_s_recall(audit_seed: int) -> None:
    """The review served with an audit stream (one audit document per 5 reviewed) from the ADHD set's labels: the
    monitor decides by the stream, its anytime-valid lower bound is at most the true recall of the reviewed set
    (counted here from the labels and the documents it lists as found), and no served audit document is left
    unjudged."""
    with gzip.open(shared_data("synergy", "Cohen_2006_ADHD_ids.csv.gz"), "rt") as handle:
        labels = [int(row["label_included"]) for row in csv.DictReader(handle)]
    result = rd.monitor(labels, reviewed=600, audit_every=5, audit_seed=audit_seed, target=0.8)
    status = result.to_dict()["topic_status"]
    audit = [f for f in status["figures"] if f["basis"] == "audit stream"]
    assert status["decided_by"] == "audit stream" and len(audit) == 1
    true_recall = status["relevant_found"] / sum(labels)
    assert audit[0]["recall_lower"] <= true_recall
    assert "served and not yet judged" not in (status["next_step"] or "")


def test_assess_plan_and_monitor_with_a_sample_are_the_cli_s(tmp_path: Path) -> None:
    """300 records screened, then a random sample of 100 of the rest drawn with seed 3 (``sample draw``) and coded
    (``judge --role sample``): ``report``, ``plan`` and ``watch --once`` give what rd.assess, rd.plan and rd.monitor
    give from the labels with the same sample size and seed."""
    docs, labels, db = synergy(tmp_path, 300)
    drawn = json.loads(cli("sample", "draw", "topic", "--size", "100", "--frame", "unreviewed", "--seed", "3",
                           "--format", "json", db=db))
    coded = tmp_path / "sample.csv"
    label_of = dict(zip(docs, labels, strict=True))
    coded.write_text("doc,label\n" + "".join(f"{d},{label_of[d]}\n" for d in (x["doc_id"] for x in drawn["documents"])))
    cli("judge", "topic", "--file", str(coded), "--role", "sample", "--reviewer", "sampler", db=db)
    assert sorted(rd.sample_ranks(labels, 100, 3, reviewed=300)) == sorted(x["rank"] for x in drawn["documents"])

    review = {"reviewed": 300, "sample_size": 100, "seed": 3, "doc_ids": docs}
    expected = json.loads(cli("report", "topic", "--target", "0.95", "--format", "json", db=db))
    assert stable(rd.assess(labels, target=0.95, **review).to_dict()) == stable(expected)
    expected = json.loads(cli("plan", "topic", "--format", "json", db=db))
    assert stable(rd.plan(labels, **review).to_dict()) == stable(expected)
    expected = json.loads(cli("watch", "topic", "--once", "--target", "0.95", "--format", "json", db=db,
                              codes=(0, 1)))
    assert stable(rd.monitor(labels, target=0.95, **review).to_dict()) == stable(expected)
