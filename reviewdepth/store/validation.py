"""What a value must be to be stored: one vocabulary for every door (CLI, importers, API) and both databases.

SQLite stores a 301-character string in a ``VARCHAR(300)``, a NUL byte, a lone surrogate and any integer up to
2**63; PostgreSQL refuses all of them with a driver error. The checks here are the stricter of the two, applied
before a value reaches either database, so both accept exactly the same values:

* **identifiers** (topic, queue, document id, reviewer, label, idempotency key): 1 to the column's length in
  characters after NFC normalisation; no control characters (Unicode Cc: NUL, tab, newline, …), no format
  characters (Cf: zero-width space and joiners, right-to-left override, byte-order mark, …), no line or paragraph
  separators, no lone surrogates (the trace of invalid UTF-8), no leading or trailing white space. Names that
  appear in URLs (topic, queue) may not contain ``/`` nor be ``.`` or ``..``.
* **free text** (notes): NFC, at most the stated length, no control characters other than tab, newline and
  carriage return, no lone surrogates.
* **integers**: within the column type, int64 (ids, sizes, offsets, seeds) or int32 (grades); booleans are not
  integers.
* **scores**: finite floats.

Functions return the value as it is to be stored (NFC) or raise `InvalidValue` naming the field; each door turns
that into its own error (``file:line: field`` and exit 2 at the CLI, 422 problem+json at the API).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import cache

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# column lengths (reviewdepth.store.models)
TOPIC_LENGTH = 200
QUEUE_LENGTH = 200
DOC_ID_LENGTH = 300
REVIEWER_LENGTH = 200
LABEL_LENGTH = 100
KEY_LENGTH = 200
RUN_TAG_LENGTH = 200
NOTE_LENGTH = 10_000
REASON_LENGTH = 200  # an exclusion reason (a topic's list, and a judgment's)

_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_REFUSED_CATEGORIES = {"Cc": "a control character", "Cf": "an invisible formatting character",
                       "Cs": "invalid UTF-8 (a lone surrogate)", "Zl": "a line separator",
                       "Zp": "a paragraph separator"}


class InvalidValue(ValueError):
    """A value the store refuses: ``field`` names it, ``message`` says why (without the value's position)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


def _refused_character(text: str) -> str | None:
    """Why ``text`` may not be an identifier, character-wise (None when it may)."""
    if text.isascii():
        found = _ASCII_CONTROL.search(text)
        return None if found is None else f"contains a control character (U+{ord(found.group()):04X})"
    for char in text:
        if char.isascii():
            if _ASCII_CONTROL.match(char):
                return f"contains a control character (U+{ord(char):04X})"
            continue
        what = _REFUSED_CATEGORIES.get(unicodedata.category(char))
        if what is not None:
            return f"contains {what} (U+{ord(char):04X})"
    return None


def _nfc(text: str, field: str) -> str:
    if text.isascii():
        return text
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        raise InvalidValue(field, "is not valid UTF-8 text (a lone surrogate)")
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def identifier(value: object, field: str, max_length: int, *, in_urls: bool = False) -> str:
    """An identifier as stored (module docstring), or `InvalidValue`."""
    if not isinstance(value, str):
        raise InvalidValue(field, "must be a string")
    text = _nfc(value, field)
    if not text:
        raise InvalidValue(field, "must not be empty")
    if len(text) > max_length:
        raise InvalidValue(field, f"must be at most {max_length} characters, not {len(text)}")
    reason = _refused_character(text)
    if reason is not None:
        raise InvalidValue(field, reason)
    if text != text.strip():
        raise InvalidValue(field, "must not begin or end with white space")
    if in_urls and ("/" in text or text in (".", "..")):
        raise InvalidValue(field, "must not contain '/' nor be '.' or '..' (it is part of URLs)")
    return text


def all_plain(values: list[str], max_length: int) -> bool:
    """True when `identifier` would return every one of ``values`` unchanged: ASCII strings of 1 to
    ``max_length`` characters, no control character, no space at either end. Checked on the values joined by
    spaces (a few passes in C instead of a call per value, for a batch of thousands); False also when it cannot
    tell cheaply (a value with two spaces in a row): the caller then checks each value with `identifier`,
    which names the first bad one."""
    try:
        joined = " ".join(values)
    except TypeError:  # a value that is not a string
        return False
    return (joined.isascii() and _ASCII_CONTROL.search(joined) is None and "  " not in joined
            and not joined.startswith(" ") and not joined.endswith(" ")
            and 0 < min(map(len, values), default=1) and max(map(len, values), default=0) <= max_length)


def topic_name(value: object, field: str = "topic") -> str:
    return identifier(value, field, TOPIC_LENGTH, in_urls=True)


def queue_name(value: object, field: str = "queue") -> str:
    return identifier(value, field, QUEUE_LENGTH, in_urls=True)


def doc_id(value: object, field: str = "doc_id") -> str:
    return identifier(value, field, DOC_ID_LENGTH)


def reviewer_name(value: object, field: str = "reviewer") -> str:
    return identifier(value, field, REVIEWER_LENGTH)


def label_text(value: object, field: str = "label") -> str:
    return identifier(value, field, LABEL_LENGTH)


def reason_text(value: object, field: str = "reason") -> str:
    """An exclusion reason (a topic's list, a judgment's reason): an identifier, spaces inside allowed."""
    return identifier(value, field, REASON_LENGTH)


def key_name(value: object, field: str = "idempotency_key") -> str:
    return identifier(value, field, KEY_LENGTH)


def free_text(value: object, field: str, max_length: int = NOTE_LENGTH) -> str:
    """Free text (a note, a reason): tab, newline and carriage return allowed, other control characters not."""
    if not isinstance(value, str):
        raise InvalidValue(field, "must be a string")
    text = _nfc(value, field)
    if len(text) > max_length:
        raise InvalidValue(field, f"must be at most {max_length} characters, not {len(text)}")
    found = _TEXT_CONTROL.search(text)
    if found is not None:
        raise InvalidValue(field, f"contains a control character (U+{ord(found.group()):04X})")
    return text


def integer(value: object, field: str, *, minimum: int = INT64_MIN, maximum: int = INT64_MAX) -> int:
    """An integer within [minimum, maximum] (default: int64); booleans and integral floats are refused."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValue(field, "must be an integer")
    if not minimum <= value <= maximum:
        raise InvalidValue(field, f"must be between {minimum} and {maximum}")
    return value


def grade(value: object, field: str = "grade") -> int:
    return integer(value, field, minimum=INT32_MIN, maximum=INT32_MAX)


def digits(value: str, field: str, *, minimum: int = 0, maximum: int = INT64_MAX) -> int:
    """A decimal integer written in ASCII digits (``str.isdigit`` also accepts ``²`` and ``٣``)."""
    text = value.strip()
    sign = text[:1] == "-"
    body = text[1:] if text[:1] in "+-" and text else text
    if not body or not body.isascii() or not body.isdigit():
        raise InvalidValue(field, f"must be an integer written in digits 0-9, not {value!r}")
    return integer(-int(body) if sign else int(body), field, minimum=minimum, maximum=maximum)


def score(value: object, field: str = "score") -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidValue(field, "must be a number")
    number = float(value)
    if not math.isfinite(number):
        raise InvalidValue(field, f"must be a finite number, not {value!r}")
    return number


def utf8(data: bytes, field: str) -> str:
    """Bytes as UTF-8 text, or `InvalidValue`."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidValue(field, "is not valid UTF-8") from None


def bytes_column(values: object, check: Callable[[object, str], str], field: str,
                 max_length: int) -> tuple[dict[int, str], tuple[int, InvalidValue] | None]:
    """`check` over a numpy byte-string column of a parsed file (UTF-8), touching Python only for the values
    numpy cannot clear (non-ASCII, control bytes, longer than ``max_length``): the values NFC changed, by row,
    and the first refused row with its error (None when every value passes)."""
    import numpy as np

    column = np.asarray(values)
    if len(column) == 0:
        return {}, None
    width = column.dtype.itemsize
    octets = column.view(np.uint8).reshape(len(column), width)
    # trailing NULs are numpy's padding; a NUL inside a value is refused by the whole-file check of the reader
    suspect = ((octets >= 0x80) | ((octets < 0x20) & (octets != 0)) | (octets == 0x7F)).any(axis=1)
    if width > max_length:
        suspect |= np.char.str_len(column) > max_length
    changed: dict[int, str] = {}
    for row in np.flatnonzero(suspect).tolist():
        raw = bytes(column[row])
        try:
            text = check(utf8(raw, field), field)
        except InvalidValue as exc:
            return changed, (row, exc)
        if text.encode("utf-8") != raw:
            changed[row] = text
    return changed, None


def refused_byte(data: bytes) -> tuple[int, str] | None:
    """The offset and reason of the first byte no text field of a file may hold (NUL or another control
    character than tab, newline, carriage return, vertical tab and form feed), or None."""
    for start in range(0, len(data), _CLEAN_CHECK_BLOCK):
        # deleting the refused bytes and comparing lengths runs at memory speed; the regex that finds the first
        # one costs seven times as much, so it runs only on a block that holds one (a block bounds the copy)
        block = data[start:start + _CLEAN_CHECK_BLOCK]
        if len(block.translate(None, _REFUSED_BYTE_SET)) == len(block):
            continue
        found = _REFUSED_BYTES.search(block)
        assert found is not None
        return start + found.start(), f"contains a control character (byte 0x{found.group()[0]:02X})"
    return None


def invalid_utf8_offset(data: bytes) -> int | None:
    """The offset of the first invalid UTF-8 sequence in ``data``, or None."""
    if data.isascii():
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return None


_REFUSED_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]")
_REFUSED_BYTE_SET = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])
_CLEAN_CHECK_BLOCK = 1 << 24


# The same rules as regular expressions, for documents that state them (the API's OpenAPI document): each pattern
# matches exactly the values the check above accepts, for values of at most the stated length (the length is
# stated beside the pattern, as maxLength). A lone surrogate is no Unicode scalar value, so no JSON Schema string
# holds one; the patterns leave it out (the checks refuse it).


def _escaped(code: int) -> str:
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _char_class(codes: Iterable[int], *, negated: bool) -> str:
    """A regex character class of ``codes`` (escaped, as ranges), or of every other character when ``negated``."""
    ordered = sorted(set(codes))
    parts: list[str] = []
    start = previous = -2
    for code in [*ordered, -1]:
        if code == previous + 1:
            previous = code
            continue
        if start >= 0:
            parts.append(_escaped(start) if start == previous else f"{_escaped(start)}-{_escaped(previous)}")
        start = previous = code
    return f"[{'^' if negated else ''}{''.join(parts)}]"


@cache
def _refused_codes() -> frozenset[int]:
    """The characters no identifier may hold (`_refused_character`), lone surrogates aside."""
    return frozenset(code for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF
                     and unicodedata.category(chr(code)) in _REFUSED_CATEGORIES)


@cache
def identifier_pattern(*, in_urls: bool = False) -> str:
    """The regular expression of `identifier` (with ``in_urls``: of `topic_name` and `queue_name`): no refused
    character, no white space (``str.isspace``) at either end; in URLs no ``/``, nor ``.`` or ``..``."""
    refused = set(_refused_codes()) | ({ord("/")} if in_urls else set())
    spaces = {code for code in range(0x110000) if code not in refused and chr(code).isspace()}
    inner = _char_class(refused, negated=True)
    edge = _char_class(refused | spaces, negated=True)
    if not in_urls:
        return f"^{edge}(?:{inner}*{edge})?$"
    edge_no_dot = _char_class(refused | spaces | {ord(".")}, negated=True)
    return f"^(?:{edge_no_dot}|{edge_no_dot}{edge}|\\.{edge_no_dot}|{edge}{inner}+{edge})$"


def free_text_pattern() -> str:
    """The regular expression of `free_text`."""
    return f"^{_char_class([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F], negated=True)}*$"


def required_text_pattern() -> str:
    """The regular expression of `free_text` holding at least one character that is not white space (a void's
    reason: a blank one is refused)."""
    control = [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]
    space = [0x09, 0x0A, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F,
             0x3000]
    any_char = _char_class(control, negated=True)
    return f"^{any_char}*{_char_class(control + space, negated=True)}{any_char}*$"


def integer_pattern(minimum: int, maximum: int, *, signs: bool = True) -> str:
    """A regular expression (without anchors) of the decimal integers in [minimum, maximum] as `digits` reads
    them: ASCII digits, leading zeros allowed, a ``-`` sign for a negative one (``-0`` is 0) and an optional ``+``
    for the others (no sign at all unless ``signs``). ``minimum`` is 0 or negative, ``maximum`` is 0 or
    positive."""
    assert minimum <= 0 <= maximum

    def up_to(limit: int) -> str:  # 0..limit without a sign, leading zeros allowed
        text = str(limit)
        options = ["0"] if len(text) == 1 else ["0", f"[1-9][0-9]{{0,{len(text) - 2}}}"]
        for i, digit in enumerate(text):
            low = 1 if i == 0 else 0
            high = int(digit) - 1
            if high >= low:
                rest = len(text) - i - 1
                options.append(text[:i] + (f"[{low}-{high}]" if high > low else str(low))
                               + (f"[0-9]{{{rest}}}" if rest else ""))
        options.append(text)
        return "0*(?:" + "|".join(dict.fromkeys(options)) + ")"

    if not signs:
        assert minimum == 0
        return up_to(maximum)
    positive = "\\+?" + up_to(maximum)
    return f"(?:{positive}|-{'0+' if minimum == 0 else up_to(-minimum)})"
