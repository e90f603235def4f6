"""Issue 38, item 4: a plan that survives being followed. On real CLEF TAR 2017 rankings (Waterloo A), a team at a
decision state follows the recommended path's first step on the true labels; when nothing surprising happened (the
relevant found on the way within what the projection allowed, no audit positive outside the prefix), the next plan
continues the same path (`stop_plan.CONTINUATIONS`: the plan followed look by look stays that plan or its audit,
"review D more, then sample" becomes "sample now") and reports no change of course."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from reviewdepth.estimation.stop_plan import CONTINUATIONS, ReviewEvidence, StopPlan, plan_stop

from .test_stop_plan import clef2017_waterloo


def _evidence(labels: np.ndarray, reviewed: int, sample: np.ndarray,
              audited: np.ndarray | None = None) -> ReviewEvidence:
    inside_rest = sample[sample >= reviewed]
    outside = () if audited is None else tuple(int(r) for r in audited if r >= reviewed)
    return ReviewEvidence(labels[:reviewed].astype(np.int8), len(labels),
                          audited=0 if audited is None else len(audited), outside_audited_ranks=outside,
                          outside_positive_ranks=tuple(r for r in outside if labels[r] == 1),
                          rest_sample_size=len(inside_rest), rest_sample_relevant=int(labels[inside_rest].sum()))


def _followed(plan: StopPlan, labels: np.ndarray, reviewed: int, sample: np.ndarray,
              rng: np.random.Generator) -> ReviewEvidence | None:
    """The evidence after the recommended path's first step on the true labels, or None when something surprising
    happened on the way (more relevant in the reviewed documents than the projected rest holds, or an audit
    positive outside the prefix)."""
    best = next(p for p in plan.paths if p.kind == plan.recommended)
    if best.kind == "review_then_sample" or (best.kind == "planned" and best.review_more):
        more = best.review_more if best.kind == "review_then_sample" else max(10, plan.population // 200)
        if reviewed + more >= len(labels):
            return None
        found = int(labels[reviewed:reviewed + more].sum())
        if found > plan.projected_rest_relevant + 3 * np.sqrt(plan.projected_rest_relevant + 1):
            return None
        return _evidence(labels, reviewed + more, sample)
    if best.kind in ("planned", "audit_stream"):
        # the first audit step: 200 stream elements, those outside the prefix judged
        stream = rng.permutation(len(labels))[:200]
        if any(labels[r] == 1 for r in stream if r >= reviewed):
            return None
        return _evidence(labels, reviewed, sample, stream)
    return None


@pytest.mark.parametrize("topic", ["CD009579", "CD008803", "CD009647", "CD010339"])
def test_following_the_plan_keeps_its_path(topic: str) -> None:
    labels = clef2017_waterloo(topic)
    size = len(labels)
    tau, confidence = Fraction("0.9"), 0.95
    rng = np.random.default_rng(7)
    checked = 0
    for share in (0.1, 0.2, 0.3):
        reviewed = int(share * size)
        sample = rng.choice(np.arange(reviewed, size), size=min(300, size - reviewed), replace=False)
        before = plan_stop(_evidence(labels, reviewed, sample), tau, confidence, replicates=20, table=False)
        if before.recommended is None:
            continue
        followed = _followed(before, labels, reviewed, sample, rng)
        if followed is None:
            continue
        after = plan_stop(followed, tau, confidence, replicates=20, table=False, previous=before.recommended)
        assert after.recommended in CONTINUATIONS[before.recommended] and after.change is None, (
            topic, share, before.recommended, after.recommended, after.change)
        checked += 1
    assert checked, f"{topic}: no state followed"
