"""ranking index stored uncompressed on PostgreSQL, so it can be read in slices

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04

A queue's ranking index (``queues.ranking_blob``, `reviewdepth.store.ranking_blob`) is read in slices on
PostgreSQL (`reviewdepth.store.loaders`), so a 6,000,000-entry queue never sits whole in the server twice (as the
driver's result and as Python bytes). A compressed value must be decompressed from its start for every slice; this
stores new values uncompressed out of line (``STORAGE EXTERNAL``), where a slice reads only its own bytes. Values
stored before keep their compression until written again (slices of them still read correctly, more slowly).
SQLite has no such setting: nothing changes there.
"""

from __future__ import annotations

from alembic import op

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE queues ALTER COLUMN ranking_blob SET STORAGE EXTERNAL")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE queues ALTER COLUMN ranking_blob SET STORAGE EXTENDED")
