"""bibliographic record fields for finding duplicates

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04

Adds the table ``record_fields`` (`reviewdepth.store.models.RecordFields`): per topic and document, the title,
year, DOI, PMID and first author that ``reviewdepth import records`` read, for ``reviewdepth dedupe``. A record
found to be a duplicate is logged as a judgment with ``decision = 'duplicate'`` (a value of the existing column:
no change to ``judgments``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'record_fields',
        sa.Column('topic_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
        sa.Column('doc_id', sa.String(length=300), nullable=False),
        sa.Column('title', sa.Text(), nullable=True),
        sa.Column('year', sa.Integer(), nullable=True),
        sa.Column('doi', sa.Text(), nullable=True),
        sa.Column('pmid', sa.String(length=40), nullable=True),
        sa.Column('first_author', sa.Text(), nullable=True),
        sa.Column('import_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
        sa.ForeignKeyConstraint(['import_id'], ['imports.id'], name=op.f('fk_record_fields_import_id_imports')),
        sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_record_fields_topic_id_topics'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('topic_id', 'doc_id', name=op.f('pk_record_fields')),
    )


def downgrade() -> None:
    op.drop_table('record_fields')
