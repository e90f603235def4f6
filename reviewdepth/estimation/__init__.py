"""|R| and recall estimation, depth under unknown R, and stopping evidence (pure numpy + scipy, no I/O).

Modules:

- ``intervals``: confidence intervals for a proportion (Clopper–Pearson, Wilson, Jeffreys, Agresti–Coull) and the
  exact hypergeometric interval for the number of relevant documents in a finite population.
- ``relevant``: estimators of R (and recall) returning an :class:`~reviewdepth.estimation.relevant.Estimate`.
- ``depth_unknown``: how deep to review when R is only estimated, and the forward depth (where to review to) from a
  rest sample's positive ranks or, heuristically, from the recent yield.
- ``stopping``: stopping rules (certified and heuristic), each returning ``StoppingEvidence`` that names the set it
  certifies.
- ``planning``: sample sizes that certify a target (elusion test, whole-queue QBCB) and their chance of success.

Definitions: docs/estimation.md and ../shared/reference/recall-measures-and-estimation.md §4–§8.
"""
