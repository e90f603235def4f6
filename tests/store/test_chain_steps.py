"""The compiled chain step (`reviewdepth.store._chainlink`: the system OpenSSL's SHA-256 where it found one, else
its own) against the Python one (`chain._link`: an f-string and hashlib), with either hash."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewdepth.store import chain

compiled = chain.compiled_link
needs_compiled = pytest.mark.skipif(compiled is None, reason="the compiled chain step was not built (no C compiler)")
TAIL = "|6:qrels|6:review|7:import:|~|2026-12-03T20:00:00.000000+00:00|7"


def python_steps(previous: str, first_seq: int, doc_ids: list[str], labels: list[str],
                 relevant: list[bool | None], grades: list[int | None], tail: str) -> list[str]:
    out = []
    for offset, (doc_id, label, decided, grade) in enumerate(zip(doc_ids, labels, relevant, grades, strict=True)):
        previous = chain._link(previous, first_seq + offset, doc_id, label, decided, grade, tail)
        out.append(previous)
    return out


@needs_compiled
def test_every_message_length_across_sha256_block_boundaries() -> None:
    # doc ids of 0 to 300 characters move the hashed text across every padding case of a 64-byte block
    # (length mod 64 below 56, at 55/56 exactly, and above, where the length needs a block of its own)
    doc_ids = ["x" * n for n in range(301)]
    size = len(doc_ids)
    args = ("genesis", 1, doc_ids, ["1"] * size, [True] * size, [1] * size, "")
    assert compiled is not None
    expected = python_steps(*args)
    for portable in (False, True):
        assert compiled.link(*args, portable) == expected
        assert compiled.link("", 0, [""], [""], [None], [None], "", portable) == [
            hashlib.sha256(b"\n0|0:|0:|~|~").hexdigest()]


@needs_compiled
def test_the_compiled_step_found_the_system_sha256_where_python_has_one() -> None:
    # hashlib links OpenSSL here; the step's own SHA-256 is only the fallback of a machine without libcrypto
    assert compiled is not None
    assert compiled.SHA256_SOURCE in ("libcrypto", "portable")
    if hashlib.__dict__.get("_hashlib") is not None:  # hashlib built on OpenSSL: libcrypto is on this machine
        assert compiled.SHA256_SOURCE == "libcrypto"


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(texts, texts, st.sampled_from([None, True, False]),
                          st.one_of(st.none(), st.integers(-(2**70), 2**70))), max_size=12),
       st.integers(0, 2**62), texts, st.sampled_from(["", "a" * 64, "é" * 40]))
def test_compiled_steps_equal_the_python_steps(rows: list[tuple[str, str, bool | None, int | None]], first_seq: int,
                                               tail: str, previous: str) -> None:
    # non-ASCII text (lengths count characters, the hash reads UTF-8), grades past 64 bits, null fields
    doc_ids, labels, relevant, grades = ([r[i] for r in rows] for i in range(4))
    assert compiled is not None
    expected = python_steps(previous, first_seq, doc_ids, labels, relevant, grades, tail)
    for portable in (False, True):
        assert compiled.link(previous, first_seq, doc_ids, labels, relevant, grades, tail, portable) == expected


@needs_compiled
def test_bad_values_are_refused_as_the_python_step_refuses_them() -> None:
    assert compiled is not None
    with pytest.raises(UnicodeEncodeError):
        compiled.link("", 1, ["\ud800"], ["1"], [True], [1], "")  # a lone surrogate cannot be UTF-8
    with pytest.raises(UnicodeEncodeError):
        "\ud800".encode()
    with pytest.raises(TypeError, match="doc_id must be str"):
        compiled.link("", 1, [b"d"], ["1"], [True], [1], "")
    with pytest.raises(ValueError, match="same length"):
        compiled.link("", 1, ["d", "e"], ["1"], [True], [1], "")


def test_chain_steps_without_the_compiled_step_equal_the_python_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    # the fallback of a machine without a compiler, and the compiled step where it was built: the same digests
    args = ("h", 5, ["a", "ü b"], ["1", "0"], [True, None], [1, None], TAIL)
    expected = python_steps(*args)
    assert chain.chain_steps(*args) == expected
    monkeypatch.setattr(chain, "compiled_link", None)
    assert chain.chain_steps(*args) == expected
