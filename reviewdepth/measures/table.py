"""The trec_eval measures reviewdepth implements, each declared once.

A `Measure` gives the name trec_eval uses, how its ``-m`` parameter is read and its default, the formula (the
docstring of the function that computes it, in `reviewdepth.measures.trec`), the printed names, the groups it
belongs to (``official``, ``all_trec``), how the ``all`` line summarises it and where trec_eval 9.0.8 and 10.0
differ. `TABLE` is in trec_eval's print order. `reviewdepth.measures.suite` parses ``-m``, computes and orders
the output from it, and the measure table of docs/measures.md is generated from it (`markdown`).

Printed names follow trec_eval: a measure with cutoffs prints one value per cutoff (``P_5``, ``recall_1000``,
``iprec_at_recall_0.10``, the level as ``%3.2f``); a measure with a parameter prints its name alone with the
default, and its name, ``_`` and the parameter **as written** when one is given (``set_F_0.25``,
``11pt_avg_.25,.5,.75``, ``rbp_p=0.8``).
"""

from __future__ import annotations

import inspect
import math
import re
import sys
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from reviewdepth.measures import graded, trec
from reviewdepth.measures.ranking import RankedQueries
from reviewdepth.measures.segments import FloatArray, IntArray

# relstring's values are strings (an object array)
Array = FloatArray | IntArray | npt.NDArray[np.object_]
Output = Literal["count", "real", "text"]
# none: takes no parameter; cutoffs: positive integers, one output each; levels: recall levels in [0, 1], one
# output each; level_list: recall levels, one output; value: one number, one output; persistence: rbp's p, as
# ``0.8`` or trec_eval 10.0's ``p=0.8``, one output; multiples: multiples of R >= 0, one output each (printed
# ``%3.2f``); coefficients: utility's four numbers, one output; gains: ``level=gain`` pairs (ndcg.1=3,2=1), one
# output
ParamKind = Literal["none", "cutoffs", "levels", "level_list", "value", "persistence", "multiples", "coefficients",
                    "gains"]
# none: per-query lines only (relstring); geometric: summary only, exp(mean of the per-query log terms)
Summary = Literal["sum", "mean", "runid", "num_q", "gm_map", "geometric", "none"]


class MeasureError(ValueError):
    """An unknown measure name or a bad measure parameter."""


class Context:
    """One evaluation's inputs, with the intermediate arrays several measures share computed once."""

    def __init__(self, ranked: RankedQueries, version: int, num_docs: int = 0) -> None:
        self.ranked = ranked
        self.version = version
        self.num_docs = num_docs  # -N, documents in the collection (trec_eval's default 0)

    @cached_property
    def ap(self) -> FloatArray:
        return trec.average_precision(self.ranked)

    @cached_property
    def bpref(self) -> FloatArray:
        return trec.bpref(self.ranked)

    def iprec(self, levels: tuple[float, ...]) -> FloatArray:
        cache: dict[tuple[float, ...], FloatArray] = self.__dict__.setdefault("_iprec", {})
        if levels not in cache:
            cache[levels] = trec.interpolated_precision_at_recall(self.ranked, levels, self.version)
        return cache[levels]


Param = float | tuple[float, ...] | None
Compute = Callable[[Context, Param], Array]
ComputeEach = Callable[[Context, tuple[float, ...]], list[Array]]


class Measure(NamedTuple):
    """One trec_eval measure. ``compute(context, parameter)`` gives one value per query; a measure with cutoffs
    or levels has ``compute_each(context, values)`` instead, one array per value. The summary-only measures
    (runid, num_q, gm_map) have neither. ``formula`` is the function whose docstring states the formula.

    A NamedTuple rather than a frozen dataclass: as immutable, and defined ~1 ms faster at every start of
    ``reviewdepth eval``."""

    name: str
    output: Output
    formula: Callable[..., object] | str
    compute: Compute | None = None
    compute_each: ComputeEach | None = None
    params: ParamKind = "none"
    default: tuple[float, ...] = ()
    groups: frozenset[str] = frozenset({"all_trec"})
    all_trec_since: int = 9
    summary: Summary = "mean"
    versions: str = ""

    @property
    def per_query(self) -> bool:
        return self.summary not in ("runid", "num_q", "gm_map", "geometric")

    @property
    def in_summary(self) -> bool:
        """Printed on the ``all`` line (relstring is not)."""
        return self.summary != "none"

    @property
    def expands(self) -> bool:
        """One output per parameter value (cutoffs, levels, multiples) rather than one output."""
        return self.params in ("cutoffs", "levels", "multiples")

    def doc(self) -> str:
        """The formula: the first paragraph of the computing function's docstring, on one line."""
        text = self.formula if isinstance(self.formula, str) else inspect.getdoc(self.formula) or ""
        return " ".join(text.split("\n\n")[0].split())

    def label(self, value: float) -> str:
        """Printed name of one cutoff or level."""
        if self.params in ("levels", "multiples"):
            return f"{self.name}_{value:.2f}"
        return f"{self.name}_{int(value)}"

    def parameter(self, values: tuple[float, ...]) -> Param:
        """Parsed parameter values as `compute` takes them."""
        return values if self.params in ("level_list", "coefficients", "gains") else values[0]


def _number(param: Param) -> float:
    assert isinstance(param, float | int)
    return float(param)


def _counts(fn: Callable[[RankedQueries], IntArray]) -> Compute:
    return lambda c, _: fn(c.ranked)


def _reals(fn: Callable[[RankedQueries], FloatArray]) -> Compute:
    return lambda c, _: fn(c.ranked)


def _runid_doc() -> None:
    """The run tag (column 6) of the last line of the run file; summary line only."""


def _num_q_doc() -> None:
    """Queries evaluated: in both the run and the qrels (with ``-c``: every qrels query); summary line only."""


def _iprec(c: Context, levels: tuple[float, ...]) -> list[Array]:
    matrix = c.iprec(levels)
    return [matrix[:, j] for j in range(len(levels))]


def _precision(c: Context, cutoffs: tuple[float, ...]) -> list[Array]:
    return [trec.precision_at(c.ranked, int(k)) for k in cutoffs]


def _recall(c: Context, cutoffs: tuple[float, ...]) -> list[Array]:
    return [trec.recall_at(c.ranked, int(k)) for k in cutoffs]


def _eleven_point(c: Context, levels: Param) -> Array:
    assert isinstance(levels, tuple)
    return trec.eleven_point_average(c.iprec(levels))


def _set_f(c: Context, beta2: Param) -> Array:
    return trec.set_f(c.ranked, _number(beta2))


def _relstring(c: Context, length: Param) -> Array:
    return trec.relevance_string(c.ranked, int(_number(length)))


def _gm_bpref(c: Context, _: Param) -> Array:
    return trec.log_bpref(c.bpref)


def _r_multiples(c: Context, multiples: tuple[float, ...]) -> list[Array]:
    return [trec.precision_at_r_multiple(c.ranked, m) for m in multiples]


def _utility(c: Context, coefficients: Param) -> Array:
    assert isinstance(coefficients, tuple)
    return trec.utility(c.ranked, coefficients, c.num_docs)


def _map_cut(c: Context, cutoffs: tuple[float, ...]) -> list[Array]:
    return [values for values in trec.average_precision_at_cutoffs(c.ranked, [int(k) for k in cutoffs])]


def _relative_precision(c: Context, cutoffs: tuple[float, ...]) -> list[Array]:
    return [trec.relative_precision_at(c.ranked, int(k)) for k in cutoffs]


def _success(c: Context, cutoffs: tuple[float, ...]) -> list[Array]:
    return [trec.success_at(c.ranked, int(k)) for k in cutoffs]


def _unjudged(c: Context, cutoffs: tuple[float, ...]) -> list[Array]:
    return [trec.unjudged_at(c.ranked, int(k)) for k in cutoffs]


def _gains(param: Param) -> graded.Gains:
    """``(level, gain, level, gain, …)`` as parsed back into pairs."""
    assert isinstance(param, tuple)
    return tuple((int(param[i]), float(param[i + 1])) for i in range(0, len(param), 2))


def _ndcg(c: Context, gains: Param) -> Array:
    return graded.ndcg(c.ranked, _gains(gains))


def _ndcg_rel(c: Context, gains: Param) -> Array:
    return graded.ndcg_rel(c.ranked, _gains(gains))


def _r_ndcg(c: Context, gains: Param) -> Array:
    return graded.r_ndcg(c.ranked, _gains(gains))


def _g(c: Context, gains: Param) -> Array:
    return graded.g_measure(c.ranked, _gains(gains))


def _ndcg_cut(c: Context, cutoffs: tuple[float, ...]) -> list[Array]:
    return list(graded.ndcg_cut(c.ranked, [int(k) for k in cutoffs]))


def _rbp(c: Context, p: Param) -> Array:
    return trec.rank_biased_precision(c.ranked, _number(p))


def _rbp_resid(c: Context, p: Param) -> Array:
    return trec.rbp_residual(c.ranked, _number(p), trec_eval_10_quirk=c.version >= 10)


_OFFICIAL = frozenset({"official", "all_trec"})
_GAIN_ORDER = ("same; both sort the levels by the truncated difference of their gains, so gain parameters less "
               "than 1 apart keep their parameter order (reproduced)")

TABLE: tuple[Measure, ...] = (
    Measure("runid", "text", _runid_doc, summary="runid", groups=_OFFICIAL),
    Measure("num_q", "count", _num_q_doc, summary="num_q", groups=_OFFICIAL),
    Measure("num_ret", "count", trec.num_ret, _counts(trec.num_ret), summary="sum", groups=_OFFICIAL),
    Measure("num_rel", "count", trec.num_rel, _counts(trec.num_rel), summary="sum", groups=_OFFICIAL),
    Measure("num_rel_ret", "count", trec.num_rel_ret, _counts(trec.num_rel_ret), summary="sum", groups=_OFFICIAL),
    Measure("map", "real", trec.average_precision, lambda c, _: c.ap, groups=_OFFICIAL),
    Measure("gm_map", "real", trec.geometric_mean_summary, summary="gm_map", groups=_OFFICIAL),
    Measure("Rprec", "real", trec.r_precision, _reals(trec.r_precision), groups=_OFFICIAL),
    Measure("bpref", "real", trec.bpref, lambda c, _: c.bpref, groups=_OFFICIAL),
    Measure("recip_rank", "real", trec.reciprocal_rank, _reals(trec.reciprocal_rank), groups=_OFFICIAL),
    Measure("iprec_at_recall", "real", trec.interpolated_precision_at_recall, compute_each=_iprec, params="levels",
            default=trec.DEFAULT_RECALL_LEVELS, groups=_OFFICIAL,
            versions="recall-level count (`recall_level_count`): 9.0.8 (long)(p·R + 0.9), 10.0 lround(p·R)"),
    Measure("P", "real", trec.precision_at, compute_each=_precision, params="cutoffs",
            default=trec.DEFAULT_CUTOFFS, groups=_OFFICIAL),
    Measure("relstring", "text", trec.relevance_string, _relstring, params="value", default=(10.0,), summary="none"),
    Measure("recall", "real", trec.recall_at, compute_each=_recall, params="cutoffs", default=trec.DEFAULT_CUTOFFS),
    Measure("infAP", "real", trec.inferred_average_precision, _reals(trec.inferred_average_precision)),
    Measure("gm_bpref", "real", trec.log_bpref, _gm_bpref, summary="geometric"),
    Measure("Rprec_mult", "real", trec.precision_at_r_multiple, compute_each=_r_multiples, params="multiples",
            default=trec.DEFAULT_R_MULTIPLES),
    Measure("utility", "real", trec.utility, _utility, params="coefficients", default=trec.DEFAULT_UTILITY),
    Measure("11pt_avg", "real", trec.eleven_point_average, _eleven_point, params="level_list",
            default=trec.DEFAULT_RECALL_LEVELS,
            versions="recall-level count as iprec_at_recall; both versions assume the levels are given in "
                     "increasing order, which reviewdepth requires"),
    Measure("binG", "real", graded.bin_g, _reals(graded.bin_g)),
    Measure("G", "real", graded.g_measure, _g, params="gains",
            versions=_GAIN_ORDER),
    Measure("ndcg", "real", graded.ndcg, _ndcg, params="gains", versions=_GAIN_ORDER),
    Measure("ndcg_rel", "real", graded.ndcg_rel, _ndcg_rel, params="gains", versions=_GAIN_ORDER),
    Measure("Rndcg", "real", graded.r_ndcg, _r_ndcg, params="gains", versions=_GAIN_ORDER),
    Measure("ndcg_cut", "real", graded.ndcg_cut, compute_each=_ndcg_cut, params="cutoffs",
            default=trec.DEFAULT_CUTOFFS),
    Measure("map_cut", "real", trec.average_precision_at, compute_each=_map_cut, params="cutoffs",
            default=trec.DEFAULT_CUTOFFS),
    Measure("relative_P", "real", trec.relative_precision_at, compute_each=_relative_precision, params="cutoffs",
            default=trec.DEFAULT_CUTOFFS),
    Measure("success", "real", trec.success_at, compute_each=_success, params="cutoffs",
            default=trec.DEFAULT_SUCCESS_CUTOFFS),
    Measure("set_P", "real", trec.set_precision, _reals(trec.set_precision)),
    Measure("set_relative_P", "real", trec.set_relative_precision, _reals(trec.set_relative_precision)),
    Measure("set_recall", "real", trec.set_recall, _reals(trec.set_recall)),
    Measure("set_map", "real", trec.set_map, _reals(trec.set_map)),
    Measure("set_F", "real", trec.set_f, _set_f, params="value", default=(1.0,)),
    Measure("num_nonrel_judged_ret", "count", trec.num_nonrel_judged_ret, _counts(trec.num_nonrel_judged_ret),
            summary="sum"),
    Measure("rbp", "real", trec.rank_biased_precision, _rbp, params="persistence", default=(0.9,), all_trec_since=10,
            versions="10.0 only (in all_trec), with 10.0's gains: the qrels value, divided by the query's highest "
                     "value when that is above 1, whatever `-l` (reproduced); reviewdepth computes it for 9.0.8 too "
                     "when named"),
    Measure("rbp_resid", "real", trec.rbp_residual, _rbp_resid, params="persistence", default=(0.9,),
            all_trec_since=10,
            versions="10.0 only (in all_trec): 0 when every retrieved document is judged; named with 9.0.8 "
                     "(a reviewdepth extension) it takes rbp's p when rbp is given one and rbp_resid none"),
    Measure("unj", "real", trec.unjudged_at, compute_each=_unjudged, params="cutoffs",
            default=trec.DEFAULT_UNJUDGED_CUTOFFS, all_trec_since=10,
            versions="10.0 only (in all_trec); reviewdepth computes it for 9.0.8 too when named"),
)

BY_NAME: dict[str, Measure] = {m.name: m for m in TABLE}
GROUPS: tuple[str, ...] = ("official", "all_trec")
COUNT_MEASURES: frozenset[str] = frozenset(m.name for m in TABLE if m.output == "count")
SUMMARY_ONLY: frozenset[str] = frozenset(m.name for m in TABLE if not m.per_query)


def group_members(group: str, version: int = 9) -> tuple[Measure, ...]:
    """The measures of ``official`` or ``all_trec`` (``all``) for a trec_eval version, in print order."""
    if group == "official":
        return tuple(m for m in TABLE if "official" in m.groups)
    return tuple(m for m in TABLE if "all_trec" in m.groups and version >= m.all_trec_since)


# --- parameters --------------------------------------------------------------------------------------------

def parse_values(measure: Measure, params: str, request: str) -> tuple[float, ...]:
    """The parameter string of ``-m NAME.PARAMS`` as numbers, checked as trec_eval checks them (and where it
    reads garbage as 0, refused)."""
    name = measure.name
    values = [v for v in params.split(",") if v]
    try:
        if measure.params == "none":
            raise MeasureError(f"measure {name!r} takes no parameters")
        if measure.params == "cutoffs":
            # trec_eval reads each cutoff with atol: a fraction is cut off (ndcg_cut.23.4 is 23), as in its tests
            cutoffs = tuple(int(v.split(".")[0]) if re.fullmatch(r"\+?\d+\.\d*", v) else int(v) for v in values)
            if any(c <= 0 for c in cutoffs) or len(set(cutoffs)) != len(cutoffs) or not cutoffs:
                raise MeasureError(f"cutoffs of {name} must be positive and unique: {params!r}")
            return tuple(sorted(cutoffs))
        if measure.params == "gains":
            return _parse_gains(name, params)
        if measure.params == "multiples":
            multiples = tuple(float(v) for v in values)
            if any(not m >= 0.0 for m in multiples) or len(set(multiples)) != len(multiples) or not multiples:
                raise MeasureError(f"multiples of R in {name} must be >= 0 and unique: {params!r}")
            return tuple(sorted(multiples))
        if measure.params == "coefficients":
            coefficients = tuple(float(v) for v in params.split(","))
            if len(coefficients) != 4:
                raise MeasureError(f"{name} takes four coefficients (relevant retrieved, non-relevant retrieved, "
                                   f"relevant missed, non-relevant missed): {params!r}")
            return coefficients
        if measure.params in ("levels", "level_list"):
            levels = tuple(float(v) for v in values)
            if any(not 0.0 <= v <= 1.0 for v in levels) or not levels:
                raise MeasureError(f"recall levels must be in [0, 1]: {params!r}")
            if measure.params == "levels":
                return tuple(sorted(set(levels)))
            if list(levels) != sorted(levels):
                raise MeasureError(f"recall levels of {name} must be in increasing order (trec_eval averages "
                                   f"them assuming it): {params!r}")
            return levels
        if measure.params == "value":
            return (float(params),)
        text = params
        if "=" in params:  # trec_eval 10.0's name=value form; rbp's only parameter is p
            key, _, text = params.partition("=")
            if key != "p" or "," in text:
                raise MeasureError(f"bad parameters in measure {request!r}")
        persistence = float(text)
        if not 0.0 < persistence < 1.0:
            raise MeasureError(f"{name} persistence must be in (0, 1): {params!r}")
        return (persistence,)
    except ValueError as exc:
        if isinstance(exc, MeasureError):
            raise
        raise MeasureError(f"bad parameters in measure {request!r}") from None


def _parse_gains(name: str, params: str) -> tuple[float, ...]:
    """``1=3.5,2=9`` as (1, 3.5, 2, 9.0): integer levels (negative ones name the unjudged, −2, and the documents
    absent from the qrels, −1, as in trec_eval), each once, and finite gains."""
    flat: list[float] = []
    seen: set[int] = set()
    for pair in params.split(","):
        level_text, eq, gain_text = pair.partition("=")
        if not eq:
            raise MeasureError(f"gains of {name} are level=gain pairs: {params!r}")
        level, gain = int(level_text), float(gain_text)
        if level in seen or not math.isfinite(gain):
            raise MeasureError(f"gains of {name}: each level once, finite gains: {params!r}")
        seen.add(level)
        flat += [float(level), gain]
    return tuple(flat)


def parse_single(request: str) -> tuple[Measure, float] | None:
    """``P_10``, ``recall_5``, ``iprec_at_recall_0.10``: one cutoff or level of a measure with cutoffs."""
    for measure in TABLE:
        prefix = measure.name + "_"
        if not measure.expands or not request.startswith(prefix) or request in BY_NAME:
            continue
        value = request[len(prefix):]
        try:
            number = float(value) if measure.params in ("levels", "multiples") else int(value)
        except ValueError:
            raise MeasureError(f"bad cutoff in measure {request!r}") from None
        if measure.params == "cutoffs" and number <= 0:
            raise MeasureError(f"cutoff must be > 0 in measure {request!r}")
        return measure, number
    return None


# --- documentation ------------------------------------------------------------------------------------------

DOC_BEGIN = "<!-- BEGIN GENERATED from reviewdepth/measures/table.py (python -m reviewdepth.measures.table) -->"
DOC_END = "<!-- END GENERATED -->"

_PARAM_TEXT = {
    "none": "",
    "cutoffs": "cutoffs k > 0, unique (`-m {n}.5,10` or `-m {n}_10`); default {d}",
    "levels": "recall levels p in [0, 1] (`-m {n}.0.1,0.5` or `-m {n}_0.10`); default {d}",
    "level_list": "recall levels p in [0, 1], increasing (`-m {n}..25,.5,.75`); default {d}",
    "value": "x (`-m {n}.0.25`); default {d}",
    "persistence": "p in (0, 1) (`-m {n}.0.8` or trec_eval 10.0's `-m {n}.p=0.8`); default {d}",
    "multiples": "multiples m >= 0 of R, unique (`-m {n}.0.5,2` or `-m {n}_0.50`); default {d}",
    "coefficients": "four coefficients (`-m {n}.2,-1,0,0`); default {d}",
    "gains": "gain per qrels value (`-m {n}.1=3,2=1`; a value not named keeps gain = value)",
}
_PRINTED = {
    "none": "`{n}`",
    "cutoffs": "`{n}_k` per cutoff",
    "levels": "`{n}_p` per level (`%3.2f`)",
    "level_list": "`{n}`; with a parameter `{n}_` + the parameter as written (`{n}_.25,.5,.75`)",
    "value": "`{n}`; with a parameter `{n}_` + the parameter as written (`{n}_0.25`)",
    "persistence": "`{n}`; with a parameter `{n}_` + the parameter as written (`{n}_0.8`, `{n}_p=0.8`)",
    "multiples": "`{n}_m` per multiple (`%3.2f`)",
    "coefficients": "`{n}`; with a parameter `{n}_` + the parameter as written (`{n}_2,-1,0,0`)",
    "gains": "`{n}`; with a parameter `{n}_` + the parameter as written (`{n}_1=3,2=1`)",
}
_SUMMARY_TEXT = {"sum": "sum", "mean": "mean over num_q", "runid": "summary line only",
                 "num_q": "summary line only", "gm_map": "summary line only (its own formula)",
                 "geometric": "summary line only: exp(Σ terms / num_q)", "none": "per-query lines only"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _defaults(measure: Measure) -> str:
    values = measure.default
    if measure.params == "cutoffs":
        return ",".join(str(int(v)) for v in values)
    return ",".join(f"{v:g}" for v in values)


def markdown() -> str:
    """The generated part of docs/measures.md: one row per measure, then the groups and the print order."""
    rows = ["| name | printed as | parameter | formula (from the docstring) | groups | `all` line | "
            "trec_eval 9.0.8 / 10.0 |",
            "|---|---|---|---|---|---|---|"]
    for m in TABLE:
        groups = ", ".join(g + (" (10.0)" if g == "all_trec" and m.all_trec_since > 9 else "")
                           for g in GROUPS if g in m.groups)
        param = _PARAM_TEXT[m.params].format(n=m.name, d=_defaults(m))
        rows.append("| " + " | ".join(_cell(x) for x in (
            f"`{m.name}`", _PRINTED[m.params].format(n=m.name), param, m.doc(), groups, _SUMMARY_TEXT[m.summary],
            m.versions or "same")) + " |")
    order = " ".join(m.name if not m.expands else f"{m.name}_*" for m in TABLE)
    lines = [
        DOC_BEGIN,
        "",
        *rows,
        "",
        f"Print order (trec_eval's table order): `{order}`.",
        "",
        f"`official` (the default): `{' '.join(m.name for m in group_members('official'))}`.",
        f"`all_trec` (also `all`), 9.0.8: `{' '.join(m.name for m in group_members('all_trec', 9))}`; "
        f"10.0 adds `{' '.join(m.name for m in group_members('all_trec', 10) if m.all_trec_since > 9)}`.",
        "",
        "Several `-m` options for one measure add up: `-m P.5 -m P.10` prints `P_5` and `P_10`, `-m rbp.0.8 -m "
        "rbp.0.95` prints `rbp_0.8` and `rbp_0.95` (trec_eval keeps only the first option's parameters). A "
        "parameter given to a measure replaces its default even when a group also names it, as in trec_eval.",
        "",
        DOC_END,
    ]
    return "\n".join(lines) + "\n"


def docs_section(text: str) -> str:
    """The generated section of a docs page (markers included)."""
    start = text.index(DOC_BEGIN)
    end = text.index(DOC_END) + len(DOC_END)
    return text[start:end] + "\n"


def _rewrite(path: Path) -> None:
    text = path.read_text()
    path.write_text(text.replace(docs_section(text), markdown()))


if __name__ == "__main__":  # regenerate docs/measures.md's measure table
    _rewrite(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/measures.md"))

