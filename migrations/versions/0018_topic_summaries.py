"""topic summaries: the dashboard's monitors as last built

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04

Adds the table ``topic_summaries`` (`reviewdepth.store.models.TopicSummary`): per topic and dashboard settings,
the monitor report as JSON with the topic's change marker and the software version that built it, so that a new
process renders the dashboard from them instead of recomputing every queue (issue 30). Derived data only: a
summary whose marker or version no longer matches is rebuilt, and dropping the table loses nothing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'topic_summaries',
        sa.Column('topic_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
        sa.Column('settings', sa.String(length=100), nullable=False),
        sa.Column('marker', sa.Text(), nullable=False),
        sa.Column('software', sa.String(length=40), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_topic_summaries_topic_id_topics'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('topic_id', 'settings', name=op.f('pk_topic_summaries')),
    )


def downgrade() -> None:
    op.drop_table('topic_summaries')
