"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('imports',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('file_name', sa.Text(), nullable=False),
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('rows', sa.BigInteger(), nullable=False),
    sa.Column('topics', sa.Integer(), nullable=False),
    sa.Column('options', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_imports'))
    )
    with op.batch_alter_table('imports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_imports_digest'), ['digest'], unique=False)

    op.create_table('topics',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('population_size', sa.BigInteger(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_topics')),
    sa.UniqueConstraint('name', name=op.f('uq_topics_name'))
    )
    op.create_table('judgments',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('topic_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('doc_id', sa.String(length=300), nullable=False),
    sa.Column('label', sa.String(length=100), nullable=False),
    sa.Column('relevant', sa.Boolean(), nullable=True),
    sa.Column('grade', sa.Integer(), nullable=True),
    sa.Column('reviewer', sa.String(length=200), nullable=False),
    sa.Column('role', sa.String(length=20), nullable=False),
    sa.Column('source', sa.String(length=100), nullable=False),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('import_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.ForeignKeyConstraint(['import_id'], ['imports.id'], name=op.f('fk_judgments_import_id_imports')),
    sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_judgments_topic_id_topics'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_judgments'))
    )
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_judgments_import_id'), ['import_id'], unique=False)
        batch_op.create_index('ix_judgments_topic_id_doc_id', ['topic_id', 'doc_id'], unique=False)
        batch_op.create_index('ix_judgments_topic_id_id', ['topic_id', 'id'], unique=False)

    op.create_table('queues',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('topic_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('ordering', sa.String(length=20), nullable=False),
    sa.Column('run_tag', sa.String(length=200), nullable=True),
    sa.Column('threshold_rank', sa.BigInteger(), nullable=True),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.Column('source', sa.String(length=100), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ranking_blob', sa.LargeBinary(), nullable=True),
    sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_queues_topic_id_topics'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_queues')),
    sa.UniqueConstraint('topic_id', 'name', name='uq_queues_topic_id_name')
    )
    with op.batch_alter_table('queues', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_queues_topic_id'), ['topic_id'], unique=False)

    op.create_table('queue_entries',
    sa.Column('queue_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('rank', sa.BigInteger(), nullable=False),
    sa.Column('doc_id', sa.String(length=300), nullable=False),
    sa.Column('score', sa.Float(), nullable=True),
    sa.Column('flag', sa.String(length=10), nullable=True),
    sa.ForeignKeyConstraint(['queue_id'], ['queues.id'], name=op.f('fk_queue_entries_queue_id_queues'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('queue_id', 'rank', name=op.f('pk_queue_entries')),
    sa.UniqueConstraint('queue_id', 'doc_id', name='uq_queue_entries_queue_id_doc_id')
    )


def downgrade() -> None:
    op.drop_table('queue_entries')
    with op.batch_alter_table('queues', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_queues_topic_id'))

    op.drop_table('queues')
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.drop_index('ix_judgments_topic_id_id')
        batch_op.drop_index('ix_judgments_topic_id_doc_id')
        batch_op.drop_index(batch_op.f('ix_judgments_import_id'))

    op.drop_table('judgments')
    op.drop_table('topics')
    with op.batch_alter_table('imports', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_imports_digest'))

    op.drop_table('imports')
