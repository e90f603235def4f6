"""The compiled column scanner agrees with the pure-Python reference, values and errors alike."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewdepth.formats import scan as scan_module
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.scan import StringColumn, scan

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
    for x, y in zip(a.columns, b.columns, strict=True):
        if isinstance(x, StringColumn):
            assert isinstance(y, StringColumn)
            assert x.values.tolist() == y.values.tolist()
            assert x.hashes.tolist() == y.hashes.tolist()
        else:
            assert not isinstance(y, StringColumn)
            assert np.array_equal(x, y)


@given(texts(), st.sampled_from(["s.si", "s.s.f", "sf", "i"]), st.booleans(), st.booleans())
def test_compiled_matches_reference(data: bytes, spec: str, comments: bool, threaded: bool) -> None:
    kwargs = dict(min_fields=len(spec), max_fields=len(spec) if spec == "s.si" else -1, skip_comments=comments)
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
