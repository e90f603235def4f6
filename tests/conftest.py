"""Shared fixtures: paths to the test data shipped in tests/data and to ../shared/data when present."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
REPO = TESTS.parent
SHARED_DATA = REPO.parent / "shared" / "data"

# Bounded property-test profile: the whole suite must stay fast on 2 cores.
settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile("ci")


@pytest.fixture
def trec_data() -> Path:
    return DATA / "trec_eval"


@pytest.fixture
def seed_data() -> Path:
    return DATA / "seed"


@pytest.fixture
def shared() -> object:
    """``shared("clef-tar-2017", "qrels", ...)``: a path under ../shared/data, or skip clearly when absent."""
    return shared_data


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip with a clear reason when that folder is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (clone the repo beside ../shared to run this test)")
    return path
