"""topic protocols: the fields a TAR protocol discloses, entered once per topic and chained with it

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05

Adds the table ``topic_protocols`` (`reviewdepth.store.models.TopicProtocolRow`): per topic, its protocol fields
as canonical JSON (workflow, platform, model and version, custodians, date range, excluded types, processing
exceptions, de-duplication and threading counts, acceptance criterion, reviewer roster, blind coding, production
counts), with who recorded them and when. A topic's evidence-chain state carries them once entered
(`reviewdepth.store.evidence.topic_state`); no topic has any at the upgrade, so nothing is chained by it.

Its downgrade first chains each topic with protocol fields again without them (action ``downgraded``, so the
chain verifies on the older schema and its history keeps what the fields were), then drops the table: the
validation packet then prints every protocol field as "not recorded" (see ``LOSES``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from reviewdepth.store.evidence import unchain_protocols
from reviewdepth.store.ingest import utc_now

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None

LOSES = ("the topics' protocol fields (workflow, platform, collection, acceptance criterion, reviewer roster, "
         "production counts): the validation packet prints them as not recorded; the evidence chain keeps what "
         "they were")


def upgrade() -> None:
    op.create_table(
        'topic_protocols',
        sa.Column('topic_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
        sa.Column('fields', sa.Text(), nullable=False),
        sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('recorded_by', sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_topic_protocols_topic_id_topics'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('topic_id', name=op.f('pk_topic_protocols')),
    )


def downgrade() -> None:
    unchain_protocols(op.get_bind(), utc_now())
    op.drop_table('topic_protocols')
