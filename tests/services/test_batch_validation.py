"""A batch's checks, once per distinct label instead of once per judgment (`services.review.batches._validated_plain`),
must give what checking judgment by judgment gives: the same decisions, and for a bad batch the same error
naming the same first bad judgment. `validation.all_plain` must say True only for values `identifier` returns
unchanged."""

from __future__ import annotations

import random

import pytest

from reviewdepth.services.errors import Invalid
from reviewdepth.services.review.batches import BatchColumns, BatchItem, _item, _validated
from reviewdepth.services.review.judgments import Decision, checked_decision
from reviewdepth.store import validation

VALUES = ["d1", "doc 2", "a  b", " lead", "trail ", "", "x" * 300, "x" * 301, "tab\there", "nul\x00", "é", "e\u0301",
          "zw\u200b", "DOC-7", "\x7f", "a/b", "  "]
LABELS = ["1", "0", "yes", "no", "maybe", "skip", "3", "-1", "", " 1 ", "bogus", "include", "exclude"]


def one_by_one(items: list[BatchItem], level: int) -> list[Decision]:
    return [checked_decision(item.doc_id, item.label, role=item.role, note=item.note, level=level, field=_item(i),
                             reason=item.reason, stage=item.stage) for i, item in enumerate(items)]


def outcome(check: object) -> object:
    try:
        return check()  # type: ignore[operator]
    except (Invalid, validation.InvalidValue) as exc:
        return ("refused", type(exc).__name__, str(exc))


@pytest.mark.parametrize("value", VALUES)
def test_all_plain_only_for_values_identifier_keeps(value: str) -> None:
    if validation.all_plain([value], validation.DOC_ID_LENGTH):
        assert validation.identifier(value, "doc_id", validation.DOC_ID_LENGTH) == value
    assert not validation.all_plain(["d1", value, "d2"], validation.DOC_ID_LENGTH) or \
        validation.identifier(value, "doc_id", validation.DOC_ID_LENGTH) == value


def test_all_plain_refuses_what_is_not_a_string() -> None:
    assert not validation.all_plain(["d1", 7], validation.DOC_ID_LENGTH)  # type: ignore[list-item]
    assert validation.all_plain(["d1", "d 2", "x" * 300], validation.DOC_ID_LENGTH)


@pytest.mark.parametrize("seed", range(200))
def test_a_batch_checked_by_shape_matches_one_by_one(seed: int) -> None:
    rng = random.Random(seed)
    plain_docs = [f"doc-{n}" for n in range(50)]
    clean = seed % 2 == 0  # half the batches hold only good values (every check passes)
    odds = 0.0 if clean else 0.05
    items = []
    for _ in range(rng.randint(1, 40)):
        items.append(BatchItem(rng.choice(VALUES) if rng.random() < odds else rng.choice(plain_docs),
                               rng.choice(LABELS) if rng.random() < odds else rng.choice(["1", "0", "2", "maybe"]),
                               role=rng.choice(["adjudication", "boss"]) if rng.random() < odds else "review",
                               note=rng.choice(["a note", "bad\x00note"]) if rng.random() < odds else None,
                               reason=rng.choice(["wrong population", " ", "x\ty"]) if rng.random() < odds else None,
                               stage=rng.choice(["full-text", "title-abstract", "nope"]) if rng.random() < 0.1
                               else None))
    level = rng.choice([1, 2])
    columns = BatchColumns()  # the same batch as columns (a large API body), checked once per shape
    for item in items:
        columns.add(item)
    assert list(columns) == items and [columns[i] for i in range(len(items))] == items
    expected = outcome(lambda: one_by_one(items, level))
    for batch in (items, columns):
        got = outcome(lambda: _validated(batch, level))  # noqa: B023
        if isinstance(expected, tuple):
            assert got == expected
            continue
        assert isinstance(got, tuple)
        decisions, distinct = got
        assert list(decisions) == expected
        shapes = {(d.label, d.relevant, d.grade, d.role, d.note, d.kind, d.reason, d.stage) for d in decisions}
        assert shapes == {(d.label, d.relevant, d.grade, d.role, d.note, d.kind, d.reason, d.stage) for d in distinct}
