"""judgments: drop ``ix_judgments_queue_id``, an index no query reads

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-04

No statement selects, filters, joins or orders judgments by ``queue_id`` (the queue a judgment was served
from, revision 0005, only ever read back as a column of the topic's log); the index served only the foreign
key's ``ON DELETE SET NULL`` when a queue row is deleted, which reviewdepth never does (queues are never
changed once stored). Every judgment write paid for it (issue 30: an index entry per judgment; see
docs/api.md, "The judgment write path and its indexes"). The foreign key itself stays. Downgrade recreates
the index.
"""

from __future__ import annotations

from alembic import op

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index('ix_judgments_queue_id', table_name='judgments')


def downgrade() -> None:
    op.create_index('ix_judgments_queue_id', 'judgments', ['queue_id'], unique=False)
