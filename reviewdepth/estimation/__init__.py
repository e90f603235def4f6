"""|R| and recall estimation, depth under unknown R, and stopping evidence (pure numpy + scipy, no I/O).

Modules:

- ``intervals``: confidence intervals for a proportion (Clopper–Pearson, Wilson, Jeffreys, Agresti–Coull) and the
  exact hypergeometric interval for the number of relevant documents in a finite population.
- ``relevant``: estimators of R (and recall) returning an :class:`~reviewdepth.estimation.relevant.Estimate`.
- ``depth_unknown``: how deep to review when R is only estimated.
- ``stopping``: stopping rules (certified and heuristic), each returning ``StoppingEvidence``.

Definitions: docs/estimation.md and ../shared/reference/recall-measures-and-estimation.md §4–§8.
"""
