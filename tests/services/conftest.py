"""The service tests use the store fixtures (a migrated database per backend)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("store_fixtures", Path(__file__).parents[1] / "store" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_store = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_store)

empty_db_url = _store.empty_db_url
engine = _store.engine
pytest_generate_tests = _store.pytest_generate_tests
