"""audit stream pace: where the current pace of a stream starts

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04

Adds ``audit_streams.pace_from_reviewed`` and ``pace_from_served`` (`reviewdepth.store.models.AuditStream`): the
reviewed count and the served count when the stream's pace (``every_k`` or ``rate``) was last set. Audit documents
due = pace_from_served + the pace's due count over the documents reviewed since pace_from_reviewed, so a pace
changed mid-review (`reviewdepth sample stream TOPIC --pace K`) counts from then on, with no burst and no debt.
Both are 0 for a stream whose pace never changed, which keeps its due count as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('audit_streams', schema=None) as batch_op:
        batch_op.add_column(sa.Column('pace_from_reviewed', sa.BigInteger(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('pace_from_served', sa.BigInteger(), server_default='0', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('audit_streams', schema=None) as batch_op:
        batch_op.drop_column('pace_from_served')
        batch_op.drop_column('pace_from_reviewed')
