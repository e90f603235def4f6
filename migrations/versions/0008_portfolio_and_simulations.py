"""portfolio and simulations: the team's reference topics, their calibrations, and background simulation jobs

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03

Adds ``portfolio_topics`` (`reviewdepth.store.models.PortfolioTopic`: a completed topic marked as part of the
team's reference set), ``calibrations`` (`Calibration`: one replay of the heuristic stopping rules over the
portfolio, its settings and per-rule summary as JSON) and ``simulation_jobs`` (`SimulationJob`: a simulation
requested through the API, its status, request, result or error, times and progress).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table(
        'portfolio_topics',
        sa.Column('topic_id', BIG_ID, nullable=False),
        sa.Column('added_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('added_by', sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_portfolio_topics_topic_id_topics'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('topic_id', name=op.f('pk_portfolio_topics')),
    )
    op.create_table(
        'calibrations',
        sa.Column('id', BIG_ID, nullable=False),
        sa.Column('target', sa.String(length=40), nullable=False),
        sa.Column('confidence', sa.Float(), nullable=False),
        sa.Column('topic_count', sa.Integer(), nullable=False),
        sa.Column('settings', sa.Text(), nullable=False),
        sa.Column('summary', sa.Text(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('created_by', sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_calibrations')),
    )
    op.create_table(
        'simulation_jobs',
        sa.Column('id', BIG_ID, nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('request', sa.Text(), nullable=False),
        sa.Column('result', sa.Text(), nullable=True),
        sa.Column('error', sa.Text(), nullable=True),
        sa.Column('created_by', sa.String(length=200), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('progress_done', sa.BigInteger(), server_default='0', nullable=False),
        sa.Column('progress_total', sa.BigInteger(), nullable=True),
        sa.CheckConstraint("status IN ('queued', 'running', 'done', 'failed', 'cancelled')",
                           name=op.f('ck_simulation_jobs_status')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_simulation_jobs')),
    )


def downgrade() -> None:
    op.drop_table('simulation_jobs')
    op.drop_table('calibrations')
    op.drop_table('portfolio_topics')
