"""interrupted simulation jobs: the status of a job that a stopping server cut short

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04

Adds the status ``interrupted`` to ``simulation_jobs`` (`reviewdepth.store.models.SimulationJob`): a job that was
queued or running when its server process stopped (`reviewdepth.services.simulation.simulation_jobs.interrupt_jobs`); it can
be run again. A downgrade turns interrupted jobs into failed ones, with their reason kept.
"""

from __future__ import annotations

from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None

BEFORE = "status IN ('queued', 'running', 'done', 'failed', 'cancelled')"
AFTER = "status IN ('queued', 'running', 'done', 'failed', 'cancelled', 'interrupted')"


def _status_check(rule: str) -> None:
    with op.batch_alter_table('simulation_jobs', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_simulation_jobs_status'), type_='check')
        batch_op.create_check_constraint(batch_op.f('ck_simulation_jobs_status'), rule)


def upgrade() -> None:
    _status_check(AFTER)


def downgrade() -> None:
    op.execute("UPDATE simulation_jobs SET status = 'failed' WHERE status = 'interrupted'")
    _status_check(BEFORE)
