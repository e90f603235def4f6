"""Imports on both databases: every format, atomicity, re-import refusal, and stored data that gives the same
numbers as `reviewdepth eval` on the source files."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.formats.errors import InputError
from reviewdepth.services.answers.queues import find_queue, queue_summary
from reviewdepth.services.errors import Conflict
from reviewdepth.services.evaluation.evaluate import EvalOptions, evaluate_files
from reviewdepth.services.files.imports import import_csv, import_qrels, import_run
from reviewdepth.store.models import ImportRecord, Judgment, Queue, QueueEntry, Topic


def counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {model.__tablename__: int(conn.execute(select(func.count()).select_from(model)).scalar_one())
                for model in (Topic, Queue, QueueEntry, Judgment, ImportRecord)}


# A stored queue keeps each document's decision (relevant, not relevant, none), not the qrels value: graded gains
# and infAP's difference between a pooled-unjudged document (qrels value < 0) and one absent from the qrels are lost,
# so on graded qrels these measures differ from the file's (binary qrels give the same values).
STORE_CANNOT_MATCH = ("G", "Rndcg", "ndcg", "infAP")


def assert_same_as_eval(engine: Engine, qrels: Path, run: Path, level: int = 1, graded: bool = False) -> int:
    expected = evaluate_files(qrels, run, EvalOptions(measures=["all"], relevance_level=level))
    for qid, values in expected.per_query.items():
        stored = queue_summary(engine, qid).measures
        for name, value in values.items():
            if name not in expected.measures:
                continue  # relstring: a per-query string with no summary value
            if graded and name.startswith(STORE_CANNOT_MATCH):
                continue
            assert stored[name] == pytest.approx(value, abs=1e-12), (qid, name)
            assert "%6.4f" % stored[name] == "%6.4f" % value
    return len(expected.per_query)


def test_trec_files_give_the_same_numbers_as_eval(engine: Engine, trec_data: Path) -> None:
    import_qrels(engine, str(trec_data / "qrels.test"))
    summary = import_run(engine, str(trec_data / "results.test"), order="trec_eval")
    assert summary.topics == ["301", "302", "303"]
    assert assert_same_as_eval(engine, trec_data / "qrels.test", trec_data / "results.test") == 3


def test_graded_qrels_with_level(engine: Engine, trec_data: Path) -> None:
    import_qrels(engine, str(trec_data / "qrels.rel_level"), level=2)
    import_run(engine, str(trec_data / "results.test"), order="trec_eval")
    assert_same_as_eval(engine, trec_data / "qrels.rel_level", trec_data / "results.test", level=2, graded=True)
    with engine.connect() as conn:
        labels = set(conn.execute(select(Judgment.label).distinct()).scalars())
        unjudged = conn.execute(select(func.count()).select_from(Judgment).where(Judgment.relevant.is_(None)))
        assert int(unjudged.scalar_one()) > 0  # -1 values kept, with no decision
    assert {"-1", "0", "1", "2", "3", "4"} <= labels


def test_clef_2017_qrels_and_run_equal_eval(engine: Engine, shared: Callable[..., Path], tmp_path: Path) -> None:
    qrels = shared("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz")
    run = shared("clef-tar-2017", "runs", "waterloo.B-thresh-normal.gz")
    import_qrels(engine, str(qrels))
    import_run(engine, str(run), order="trec_eval")
    assert assert_same_as_eval(engine, qrels, run) >= 25


def test_clef_action_column_keeps_the_threshold(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "clef2017.run"
    run.write_text("T1 AF d1 1 3 sys\nT1 NF d2 2 2 sys\nT1 NS d3 3 1 sys\nT1 NS d4 4 0.5 sys\n")
    import_run(engine, str(run))
    _, queue = find_queue(engine, "T1", None)
    assert queue.threshold_rank == 2 and queue.ordering == "given" and queue.size == 4
    flagged = tmp_path / "clef2019.run"
    flagged.write_text("T2 0 a 0 9 s\nT2 0 b 1 9 s\nT2 1 c 2 9 s\nT2 0 d 3 9 s\n")
    import_run(engine, str(flagged))
    _, queue2 = find_queue(engine, "T2", None)
    assert queue2.threshold_rank == 3
    with engine.connect() as conn:
        flags = conn.execute(select(QueueEntry.flag).where(QueueEntry.queue_id == queue.id)
                             .order_by(QueueEntry.rank)).scalars().all()
    assert flags == ["AF", "NF", "NS", "NS"]


def test_clef_cost_action_codes_keep_the_threshold_as_eval_reads_it(engine: Engine, tmp_path: Path) -> None:
    """Regression: a CLEF 2017 run using the cost codes (AFN, DFN, NFS, NFN) imported with threshold_rank null
    while ``eval --suite tar`` honoured them; both now read the run through formats.runs."""
    from reviewdepth.services.evaluation.evaluate_tar import TarOptions, evaluate_tar_files

    run = tmp_path / "cost2017.run"
    run.write_text("T1 AFN d1 1 6 sys\nT1 DFN d2 2 5 sys\nT1 NFS d3 3 4 sys\nT1 NFN d4 4 3 sys\nT1 NS d5 5 2 sys\n"
                   "T1 NS d6 6 1 sys\n")
    qrels = tmp_path / "cost2017.qrels"
    qrels.write_text("".join(f"T1 0 d{i} {int(i in (1, 3, 6))}\n" for i in range(1, 7)))
    import_run(engine, str(run))
    _, queue = find_queue(engine, "T1", None)
    assert queue.threshold_rank == 4
    with engine.connect() as conn:
        flags = conn.execute(select(QueueEntry.flag).where(QueueEntry.queue_id == queue.id)
                             .order_by(QueueEntry.rank)).scalars().all()
    assert flags == ["AFN", "DFN", "NFS", "NFN", "NS", "NS"]
    evaluated = evaluate_tar_files(qrels, run, TarOptions())
    assert evaluated.per_query["T1"]["num_shown"] == queue.threshold_rank
    assert evaluated.per_query["T1"]["num_feedback"] == 0  # AFN counts as feedback only after the cost mapping


def test_given_order_keeps_file_order(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "r.run"
    run.write_text("q Q0 low 1 0.1 s\nq Q0 high 2 0.9 s\n")
    import_run(engine, str(run), queue_name="given")
    import_run(engine, str(run), queue_name="sorted", order="trec_eval", again=True)
    with engine.connect() as conn:
        def docs(name: str) -> list[str]:
            qid = conn.execute(select(Queue.id).where(Queue.name == name)).scalar_one()
            return list(conn.execute(select(QueueEntry.doc_id).where(QueueEntry.queue_id == qid)
                                     .order_by(QueueEntry.rank)).scalars())
        assert docs("given") == ["low", "high"]
        assert docs("sorted") == ["high", "low"]


@pytest.mark.parametrize("kind", ["run", "qrels", "csv"])
def test_bad_last_line_leaves_the_database_unchanged(engine: Engine, tmp_path: Path, trec_data: Path,
                                                     kind: str) -> None:
    import_qrels(engine, str(trec_data / "qrels.test"))
    before = counts(engine)
    bad = tmp_path / f"bad.{kind}"
    if kind == "run":
        good = (trec_data / "results.test").read_text()
        bad.write_text(good + "303 Q0 DOCX 1 not-a-score STANDARD\n")
        call = lambda: import_run(engine, str(bad))  # noqa: E731
        where = f"{bad}:1501: field score"
    elif kind == "qrels":
        bad.write_text("9 0 a 1\n9 0 b 0\n9 0 c one\n")
        call = lambda: import_qrels(engine, str(bad))  # noqa: E731
        where = f"{bad}:3: field rel"
    else:
        bad.write_text("record_id,label_included\n1,1\n2,0\n3,perhaps\n")
        call = lambda: import_csv(engine, str(bad), topic="x")  # noqa: E731
        where = f"{bad}:4: field label_included"
    with pytest.raises(InputError) as info:
        call()
    assert where in str(info.value)
    assert counts(engine) == before


def test_duplicate_docno_in_run_is_rejected_with_its_line(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "dup.run"
    run.write_text("q Q0 a 1 3 s\nq Q0 b 2 2 s\nq Q0 a 3 1 s\n")
    with pytest.raises(InputError, match=r"dup.run:3: field docno: duplicate docno 'a'"):
        import_run(engine, str(run))
    assert counts(engine)["queue_entries"] == 0


def test_reimport_is_refused_unless_again(engine: Engine, trec_data: Path) -> None:
    import_qrels(engine, str(trec_data / "qrels.test"))
    with pytest.raises(Conflict, match="already imported"):
        import_qrels(engine, str(trec_data / "qrels.test"))
    import_qrels(engine, str(trec_data / "qrels.test"), again=True)
    assert counts(engine)["judgments"] == 2 * 3681
    assert counts(engine)["imports"] == 2


def test_csv_asreview_conventions_encodings_and_delimiters(engine: Engine, tmp_path: Path) -> None:
    export = tmp_path / "screening.csv"
    export.write_bytes("record_id;title;asreview_label\n1;Caf\xe9;1\n2;b;0\n3;c;\n".encode("cp1252"))
    summary = import_csv(engine, str(export), topic="screen", allow_unqueued=True)  # no queue yet
    assert summary.rows == 3
    bom = tmp_path / "bom.tsv"
    bom.write_bytes(b"\xef\xbb\xbfdoc\tdecision\treviewer\trank\n"
                    + b"A\tinclude\tana\t2\nB\texclude\tbo\t1\n")
    import_csv(engine, str(bom), mapping="doc=doc,label=decision,reviewer=reviewer,rank=rank", topic="screen")
    with engine.connect() as conn:
        rows = conn.execute(select(Judgment.doc_id, Judgment.relevant, Judgment.reviewer)
                            .order_by(Judgment.id)).all()
    assert [tuple(r) for r in rows] == [("1", True, "import"), ("2", False, "import"), ("A", True, "ana"),
                                        ("B", False, "bo")]
    _, queue = find_queue(engine, "screen", "bom")
    assert queue.size == 2


def test_synergy_labels_need_their_id_column_named(engine: Engine, shared: Callable[..., Path],
                                                   tmp_path: Path) -> None:
    """SYNERGY files carry three ids (pmid, doi, openalex_id) and no record_id: no document column is guessed (the
    row numbers were stored as document ids before issue 26); ``--map doc=pmid`` reads them."""
    source = shared("synergy", "Cohen_2006_ADHD_ids.csv.gz")
    local = tmp_path / "adhd.csv"
    local.write_bytes(gzip.decompress(source.read_bytes()))
    with pytest.raises(InputError, match=r"adhd\.csv:1: field doc: .* use --map doc=pmid,label=label_included or "):
        import_csv(engine, str(local), topic="adhd", allow_unqueued=True)
    assert counts(engine)["judgments"] == 0
    summary = import_csv(engine, str(local), mapping="doc=pmid", topic="adhd", allow_unqueued=True)
    lines = local.read_text().splitlines()
    assert summary.rows == len(lines) - 1
    included = {line.split(",", 1)[0] for line in lines[1:] if line.rsplit(",", 1)[1].strip() == "1"}
    with engine.connect() as conn:
        relevant = conn.execute(select(Judgment.doc_id).where(Judgment.relevant.is_(True))).scalars()
        assert set(relevant) == included


def test_gzip_run_and_run_tag_queue_name(engine: Engine, tmp_path: Path, trec_data: Path) -> None:
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress((trec_data / "results.trunc").read_bytes()))
    summary = import_run(engine, str(gz))
    assert summary.queues == ["STANDARD"] and summary.topics == ["301", "303"]
    # the digest is of the content, so the same data uncompressed is recognised as the same import
    with pytest.raises(Conflict, match="already imported"):
        import_run(engine, str(trec_data / "results.trunc"))
    with pytest.raises(Conflict, match="queue 'STANDARD' already exists"):
        import_run(engine, str(trec_data / "results.trunc"), again=True)


def test_csv_time_column_is_the_recorded_time(engine: Engine, tmp_path: Path) -> None:
    export = tmp_path / "timed.csv"
    export.write_text("doc,label,when\na,1,2025-03-01T10:00:00Z\nb,0,2025-03-02 09:30:00+01:00\n")
    import_csv(engine, str(export), mapping="doc=doc,label=label,time=when", topic="t", allow_unqueued=True)
    from reviewdepth.services.review.judgments import list_judgments

    times = [j.recorded_at.isoformat() for j in list_judgments(engine, "t")]
    assert times == ["2025-03-01T10:00:00+00:00", "2025-03-02T08:30:00+00:00"]
    bad = tmp_path / "badtime.csv"
    bad.write_text("doc,label,when\na,1,yesterday\n")
    with pytest.raises(InputError, match=r"badtime\.csv:2: field when"):
        import_csv(engine, str(bad), mapping="doc=doc,label=label,time=when", topic="t")


SHARED_QRELS = [("clef-tar-2017", "qrels", "qrel_content_test.txt.gz"),
                ("clef-tar-2018", "qrels", "task1.test.abs.2018.qrels"),
                ("clef-tar-2019", "qrels", "full.test.dta.abs.2019.qrels.gz")]
SHARED_RUNS = [("clef-tar-2017", "runs", "iiit.run1.gz"),
               ("clef-tar-2018", "runs", "ECNU_TASK1_RUN2_LR.task1.gz"),
               ("clef-tar-2019", "runs", "ilps", "abs-th-ratio-ilps_at_uva.gz"),
               ("clef-tar-2019", "runs", "sheffield", "Prognosis_sheffield-baseline.gz")]


@pytest.mark.parametrize("parts", SHARED_QRELS + SHARED_RUNS, ids=lambda p: p[-1])
def test_shared_clef_files_import(engine: Engine, shared: Callable[..., Path], parts: tuple[str, ...]) -> None:
    path = shared(*parts)
    if "qrels" in parts[-1] or parts[1] == "qrels":
        summary = import_qrels(engine, str(path))
        with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as handle:
            lines = sum(1 for line in handle if line.strip())
        assert summary.rows == lines and counts(engine)["judgments"] == lines
    else:
        summary = import_run(engine, str(path))
        assert counts(engine)["queue_entries"] == summary.rows and len(summary.topics) >= 1
        if "2018" in parts[0]:
            _, queue = find_queue(engine, summary.topics[0], None)
            assert queue.threshold_rank is not None  # the 0/1 flag column gives the run's stopping point


def test_a_bad_query_id_in_qrels_is_named_at_its_first_line_and_nothing_is_stored(engine: Engine,
                                                                                    tmp_path: Path) -> None:
    # query ids are checked once each, in order of first appearance: the error names the earliest line of the
    # first bad one (here "a/b", a '/' being refused in a topic name), not a later one ("..")
    qrels = tmp_path / "bad.qrels"
    qrels.write_text("t1 0 d1 1\nt1 0 d2 0\na/b 0 d3 1\n.. 0 d1 1\na/b 0 d4 0\n")
    before = counts(engine)
    with pytest.raises(InputError) as caught:
        import_qrels(engine, str(qrels))
    assert (caught.value.line, caught.value.field) == (3, "qid")
    assert counts(engine) == before


def test_qrels_query_ids_equal_once_normalised_are_one_topic(engine: Engine, tmp_path: Path) -> None:
    # "é" composed and decomposed are one topic name (NFC): their judgments go to one topic, in file order
    qrels = tmp_path / "nfc.qrels"
    qrels.write_text("caf\u00e9 0 d1 1\ncafe\u0301 0 d2 0\nt2 0 d1 1\n", encoding="utf-8")
    import_qrels(engine, str(qrels))
    with engine.connect() as conn:
        topics = {name: tid for tid, name in conn.execute(select(Topic.id, Topic.name))}
        rows = conn.execute(select(Judgment.topic_id, Judgment.doc_id, Judgment.seq).order_by(Judgment.id)).all()
    assert set(topics) == {"caf\u00e9", "t2"}
    assert [tuple(r) for r in rows] == [(topics["caf\u00e9"], "d1", 1), (topics["caf\u00e9"], "d2", 2),
                                        (topics["t2"], "d1", 1)]
