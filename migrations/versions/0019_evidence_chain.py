"""evidence chain: topics, rankings, sample draws and audit streams hash-chained like the judgments

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05

Adds the tables ``evidence_events`` and ``evidence_chain`` (`reviewdepth.store.models.EvidenceEvent`,
`reviewdepth.store.evidence`) and chains every topic, queue, sample and audit stream already stored, as it is
now (action ``found``), in a fixed order: topics, then queues, samples and streams, each by id. An upgraded store
then verifies clean; tampering done before the upgrade is sealed in, as the module docstring says.

Its downgrade drops the chain: ``audit verify`` then no longer notices a changed seed, a replaced drawn document,
an edited ranking or a deleted topic, sample or stream (see ``LOSES``; ``db downgrade`` refuses without --force).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from reviewdepth.store.evidence import backfill, evidence_genesis
from reviewdepth.store.ingest import utc_now

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None

LOSES = ("the evidence chain: audit verify no longer detects a changed sample seed or drawn document, an edited "
         "ranking, a changed audit stream, or a deleted topic, queue, sample or stream")


def upgrade() -> None:
    op.create_table(
        'evidence_events',
        sa.Column('seq', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('kind', sa.String(length=10), nullable=False),
        sa.Column('object_id', sa.BigInteger(), nullable=False),
        sa.Column('topic', sa.String(length=200), nullable=False),
        sa.Column('action', sa.String(length=10), nullable=False),
        sa.Column('state', sa.Text(), nullable=False),
        sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('chain_hash', sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint('seq', name=op.f('pk_evidence_events')),
    )
    chain = op.create_table(
        'evidence_chain',
        sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('length', sa.BigInteger(), nullable=False),
        sa.Column('head', sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_evidence_chain')),
    )
    op.bulk_insert(chain, [{"id": 1, "length": 0, "head": evidence_genesis()}])
    backfill(op.get_bind(), utc_now())


def downgrade() -> None:
    op.drop_table('evidence_chain')
    op.drop_table('evidence_events')
