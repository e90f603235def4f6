"""topic screening order: a topic may be declared screened in random order

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04

Adds ``topics.screening_order`` (`reviewdepth.store.models.Topic`): null when the team screens along the queue (or
in an order not declared), ``random`` when the team declared that it screened in a uniformly random order fixed
before screening. Declared, never guessed: only then does the screened set count as a random sample of the queue
(`reviewdepth.estimation.assessment`, basis ``screened``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('topics', schema=None) as batch_op:
        batch_op.add_column(sa.Column('screening_order', sa.String(length=20), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('topics', schema=None) as batch_op:
        batch_op.drop_column('screening_order')
