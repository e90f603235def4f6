"""The compiled column scanner agrees with the pure-Python reference, values and errors alike; without the
extension (no C compiler at install) the readers fall back to the reference and give the same results."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewdepth.formats import scan as scan_module
from reviewdepth.formats.clef import parse_clef_run
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.scan import StringColumn, scan
from reviewdepth.formats.source import read_bytes
from reviewdepth.formats.trec import parse_qrels, parse_run

DATA = Path(__file__).resolve().parents[1] / "data"
needs_compiled = pytest.mark.skipif(scan_module.compiled is None, reason="the C scanner is not built")

TOKENS = st.one_of(
    st.sampled_from(["1", "-2", "+3", "0.5", "1e-3", "inf", "-inf", "nan", "abc", "1.5", "0x10", "007", "1.",
                     ".5", "1e400", "123456789012345678", "1234567890123456789", "3.14159265358979323846", "-0",
                     "", "9" * 130]),
    st.text(alphabet="abcXYZ019._-", min_size=1, max_size=8),
)
SEPARATORS = st.sampled_from([" ", "\t", "  ", " \t", "\r"])


@st.composite
def texts(draw: st.DrawFn) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        fields = [t for t in draw(st.lists(TOKENS, min_size=0, max_size=7)) if t]
        sep = draw(SEPARATORS)
        lines.append(draw(st.sampled_from(["", " "])) + sep.join(fields) + draw(st.sampled_from(["", " ", "\r"])))
    return ("\n".join(lines) + draw(st.sampled_from(["", "\n"]))).encode()


def same_columns(a: scan_module.Scanned, b: scan_module.Scanned) -> None:
    assert list(a.line_numbers) == list(b.line_numbers)
    assert (a.lines.stored is None) == (b.lines.stored is None)
    for x, y in zip(a.columns, b.columns, strict=True):
        if isinstance(x, StringColumn):
            assert isinstance(y, StringColumn)
            assert x.values.tolist() == y.values.tolist()
            assert (x.hashes is None) == (y.hashes is None)
            if x.hashes is not None and y.hashes is not None:
                assert x.hashes.tolist() == y.hashes.tolist()
        else:
            assert not isinstance(y, StringColumn)
            assert np.array_equal(x, y) and x.dtype == y.dtype


@needs_compiled
@given(texts(), st.sampled_from(["s.si", "s.s.f", "sf", "i", "sfi", "fi.f"]), st.booleans(), st.booleans(),
       st.booleans())
def test_compiled_matches_reference(data: bytes, spec: str, comments: bool, threaded: bool, hashes: bool) -> None:
    kwargs = dict(min_fields=len(spec), max_fields=len(spec) if spec == "s.si" else -1, skip_comments=comments,
                  hashes=hashes)
    saved = scan_module._PARALLEL_BYTES
    scan_module._PARALLEL_BYTES = 0 if threaded else saved  # 0: every input is cut in two chunks
    try:
        compiled = scan(data, spec, use_compiled=True, **kwargs)  # type: ignore[arg-type]
    except InputError as exc:
        with pytest.raises(InputError) as ref:
            scan(data, spec, use_compiled=False, **kwargs)  # type: ignore[arg-type]
        assert str(ref.value) == str(exc)
        return
    finally:
        scan_module._PARALLEL_BYTES = saved
    same_columns(compiled, scan(data, spec, use_compiled=False, **kwargs))  # type: ignore[arg-type]


@needs_compiled
def test_two_thread_scan_of_large_input_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    lines = [f"q{rng.integers(50)} Q0 doc{i} {i} {rng.random():.6f} run" for i in range(40_000)]
    data = ("\n".join(lines) + "\n").encode()
    monkeypatch.setattr(scan_module, "_PARALLEL_BYTES", 1000)
    parallel = scan(data, "s.s.f", min_fields=6)
    same_columns(parallel, scan(data, "s.s.f", min_fields=6, use_compiled=False))
    # an error in the second half still names the right line
    bad = data + b"q1 Q0 docX 1 notanumber run\n"
    with pytest.raises(InputError, match=r":40001: field score"):
        scan(bad, "s.s.f", min_fields=6, path="big.run", names=["qid", "iter", "docno", "rank", "score"])


@pytest.mark.parametrize("use_compiled", [
    pytest.param(True, marks=needs_compiled), False])
@pytest.mark.parametrize("threaded", [False, True])
def test_a_scan_without_hashes_differs_only_in_the_hashes(use_compiled: bool, threaded: bool,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    lines = [f"q{rng.integers(20)} Q0 doc{rng.integers(10**6)} {i} {rng.random():.6f} run" for i in range(3000)]
    data = ("\n\n".join(lines) + "\n").encode()
    if threaded:
        monkeypatch.setattr(scan_module, "_PARALLEL_BYTES", 1000)
    with_hashes = scan(data, "s.s.f", min_fields=6, use_compiled=use_compiled)
    without = scan(data, "s.s.f", min_fields=6, use_compiled=use_compiled, hashes=False)
    assert without.line_numbers.tolist() == with_hashes.line_numbers.tolist()
    qid, docno, score = without.columns
    want_qid, want_docno, want_score = with_hashes.columns
    assert isinstance(qid, StringColumn) and isinstance(docno, StringColumn)
    assert isinstance(want_qid, StringColumn) and isinstance(want_docno, StringColumn)
    assert qid.hashes is None and docno.hashes is None
    assert qid.values.tolist() == want_qid.values.tolist() and docno.values.tolist() == want_docno.values.tolist()
    assert np.array_equal(score, want_score)
    assert want_docno.hashed() is want_docno.hashes and len(want_docno.hashed()) == len(lines)
    with pytest.raises(ValueError, match="without hashes"):
        docno.hashed()


SCANNERS = [pytest.param(True, marks=needs_compiled, id="compiled"), pytest.param(False, id="python")]


@pytest.mark.parametrize("use_compiled", SCANNERS)
@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize(("text", "skip_comments", "lines", "stored"), [
    ("a 1\nb 2\nc 3\n", False, [1, 2, 3], False),
    ("a 1\nb 2\nc 3", False, [1, 2, 3], False),
    ("a 1\nb 2\nc 3\n\n \n", False, [1, 2, 3], False),  # blank lines after the last record shift nothing
    ("a 1\n\nb 2\nc 3\n", False, [1, 3, 4], True),
    ("\na 1\nb 2\nc 3\n", False, [2, 3, 4], True),
    ("a 1\n# note\nb 2\nc 3\n", True, [1, 3, 4], True),
    ("", False, [], False),
])
def test_line_numbers_are_stored_only_when_a_record_is_not_on_line_row_plus_one(
        use_compiled: bool, threaded: bool, text: str, skip_comments: bool, lines: list[int], stored: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if threaded:
        monkeypatch.setattr(scan_module, "_PARALLEL_BYTES", 0)  # every input cut in two chunks
    scanned = scan(text.encode(), "si", min_fields=2, skip_comments=skip_comments, use_compiled=use_compiled)
    assert (scanned.lines.stored is not None) == stored
    assert scanned.line_numbers.tolist() == lines and len(scanned) == len(lines)
    assert [scanned.lines.of(row) for row in range(len(lines))] == lines
    if lines:
        assert scanned.lines.of(-1) == lines[-1]
    with pytest.raises(IndexError):
        scanned.lines.of(len(lines))


@pytest.mark.parametrize("use_compiled", SCANNERS)
@pytest.mark.parametrize(("tokens", "dtype"), [
    (["0", "1", "-9", "99", "+5"], np.int8),
    (["1", "-99"], np.int16),
    (["9999", "-999", "0"], np.int16),
    (["99999", "1"], np.int32),
    (["999999999", "-99999999"], np.int32),
    (["1234567890", "2"], np.int64),
    (["123456789012345678", "-123456789012345678"], np.int64),
])
def test_integer_columns_take_the_narrowest_type_their_longest_token_fits(use_compiled: bool, tokens: list[str],
                                                                          dtype: type[np.signedinteger]) -> None:
    data = "".join(f"{token}\n" for token in tokens).encode()
    (column,) = scan(data, "i", min_fields=1, max_fields=1, use_compiled=use_compiled).columns
    assert isinstance(column, np.ndarray) and column.dtype == dtype
    assert column.tolist() == [int(token) for token in tokens]


@pytest.mark.parametrize("use_compiled", SCANNERS)
def test_qrels_values_are_int64_unless_asked_narrow(use_compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan_module, "compiled", scan_module.compiled if use_compiled else None)
    binary = b"q 0 a 1\nq 0 b 0\nq 0 c -1\n"
    assert parse_qrels(binary, "q").rel.dtype == np.int64
    narrow = parse_qrels(binary, "q", narrow_rel=True).rel
    assert narrow.dtype == np.int8 and narrow.tolist() == [1, 0, -1]
    wide = parse_qrels(b"q 0 a 1\nq 0 b -1234567890123\n", "q", narrow_rel=True).rel
    assert wide.dtype == np.int64 and wide.tolist() == [1, -1234567890123]


def test_the_readers_pass_hashes_false_on() -> None:
    run = parse_run(b"q Q0 a 1 1 t\nq Q0 b 2 0.5 t\n", "r", hashes=False)
    qrels = parse_qrels(b"q 0 a 1\n", "q", hashes=False)
    assert run.docno.hashes is None and qrels.docno.hashes is None
    assert run.docno.values.tolist() == [b"a", b"b"] and run.subset(np.array([1])).docno.hashes is None
    assert parse_run(b"q Q0 a 1 1 t\n", "r").docno.hashes is not None


def _parsed(path: Path) -> list[object]:
    """Everything the readers return for a file (or the error text), as plain values."""
    data = read_bytes(path)
    out: list[object] = []
    for parse in (lambda: parse_run(data, str(path)), lambda: parse_run(data, str(path), actions=True),
                  lambda: parse_clef_run(data, str(path)), lambda: parse_qrels(data, str(path))):
        try:
            result = parse()
        except InputError as exc:
            out.append(str(exc))
            continue
        for value in vars(result).values():
            if isinstance(value, StringColumn):
                out += [value.values.tolist(), value.hashes.tolist()]
            elif isinstance(value, np.ndarray):
                out.append(value.tolist())
            else:
                out.append(value)
    return out


BAD_INPUTS = {
    "score.run": b"q Q0 a 1 1 t\nq Q0 b 2 abc t\n",
    "nan.run": b"q Q0 a 1 nan t\n",
    "fields.run": b"q Q0 a 1 1 t\n\nq Q0 b 2\r\n",
    "rel.qrels": b"q 0 a 1\nq 0 b x\n",
    "extra.qrels": b"q 0 a 1 2\n",
    "comment.run": b"# run\nq Q0 a 1 1 t\n",
    "empty.run": b"\n  \n",
}


def test_pure_python_fallback_reads_every_file_the_same(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With the extension missing (`compiled` is None) the readers give the same columns, hashes, run tags and
    error messages (file:line:field) as with it."""
    files = sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix != ".md")
    for name, data in BAD_INPUTS.items():
        (tmp_path / name).write_bytes(data)
        files.append(tmp_path / name)
    expected = {path: _parsed(path) for path in files}
    assert ":2: field score: score must be a number, found 'abc'" in str(expected[tmp_path / "score.run"])
    assert "fields.run:3: expected at least 6" in str(expected[tmp_path / "fields.run"])
    assert ":2: field rel" in str(expected[tmp_path / "rel.qrels"])
    monkeypatch.setattr(scan_module, "compiled", None)
    for path in files:
        assert _parsed(path) == expected[path], path


def test_environment_variable_selects_the_fallback_at_import() -> None:
    env = {**os.environ, scan_module.PURE_PYTHON_ENV: "1"}
    code = "from reviewdepth.formats import scan; print(scan.compiled is None)"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


@needs_compiled
def test_long_decimals_parse_to_the_correctly_rounded_double() -> None:
    """Scores with 16 to 19 significant digits (CLEF runs print full doubles) take the scanner's extended-precision
    path; every value must be the double Python's float() gives (correctly rounded), including integers and
    decimals that fall exactly halfway between two doubles, where that path must hand over to strtod."""
    rng = random.Random(20261203)
    tokens = ["9007199254740993", "9007199254740995", "18014398509481985", "0.30000000000000001665",
              "66.86758878167208", "1.0000000000000001110", "-123456789.0123456789", "9999999999999999999"]
    for _ in range(20_000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(16, 19)))
        cut = rng.randint(0, len(digits))
        tokens.append(digits[:cut] + ("." + digits[cut:] if cut < len(digits) else ""))
        tokens.append(repr(rng.uniform(-1e4, 1e4)))
        tokens.append(str(2**53 + rng.randrange(1, 1 << 11, 2) * rng.choice([1, 2, 4, 1 << 10])))
    data = "".join(f"q {t}\n" for t in tokens).encode()
    values = scan(data, ".f", min_fields=2, use_compiled=True).columns[0]
    assert isinstance(values, np.ndarray)
    assert values.tolist() == [float(t) for t in tokens]
