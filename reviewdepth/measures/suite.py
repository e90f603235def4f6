"""Measure selection (trec_eval's ``-m`` syntax), per-query values and the ``all`` summary."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from reviewdepth.measures import trec
from reviewdepth.measures.ranking import RankedQueries

# trec_eval's table order for the measures reviewdepth implements.
TABLE_ORDER: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "11pt_avg", "set_P", "set_recall", "set_F", "rbp", "rbp_resid",
)
OFFICIAL: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P",
)
ALL_9: tuple[str, ...] = tuple(m for m in TABLE_ORDER if m not in ("rbp", "rbp_resid"))
COUNT_MEASURES = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret"})
SUMMARY_ONLY = frozenset({"runid", "num_q", "gm_map"})


class MeasureError(ValueError):
    """An unknown measure name or a bad measure parameter."""


@dataclass
class MeasureSpec:
    """Which measures to compute, with their parameters."""

    names: set[str] = field(default_factory=lambda: set(OFFICIAL))
    p_cutoffs: tuple[int, ...] = trec.DEFAULT_CUTOFFS
    recall_cutoffs: tuple[int, ...] = trec.DEFAULT_CUTOFFS
    recall_levels: tuple[float, ...] = trec.DEFAULT_RECALL_LEVELS
    set_f_beta2: float = 1.0
    rbp_persistence: float = 0.9

    @classmethod
    def parse(cls, requests: list[str] | None, version: int = 9) -> MeasureSpec:
        """Parse ``-m`` values: names (``map``), groups (``official``, ``all``, ``all_trec``), a single cutoff
        (``P_10``, ``recall_5``, ``iprec_at_recall_0.10``) or trec_eval parameters (``P.5,10``,
        ``set_F.0.25``, ``rbp.0.8``)."""
        if not requests:
            return cls()
        spec = cls(names=set())
        singles: dict[str, list[float]] = {"P": [], "recall": [], "iprec_at_recall": []}
        for raw in requests:
            for request in [raw] if "." in raw else [r for r in raw.split(",") if r]:
                spec._add(request, version, singles)
        if singles["P"]:
            plain = spec.p_cutoffs if "P" in spec.names else ()
            spec.p_cutoffs = _merge_cutoffs(plain, [int(v) for v in singles["P"]])
            spec.names.add("P")
        if singles["recall"]:
            plain = spec.recall_cutoffs if "recall" in spec.names else ()
            spec.recall_cutoffs = _merge_cutoffs(plain, [int(v) for v in singles["recall"]])
            spec.names.add("recall")
        if singles["iprec_at_recall"]:
            plain_levels = spec.recall_levels if "iprec_at_recall" in spec.names else ()
            spec.recall_levels = tuple(sorted(set(plain_levels) | set(singles["iprec_at_recall"])))
            spec.names.add("iprec_at_recall")
        return spec

    def _add(self, request: str, version: int, singles: dict[str, list[float]]) -> None:
        if request in ("official",):
            self.names |= set(OFFICIAL)
            return
        if request in ("all", "all_trec"):
            self.names |= set(TABLE_ORDER if version >= 10 else ALL_9)
            return
        for base in ("iprec_at_recall", "recall", "P"):
            prefix = base + "_"
            if request.startswith(prefix) and request not in TABLE_ORDER:
                value = request[len(prefix):]
                try:
                    number = float(value) if base == "iprec_at_recall" else int(value)
                except ValueError:
                    raise MeasureError(f"bad cutoff in measure {request!r}") from None
                if base != "iprec_at_recall" and int(number) <= 0:
                    raise MeasureError(f"cutoff must be > 0 in measure {request!r}")
                singles[base].append(number)
                return
        name, _, params = request.partition(".")
        if name not in TABLE_ORDER:
            raise MeasureError(f"unknown measure {request!r}; known: {', '.join(TABLE_ORDER)}, official, all")
        self.names.add(name)
        if not params:
            return
        values = [v for v in params.split(",") if v]
        try:
            if name in ("P", "recall"):
                cutoffs = tuple(int(v) for v in values)
                if any(c <= 0 for c in cutoffs) or len(set(cutoffs)) != len(cutoffs) or not cutoffs:
                    raise MeasureError(f"cutoffs of {name} must be positive and unique: {params!r}")
                if name == "P":
                    self.p_cutoffs = tuple(sorted(cutoffs))
                else:
                    self.recall_cutoffs = tuple(sorted(cutoffs))
            elif name == "iprec_at_recall":
                levels = tuple(sorted(float(v) for v in values))
                if any(not 0.0 <= v <= 1.0 for v in levels) or not levels:
                    raise MeasureError(f"recall levels must be in [0, 1]: {params!r}")
                self.recall_levels = levels
            elif name == "set_F":
                self.set_f_beta2 = float(params)
            elif name == "rbp":
                persistence = float(params)
                if not 0.0 < persistence < 1.0:
                    raise MeasureError(f"rbp persistence must be in (0, 1): {params!r}")
                self.rbp_persistence = persistence
            else:
                raise MeasureError(f"measure {name!r} takes no parameters")
        except ValueError as exc:
            if isinstance(exc, MeasureError):
                raise
            raise MeasureError(f"bad parameters in measure {request!r}") from None

    def output_names(self, summary: bool) -> list[str]:
        """Printed names in trec_eval's order."""
        out: list[str] = []
        for name in TABLE_ORDER:
            if name not in self.names or (not summary and name in SUMMARY_ONLY):
                continue
            if name == "P":
                out += [f"P_{k}" for k in self.p_cutoffs]
            elif name == "recall":
                out += [f"recall_{k}" for k in self.recall_cutoffs]
            elif name == "iprec_at_recall":
                out += [f"iprec_at_recall_{p:.2f}" for p in self.recall_levels]
            else:
                out.append(name)
        return out


def _merge_cutoffs(existing: tuple[int, ...], extra: list[int]) -> tuple[int, ...]:
    return tuple(sorted(set(existing) | set(extra)))


@dataclass
class Evaluation:
    """Per-query values (printed queries, strcmp order) and the ``all`` summary, both keyed by output name."""

    measures: list[str]
    per_query: dict[str, dict[str, float | int]]
    summary: dict[str, float | int | str]


def evaluate_ranked(
    ranked: RankedQueries,
    spec: MeasureSpec,
    *,
    run_id: str,
    version: int = 9,
    complete_qids: list[str] | None = None,
    complete_num_rel: int | None = None,
) -> Evaluation:
    """Compute the selected measures for every evaluated query and the summary line.

    ``complete_qids`` (``-c``): qrels queries missing from the run; they count in num_q with every measure 0
    (gm_map term ln(1e-5)); num_rel's summary becomes ``complete_num_rel`` (qrels lines with value > 0).
    Version 10 prints their per-query lines; 9.0.8 does not.
    """
    names = spec.names
    columns: dict[str, np.ndarray] = {}
    ap = None
    if names & {"map", "gm_map"}:
        ap = trec.average_precision(ranked)
    if "num_ret" in names:
        columns["num_ret"] = trec.num_ret(ranked)
    if "num_rel" in names:
        columns["num_rel"] = trec.num_rel(ranked)
    if "num_rel_ret" in names:
        columns["num_rel_ret"] = trec.num_rel_ret(ranked)
    if "map" in names and ap is not None:
        columns["map"] = ap
    if "Rprec" in names:
        columns["Rprec"] = trec.r_precision(ranked)
    if "bpref" in names:
        columns["bpref"] = trec.bpref(ranked)
    if "recip_rank" in names:
        columns["recip_rank"] = trec.reciprocal_rank(ranked)
    if "iprec_at_recall" in names:
        ip = trec.interpolated_precision_at_recall(ranked, spec.recall_levels, version)
        for j, p in enumerate(spec.recall_levels):
            columns[f"iprec_at_recall_{p:.2f}"] = ip[:, j]
    if "P" in names:
        for k in spec.p_cutoffs:
            columns[f"P_{k}"] = trec.precision_at(ranked, k)
    if "recall" in names:
        for k in spec.recall_cutoffs:
            columns[f"recall_{k}"] = trec.recall_at(ranked, k)
    if "11pt_avg" in names:
        columns["11pt_avg"] = trec.eleven_point_average(
            trec.interpolated_precision_at_recall(ranked, trec.DEFAULT_RECALL_LEVELS, version))
    if "set_P" in names:
        columns["set_P"] = trec.set_precision(ranked)
    if "set_recall" in names:
        columns["set_recall"] = trec.set_recall(ranked)
    if "set_F" in names:
        columns["set_F"] = trec.set_f(ranked, spec.set_f_beta2)
    if "rbp" in names:
        columns["rbp"] = trec.rank_biased_precision(ranked, spec.rbp_persistence)
    if "rbp_resid" in names:
        columns["rbp_resid"] = trec.rbp_residual(ranked, 0.9 if version >= 10 else spec.rbp_persistence,
                                                 trec_eval_10_quirk=version >= 10)

    per_names = spec.output_names(summary=False)
    all_names = spec.output_names(summary=True)
    missing = complete_qids or []
    num_q = ranked.num_queries + len(missing)

    per_query: dict[str, dict[str, float | int]] = {}
    as_lists = {name: columns[name].tolist() for name in per_names}
    rows = [(qid, i) for i, qid in enumerate(ranked.qids)]
    if version >= 10 and missing:
        rows += [(qid, -1) for qid in missing]
        rows.sort(key=lambda r: r[0].encode("utf-8", "surrogateescape"))
    for qid, i in rows:
        if i < 0:
            per_query[qid] = {n: (0 if n in COUNT_MEASURES else 0.0) for n in per_names}
            if "num_rel" in per_query[qid]:
                per_query[qid]["num_rel"] = 0
            continue
        per_query[qid] = {n: (int(as_lists[n][i]) if n in COUNT_MEASURES else float(as_lists[n][i]))
                          for n in per_names}

    summary: dict[str, float | int | str] = {}
    for name in all_names:
        if name == "runid":
            summary[name] = run_id
        elif name == "num_q":
            summary[name] = num_q
        elif name == "gm_map":
            assert ap is not None
            summary[name] = trec.geometric_mean_summary(trec.log_average_precision(ap), num_q)
        elif name == "num_rel" and complete_num_rel is not None:
            summary[name] = complete_num_rel
        elif name in COUNT_MEASURES:
            summary[name] = int(np.sum(columns[name]))
        else:
            total = 0.0
            for value in columns[name].tolist():
                total += value
            summary[name] = total / num_q if num_q else 0.0
    return Evaluation(measures=all_names, per_query=per_query, summary=summary)
