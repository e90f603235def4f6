"""The order of an audit stream: a seeded uniformly random permutation of a fixed population of documents.

The population is a set of distinct doc ids, put in Python string order (code points), so the order does not
depend on a database's collation or on the ranking the ids were read from; ``default_rng(seed).permutation(N)``
then orders it. Nothing is stored per document: the seed and the sorted ids give the order back, and the digest
of the sorted ids proves that the ids read back are the ones the stream was created on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

SEED_LIMIT = 2**63  # seeds are stored as signed 64-bit integers


def sorted_population(doc_ids: Sequence[str]) -> list[str]:
    """The distinct ``doc_ids`` in Python string order."""
    return sorted(set(doc_ids))


def population_digest(doc_ids_sorted: Sequence[str]) -> str:
    """SHA-256 (hex) of the sorted distinct doc ids joined by newlines (doc ids hold no newline)."""
    digest = hashlib.sha256()
    for i, doc in enumerate(doc_ids_sorted):
        digest.update((("\n" if i else "") + doc).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def audit_permutation(doc_ids_sorted: Sequence[str], seed: int) -> list[int]:
    """Indexes into ``doc_ids_sorted`` in audit order: ``numpy.random.default_rng(seed).permutation(N)``.

    ``doc_ids_sorted`` must be strictly increasing (distinct, sorted): the same set in another order would give
    another stream under the same seed."""
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"seed must be in [0, 2^63), not {seed}")
    if any(a >= b for a, b in pairwise(doc_ids_sorted)):
        raise ValueError("doc ids must be distinct and in Python string order (use sorted_population)")
    return [int(i) for i in np.random.default_rng(seed).permutation(len(doc_ids_sorted))]
