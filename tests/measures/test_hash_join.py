"""The compiled hash join (`reviewdepth.measures._hashjoin`) against the sort-based join it replaces: the same
ranked qrels values and the same duplicate errors (same file row, same message) on inputs built to hit every
branch: queries split over several blocks, queries only in one file, ``-M`` cuts, docnos of different widths and
with NUL bytes, repeated pairs in either file, and 64-bit key collisions forced in the sort-based path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewdepth.formats.scan import fnv1a64_column, scan
from reviewdepth.measures import ranking
from reviewdepth.measures.ranking import DuplicateDocumentError, docno_hashes, join_and_rank

needs_compiled = pytest.mark.skipif(ranking.compiled_join is None, reason="the C hash join was not built")

QIDS = [b"1", b"10", b"2", b"q-x"]
DOCNOS = [b"d1", b"d10", b"D1", b"doc-000001", b"d1\x00x", b"a", b"bb", b"x" * 23]


def _columns(rows: list[tuple[bytes, bytes]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    qids = np.array([q for q, _ in rows], dtype="S8")
    docs = [d for _, d in rows]
    docnos = np.array(docs, dtype=f"S{max(map(len, docs), default=1) or 1}")
    return qids, docnos, fnv1a64_column(docs, docnos)


def _join(run: list[tuple[bytes, bytes]], scores: list[float], qrels: list[tuple[bytes, bytes]],
          rels: list[int], compiled: bool, max_docs: int | None,
          hashes: tuple[np.ndarray | None, np.ndarray | None] | None = None
          ) -> tuple[list[int], list[int], list[str]] | str:
    r_q, r_d, r_h = _columns(run)
    q_q, q_d, q_h = _columns(qrels)
    if hashes is not None:
        r_h, q_h = hashes
    try:
        ranked, _ = join_and_rank(run_qids=r_q, run_docnos=r_d, run_hashes=r_h,
                                  run_scores=np.array(scores, dtype=np.float64), qrels_qids=q_q, qrels_docnos=q_d,
                                  qrels_hashes=q_h, qrels_rels=np.array(rels, dtype=np.int64), max_docs=max_docs,
                                  use_compiled=compiled)
    except DuplicateDocumentError as exc:
        return f"{exc.source}:{exc.index}:{exc}"
    return ranked.rel.tolist(), ranked.offsets.tolist(), ranked.qids


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[tuple[bytes, bytes]], list[float], list[tuple[bytes, bytes]], list[int],
                                    int | None]:
    pair = st.tuples(st.sampled_from(QIDS), st.sampled_from(DOCNOS))
    run = draw(st.lists(pair, min_size=1, max_size=40))
    qrels = draw(st.lists(pair, min_size=1, max_size=30))
    if draw(st.booleans()):  # usually unique pairs, so the join itself (not only the error) is compared
        run = list(dict.fromkeys(run))
        qrels = list(dict.fromkeys(qrels))
    if draw(st.booleans()):  # each query in one block, as most files are
        run.sort(key=lambda p: p[0])
        qrels.sort(key=lambda p: p[0])
    scores = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, -1.0, 3.25]), min_size=len(run), max_size=len(run)))
    rels = draw(st.lists(st.integers(-1, 3), min_size=len(qrels), max_size=len(qrels)))
    max_docs = draw(st.sampled_from([None, None, 1, 2, 5]))
    return run, scores, qrels, rels, max_docs


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(cases())
def test_hash_join_equals_sorted_join(case: tuple[list[tuple[bytes, bytes]], list[float],
                                                  list[tuple[bytes, bytes]], list[int], int | None]) -> None:
    run, scores, qrels, rels, max_docs = case
    assert _join(run, scores, qrels, rels, True, max_docs) == _join(run, scores, qrels, rels, False, max_docs)


@needs_compiled
@settings(max_examples=150, deadline=None)
@given(cases(), st.sampled_from([(True, True), (True, False), (False, True)]))
def test_the_sorted_join_hashes_columns_scanned_without_hashes(
        case: tuple[list[tuple[bytes, bytes]], list[float], list[tuple[bytes, bytes]], list[int], int | None],
        missing: tuple[bool, bool]) -> None:
    # `reviewdepth eval` scans without hashes; the sort-based join (no compiled join) then hashes both sides itself
    run, scores, qrels, rels, max_docs = case
    r_h, q_h = _columns(run)[2], _columns(qrels)[2]
    given_hashes = (None if missing[0] else r_h, None if missing[1] else q_h)
    assert (_join(run, scores, qrels, rels, False, max_docs, hashes=given_hashes)
            == _join(run, scores, qrels, rels, True, max_docs))


def _ranked_with_rel_type(case: tuple[list[tuple[bytes, bytes]], list[float], list[tuple[bytes, bytes]],
                                      list[int], int | None], rel_type: type[np.signedinteger], compiled: bool,
                          level: int) -> list[object] | str:
    run, scores, qrels, rels, max_docs = case
    r_q, r_d, r_h = _columns(run)
    q_q, q_d, q_h = _columns(qrels)
    try:
        ranked, _ = join_and_rank(run_qids=r_q, run_docnos=r_d, run_hashes=r_h,
                                  run_scores=np.array(scores, dtype=np.float64), qrels_qids=q_q, qrels_docnos=q_d,
                                  qrels_hashes=q_h, qrels_rels=np.array(rels, dtype=rel_type), level=level,
                                  max_docs=max_docs, use_compiled=compiled)
    except DuplicateDocumentError as exc:
        return f"{exc.source}:{exc.index}:{exc}"
    assert ranked.rel.dtype == np.int64  # the measures add the ranked values: never in the qrels' narrow type
    assert ranked.judged_levels is not None
    return [ranked.rel.tolist(), ranked.num_rel.tolist(), ranked.num_nonrel.tolist(),
            [part.tolist() for part in ranked.judged_levels], ranked.source_rows.tolist()]


@settings(max_examples=150, deadline=None)
@given(cases(), st.sampled_from([np.int8, np.int16, np.int32]), st.booleans(), st.sampled_from([0, 1, 2, 200, 10**20]))
def test_narrow_qrels_values_join_as_int64_ones(
        case: tuple[list[tuple[bytes, bytes]], list[float], list[tuple[bytes, bytes]], list[int], int | None],
        rel_type: type[np.signedinteger], compiled: bool, level: int) -> None:
    """`reviewdepth eval` reads the qrels values in their narrowest type (`parse_qrels(narrow_rel=True)`): every
    join and count gives what the int64 values give, levels beyond the narrow type included."""
    if compiled and ranking.compiled_join is None:
        return
    assert (_ranked_with_rel_type(case, rel_type, compiled, level)
            == _ranked_with_rel_type(case, np.int64, compiled, level))


@given(st.lists(st.binary(min_size=0, max_size=12).filter(lambda b: not b.endswith(b"\x00")), max_size=30))
def test_docno_hashes_are_the_scanners_hashes(tokens: list[bytes]) -> None:
    values = np.array(tokens, dtype=f"S{max(map(len, tokens), default=1) or 1}")
    assert docno_hashes(values).tolist() == fnv1a64_column(tokens, values).tolist()


def test_docno_hashes_of_scanned_docnos() -> None:
    data = b"".join(b"q 0 doc-%d%s 1\n" % (i, b"x" * (i % 7)) for i in range(500))
    _, docno, _ = scan(data, "s.si", min_fields=4).columns
    assert not isinstance(docno, np.ndarray) and docno.hashes is not None
    assert docno_hashes(docno.values).tolist() == docno.hashes.tolist()


@needs_compiled
def test_colliding_keys_still_join_exactly() -> None:
    """Every docno given the same 64-bit hash: the sort-based join falls back to its dictionary pass, the hash
    join never relies on the hash; both give the true values."""
    run = [(b"1", b"a"), (b"1", b"b"), (b"1", b"c"), (b"2", b"a")]
    qrels = [(b"1", b"b"), (b"1", b"a"), (b"2", b"c"), (b"2", b"a")]
    same = (np.zeros(len(run), dtype=np.uint64), np.zeros(len(qrels), dtype=np.uint64))
    want = ([0, 2, -1, 1], [0, 3, 4], ["1", "2"])
    for compiled in (True, False):
        assert _join(run, [3.0, 2.0, 1.0, 1.0], qrels, [2, 0, 1, 1], compiled, None, same) == want


@needs_compiled
def test_duplicate_rows_are_the_ones_trec_eval_names() -> None:
    # run: (1,a) repeats on row 3, (2,b) on row 2: the earliest line completing a pair is row 2
    run = [(b"1", b"a"), (b"2", b"b"), (b"2", b"b"), (b"1", b"a")]
    qrels = [(b"1", b"a"), (b"2", b"b")]
    for compiled in (True, False):
        got = _join(run, [1.0] * 4, qrels, [1, 1], compiled, None)
        assert isinstance(got, str) and got.startswith("run:2:duplicate docno 'b' for query '2'")
    # qrels: the first repeated row, whatever the query order
    qrels = [(b"2", b"x"), (b"1", b"y"), (b"1", b"y"), (b"2", b"x")]
    for compiled in (True, False):
        got = _join([(b"1", b"y")], [1.0], qrels, [1, 1, 1, 1], compiled, None)
        assert isinstance(got, str) and got.startswith("qrels:2:")
    # -M 1 keeps one document per query: the run's repeat below the cut is not an error (trec_eval checks the
    # evaluated documents only)
    run = [(b"1", b"a"), (b"1", b"b"), (b"1", b"b")]
    for compiled in (True, False):
        assert _join(run, [3.0, 2.0, 1.0], [(b"1", b"a")], [1], compiled, 1) == ([1], [0, 1], ["1"])


@needs_compiled
def test_bad_arguments_are_refused_not_crashed() -> None:
    join = ranking.compiled_join
    assert join is not None
    codes = np.zeros(2, dtype=np.int32)
    docnos = np.array([b"a", b"b"], dtype="S1")
    with pytest.raises(ValueError, match="ncodes"):
        join.join(0, codes, docnos, 1, codes, docnos, 1, None)
    with pytest.raises(ValueError, match="fixed-width"):
        join.join(1, codes, docnos, 2, codes, docnos, 1, None)
    with pytest.raises(ValueError, match="keep"):
        join.join(1, codes, docnos, 1, codes, docnos, 1, np.ones(3, dtype=np.uint8))
    with pytest.raises(ValueError, match="int32"):  # 64-bit codes are refused, not misread
        join.join(1, codes.astype(np.int64), docnos, 1, codes, docnos, 1, None)


DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"


@pytest.mark.parametrize("flags", [[], ["-q", "-c", "-M", "5"], ["-m", "all_trec", "-l", "2"]])
def test_eval_prints_the_same_with_either_join(flags: list[str]) -> None:
    """The whole ``reviewdepth eval`` with the fallback join selected by its environment variable (in a fresh
    process, since the choice is made at import) prints what the compiled join prints."""
    args = [sys.executable, "-m", "reviewdepth.cli.app", "eval", *flags, str(DATA / "qrels.rel_level"),
            str(DATA / "results.test")]
    outputs = []
    for env_value in ("0", "1"):
        env = {**os.environ, ranking.PURE_PYTHON_JOIN_ENV: env_value}
        probe = [sys.executable, "-c", "from reviewdepth.measures import ranking; print(ranking.compiled_join)"]
        # outside the checkout, whose source tree has no built extension (python -c imports from the cwd first)
        chosen = subprocess.run(probe, env=env, capture_output=True, text=True, check=True,
                                cwd=DATA.parents[3]).stdout.strip()
        assert (chosen == "None") == (env_value == "1" or ranking.compiled_join is None)
        done = subprocess.run(args, env=env, capture_output=True, check=True, cwd=DATA.parents[3])
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and outputs[0].count(b"\n") > 20


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(-1, 3)), max_size=60),
       st.lists(st.integers(0, 8), max_size=8, unique=True), st.sampled_from([0, 5000]))
def test_judged_levels_counts_each_query_value(pairs: list[tuple[int, int]], evaluated: list[int],
                                               graded_top: int) -> None:
    """The qrels levels per evaluated query (trec_eval's rel_levels), by the counting table for small values and
    by the sort for a wide value range (``graded_top`` adds a value of 5000), against a per-query count."""
    if graded_top and pairs:
        pairs = [*pairs, (pairs[0][0], graded_top)]
    codes = np.array([c for c, _ in pairs], dtype=np.int64)
    rels = np.array([v for _, v in pairs], dtype=np.int64)
    wanted = np.array(sorted(evaluated), dtype=np.int64)
    offsets, values, counts = ranking._judged_levels(codes, rels, wanted)
    for i, code in enumerate(wanted.tolist()):
        judged = sorted(v for c, v in pairs if c == code and v >= 0)
        expect = sorted(set(judged))
        got = slice(int(offsets[i]), int(offsets[i + 1]))
        assert values[got].tolist() == expect
        assert counts[got].tolist() == [judged.count(v) for v in expect]
