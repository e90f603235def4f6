"""Persistence: SQLAlchemy models, engine factory, migrations runner, bulk ingest and array loaders."""
