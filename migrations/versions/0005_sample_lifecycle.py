"""sample lifecycle: voided samples, the queue size at draw time, the queue a judgment was served from

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03

Adds ``judgments.queue_id`` (the queue a judgment was served from; NULL for judgments recorded before this
revision, whose queue is unknown) and, on ``samples``, the void record (``voided_at``, ``void_reason``,
``voided_by``, ``void_judgment_id``: the chain row that logs the void) and ``queue_size``, the size of the
queue at draw time, backfilled from ``queues.size`` (queues are never changed after they are stored, so the
stored size is the size at draw time).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.add_column(sa.Column('queue_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'),
                                      nullable=True))
        batch_op.create_index(batch_op.f('ix_judgments_queue_id'), ['queue_id'], unique=False)
        batch_op.create_foreign_key(batch_op.f('fk_judgments_queue_id_queues'), 'queues', ['queue_id'], ['id'],
                                    ondelete='SET NULL')
    with op.batch_alter_table('samples', schema=None) as batch_op:
        batch_op.add_column(sa.Column('queue_size', sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column('voided_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('void_reason', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('voided_by', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('void_judgment_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'),
                                      nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_samples_void_judgment_id_judgments'), 'judgments',
                                    ['void_judgment_id'], ['id'])
    samples = sa.table('samples', sa.column('queue_id', sa.BigInteger()), sa.column('queue_size', sa.BigInteger()))
    queues = sa.table('queues', sa.column('id', sa.BigInteger()), sa.column('size', sa.BigInteger()))
    op.execute(samples.update().values(queue_size=sa.select(queues.c.size)
                                       .where(queues.c.id == samples.c.queue_id).scalar_subquery()))


def downgrade() -> None:
    with op.batch_alter_table('samples', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_samples_void_judgment_id_judgments'), type_='foreignkey')
        batch_op.drop_column('void_judgment_id')
        batch_op.drop_column('voided_by')
        batch_op.drop_column('void_reason')
        batch_op.drop_column('voided_at')
        batch_op.drop_column('queue_size')
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_judgments_queue_id_queues'), type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_judgments_queue_id'))
        batch_op.drop_column('queue_id')
