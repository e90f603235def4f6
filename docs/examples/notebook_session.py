"""A notebook session with ``import reviewdepth as rd``, cell by cell (run it as a script, or paste the cells into
Jupyter; `tests/library/test_notebook_session.py` runs it).

    python docs/examples/notebook_session.py DATA_DIR [SERVER_URL API_KEY]

DATA_DIR holds ``clef-tar-2017/`` (the CLEF 2017 TAR qrels and runs) and ``synergy/`` (the SYNERGY labelled
screening sets); SERVER_URL and API_KEY, when given, are a running ``reviewdepth serve`` and a write key on it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

import reviewdepth as rd

data = Path(sys.argv[1])

# %% The CLEF 2017 TAR qrels and runs as DataFrames (any loader works: the library reads the columns by name)
clef = data / "clef-tar-2017"
qrels = pd.read_csv(clef / "qrels" / "qrel_abs_test.txt.gz", sep=r"\s+", header=None,
                    names=["query_id", "iteration", "doc_id", "relevance"], dtype=str)
runs = {
    path.name.removesuffix(".gz"): pd.read_csv(path, sep=r"\s+", header=None, usecols=range(6),
                                               names=["query_id", "action", "doc_id", "rank", "score", "run_id"],
                                               dtype={"query_id": str, "doc_id": str, "run_id": str})
    for path in sorted((clef / "runs").glob("*.gz"))
}
print(f"qrels: {len(qrels):,} judgments over {qrels.query_id.nunique()} topics; {len(runs)} runs")

# %% trec_eval's measures of every run (the numbers `reviewdepth eval` prints)
table = pd.DataFrame({name: dict(rd.evaluate(qrels, run, measures=["num_q", "map", "P_10", "recall_1000"]).summary)
                      for name, run in runs.items()}).T[["num_q", "map", "P_10", "recall_1000"]]
print(table.to_string(float_format="%.4f"))

# %% every run against the first (paired t tests, Holm-corrected), as `reviewdepth compare`
comparison = rd.compare(qrels, runs, measures=["map", "P_10"])
print(comparison.to_markdown())

# %% a SYNERGY set: the labels column in its file order, taken as the order the records were screened
synergy = pd.read_csv(data / "synergy" / "Cohen_2006_ADHD_ids.csv.gz")
labels = synergy["label_included"]
report = rd.depth(labels, target=[0.90, 0.95], doc_ids=synergy["pmid"])
print(report.decision.headline)
for row in report.depth:
    print(f"target {row.target:.2f}: {row.status}, depth {row.depth} ({row.needed} relevant needed)")

# %% halfway: 400 records screened; what is the cheapest defensible way to stop at 95 % recall?
screened = [*labels[:400], *[None] * (len(labels) - 400)]
plan = rd.plan(screened, doc_ids=synergy["pmid"], target=0.95)
plan_data = plan.to_dict()
print(f"reviewed {plan_data['reviewed']}, found {plan_data['found']}; "
      f"floor: {plan_data['floor']} more judged documents")
print(f"recommended ({plan_data['recommended']}): {plan_data['path_sentences'][plan_data['recommended']]}")

# %% the same review through a running server (`reviewdepth serve`)


def drop_names(plan: dict[str, object]) -> dict[str, object]:
    """A plan less the names of its topic and queue (they differ between the two stores)."""
    return {key: value for key, value in plan.items() if key not in ("topic", "queue")}


if len(sys.argv) > 3:
    client = rd.Client(sys.argv[2], sys.argv[3])
    client.create_topic("adhd")
    client.put_ranking("adhd", "file-order", list(synergy["pmid"]))
    client.judge("adhd", dict(zip(synergy["pmid"][:400], labels[:400], strict=True)))
    served = client.plan("adhd", target=0.95)
    print(f"server: reviewed {served['reviewed']}, found {served['found']}, floor {served['floor']}, "
          f"recommended {served['recommended']}; the same as rd.plan: "
          f"{drop_names(served) == drop_names(plan_data)}")
    evaluated = client.evaluate(qrels, runs["amc.run"], measures=["map"])
    print(f"server: map of amc.run {evaluated['map']:.4f}; the same as rd.evaluate: "
          f"{evaluated['map'] == rd.evaluate(qrels, runs['amc.run'], measures=['map'])['map']}")
