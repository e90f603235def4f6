"""api keys and idempotency records

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-09
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('api_keys',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('reviewer', sa.String(length=200), nullable=False),
    sa.Column('scope', sa.String(length=20), nullable=False),
    sa.Column('prefix', sa.String(length=20), nullable=False),
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_keys')),
    sa.UniqueConstraint('digest', name=op.f('uq_api_keys_digest'))
    )
    op.create_table('api_idempotency',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('reviewer', sa.String(length=200), nullable=False),
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('topic_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('request_digest', sa.String(length=64), nullable=False),
    sa.Column('response', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_api_idempotency_topic_id_topics'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_idempotency')),
    sa.UniqueConstraint('reviewer', 'key', name='uq_api_idempotency_reviewer_key')
    )
    with op.batch_alter_table('api_idempotency', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_idempotency_topic_id'), ['topic_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('api_idempotency', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_idempotency_topic_id'))
    op.drop_table('api_idempotency')
    op.drop_table('api_keys')
