"""chain anchoring: the broken-chain flag and acknowledgements

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03

Adds ``topics.chain_broken`` (why `audit verify` found the topic's judgment chain broken; writes are refused
while it is set) and ``chain_acknowledgements`` (an admin's logged acceptance of a broken chain, linked into
the chain: `reviewdepth.store.chain.acknowledge`).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('topics', schema=None) as batch_op:
        batch_op.add_column(sa.Column('chain_broken', sa.Text(), nullable=True))
    op.create_table(
        'chain_acknowledgements',
        sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
        sa.Column('topic_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
        sa.Column('seq', sa.BigInteger(), nullable=False),
        sa.Column('previous_head', sa.String(length=64), nullable=False),
        sa.Column('broken', sa.Text(), nullable=False),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('reviewer', sa.String(length=200), nullable=False),
        sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('chain_hash', sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_chain_acknowledgements_topic_id_topics'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_chain_acknowledgements')),
    )
    with op.batch_alter_table('chain_acknowledgements', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_chain_acknowledgements_topic_id'), ['topic_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('chain_acknowledgements', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_chain_acknowledgements_topic_id'))
    op.drop_table('chain_acknowledgements')
    with op.batch_alter_table('topics', schema=None) as batch_op:
        batch_op.drop_column('chain_broken')
