"""Label resolution: a document's current label derived from its append-only judgments.

Policies (every report names the one it used):

- ``latest`` (default): the most recent judgment that gives a decision.
- ``adjudicated``: the most recent ``adjudication`` judgment if there is one, else ``latest``.
- ``majority``: relevant if more decisions say relevant than not; a tie goes to the most recent decision.
- ``any_relevant``: relevant if any judgment says relevant.

Judgments without a decision (``relevant`` NULL, e.g. a negative qrels value "in the pool, unjudged") never
decide a label; a document that only has such judgments stays unjudged. A screening **maybe** and a **skip**
(``judgments.decision``) are such judgments under every policy: a document with only maybes or skips is unjudged
(for recall, the estimates and the trec measures alike), and a maybe never withdraws an earlier include or exclude.
A record flagged a **duplicate** of another (`reviewdepth dedupe --apply`: a judgment with ``decision =
'duplicate'``) is excluded under every policy, whatever its votes say, until a later ``distinct`` marker
(``dedupe --not-duplicate``) withdraws the flag; its reviewers' decisions were copied to the record kept
(`reviewdepth.services.files.dedupe`), so the work is counted once.

Agreement counts include/exclude votes only; PRISMA counts a record with only maybes as screened, undecided
(docs/review-quality.md, "Screening decisions").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

# the type for the doors' typed parameters (`Literal`), the tuple for the checks: one list
LabelPolicy = Literal["latest", "adjudicated", "majority", "any_relevant"]
POLICIES: tuple[str, ...] = get_args(LabelPolicy)
UNJUDGED = -1
# a judgment's marker (`decode_judgment_codes`): none, a duplicate flag, its withdrawal
NO_MARKER, DUPLICATE_MARKER, DISTINCT_MARKER = 0, 1, 2
# the one digit the loaders read per judgment: (relevant 1/0/-1) + 1, plus 3 for an adjudication; 6 and 7 are the
# duplicate and distinct markers (rows deciding nothing themselves: `resolve_codes` applies the flag)
JUDGMENT_CODE_SQL = ("CASE WHEN decision = 'duplicate' THEN 6 WHEN decision = 'distinct' THEN 7 "
                     "ELSE (CASE WHEN relevant IS NULL THEN -1 WHEN relevant THEN 1 ELSE 0 END) + 1 "
                     "+ 3 * (CASE WHEN role = 'adjudication' THEN 1 ELSE 0 END) END")


class PolicyError(ValueError):
    pass


def decode_judgment_codes(codes: npt.NDArray[np.integer]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.bool_],
                                                                   npt.NDArray[np.int8]]:
    """(relevant 1/0/-1, is-adjudication, marker) per judgment from the digits of `JUDGMENT_CODE_SQL`."""
    codes = np.asarray(codes, dtype=np.int8)
    plain = codes < 6
    rel = np.where(plain, codes % 3 - 1, UNJUDGED).astype(np.int8)
    markers = np.where(plain, NO_MARKER, codes - 5).astype(np.int8)
    return rel, plain & (codes >= 3), markers


@dataclass(frozen=True)
class ResolvedLabels:
    """One row per document that has at least one judgment: its id and label (1, 0, or -1 = unjudged)."""

    doc_ids: npt.NDArray[np.object_]
    labels: npt.NDArray[np.int8]


def resolve_labels(doc_ids: list[str], judgment_ids: npt.NDArray[np.int64], relevant: npt.NDArray[np.int8],
                   adjudication: npt.NDArray[np.bool_], policy: str = "latest",
                   markers: npt.NDArray[np.int8] | None = None) -> ResolvedLabels:
    """Resolve per document. ``relevant`` is 1, 0 or -1 (no decision) per judgment; ``markers`` (optional, per
    judgment) the duplicate flags (module docstring)."""
    n = len(doc_ids)
    if policy not in POLICIES:
        raise PolicyError(f"unknown label policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if n == 0:
        return ResolvedLabels(np.array([], dtype=object), np.array([], dtype=np.int8))
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(d, len(index)) for d in doc_ids), dtype=np.int64, count=n)
    uniq = np.array(list(index), dtype=object)
    return ResolvedLabels(uniq, resolve_codes(codes, len(uniq), judgment_ids, relevant, adjudication, policy,
                                              markers))


def resolve_codes(codes: npt.NDArray[np.int64], ndoc: int, judgment_ids: npt.NDArray[np.int64],
                  relevant: npt.NDArray[np.int8], adjudication: npt.NDArray[np.bool_],
                  policy: str = "latest", markers: npt.NDArray[np.int8] | None = None) -> npt.NDArray[np.int8]:
    """The same resolution with documents already numbered 0..ndoc-1 (``codes`` per judgment)."""
    if policy not in POLICIES:
        raise PolicyError(f"unknown label policy {policy!r}; choose one of {', '.join(POLICIES)}")
    in_id_order = bool(np.all(judgment_ids[1:] >= judgment_ids[:-1]))
    decided = relevant >= 0
    out = np.full(ndoc, UNJUDGED, dtype=np.int8)

    def latest_of(mask: npt.NDArray[np.bool_]) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int8]]:
        has = np.zeros(ndoc, dtype=bool)
        value = np.full(ndoc, UNJUDGED, dtype=np.int8)
        idx = np.flatnonzero(mask)
        if len(idx):
            # process in id order: the last write per document wins
            if not in_id_order:
                idx = idx[np.argsort(judgment_ids[idx], kind="stable")]
            value[codes[idx]] = relevant[idx]
            has[codes[idx]] = True
        return has, value

    if policy in ("latest", "adjudicated"):
        has, value = latest_of(decided)
        out[has] = value[has]
        if policy == "adjudicated":
            has_adj, adj = latest_of(decided & adjudication)
            out[has_adj] = adj[has_adj]
    elif policy == "majority":
        yes = np.bincount(codes[decided & (relevant == 1)], minlength=ndoc)
        no = np.bincount(codes[decided & (relevant == 0)], minlength=ndoc)
        has, value = latest_of(decided)
        out[has] = value[has]
        out[yes > no] = 1
        out[no > yes] = 0
    else:
        has, _ = latest_of(decided)
        out[has] = 0
        out[np.bincount(codes[decided & (relevant == 1)], minlength=ndoc) > 0] = 1
    if markers is not None:
        out[duplicate_documents(codes, ndoc, judgment_ids, markers)] = 0
    return out


def duplicate_documents(codes: npt.NDArray[np.int64], ndoc: int, judgment_ids: npt.NDArray[np.int64],
                        markers: npt.NDArray[np.int8]) -> npt.NDArray[np.bool_]:
    """Per document: whether its latest marker is a duplicate flag (not withdrawn)."""
    flagged = np.zeros(ndoc, dtype=bool)
    idx = np.flatnonzero(markers != NO_MARKER)
    if len(idx):
        idx = idx[np.argsort(judgment_ids[idx], kind="stable")]  # the last write per document wins
        latest = np.full(ndoc, NO_MARKER, dtype=np.int8)
        latest[codes[idx]] = markers[idx]
        flagged = latest == DUPLICATE_MARKER
    return flagged
