"""samples

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('samples',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('topic_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('queue_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('frame', sa.String(length=20), nullable=False),
    sa.Column('below_rank', sa.BigInteger(), nullable=True),
    sa.Column('from_rank', sa.BigInteger(), nullable=True),
    sa.Column('to_rank', sa.BigInteger(), nullable=True),
    sa.Column('frame_size', sa.BigInteger(), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('as_of', sa.BigInteger(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['queue_id'], ['queues.id'], name=op.f('fk_samples_queue_id_queues'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_samples_topic_id_topics'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_samples'))
    )
    with op.batch_alter_table('samples', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_samples_queue_id'), ['queue_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_samples_topic_id'), ['topic_id'], unique=False)

    op.create_table('sample_items',
    sa.Column('sample_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('position', sa.BigInteger(), nullable=False),
    sa.Column('doc_id', sa.String(length=300), nullable=False),
    sa.Column('rank', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['sample_id'], ['samples.id'], name=op.f('fk_sample_items_sample_id_samples'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('sample_id', 'position', name=op.f('pk_sample_items')),
    sa.UniqueConstraint('sample_id', 'doc_id', name='uq_sample_items_sample_id_doc_id')
    )


def downgrade() -> None:
    op.drop_table('sample_items')
    with op.batch_alter_table('samples', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_samples_topic_id'))
        batch_op.drop_index(batch_op.f('ix_samples_queue_id'))

    op.drop_table('samples')
