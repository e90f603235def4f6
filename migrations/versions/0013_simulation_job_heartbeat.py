"""simulation job heartbeat: a job whose server died without a word is found and marked interrupted

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04

Adds ``simulation_jobs.heartbeat_at`` (`reviewdepth.store.models.SimulationJob`): set when a job is posted and
renewed every few seconds by the server process that holds it (`reviewdepth.api.jobs.JobRunner`) while it is
queued or running. A server killed outright (SIGKILL, a lost machine) renews it no more; reading the jobs then
marks a queued or running job whose heartbeat is older than the stale limit ``interrupted``, so it can be run
again. Jobs stored before this revision have none and, when still queued or running, are marked the same way.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('simulation_jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('simulation_jobs', schema=None) as batch_op:
        batch_op.drop_column('heartbeat_at')
