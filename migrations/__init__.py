"""Alembic migrations, shipped inside the wheel as ``reviewdepth.migrations``."""
