"""The ``--suite tar`` measure sets: per-topic values and the ``ALL`` line for each compatibility mode.

- ``none`` (clean definitions): ceil rule for the 95 % target, recall at x % of the collection without the
  2017 off-by-one, costs charged once, any N ≥ 1, every summary a macro mean (counts summed).
- ``clef2017``: CLEF 2017 ``tar_eval.py``, value for value (types too: ``wss_100`` is the integer 0 when recall
  is not complete, as the script prints ``0``).
- ``clef2019``: CLEF 2018/2019 ``tar_eval_2018.py 2`` (Task 2).
- ``asreview``: asreview-insights' metrics on the padded label list.

Pure: takes `TopicRun` values built by the service, returns dicts. Rounding for display is the renderer's job,
except where a script rounds *before* averaging (norm_area, norm_last_rel, norm_threshold): that rounding is
part of the reproduced value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from reviewdepth.measures import depth, tar

Compat = Literal["none", "clef2017", "clef2019", "asreview"]
CompatMode = Literal["none", "clef2017", "clef2019", "asreview"]
COMPAT_MODES: tuple[str, ...] = get_args(CompatMode)
Value = float | int | str
BoolArray = npt.NDArray[np.bool_]

# Print styles for the tar line format: "r3" (2017: floats rounded to 3 decimals), "auto" (2018: floats < 1
# to 3 decimals, others to 0), "r0" (always 0 decimals), "raw" (text / integers as they are).
Style = Literal["r3", "auto", "r0", "raw"]

NCG_PERCENTS: tuple[int, ...] = tuple(range(10, 101, 10))
RECALL_PERCENTS_2019: tuple[int, ...] = tuple(range(1, 101))
RRF_POINTS: tuple[tuple[str, float], ...] = (("rrf@10", 0.1), ("rrf@25", 0.25), ("rrf@50", 0.5),
                                             ("rrf@75", 0.75), ("rrf@90", 0.9))


@dataclass(frozen=True)
class TopicRun:
    """One topic's run lines in review order, after the reader's line rules.

    ``rel`` 1 for a relevant line; ``shown`` False for 2017 ``NS`` lines; ``feedback`` True for ``AF``;
    ``cost_shown``/``cost_feedback`` the same after the 2017 cost mapping (AFN/DFN/DFS → AF, NFS → NF,
    NFN → NS); ``flags`` the 2018/2019 threshold flag (1). N = ``num_docs``, R = ``num_rels``.
    """

    qid: str
    rel: npt.NDArray[np.int64]
    shown: BoolArray
    feedback: BoolArray
    cost_shown: BoolArray
    cost_feedback: BoolArray
    flags: BoolArray
    num_docs: int
    num_rels: int

    @classmethod
    def plain(cls, qid: str, rel: npt.ArrayLike, num_docs: int, num_rels: int) -> TopicRun:
        """A ranking with every line shown, no feedback and no threshold flag."""
        r = np.asarray(rel, dtype=np.int64)
        true = np.ones(len(r), dtype=bool)
        false = np.zeros(len(r), dtype=bool)
        return cls(qid, r, true, false, true, false, false, num_docs, num_rels)


@dataclass
class TopicValues:
    """Per-topic values (printing order) and, for micro-averaged list measures, the numerators to average."""

    values: dict[str, Value]
    micro: dict[str, float] = field(default_factory=dict)


@dataclass
class TarSuite:
    """Layout of one mode: (printed name, value key, style) in the official order, and how ``ALL`` is formed."""

    layout: list[tuple[str, str, Style]]
    sums: frozenset[str]
    micro_denominator: str | None  # key whose mean divides the mean micro numerators (CLEF list measures)


def _wss_compat(shown_rel: npt.NDArray[np.int64], n_eff: int, num_rels: int) -> tuple[int | float, int | float]:
    """wss_100 and wss_95 as tar_eval.py computes them (integer 0 when not reached; N raised to n)."""
    found = tar.rels_found(shown_rel)
    last = tar.last_rel(shown_rel)
    w100: int | float = float(n_eff - last) / float(n_eff) if found >= num_rels else 0
    depth95 = depth.depth_at_count(depth.relevant_ranks_from_labels(shown_rel),
                                   depth.target_count(0.95, num_rels, "tar_eval"))
    w95: int | float = 0 if depth95 is None else float(n_eff - depth95) / float(n_eff) - 0.05
    return w100, w95


# --- CLEF 2017 -------------------------------------------------------------------------------------------

_LAYOUT_2017: list[tuple[str, str, Style]] = [
    ("topic_id", "topic_id", "raw"), ("num_docs", "num_docs", "r3"), ("num_rels", "num_rels", "r3"),
    ("num_shown", "num_shown", "r3"), ("num_feedback", "num_feedback", "r3"), ("rels_found", "rels_found", "r3"),
    ("last_rel", "last_rel", "r3"), ("wss_100", "wss_100", "r3"), ("wss_95", "wss_95", "r3"),
    *[(f"NCG@{k}", f"NCG@{k}", "r3") for k in NCG_PERCENTS],
    ("total_cost", "total_cost", "r3"), ("total_cost_uniform", "total_cost_uniform", "r3"),
    ("total_cost_weighted", "total_cost_weighted", "r3"), ("norm_area", "norm_area", "r3"), ("ap", "ap", "r3"),
    ("r", "r", "r3"), ("loss_e", "loss_e", "r3"), ("loss_r", "loss_r", "r3"), ("loss_er", "loss_er", "r3"),
]
CLEF2017 = TarSuite(_LAYOUT_2017, frozenset({"num_docs", "num_rels", "num_shown", "num_feedback", "rels_found"}),
                    "max_cg")


def clef2017_topic(t: TopicRun) -> TopicValues:
    """tar_eval.py (CLEF 2017) for one topic. Shown ranks skip NS lines; N is raised to num_shown for wss and
    loss_e, replaced by num_shown in norm_area's optimum, but kept (possibly below num_shown) in the printed
    num_docs and in the cost penalties (quirk 7)."""
    shown_rel = t.rel[t.shown]
    n = len(shown_rel)
    r_count = t.num_rels
    n_eff = max(t.num_docs, n)
    found = tar.rels_found(shown_rel)
    w100, w95 = _wss_compat(shown_rel, n_eff, r_count)
    cg_at, ncg = tar.clef2017_ncg(t.rel, t.shown, t.num_docs, r_count)
    total = tar.assessment_cost(t.cost_shown, t.cost_feedback)
    cost_n = int(np.count_nonzero(t.cost_shown))
    cost_missed = r_count - int(np.count_nonzero(t.rel[t.cost_shown]))
    recall = float(found) / float(r_count)
    values: dict[str, Value] = {
        "topic_id": t.qid, "num_docs": t.num_docs, "num_rels": r_count, "num_shown": n,
        "num_feedback": int(np.count_nonzero(t.feedback)), "rels_found": found, "last_rel": tar.last_rel(shown_rel),
        "wss_100": w100, "wss_95": w95,
    }
    for k, value in zip(NCG_PERCENTS, ncg.tolist(), strict=True):
        values[f"NCG@{k}"] = value
    values.update({
        "total_cost": total,
        "total_cost_uniform": tar.cost_uniform(total, t.num_docs - cost_n, cost_missed, r_count),
        "total_cost_weighted": tar.clef2017_cost_weighted(total, t.num_docs - cost_n, cost_missed),
        "norm_area": round(tar.norm_area(shown_rel, t.num_docs, r_count), 3),
        "ap": tar.average_precision(shown_rel, r_count),
        "r": recall, "loss_e": tar.loss_e(n, t.num_docs, r_count), "loss_r": tar.loss_r(recall),
    })
    values["loss_er"] = float(values["loss_r"]) + float(values["loss_e"])
    micro = {f"NCG@{k}": v for k, v in zip(NCG_PERCENTS, cg_at.tolist(), strict=True)}
    micro["max_cg"] = float(r_count)
    return TopicValues(values, micro)


# --- CLEF 2018/2019 Task 2 -------------------------------------------------------------------------------

_LAYOUT_2019: list[tuple[str, str, Style]] = [
    ("num_shown", "num_shown", "auto"), ("rels_found", "rels_found", "auto"), ("num_rels", "num_rels", "auto"),
    ("last_rel", "last_rel", "auto"), ("norm_last_rel", "norm_last_rel", "auto"),
    ("threshold", "threshold", "auto"), ("norm_threshold", "norm_threshold", "auto"),
    ("wss_100", "wss_100", "auto"), ("wss_95", "wss_95", "auto"),
    ("cg_total", "cg_total", "r0"), ("cg_max", "cg_max", "r0"), ("cg_threshold", "cg_threshold", "r0"),
    ("recall_threshold", "recall_threshold", "r3"), ("threshold", "threshold", "r0"),
    *[(f"recall@{float(x)}%", f"recall@{x}%", "r3") for x in RECALL_PERCENTS_2019],
    ("total_cost", "total_cost", "auto"), ("norm_area", "norm_area", "auto"), ("ap", "ap", "auto"),
    ("r", "r", "auto"), ("loss_e", "loss_e", "auto"), ("loss_r", "loss_r", "auto"), ("loss_er", "loss_er", "auto"),
]
CLEF2019 = TarSuite(_LAYOUT_2019, frozenset({"num_shown", "rels_found", "num_rels"}), "cg_max")


def clef2019_topic(t: TopicRun) -> TopicValues:
    """tar_eval_2018.py Task 2 for one topic: full-ranking measures over every line; threshold = the **last**
    line flagged 1 (N when none), but r, loss and total_cost stop at the **first** flag (quirk 4)."""
    rel = t.rel
    length = len(rel)
    r_count = t.num_rels
    n_eff = max(t.num_docs, length)
    flagged = np.flatnonzero(t.flags)
    threshold = int(flagged[-1]) + 1 if len(flagged) else t.num_docs
    seen = int(flagged[0]) + 1 if len(flagged) else length
    cg = tar.gain_curve(rel)
    cg_total = float(cg[-1])
    cg_threshold = float(cg[threshold]) if len(flagged) else 0.0
    if threshold == t.num_docs:
        cg_threshold = cg_total
    w100, w95 = _wss_compat(rel, n_eff, r_count)
    cg_at, recall_at = tar.clef2019_recall_at_percent(rel, t.num_docs, r_count, RECALL_PERCENTS_2019)
    found_seen = int(cg[seen])
    recall = float(found_seen) / float(r_count)
    last = tar.last_rel(rel)
    values: dict[str, Value] = {
        "num_shown": length, "rels_found": int(cg[-1]), "num_rels": r_count, "last_rel": last,
        "norm_last_rel": round(float(last) / float(n_eff), 3), "threshold": threshold,
        "norm_threshold": round(float(threshold) / float(n_eff), 3), "wss_100": w100, "wss_95": w95,
        "cg_total": cg_total, "cg_max": float(r_count), "cg_threshold": cg_threshold,
        "recall_threshold": cg_threshold / float(r_count),
    }
    for x, value in zip(RECALL_PERCENTS_2019, recall_at.tolist(), strict=True):
        values[f"recall@{x}%"] = value
    values.update({
        "total_cost": tar.clef2019_utility_cost(rel, seen, r_count),
        "norm_area": round(tar.norm_area(rel, t.num_docs, r_count), 3),
        "ap": tar.average_precision(rel, r_count),
        "r": recall, "loss_e": tar.loss_e(seen, t.num_docs, r_count), "loss_r": tar.loss_r(recall),
    })
    values["loss_er"] = float(values["loss_r"]) + float(values["loss_e"])
    micro = {f"recall@{x}%": v for x, v in zip(RECALL_PERCENTS_2019, cg_at.tolist(), strict=True)}
    micro["cg_max"] = float(r_count)
    return TopicValues(values, micro)


# --- clean ---------------------------------------------------------------------------------------------

_CLEAN_KEYS: tuple[str, ...] = (
    "num_docs", "num_rels", "num_ret", "num_shown", "num_feedback", "rels_found", "last_rel", "norm_last_rel",
    "wss_100", "wss_95", *[f"NCG@{k}" for k in NCG_PERCENTS], "ap", "norm_area",
    "cg_threshold", "recall_threshold", "norm_threshold", "loss_e", "loss_r", "loss_er",
    "total_cost", "total_cost_uniform", "total_cost_weighted", "utility",
)
CLEAN = TarSuite([(k, k, "r3") for k in _CLEAN_KEYS],
                 frozenset({"num_docs", "num_rels", "num_ret", "num_shown", "num_feedback", "rels_found",
                            "cg_threshold"}), None)


def read_mask(t: TopicRun) -> BoolArray:
    """Lines the reviewer reads at the run's own threshold: shown (not NS) and up to the flagged line."""
    mask = t.shown.copy()
    flagged = np.flatnonzero(t.flags)
    if len(flagged):
        mask[int(flagged[0]) + 1:] = False
    return mask


def clean_topic(t: TopicRun, target: str = "0.95") -> TopicValues:
    """Clean definitions. N' = max(N, ranking length) everywhere (a ranked document outside the qrels is a
    document of the collection). Full-ranking measures use every ranked line; threshold measures (cg/recall at
    threshold, loss, costs) use the lines read (`read_mask`)."""
    rel = t.rel
    r_count = t.num_rels
    n_eff = max(t.num_docs, len(rel))
    read = read_mask(t)
    n_read = int(np.count_nonzero(read))
    found_read = int(np.count_nonzero(rel[read]))
    recall_read = found_read / r_count
    total = tar.assessment_cost(read, t.feedback & read)
    missed = r_count - found_read
    values: dict[str, Value] = {
        "num_docs": n_eff, "num_rels": r_count, "num_ret": len(rel), "num_shown": n_read,
        "num_feedback": int(np.count_nonzero(t.feedback & read)), "rels_found": tar.rels_found(rel),
        "last_rel": tar.last_rel(rel), "norm_last_rel": tar.norm_last_rel(rel, n_eff),
        "wss_100": depth.wss_100(rel, n_eff, r_count), "wss_95": depth.wss_at(rel, n_eff, r_count, target, "ceil"),
    }
    for k, value in zip(NCG_PERCENTS, tar.recall_at_percent(rel, n_eff, r_count, NCG_PERCENTS).tolist(),
                        strict=True):
        values[f"NCG@{k}"] = value
    values.update({
        "ap": tar.average_precision(rel, r_count), "norm_area": tar.norm_area(rel, n_eff, r_count),
        "cg_threshold": found_read, "recall_threshold": recall_read, "norm_threshold": n_read / n_eff,
        "loss_e": tar.loss_e(n_read, n_eff, r_count), "loss_r": tar.loss_r(recall_read),
        "loss_er": tar.loss_er(recall_read, n_read, n_eff, r_count),
        "total_cost": total,
        "total_cost_uniform": tar.cost_uniform(total, n_eff - n_read, missed, r_count),
        "total_cost_weighted": tar.cost_weighted(total, n_eff - n_read, missed),
        "utility": tar.utility_cost(n_read, found_read, r_count),
    })
    return TopicValues(values)


# --- ASReview -------------------------------------------------------------------------------------------

_ASREVIEW_KEYS: tuple[str, ...] = ("num_docs", "num_rels", "rels_found", *[k for k, _ in RRF_POINTS],
                                   "wss@95", "wss@100", "erf@10", "atd", "loss", "ndcg")
ASREVIEW = TarSuite([(k, k, "r3") for k in _ASREVIEW_KEYS], frozenset({"num_docs", "num_rels", "rels_found"}),
                    None)


def asreview_topic(t: TopicRun) -> TopicValues:
    """asreview-insights on the labels padded with 0 to N' = max(N, ranking length). As insights, N_y is the
    number of relevant **labels** (rels_found), not the qrels' R: a truncated ranking is judged against what it
    found."""
    labels = tar.asreview_labels(t.rel, t.num_docs)
    ny = int(labels.sum())
    values: dict[str, Value] = {"num_docs": len(labels), "num_rels": t.num_rels, "rels_found": ny}
    for key, v in RRF_POINTS:
        values[key] = tar.asreview_rrf(labels, v) if ny else 0.0
    values["wss@95"] = tar.asreview_wss(labels, 0.95) if ny else 0.0
    values["wss@100"] = tar.asreview_wss(labels, 1.0) if ny else 0.0
    values["erf@10"] = tar.asreview_erf(labels, 0.10) if ny else 0.0
    values["atd"] = tar.average_time_to_discovery(labels)
    values["loss"] = tar.asreview_loss(labels)
    values["ndcg"] = tar.asreview_ndcg(labels)
    return TopicValues(values)


SUITES: dict[str, TarSuite] = {"clef2017": CLEF2017, "clef2019": CLEF2019, "none": CLEAN, "asreview": ASREVIEW}


def topic_values(compat: str, t: TopicRun) -> TopicValues:
    """Dispatch to the mode's per-topic function."""
    if compat == "clef2017":
        return clef2017_topic(t)
    if compat == "clef2019":
        return clef2019_topic(t)
    if compat == "asreview":
        return asreview_topic(t)
    return clean_topic(t)


def summarize(compat: str, topics: list[TopicValues]) -> dict[str, Value]:
    """The ``ALL`` line: counts in ``suite.sums`` are summed; every other number is summed one topic at a time
    (in output order) and divided by the number of topics, as the CLEF aggregator does; list measures with a
    ``micro`` numerator are mean(numerator)/mean(denominator) (CLEF's micro average, quirk 8)."""
    suite = SUITES[compat]
    count = len(topics)
    out: dict[str, Value] = {}
    if compat == "clef2017":
        out["topic_id"] = "ALL"
    keys = [key for _, key, _ in suite.layout if key != "topic_id"]
    for key in dict.fromkeys(keys):
        if key in suite.sums:
            total_i = 0
            for tv in topics:
                total_i = total_i + int(tv.values[key])
            out[key] = total_i
            continue
        if topics and key in topics[0].micro and key != suite.micro_denominator:
            continue
        total_f: float | int = 0
        for tv in topics:
            total_f = total_f + tv.values[key]  # type: ignore[operator]
        out[key] = total_f / float(count) if count else 0.0
    if suite.micro_denominator is not None and topics:
        denominator = _mean([tv.micro[suite.micro_denominator] for tv in topics])
        for key in topics[0].micro:
            if key == suite.micro_denominator:
                continue
            out[key] = _mean([tv.micro[key] for tv in topics]) / denominator if denominator > 0 else 0.0
    return {key: out[key] for key in dict.fromkeys(k for _, k, _ in suite.layout) if key in out}


def _mean(values: list[float]) -> float:
    total = 0.0
    for v in values:
        total = total + v
    return total / float(len(values))
