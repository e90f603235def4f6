"""Columnar scan of whitespace-separated text into numpy arrays.

The compiled scanner (`_textscan.c`) does the work when it was built; `scan_python` is the reference
implementation with the same contract (values, hashes or none, error tuples), used when the extension is missing (an
install without a C compiler: the extension is optional in setup.py) and by the tests to check the compiled one.
The choice is made once, at import: `compiled` is the extension module or None. Setting the environment variable
``REVIEWDEPTH_PURE_PYTHON_SCAN=1`` forces the fallback.
"""

from __future__ import annotations

import math
import mmap
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.prescan import PARALLEL_BYTES, PURE_PYTHON_ENV, PendingScan, first_comment_line
from reviewdepth.measures.extension import optional_extension

_SPACE = b" \t\n\v\f\r"
_FNV_OFFSET = 1469598103934665603
_FNV_PRIME = 1099511628211
_MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class StringColumn:
    """Fixed-width byte strings (numpy ``S<w>``) and their 64-bit FNV-1a hashes (None when scanned with
    ``hashes=False``: a caller that joins on the strings themselves, as `reviewdepth eval` does, saves 8 bytes a
    line)."""

    values: npt.NDArray[np.bytes_]
    hashes: npt.NDArray[np.uint64] | None

    def hashed(self) -> npt.NDArray[np.uint64]:
        """The hashes, for a caller that scanned with them."""
        if self.hashes is None:
            raise ValueError("this column was scanned without hashes (scan(..., hashes=False))")
        return self.hashes


IntColumn = npt.NDArray[np.signedinteger[Any]]  # int8, int16, int32 or int64: the narrowest that holds the column
Column = StringColumn | npt.NDArray[np.float64] | IntColumn


@dataclass(frozen=True)
class LineNumbers:
    """The 1-based file line of each of ``count`` records. ``stored`` is None when the records are lines 1 to
    ``count`` (no blank or comment line before the last record, the usual file): a record's line is then its row
    + 1 and nothing is stored, 4 bytes a record that only an error message would read."""

    count: int
    stored: npt.NDArray[np.int32] | None = None  # 32-bit: the scanner refuses inputs of 2**31 lines or more

    def of(self, row: int) -> int:
        """The line of record ``row``, without making the whole array."""
        if not -self.count <= row < self.count:
            raise IndexError(f"record {row} of {self.count}")
        if self.stored is not None:
            return int(self.stored[row])
        return row % self.count + 1

    @cached_property
    def array(self) -> npt.NDArray[np.int32]:
        """Every record's line, made (once) when it was not stored."""
        if self.stored is not None:
            return self.stored
        return np.arange(1, self.count + 1, dtype=np.int32)


@dataclass(frozen=True)
class Scanned:
    """Result of a scan: one entry per non-blank line."""

    lines: LineNumbers
    columns: list[Column]

    @property
    def line_numbers(self) -> npt.NDArray[np.int32]:
        return self.lines.array

    def __len__(self) -> int:
        return self.lines.count


_KIND_TEXT = {"float": "a number", "int": "an integer"}


compiled: ModuleType | None = optional_extension("reviewdepth.formats._textscan", PURE_PYTHON_ENV)


def _error(path: str, code: str, line: int, field: int, token: bytes, spec: str, names: list[str],
           min_fields: int, max_fields: int) -> InputError:
    text = token.decode("utf-8", "replace")
    if code == "fields":
        if max_fields == min_fields:
            want = f"exactly {min_fields}"
        elif max_fields < 0:
            want = f"at least {min_fields}"
        else:
            want = f"{min_fields} to {max_fields}"
        return InputError(path, line, None, f"expected {want} whitespace-separated fields, found {field}: {text!r}")
    if code == "comment":
        return InputError(path, line, None, "comment lines ('#') are not valid in trec_eval 9.0.8 input; "
                          "use --trec-eval-version 10 to skip them")
    name = names[field] if field < len(names) else f"field {field + 1}"
    return InputError(path, line, name, f"{name} must be {_KIND_TEXT.get(code, code)}, found {text!r}")


def scan(data: bytes | mmap.mmap, spec: str, *, min_fields: int, max_fields: int = -1, skip_comments: bool = False,
         path: str = "<input>", names: list[str] | None = None, use_compiled: bool | None = None,
         hashes: bool = True) -> Scanned:
    """Split ``data`` into lines and whitespace-separated fields and return the columns named by ``spec``.

    ``spec`` has one character per leading field: ``s`` string, ``f`` float (strict: the whole token must be a
    number; NaN is refused), ``i`` integer (int8, int16, int32 or int64: the narrowest that holds any token as
    long as the column's longest), ``.`` ignored. Blank lines are skipped; the records' lines are stored only when
    some are not on line row + 1 (`LineNumbers`). Raises `InputError` naming ``path``, the 1-based line and the
    field. ``use_compiled``: None takes the scanner chosen at import; True
    requires the compiled one (RuntimeError when it is not built); False takes the pure-Python one. ``data`` may be
    a read-only map of the file (`reviewdepth.formats.source.map_file`): the compiled scanner then releases its
    pages as it goes, so the file is never resident all at once beside its columns. ``hashes`` False: the string
    columns come without hashes (`StringColumn.hashes` None), neither computed nor allocated.
    """
    if use_compiled is None:
        use_compiled = compiled is not None
    elif use_compiled and compiled is None:
        raise RuntimeError("the compiled scanner reviewdepth.formats._textscan is not available")
    names = names or []
    pending: PendingScan | None = getattr(data, "pending", None)
    if pending is not None and not (use_compiled and pending.matches(spec, min_fields, max_fields, skip_comments,
                                                                     hashes)):
        pending = None
    if pending is not None:
        # started on another thread (`prescan.start`), the comment search first, while the map's pages were in
        first_hash = pending.comment_line()
    elif not skip_comments:
        # 9.0.8 treats '#' lines as malformed; find the first one for a precise message.
        first_hash = first_comment_line(data)
    else:
        first_hash = None
    try:
        if use_compiled:
            scanned = _scan_compiled(data, spec, min_fields, max_fields, skip_comments, hashes, pending)
        else:
            scanned = scan_python(bytes(data) if isinstance(data, mmap.mmap) else data, spec, min_fields=min_fields,
                                  max_fields=max_fields, skip_comments=skip_comments, hashes=hashes)
    except (_PyScanError, _CompiledScanError) as exc:
        code, line, field, token = exc.args[0]
        if first_hash is not None and first_hash <= line:
            raise _error(path, "comment", first_hash, 0, b"", spec, names, min_fields, max_fields) from None
        raise _error(path, code, line, field, token, spec, names, min_fields, max_fields) from None
    if first_hash is not None:
        raise _error(path, "comment", first_hash, 0, b"", spec, names, min_fields, max_fields)
    return scanned


class _CompiledScanError(ValueError):
    pass


_PARALLEL_BYTES = PARALLEL_BYTES  # module-level, so the tests can force the two-thread path



def _scan_compiled(data: bytes | mmap.mmap, spec: str, min_fields: int, max_fields: int,
                   skip_comments: bool, hashes: bool = True, pending: PendingScan | None = None) -> Scanned:
    """Large inputs are scanned on two threads inside the C code (it releases the GIL)."""
    _textscan = compiled
    assert _textscan is not None
    threads = 2 if len(data) >= _PARALLEL_BYTES else 1
    try:
        if pending is not None:
            nrec, lines_raw, raw_cols = pending.outcome()  # started by `prescan.start` while the process started
        else:
            nrec, lines_raw, raw_cols = _textscan.scan(data, spec, min_fields, max_fields, skip_comments, threads,
                                                       isinstance(data, mmap.mmap), hashes)
    except _textscan.ScanError as exc:
        raise _CompiledScanError(tuple(exc.args)) from None
    cols: list[Column] = []
    kinds = [k for k in spec if k != "."]
    for kind, raw in zip(kinds, raw_cols, strict=True):
        if kind == "s":
            width, sbuf, hbuf = raw
            cols.append(StringColumn(np.frombuffer(sbuf, dtype=f"S{width}"),
                                     None if hbuf is None else np.frombuffer(hbuf, dtype=np.uint64)))
        elif kind == "f":
            cols.append(np.frombuffer(raw, dtype=np.float64))
        else:
            value_size, ibuf = raw
            cols.append(np.frombuffer(ibuf, dtype=f"i{value_size}"))
    scanned = Scanned(LineNumbers(nrec, None if lines_raw is None else np.frombuffer(lines_raw, dtype=np.int32)),
                      cols)
    assert len(scanned) == nrec
    return scanned


class _PyScanError(ValueError):
    pass


def fnv1a64(token: bytes) -> int:
    """64-bit FNV-1a hash, as computed by the compiled scanner."""
    h = _FNV_OFFSET
    for byte in token:
        h = ((h ^ byte) * _FNV_PRIME) & _MASK64
    return h


def _parse_float(token: bytes) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    if math.isnan(value) or b"_" in token:
        return None
    return value


def _parse_int(token: bytes) -> int | None:
    digits = token[1:] if token[:1] in (b"+", b"-") else token
    if not digits or not digits.isdigit() or len(digits) > 18:
        return None
    return int(token)


def fnv1a64_column(tokens: list[bytes], values: npt.NDArray[np.bytes_]) -> npt.NDArray[np.uint64]:
    """`fnv1a64` of every token, vectorised over the byte positions of the fixed-width ``values`` (``tokens``
    gives the true lengths: a numpy ``S`` array drops trailing NUL bytes, the hash does not)."""
    n = len(tokens)
    out = np.full(n, _FNV_OFFSET, dtype=np.uint64)
    if n == 0:
        return out
    width = values.dtype.itemsize
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=n)
    matrix = np.frombuffer(values.tobytes(), dtype=np.uint8).reshape(n, width)
    prime = np.uint64(_FNV_PRIME)
    for k in range(int(lengths.max())):
        active = lengths > k
        mixed = (out ^ matrix[:, k].astype(np.uint64)) * prime  # uint64 arithmetic wraps modulo 2**64
        out = np.where(active, mixed, out)
    return out


def _first_bad(tokens: list[bytes], kind: str) -> tuple[int | None, list[float] | list[int]]:
    """Parsed values of a numeric column, or the index of its first bad token."""
    if kind == "f":
        try:
            floats = list(map(float, tokens))
        except ValueError:
            floats = []
        else:
            # float() takes what the C scanner refuses: NaN and digit-group underscores
            if all(v == v for v in floats) and not any(b"_" in t for t in tokens):
                return None, floats
        for index, token in enumerate(tokens):
            if _parse_float(token) is None:
                return index, []
        raise AssertionError("unreachable: a float column failed without a bad token")
    ints: list[int] = []
    for index, token in enumerate(tokens):
        value = _parse_int(token)
        if value is None:
            return index, []
        ints.append(value)
    return None, ints


def scan_python(data: bytes, spec: str, *, min_fields: int, max_fields: int = -1,
                skip_comments: bool = False, hashes: bool = True) -> Scanned:
    """Reference implementation of the compiled scanner (same output, same error tuples).

    As in the C code, every line's field count is checked before any value is parsed, and the first bad value
    is the first in line order (then field order)."""
    lines: list[int] = []
    raw: list[list[bytes]] = [[] for _ in spec]
    wanted = [c for c, kind in enumerate(spec) if kind != "."]
    for number, line in enumerate(data.split(b"\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if skip_comments and fields[0].startswith(b"#"):
            continue
        if len(fields) < min_fields or (max_fields >= 0 and len(fields) > max_fields):
            shown = line[:-1] if line.endswith(b"\r") else line
            raise _PyScanError(("fields", number, len(fields), shown[:200]))
        lines.append(number)
        for c in wanted:
            raw[c].append(fields[c] if c < len(fields) else b"")
    parsed: dict[int, list[float] | list[int]] = {}
    first_error: tuple[int, int] | None = None
    for c in wanted:
        if spec[c] == "s":
            continue
        bad, values = _first_bad(raw[c], spec[c])
        if bad is None:
            parsed[c] = values
        elif first_error is None or (bad, c) < first_error:
            first_error = (bad, c)
    if first_error is not None:
        row, c = first_error
        raise _PyScanError(("float" if spec[c] == "f" else "int", lines[row], c, raw[c][row][:200]))
    cols: list[Column] = []
    for c in wanted:
        if spec[c] == "s":
            width = max(map(len, raw[c]), default=1) or 1
            strings = np.array(raw[c], dtype=f"S{width}")
            cols.append(StringColumn(strings, fnv1a64_column(raw[c], strings) if hashes else None))
        elif spec[c] == "f":
            cols.append(np.array(parsed[c], dtype=np.float64))
        else:
            cols.append(np.array(parsed[c], dtype=_int_type(max(map(len, raw[c]), default=0))))
    # as the compiled scanner: nothing stored when the records are lines 1 to n (line numbers strictly increase)
    every_line = not lines or lines[-1] == len(lines)
    return Scanned(LineNumbers(len(lines), None if every_line else np.array(lines, dtype=np.int32)), cols)


def _int_type(width: int) -> type[np.signedinteger[Any]]:
    """The integer type the compiled scanner gives a column whose longest token has ``width`` characters (sign
    included): 2 characters hold at most 99 in magnitude, 4 at most 9999, 9 at most 999999999."""
    if width <= 2:
        return np.int8
    if width <= 4:
        return np.int16
    if width <= 9:
        return np.int32
    return np.int64
