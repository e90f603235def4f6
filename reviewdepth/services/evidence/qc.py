"""Quality control: a random sample of already-judged documents (``sample draw --frame judged``) re-reviewed blind
with role ``qc``. For each drawn document the *original* label is the one in force when the sample was drawn
(the report's label policy over the judgments recorded up to the draw), the *check* is the latest ``qc``
judgment recorded after the draw. Their disagreements estimate the reviewers' error rates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Connection, select

from reviewdepth.estimation.agreement import ErrorRates, reviewer_error_rates
from reviewdepth.services.evidence.samples import SampleRecord
from reviewdepth.store.labels import resolve_labels
from reviewdepth.store.models import Judgment


@dataclass(frozen=True)
class QcResult:
    sample_id: int
    seed: int
    size: int
    checked: int
    missing: list[str]
    rates: ErrorRates | None
    by_reviewer: dict[str, ErrorRates] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        import dataclasses

        return {"sample_id": self.sample_id, "seed": self.seed, "size": self.size, "checked": self.checked,
                "missing": len(self.missing),
                "error_rates": None if self.rates is None else dataclasses.asdict(self.rates),
                "by_original_reviewer": {r: dataclasses.asdict(e) for r, e in sorted(self.by_reviewer.items())}}


def qc_result(conn: Connection, topic_id: int, sample: SampleRecord, policy: str, as_of: int | None,
              confidence: float, method: str) -> QcResult:
    """Error rates from one QC sample, using the judgments recorded up to ``as_of``."""
    drawn_at = sample.as_of or 0
    docs = sample.doc_ids
    rows: list[tuple[int, str, str, bool, str]] = []
    for start in range(0, len(docs), 5000):
        stmt = (select(Judgment.id, Judgment.doc_id, Judgment.reviewer, Judgment.relevant, Judgment.role)
                .where(Judgment.topic_id == topic_id, Judgment.doc_id.in_(docs[start:start + 5000]),
                       Judgment.relevant.is_not(None)))
        if as_of is not None:
            stmt = stmt.where(Judgment.id <= as_of)
        rows.extend((int(i), d, r, bool(rel), role) for i, d, r, rel, role in conn.execute(stmt))
    rows.sort()
    before = [r for r in rows if r[0] <= drawn_at]
    original = resolve_labels([r[1] for r in before], np.array([r[0] for r in before], dtype=np.int64),
                              np.array([int(r[3]) for r in before], dtype=np.int8),
                              np.array([r[4] == "adjudication" for r in before], dtype=bool), policy)
    original_of = dict(zip(original.doc_ids.tolist(), original.labels.tolist(), strict=True))
    coder_of = {r[1]: r[2] for r in before}  # the reviewer of each document's latest decision before the draw
    check_of = {r[1]: int(r[3]) for r in rows if r[0] > drawn_at and r[4] == "qc"}
    pairs = [(d, original_of[d], check_of[d]) for d in docs if d in check_of and original_of.get(d, -1) >= 0]
    missing = [d for d in docs if d not in check_of]
    if not pairs:
        return QcResult(sample.id, sample.seed, sample.size, 0, missing, None)
    orig = np.array([p[1] for p in pairs], dtype=np.int8)
    check = np.array([p[2] for p in pairs], dtype=np.int8)
    by_reviewer: dict[str, ErrorRates] = {}
    coders = np.array([coder_of[p[0]] for p in pairs], dtype=object)
    for coder in sorted(set(coders.tolist())):
        mask = coders == coder
        by_reviewer[coder] = reviewer_error_rates(orig[mask], check[mask], confidence, method)
    return QcResult(sample.id, sample.seed, sample.size, len(pairs), missing,
                    reviewer_error_rates(orig, check, confidence, method), by_reviewer)
