"""The real CLEF TAR 2019 topic in tests/data/clef2019 as a fully judged queue (tests/data/README.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from reviewdepth.formats.clef import read_clef_run
from reviewdepth.formats.trec import read_qrels

CLEF2019 = Path(__file__).resolve().parents[1] / "data" / "clef2019"


@pytest.fixture(scope="session")
def cd012551_labels() -> npt.NDArray[np.int8]:
    """CD012551 in Sheffield's baseline order, 0/1 from the abstract-level qrels (591 documents, 68 relevant)."""
    qrels = read_qrels(CLEF2019 / "CD012551.abs.qrels")
    relevant = {doc for doc, rel in zip(qrels.docno.values.tolist(), qrels.rel.tolist(), strict=True) if rel > 0}
    run = read_clef_run(CLEF2019 / "CD012551.sheffield-baseline.run")
    return np.array([1 if doc in relevant else 0 for doc in run.docno.values.tolist()], dtype=np.int8)
