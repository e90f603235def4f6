"""The few distribution functions the estimators need, on ``scipy.special`` (importing ``scipy.stats`` costs
about a second on every command; ``scipy.special`` a third of that).

- ``beta_ppf(q; a, b)`` = I⁻¹_q(a, b), the inverse regularised incomplete beta function;
- ``norm_ppf(p)`` = Φ⁻¹(p);
- hypergeometric tails summed from the exact log-pmf
  ln P(Y = i) = ln C(K, i) + ln C(M − K, n − i) − ln C(M, n), with ln C(a, b) = −ln(a + 1) − ln B(a − b + 1, b + 1),
  adding the shorter side of the support (so a tail is never 1 minus a sum close to 1 unless it must be);
- ``hypergeom_cdf_many``: the same P(Y ≤ k) elementwise over arrays, with ``scipy.stats.hypergeom.cdf``'s own kernel
  (Boost's hypergeometric cdf, which ``scipy.special`` holds as the ufunc ``_hypergeom_cdf``) and its handling of the
  support's ends, so it equals ``scipy.stats.hypergeom.cdf`` bit for bit without importing ``scipy.stats``.

``scipy.special`` is imported on first use, not with this module (commands that never compute an interval do
not pay for it); `import_scipy_in_background` lets a status view import it while it waits on the database.
"""

from __future__ import annotations

import importlib
import math
import sys
import threading
from types import ModuleType

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def _special() -> ModuleType:
    from scipy import special

    module: ModuleType = special
    return module


# what a status view (report, `watch --once`) computes with: intervals and tests. Not ``scipy.optimize``: the
# point-process heuristic imports it for its curve fit only once its gates pass (`reviewdepth.estimation.stopping`),
# and a view whose fit does not run would pay 0.2 s of CPU for it
STATUS_SCIPY = ("scipy.special",)


def import_scipy_in_background(modules: tuple[str, ...] = ("scipy.special",)) -> None:
    """Start importing ``modules`` (those not yet imported; nothing to do in a server that has them) on a daemon
    thread. An import holds the GIL, but a status view's database reads do not (SQLite and the packed scans
    release it): called as those reads begin, the imports run on a second core meanwhile. Called before the
    view's own imports instead, they would only take turns with them for the GIL (the 2,000,000-document
    report: 1.62 s end to end then, 1.40 s now). A function that needs a module before the thread is done waits
    for it (Python's import lock), and an import error surfaces there, in the caller's thread."""
    missing = [name for name in modules if name not in sys.modules]
    if not missing:
        return

    def run() -> None:
        for name in missing:
            try:
                importlib.import_module(name)
            except Exception:  # the caller's own import raises it again, where it can be reported
                pass

    threading.Thread(target=run, name="reviewdepth-import-scipy", daemon=True).start()


def beta_ppf(q: float | FloatArray, a: float | FloatArray, b: float | FloatArray) -> FloatArray:
    """Quantile ``q`` of Beta(a, b)."""
    return np.asarray(_special().betaincinv(a, b, q), dtype=np.float64)


def norm_ppf(p: float) -> float:
    """Quantile ``p`` of the standard normal distribution."""
    return float(_special().ndtri(p))


def binom_sf(k: npt.ArrayLike, trials: int, p: float) -> FloatArray:
    """P(X > k) for X ~ Binomial(``trials``, p), elementwise over ``k`` (0 ≤ k < trials)."""
    return np.asarray(_special().bdtrc(np.asarray(k, dtype=np.float64), trials, p), dtype=np.float64)


def _log_comb(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    a_arr = np.asarray(a, dtype=np.float64)
    b_arr = np.asarray(b, dtype=np.float64)
    return np.asarray(-np.log1p(a_arr) - _special().betaln(a_arr - b_arr + 1, b_arr + 1), dtype=np.float64)


def _pmf(values: npt.NDArray[np.int64], population: int, successes: int, draws: int) -> FloatArray:
    first = _log_comb(successes, values)
    second = _log_comb(population - successes, draws - values)
    log: FloatArray = np.add(first, second) - _log_comb(population, draws)
    return np.exp(log)


def _support(population: int, successes: int, draws: int) -> tuple[int, int]:
    return max(0, draws - (population - successes)), min(successes, draws)


def hypergeom_cdf(k: int, population: int, successes: int, draws: int) -> float:
    """P(Y ≤ k) for Y ~ Hypergeometric(M = ``population``, K = ``successes``, n = ``draws``)."""
    lo, hi = _support(population, successes, draws)
    if k < lo:
        return 0.0
    if k >= hi:
        return 1.0
    if k - lo <= hi - k:
        return float(min(1.0, _pmf(np.arange(lo, k + 1), population, successes, draws).sum()))
    return float(max(0.0, 1.0 - _pmf(np.arange(k + 1, hi + 1), population, successes, draws).sum()))


def hypergeom_sf(k: int, population: int, successes: int, draws: int) -> float:
    """P(Y > k)."""
    lo, hi = _support(population, successes, draws)
    if k < lo:
        return 1.0
    if k >= hi:
        return 0.0
    if hi - k <= k - lo:
        return float(min(1.0, _pmf(np.arange(k + 1, hi + 1), population, successes, draws).sum()))
    return float(max(0.0, 1.0 - _pmf(np.arange(lo, k + 1), population, successes, draws).sum()))


def _boost_hypergeom_cdf() -> np.ufunc | None:
    """``scipy.stats.hypergeom``'s cdf kernel, ``scipy.special._ufuncs._hypergeom_cdf(k, K, n, M)`` (a private
    name: None if a scipy release moves it)."""
    from scipy.special import _ufuncs

    kernel = getattr(_ufuncs, "_hypergeom_cdf", None)
    return kernel if isinstance(kernel, np.ufunc) else None


def hypergeom_cdf_many(k: npt.ArrayLike, population: npt.ArrayLike, successes: npt.ArrayLike,
                       draws: npt.ArrayLike) -> FloatArray:
    """P(Y ≤ k) for Y ~ Hypergeometric(M = ``population``, K = ``successes``, n = ``draws``), elementwise over
    integer arrays with 0 < M and 0 ≤ K, n ≤ M: 1 where k ≥ min(K, n), 0 where k < max(0, n − (M − K)), else
    Boost's cdf clipped to [0, 1], exactly as ``scipy.stats.hypergeom.cdf(k, M, K, n)`` computes it."""
    k_arr, m_arr, big_k, n_arr = np.broadcast_arrays(*(np.asarray(x, dtype=np.int64)
                                                       for x in (k, population, successes, draws)))
    if bool(np.any((m_arr <= 0) | (big_k < 0) | (n_arr < 0) | (big_k > m_arr) | (n_arr > m_arr))):
        raise ValueError("need 0 < population and 0 <= successes, draws <= population")
    kernel = _boost_hypergeom_cdf()
    if kernel is None:  # pragma: no cover - a scipy without the private ufunc: the public (slow to import) route
        from scipy import stats

        return np.asarray(stats.hypergeom.cdf(k_arr, m_arr, big_k, n_arr), dtype=np.float64)
    low = np.maximum(n_arr - (m_arr - big_k), 0)
    high = np.minimum(big_k, n_arr)
    inside = (k_arr >= low) & (k_arr < high)
    out = np.where(k_arr >= high, 1.0, 0.0)
    if bool(inside.any()):
        values = kernel(k_arr[inside], big_k[inside], n_arr[inside], m_arr[inside])
        out[inside] = np.clip(values, 0, 1)
    return out


def poisson_quantile(q: float, mu: float) -> float:
    """The ``q`` quantile of Poisson(``mu``) for 0 < q < 1 and mu > 0: the smallest k with P(X ≤ k) ≥ q, by the
    steps of ``scipy.stats.poisson.ppf`` (the inverse of the Poisson cdf in k, rounded up, then one step back
    when that also reaches q), on scipy.special alone so that a status view does not import scipy.stats. A float,
    as scipy's is."""
    if not 0.0 < q < 1.0 or not mu > 0.0:
        raise ValueError(f"poisson_quantile needs 0 < q < 1 and mu > 0, got q={q!r}, mu={mu!r}")
    special = _special()
    value = math.ceil(float(special.pdtrik(q, mu)))
    below = max(value - 1, 0)
    return float(below if float(special.pdtr(below, mu)) >= q else value)
