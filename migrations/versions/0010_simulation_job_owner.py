"""simulation job owners: the API key that created each job

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04

Adds ``simulation_jobs.created_by_key_id`` (`reviewdepth.store.models.SimulationJob`): the API key that posted the
job. A job is shown to that key and to admin keys only (`reviewdepth.services.simulation.simulation_jobs.get_job`); jobs
stored before this revision have none, and only admin keys see them.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    with op.batch_alter_table('simulation_jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('created_by_key_id', BIG_ID, nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_simulation_jobs_created_by_key_id_api_keys'), 'api_keys',
                                    ['created_by_key_id'], ['id'], ondelete='SET NULL')


def downgrade() -> None:
    with op.batch_alter_table('simulation_jobs', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_simulation_jobs_created_by_key_id_api_keys'), type_='foreignkey')
        batch_op.drop_column('created_by_key_id')
