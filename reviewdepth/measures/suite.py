"""Measure selection (trec_eval's ``-m`` syntax), per-query values and the ``all`` summary, all driven by the
measure table (`reviewdepth.measures.table`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from reviewdepth.measures import trec
from reviewdepth.measures.ranking import RankedQueries
from reviewdepth.measures.segments import FloatArray, segment_blocks
from reviewdepth.measures.table import (
    BY_NAME,
    COUNT_MEASURES,
    SUMMARY_ONLY,
    TABLE,
    Context,
    Measure,
    MeasureError,
    Param,
    group_members,
    parse_single,
    parse_values,
)

__all__ = ["COUNT_MEASURES", "SUMMARY_ONLY", "Evaluation", "MeasureError", "MeasureSpec", "Selected",
           "evaluate_ranked"]


# Ranked documents per block of queries whose measures are computed together (`_columns_by_block`): small enough
# that a block's temporaries stay a few MiB, large enough that the per-block cost of ~40 measures' Python is noise.
BLOCK_DOCUMENTS = 1 << 17


class Selected(NamedTuple):  # not a frozen dataclass: defining one costs ~1 ms at every start of `eval`
    """One selected measure and its printed outputs: ``(name, parameter)`` pairs, the parameter as the measure's
    compute function takes it (a cutoff or level for measures with cutoffs)."""

    measure: Measure
    outputs: tuple[tuple[str, Param], ...]


def _default_outputs(measure: Measure) -> tuple[tuple[str, Param], ...]:
    if measure.expands:
        return tuple((measure.label(v), v) for v in measure.default)
    if measure.params == "none":
        return ((measure.name, None),)
    return ((measure.name, measure.parameter(measure.default)),)


@dataclass
class MeasureSpec:
    """Which measures to compute, with their parameters, in print order."""

    selected: list[Selected] = field(
        default_factory=lambda: [Selected(m, _default_outputs(m)) for m in group_members("official")])

    @classmethod
    def parse(cls, requests: list[str] | None, version: int = 9) -> MeasureSpec:
        """Parse ``-m`` values: names (``map``), groups (``official``, ``all``, ``all_trec``), a single cutoff
        (``P_10``, ``recall_5``, ``iprec_at_recall_0.10``) or trec_eval parameters (``P.5,10``,
        ``set_F.0.25``, ``rbp.0.8``, ``rbp.p=0.8``, ``11pt_avg..25,.5,.75``). Several requests for one measure
        add up; an explicit parameter replaces the measure's default."""
        if not requests:
            return cls()
        plain: set[str] = set()
        explicit: dict[str, set[float]] = {}
        singles: dict[str, set[float]] = {}
        labelled: dict[str, dict[str, Param]] = {}
        for raw in requests:
            for request in [raw] if "." in raw else [r for r in raw.split(",") if r]:
                if request == "official":
                    plain |= {m.name for m in group_members("official")}
                    continue
                if request in ("all", "all_trec"):
                    plain |= {m.name for m in group_members("all_trec", version)}
                    continue
                single = parse_single(request)
                if single is not None:
                    singles.setdefault(single[0].name, set()).add(single[1])
                    continue
                name, _, params = request.partition(".")
                measure = BY_NAME.get(name)
                if measure is None:
                    raise MeasureError(f"unknown measure {request!r}; known: {', '.join(BY_NAME)}, official, all")
                if not params:
                    plain.add(name)
                    continue
                values = parse_values(measure, params, request)
                if measure.expands:
                    explicit.setdefault(name, set()).update(values)
                else:
                    labelled.setdefault(name, {}).setdefault(f"{name}_{params}", measure.parameter(values))
        selected: list[Selected] = []
        for measure in TABLE:
            name = measure.name
            outputs: tuple[tuple[str, Param], ...] = ()
            if measure.expands:
                base = explicit.get(name) or (set(measure.default) if name in plain else set())
                outputs = tuple((measure.label(v), v) for v in sorted(base | singles.get(name, set())))
            elif name in labelled:
                outputs = tuple(labelled[name].items())
            elif name in plain:
                outputs = _default_outputs(measure)
            if outputs:
                selected.append(Selected(measure, outputs))
        spec = cls(selected)
        if version < 10:
            spec._rbp_resid_follows_rbp(labelled)
        return spec

    def _rbp_resid_follows_rbp(self, labelled: dict[str, dict[str, Param]]) -> None:
        """trec_eval 9.0.8 has no rbp; reviewdepth's rbp_resid for it takes rbp's p when rbp is given one and
        rbp_resid none (the behaviour before rbp_resid took its own parameter)."""
        given = list(labelled.get("rbp", {}).values())
        for i, s in enumerate(self.selected):
            if s.measure.name == "rbp_resid" and "rbp_resid" not in labelled and given:
                self.selected[i] = Selected(s.measure, (("rbp_resid", given[0]),))

    def output_names(self, summary: bool) -> list[str]:
        """Printed names in trec_eval's order (per-query lines leave out runid, num_q, gm_map and gm_bpref; the
        summary line leaves out relstring)."""
        return [name for s in self.selected if (s.measure.in_summary if summary else s.measure.per_query)
                for name, _ in s.outputs]


@dataclass
class Evaluation:
    """Per-query values (printed queries, strcmp order) and the ``all`` summary, both keyed by output name."""

    measures: list[str]
    per_query: dict[str, dict[str, float | int | str]]
    summary: dict[str, float | int | str]


def evaluate_ranked(
    ranked: RankedQueries,
    spec: MeasureSpec,
    *,
    run_id: str,
    version: int = 9,
    complete_qids: list[str] | None = None,
    complete_num_rel: int | None = None,
    placeholders: RankedQueries | None = None,
    num_docs: int = 0,
) -> Evaluation:
    """Compute the selected measures for every evaluated query and the summary line.

    ``complete_qids`` (``-c``): qrels queries missing from the run; they count in num_q with every measure 0
    (gm_map term ln(1e-5)); num_rel's summary becomes ``complete_num_rel`` (qrels lines with value > 0); 9.0.8
    prints no per-query lines for them. ``placeholders`` (trec_eval 10.0's ``-c``, `placeholder_rankings`, given
    instead of ``complete_qids``): the missing queries scored as 10.0 scores them, on one document absent from the
    qrels, then num_ret, utility, relstring, rbp_resid (those exact names: parameterised ones keep their value)
    and unj* cleared; their lines are printed and summed in qid order. ``num_docs`` is ``-N``, the documents in
    the collection (utility uses it).
    """
    columns, ap = _columns_by_block(ranked, spec, version, num_docs)
    log_ap = trec.log_average_precision(ap)
    qids = list(ranked.qids)
    if placeholders is not None and placeholders.num_queries:
        extra_context = Context(placeholders, version, num_docs)
        extra = _columns(extra_context, spec)
        for name, values in extra.items():
            if name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj"):
                extra[name] = np.zeros_like(values)
            elif name == "relstring":
                extra[name] = np.full(len(values), "''", dtype=object)
        qids += placeholders.qids
        order = np.array(sorted(range(len(qids)), key=lambda i: qids[i].encode("utf-8", "surrogateescape")),
                         dtype=np.int64)
        qids = [qids[i] for i in order]
        columns = {name: np.concatenate((values, extra[name]))[order] for name, values in columns.items()}
        log_ap = np.concatenate((log_ap, trec.log_average_precision(extra_context.ap)))[order]

    per_names = spec.output_names(summary=False)
    all_names = spec.output_names(summary=True)
    missing = complete_qids or []
    num_q = len(qids) + len(missing)

    text = {name for s in spec.selected if s.measure.output == "text" for name, _ in s.outputs}

    def convert(name: str) -> Callable[[Any], float | int | str]:
        return str if name in text else int if name in COUNT_MEASURES else float

    # each column converted once, then one dict per query from a row of them (a per-value branch in a dict
    # comprehension cost 34 ms on 1,000 queries)
    value_rows = zip(*(list(map(convert(n), columns[n].tolist())) for n in per_names), strict=True) if per_names \
        else iter([()] * len(qids))
    per_query: dict[str, dict[str, float | int | str]] = {
        qid: dict(zip(per_names, values, strict=True)) for qid, values in zip(qids, value_rows, strict=True)}
    if version >= 10 and missing:
        zero = {n: ("''" if n in text else 0 if n in COUNT_MEASURES else 0.0) for n in per_names}
        per_query.update((qid, dict(zero)) for qid in missing)
        per_query = dict(sorted(per_query.items(), key=lambda item: item[0].encode("utf-8", "surrogateescape")))

    summary: dict[str, float | int | str] = {}
    for s in spec.selected:
        for name, _ in s.outputs:
            rule = s.measure.summary
            if rule == "runid":
                summary[name] = run_id
            elif rule == "num_q":
                summary[name] = num_q
            elif rule == "none":
                continue
            elif rule == "gm_map":
                summary[name] = trec.geometric_mean_summary(log_ap, num_q)
            elif rule == "geometric":
                summary[name] = trec.geometric_mean_summary(columns[name], num_q)
            elif name == "num_rel" and complete_num_rel is not None:
                summary[name] = complete_num_rel
            elif rule == "sum":
                summary[name] = int(np.sum(columns[name]))
            else:
                total = 0.0
                for value in columns[name].tolist():
                    total += value
                summary[name] = total / num_q if num_q else 0.0
    return Evaluation(measures=all_names, per_query=per_query, summary=summary)


def _columns_by_block(ranked: RankedQueries, spec: MeasureSpec, version: int,
                      num_docs: int) -> tuple[dict[str, np.ndarray], FloatArray]:
    """Every selected output's per-query values and every query's AP (gm_map's terms), computed on blocks of
    queries of at most `BLOCK_DOCUMENTS` ranked documents: a query's values depend on its own documents only, so
    the blocks' values are the whole ranking's, while the measures' per-document temporaries (a dozen arrays of
    8 bytes per ranked document for G) and the rankings' cached arrays exist for one block at a time. On a
    1 M-line run this halved the peak memory of ``-m all_trec``."""
    blocks = segment_blocks(ranked.offsets, BLOCK_DOCUMENTS)
    if len(blocks) <= 1:
        context = Context(ranked, version, num_docs)
        return _columns(context, spec), context.ap
    pieces: dict[str, list[np.ndarray]] = {}
    ap_pieces: list[FloatArray] = []
    for first, stop in blocks:
        context = Context(ranked.queries(first, stop), version, num_docs)
        for name, values in _columns(context, spec).items():
            pieces.setdefault(name, []).append(values)
        ap_pieces.append(context.ap)
    return {name: np.concatenate(values) for name, values in pieces.items()}, np.concatenate(ap_pieces)


def _columns(context: Context, spec: MeasureSpec) -> dict[str, np.ndarray]:
    """Every selected output's per-query values."""
    columns: dict[str, np.ndarray] = {}
    for s in spec.selected:
        if s.measure.compute_each is not None:
            values = s.measure.compute_each(context, tuple(float(p) for _, p in s.outputs))  # type: ignore[arg-type]
            columns.update(zip((name for name, _ in s.outputs), values, strict=True))
        elif s.measure.compute is not None:
            for name, param in s.outputs:
                columns[name] = s.measure.compute(context, param)
    return columns
