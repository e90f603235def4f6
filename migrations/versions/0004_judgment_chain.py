"""judgment hash chain

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02

Adds judgments.seq and judgments.chain_hash and the topic's chain length and head, and links the judgments
already stored, per topic in recording (id) order, with the chain of `reviewdepth.store.chain`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from reviewdepth.store.chain import genesis, link_hash

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def _link_existing() -> None:
    conn = op.get_bind()
    judgments = sa.table('judgments', sa.column('id', sa.BigInteger()), sa.column('topic_id', sa.BigInteger()),
                         sa.column('doc_id', sa.String()), sa.column('label', sa.String()),
                         sa.column('relevant', sa.Boolean()), sa.column('grade', sa.Integer()),
                         sa.column('reviewer', sa.String()), sa.column('role', sa.String()),
                         sa.column('source', sa.String()), sa.column('note', sa.Text()),
                         sa.column('recorded_at', sa.DateTime(timezone=True)),
                         sa.column('import_id', sa.BigInteger()), sa.column('seq', sa.BigInteger()),
                         sa.column('chain_hash', sa.String()))
    topics = sa.table('topics', sa.column('id', sa.BigInteger()), sa.column('name', sa.String()),
                      sa.column('chain_length', sa.BigInteger()), sa.column('chain_head', sa.String()))
    for topic_id, name in conn.execute(sa.select(topics.c.id, topics.c.name)).all():
        head = genesis(name)
        updates = []
        rows = conn.execute(sa.select(
            judgments.c.id, judgments.c.doc_id, judgments.c.label, judgments.c.relevant, judgments.c.grade,
            judgments.c.reviewer, judgments.c.role, judgments.c.source, judgments.c.note, judgments.c.recorded_at,
            judgments.c.import_id).where(judgments.c.topic_id == topic_id).order_by(judgments.c.id)).all()
        for seq, (jid, doc_id, label, relevant, grade, reviewer, role, source, note, recorded_at,
                  import_id) in enumerate(rows, start=1):
            head = link_hash(head, seq, doc_id, label, None if relevant is None else bool(relevant), grade, reviewer,
                             role, source, note, recorded_at, import_id)
            updates.append({'b_id': jid, 'b_seq': seq, 'b_hash': head})
        if updates:
            conn.execute(judgments.update().where(judgments.c.id == sa.bindparam('b_id'))
                         .values(seq=sa.bindparam('b_seq'), chain_hash=sa.bindparam('b_hash')), updates)
            conn.execute(topics.update().where(topics.c.id == topic_id)
                         .values(chain_length=len(updates), chain_head=head))


def upgrade() -> None:
    with op.batch_alter_table('topics', schema=None) as batch_op:
        batch_op.add_column(sa.Column('chain_length', sa.BigInteger(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('chain_head', sa.String(length=64), nullable=True))
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.add_column(sa.Column('seq', sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column('chain_hash', sa.String(length=64), nullable=True))
    _link_existing()
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.alter_column('seq', existing_type=sa.BigInteger(), nullable=False)
        batch_op.alter_column('chain_hash', existing_type=sa.String(length=64), nullable=False)
        batch_op.create_unique_constraint('uq_judgments_topic_id_seq', ['topic_id', 'seq'])


def downgrade() -> None:
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.drop_constraint('uq_judgments_topic_id_seq', type_='unique')
        batch_op.drop_column('chain_hash')
        batch_op.drop_column('seq')
    with op.batch_alter_table('topics', schema=None) as batch_op:
        batch_op.drop_column('chain_head')
        batch_op.drop_column('chain_length')
