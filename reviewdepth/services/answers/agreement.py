"""Inter-reviewer agreement on the documents two or more reviewers voted on (votes: `reviewdepth.store.votes`).

A maybe is no vote here: agreement, κ and α count include / exclude votes only, so a document one reviewer
included and another marked maybe is left out of that pair (the conflict rules do see maybes).

Per reviewer pair: percent agreement (exact binomial interval) and Cohen's kappa (FCE 1969 interval) on the
documents both voted on. Overall: the share of multi-reviewer documents on which every vote agrees, and
Krippendorff's alpha (nominal) over all of them, with a seeded bootstrap interval.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from sqlalchemy import Engine

from reviewdepth.estimation.agreement import (
    AlphaResult,
    KappaResult,
    ProportionResult,
    cohen_kappa,
    krippendorff_alpha_binary,
    percent_agreement,
)
from reviewdepth.services.answers.conflicts import several_reviewer_votes
from reviewdepth.services.evidence.confidence import checked_confidence
from reviewdepth.store.votes import DocumentVotes


@dataclass(frozen=True)
class PairAgreement:
    reviewer_a: str
    reviewer_b: str
    agreement: ProportionResult
    kappa: KappaResult


@dataclass(frozen=True)
class AgreementSummary:
    reviewers: list[str]
    documents: int
    agreement: ProportionResult
    alpha: AlphaResult
    pairs: list[PairAgreement]

    def as_dict(self) -> dict[str, Any]:
        return {
            "reviewers": self.reviewers, "documents": self.documents,
            "agreement": dataclasses.asdict(self.agreement), "krippendorff_alpha": dataclasses.asdict(self.alpha),
            "pairs": [{"reviewer_a": p.reviewer_a, "reviewer_b": p.reviewer_b,
                       "agreement": dataclasses.asdict(p.agreement), "cohen_kappa": dataclasses.asdict(p.kappa)}
                      for p in self.pairs],
        }


def agreement_of(documents: list[DocumentVotes], confidence: float = 0.95) -> AgreementSummary:
    """Agreement over documents with at least two voters (others are ignored)."""
    multi = [d for d in documents if len(d.votes) >= 2]
    pairs: dict[tuple[str, str], tuple[list[int], list[int]]] = {}
    for doc in multi:
        ordered = sorted(doc.votes, key=lambda v: v.reviewer)
        for first, second in combinations(ordered, 2):
            a, b = pairs.setdefault((first.reviewer, second.reviewer), ([], []))
            a.append(int(first.relevant is True))
            b.append(int(second.relevant is True))
    yes = np.array([sum(v.relevant is True for v in d.votes) for d in multi], dtype=np.int64)
    no = np.array([len(d.votes) for d in multi], dtype=np.int64) - yes
    unanimous = int(np.count_nonzero((yes == 0) | (no == 0)))
    return AgreementSummary(
        reviewers=sorted({v.reviewer for d in multi for v in d.votes}),
        documents=len(multi),
        agreement=percent_agreement(unanimous, len(multi), confidence),
        alpha=krippendorff_alpha_binary(yes, no, confidence),
        pairs=[PairAgreement(ra, rb, percent_agreement(sum(x == y for x, y in zip(a, b, strict=True)), len(a),
                                                       confidence),
                             cohen_kappa(np.array(a), np.array(b), confidence))
               for (ra, rb), (a, b) in sorted(pairs.items())],
    )


def topic_agreement(engine: Engine, topic: str, *, as_of: str | None = None,
                    confidence: float = 0.95) -> AgreementSummary:
    checked_confidence(confidence)
    return agreement_of(several_reviewer_votes(engine, topic, as_of, "agreement"), confidence)
