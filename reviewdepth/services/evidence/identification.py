"""Where a topic's records were identified: the sources its population imports declared (PRISMA 2020's
identification boxes), read through the caller's connection."""

from __future__ import annotations

from sqlalchemy import Connection, select

from reviewdepth.report.prisma_model import source_key
from reviewdepth.store.import_options import SOURCE_OPTION, imported_source, imported_topics
from reviewdepth.store.models import ImportRecord, Topic


def records_per_source(conn: Connection, topic_id: int) -> dict[str, int]:
    """The records each declared source brought to the topic (keys by `source_key`: ``"database: MEDLINE"``), in
    the order the sources were first imported; a source imported twice (a search run again) sums its files. Empty
    when no import into the topic declared a source. Only population imports declare one, each for one topic (its
    options name it), so the imports holding a source part are few and read whole."""
    topic = conn.execute(select(Topic.name).where(Topic.id == topic_id)).scalar_one()
    out: dict[str, int] = {}
    stmt = (select(ImportRecord.options, ImportRecord.rows)
            .where(ImportRecord.options.contains(SOURCE_OPTION, autoescape=True)).order_by(ImportRecord.id))
    for options, rows in conn.execute(stmt):
        source = imported_source(options)
        if source is None or topic not in (imported_topics(options) or ()):
            continue
        key = source_key(source.type, source.name)
        out[key] = out.get(key, 0) + int(rows)
    return out
