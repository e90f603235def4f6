"""The real CLEF TAR 2019 topic in tests/data/clef2019 as a fully judged queue (tests/data/README.md).

The coverage and live-review simulations live in bench/ (they are not shipped in the wheel): their tests import
them from there, so bench/ goes on the path here. Only bench/ itself: the checkout's root would shadow the
installed package (whose ``reviewdepth.cli`` is the checkout's ``cli/``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from reviewdepth.formats.clef import read_clef_run
from reviewdepth.formats.trec import read_qrels

CLEF2019 = Path(__file__).resolve().parents[1] / "data" / "clef2019"
BENCH = str(Path(__file__).resolve().parents[2] / "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)


@pytest.fixture(scope="session")
def cd012551_labels() -> npt.NDArray[np.int8]:
    """CD012551 in Sheffield's baseline order, 0/1 from the abstract-level qrels (591 documents, 68 relevant)."""
    qrels = read_qrels(CLEF2019 / "CD012551.abs.qrels")
    relevant = {doc for doc, rel in zip(qrels.docno.values.tolist(), qrels.rel.tolist(), strict=True) if rel > 0}
    run = read_clef_run(CLEF2019 / "CD012551.sheffield-baseline.run")
    return np.array([1 if doc in relevant else 0 for doc in run.docno.values.tolist()], dtype=np.int8)
