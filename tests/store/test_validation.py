"""The validation vocabulary itself (`reviewdepth.store.validation`); every door is covered by
tests/services/test_bad_value_matrix.py."""

from __future__ import annotations

import re

import numpy as np
import pytest

from reviewdepth.store import validation
from reviewdepth.store.validation import InvalidValue


@pytest.mark.parametrize(("value", "why"), [
    ("", "empty"), ("a\x00b", "U+0000"), ("a\nb", "U+000A"), ("a\tb", "U+0009"), ("a\x7fb", "U+007F"),
    ("a\u202eb", "U+202E"), ("a\u200bb", "U+200B"), ("a\u200db", "U+200D"), ("\ufeffa", "U+FEFF"),
    ("a\u2028b", "U+2028"), ("a\u2029b", "U+2029"), ("a\x85b", "U+0085"), ("a\udcffb", "surrogate"),
    (" a", "white space"), ("a ", "white space"), ("x" * 201, "at most 200"),
])
def test_identifiers_refused(value: str, why: str) -> None:
    with pytest.raises(InvalidValue, match=re.escape(why)):
        validation.topic_name(value)


@pytest.mark.parametrize("value", ["a/b", "../x", ".", "..", "/"])
def test_url_names_refuse_slashes_and_dots(value: str) -> None:
    with pytest.raises(InvalidValue, match="'/'"):
        validation.queue_name(value)
    assert validation.doc_id(value) == value  # a document id is no URL segment


def test_identifiers_accepted_and_nfc() -> None:
    assert validation.topic_name("Topic 7 – über café") == "Topic 7 – über café"
    assert validation.doc_id("cafe\u0301") == "caf\u00e9"  # NFD e + combining acute → NFC é
    assert validation.doc_id("x" * 300) == "x" * 300
    assert validation.label_text("d" * 100) == "d" * 100
    with pytest.raises(InvalidValue, match="at most 100"):
        validation.label_text("d" * 101)
    # the limit counts characters after NFC: 300 combining pairs are 300 characters, not 600
    assert len(validation.doc_id("e\u0301" * 300)) == 300


def test_free_text_allows_line_breaks_only() -> None:
    assert validation.free_text("line 1\nline 2\ttab\r\n", "note") == "line 1\nline 2\ttab\r\n"
    for bad in ("a\x00b", "a\x1bb", "a\x0bb"):
        with pytest.raises(InvalidValue, match="control character"):
            validation.free_text(bad, "note")
    with pytest.raises(InvalidValue, match="at most 10000"):
        validation.free_text("n" * 10_001, "note")


def test_integers_and_scores() -> None:
    assert validation.integer(2**63 - 1, "n") == 2**63 - 1
    for bad in (2**63, -(2**63) - 1, True, 1.0, "1"):
        with pytest.raises(InvalidValue):
            validation.integer(bad, "n")
    assert validation.grade(2**31 - 1) == 2**31 - 1
    with pytest.raises(InvalidValue):
        validation.grade(2**31)
    assert validation.digits("+5", "n") == 5 and validation.digits("12", "n") == 12
    for bad in ("²", "٣", "1e3", "", "-1", str(2**63)):
        with pytest.raises(InvalidValue):
            validation.digits(bad, "n")
    assert validation.score(-2.5) == -2.5
    for bad in (float("inf"), float("-inf"), float("nan"), True):
        with pytest.raises(InvalidValue):
            validation.score(bad)


def test_bytes_column_checks_only_what_numpy_cannot_clear() -> None:
    column = np.array([b"d1", "cafe\u0301".encode(), b"d3", b"x" * 301, b"a\x01b"])
    changed, refused = validation.bytes_column(column[:3], validation.doc_id, "docno", 300)
    assert changed == {1: "caf\u00e9"} and refused is None
    _, refused = validation.bytes_column(column, validation.doc_id, "docno", 300)
    assert refused is not None and refused[0] == 3 and "at most 300" in refused[1].message
    _, refused = validation.bytes_column(column[[0, 4]], validation.doc_id, "docno", 300)
    assert refused is not None and refused[0] == 1 and "U+0001" in refused[1].message
    _, refused = validation.bytes_column(np.array([b"ok", b"d\xff"]), validation.doc_id, "docno", 300)
    assert refused is not None and refused[0] == 1 and "UTF-8" in refused[1].message


def test_file_bytes() -> None:
    assert validation.refused_byte(b"a b\nc\x00d\n") == (5, "contains a control character (byte 0x00)")
    assert validation.refused_byte(b"a\tb\r\n\x0c") is None
    assert validation.invalid_utf8_offset("é\n".encode() + b"\xff") == 3
    assert validation.invalid_utf8_offset("é".encode()) is None


def test_refused_byte_agrees_with_the_definition_for_every_byte_value() -> None:
    # the fast check deletes a byte set and compares lengths: each of the 256 byte values must be judged as the
    # definition says (control characters other than tab, LF, VT, FF, CR refused; DEL refused; the rest kept)
    for value in range(256):
        data = b"q1 0 d" + bytes([value]) + b" 1\n"
        refused = (value < 0x20 and value not in (0x09, 0x0A, 0x0B, 0x0C, 0x0D)) or value == 0x7F
        expected = (6, f"contains a control character (byte 0x{value:02X})") if refused else None
        assert validation.refused_byte(data) == expected, value


def test_refused_byte_offset_counts_from_the_file_start_past_the_first_block(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validation, "_CLEAN_CHECK_BLOCK", 4)
    data = b"abcd" * 3 + b"ef\x01g" + b"h\x02"
    assert validation.refused_byte(data) == (14, "contains a control character (byte 0x01)")
    assert validation.refused_byte(b"abcd" * 5) is None
    assert validation.refused_byte(b"") is None
