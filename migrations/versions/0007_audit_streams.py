"""audit streams: a seeded random permutation of a queue's documents served beside the ranked queue

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-10

Adds ``audit_streams`` (`reviewdepth.store.models.AuditStream`): the seed, the population (its size and the
SHA-256 of its sorted doc ids: the order is recomputed, never stored per document), the pace (``every_k`` or
``rate``, exactly one), how far the stream has got (``position``, ``served``) and an optional void record. A
partial unique index keeps at most one stream per topic that is not voided. Judgments of audit documents use
the new role ``audit`` (a value of ``judgments.role``, no schema change).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'audit_streams',
        sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
        sa.Column('topic_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
        sa.Column('queue_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
        sa.Column('seed', sa.BigInteger(), nullable=False),
        sa.Column('population_size', sa.BigInteger(), nullable=False),
        sa.Column('population_digest', sa.String(length=64), nullable=False),
        sa.Column('every_k', sa.Integer(), nullable=True),
        sa.Column('rate', sa.Float(), nullable=True),
        sa.Column('position', sa.BigInteger(), server_default='0', nullable=False),
        sa.Column('served', sa.BigInteger(), server_default='0', nullable=False),
        sa.Column('as_of', sa.BigInteger(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('created_by', sa.String(length=200), nullable=False),
        sa.Column('voided_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('void_reason', sa.Text(), nullable=True),
        sa.Column('voided_by', sa.String(length=200), nullable=True),
        sa.CheckConstraint('(every_k IS NULL) <> (rate IS NULL)', name=op.f('ck_audit_streams_one_pace')),
        sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_audit_streams_topic_id_topics'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['queue_id'], ['queues.id'], name=op.f('fk_audit_streams_queue_id_queues'),
                                ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_streams')),
    )
    with op.batch_alter_table('audit_streams', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_audit_streams_topic_id'), ['topic_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_audit_streams_queue_id'), ['queue_id'], unique=False)
        batch_op.create_index('uq_audit_streams_active_topic', ['topic_id'], unique=True,
                              sqlite_where=sa.text('voided_at IS NULL'),
                              postgresql_where=sa.text('voided_at IS NULL'))


def downgrade() -> None:
    with op.batch_alter_table('audit_streams', schema=None) as batch_op:
        batch_op.drop_index('uq_audit_streams_active_topic')
        batch_op.drop_index(batch_op.f('ix_audit_streams_queue_id'))
        batch_op.drop_index(batch_op.f('ix_audit_streams_topic_id'))
    op.drop_table('audit_streams')
