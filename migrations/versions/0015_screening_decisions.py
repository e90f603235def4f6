"""screening decisions: maybe and skip, exclusion reasons, screening stages, a per-topic conflict rule

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-04

Adds to ``judgments`` (`reviewdepth.store.models.Judgment`), all nullable so every row recorded before keeps its
meaning and its chain hash (`reviewdepth.store.chain`: the three enter a row's hash only when one is set):

- ``decision``: ``maybe`` or ``skip``; null for a decision read from ``relevant`` (include / exclude / a grade);
- ``reason``: the exclusion reason of an exclude, one of its topic's ``exclusion_reasons``;
- ``stage``: ``full-text``; null is the default stage, ``title-abstract``;

and a partial index on the few rows that have one of them (``ix_judgments_screening``).

Adds ``topics.conflict_rule`` (null: ``rayyan``, the default; ``strict``) and the table ``exclusion_reasons``
(the reasons a topic's excludes may carry).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None

LOSES = ("every maybe and skip decision turns into undecided, exclusion reasons and full-text stages are dropped, "
         "and the judgment chain of each topic holding such a judgment no longer verifies")


def upgrade() -> None:
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.add_column(sa.Column('decision', sa.String(length=10), nullable=True))
        batch_op.add_column(sa.Column('reason', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('stage', sa.String(length=20), nullable=True))
    screening_rows = sa.text("decision IS NOT NULL OR reason IS NOT NULL OR stage IS NOT NULL")
    op.create_index('ix_judgments_screening', 'judgments', ['topic_id'], sqlite_where=screening_rows,
                    postgresql_where=screening_rows)
    with op.batch_alter_table('topics', schema=None) as batch_op:
        batch_op.add_column(sa.Column('conflict_rule', sa.String(length=10), nullable=True))
    big_id = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
    op.create_table(
        'exclusion_reasons',
        sa.Column('id', big_id, nullable=False),
        sa.Column('topic_id', big_id, nullable=False),
        sa.Column('reason', sa.String(length=200), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_exclusion_reasons_topic_id_topics'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_exclusion_reasons')),
        sa.UniqueConstraint('topic_id', 'reason', name='uq_exclusion_reasons_topic_id_reason'),
    )


def downgrade() -> None:
    op.drop_table('exclusion_reasons')
    with op.batch_alter_table('topics', schema=None) as batch_op:
        batch_op.drop_column('conflict_rule')
    op.drop_index('ix_judgments_screening', table_name='judgments')
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.drop_column('stage')
        batch_op.drop_column('reason')
        batch_op.drop_column('decision')
