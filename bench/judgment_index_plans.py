"""Every index of the ``judgments`` table, the query of reviewdepth that needs it and that query's plan on the
database given (issue 30: "drop or merge any index no query needs; show each index's query and plan").

    python bench/judgment_index_plans.py [--db sqlite | postgresql://postgres@127.0.0.1:5432/postgres]

Builds a fresh database at the head revision with two topics of 20,000 judgments each (posted as an API client
posts them: 1,000-judgment batches, one import's worth of rows with an ``import_id``, a few screening decisions),
runs ANALYZE, then prints each index, where its query lives, and ``EXPLAIN`` of the query (SQLite: ``EXPLAIN
QUERY PLAN``). The last entry is the statement ``ix_judgments_queue_id`` served before revision 0017 dropped it:
the foreign key's ``ON DELETE SET NULL`` of a deleted queue, which no code path runs.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from api_floor_bench import drop_database, fresh_database
from sqlalchemy import Connection, inspect, text

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for

PER_TOPIC = 20_000
DOCS = ", ".join(f"'t1-{i}'" for i in range(0, 2000, 40))  # 50 documents, as a report's chunked look-up sends

# (index, where the query is, the query)
QUERIES = [
    ("pk_judgments (id)", "services/evidence/topic.py recorded_judgment",
     "SELECT id FROM judgments WHERE id = 15000"),
    ("ix_judgments_topic_id_doc_id", "services/evidence/queue_evidence.py (judged documents of a queue's tail)",
     f"SELECT doc_id FROM judgments WHERE topic_id = 1 AND doc_id IN ({DOCS}) AND id <= 30000"),
    ("ix_judgments_topic_id_id", "services/judgments.py list_judgments (the log in recording order)",
     "SELECT id, doc_id, label FROM judgments WHERE topic_id = 1 ORDER BY id LIMIT 1000 OFFSET 5000"),
    ("ix_judgments_topic_id_id", "services/samples.py, audit_stream.py, evidence/topic.py (the newest judgment)",
     "SELECT max(id) FROM judgments WHERE topic_id = 1"),
    ("uq_judgments_topic_id_seq", "store/chain.py _check_tail / _reserve (the tail check of every write)",
     "SELECT (SELECT chain_hash FROM judgments WHERE topic_id = 1 AND seq = 19999), "
     "(SELECT max(seq) FROM judgments WHERE topic_id = 1)"),
    ("uq_judgments_topic_id_seq", "store/chain.py append_judgments (the ids of a batch just written)",
     "SELECT id FROM judgments WHERE topic_id = 1 AND seq >= 19001 AND seq < 20001 ORDER BY seq"),
    ("ix_judgments_screening (partial)", "services/evidence/prisma_counts.py (documents with a screening decision)",
     "SELECT doc_id FROM judgments WHERE topic_id = 1 AND (decision IS NOT NULL OR reason IS NOT NULL OR "
     "stage IS NOT NULL)"),
    ("ix_judgments_import_id", "services/report.py (the imports a topic's log uses: EXISTS per import)",
     "SELECT i.id FROM imports i WHERE EXISTS (SELECT 1 FROM judgments j WHERE j.import_id = i.id AND "
     "j.topic_id = 1)"),
    ("ix_judgments_queue_id (dropped by 0017)", "no query; the foreign key's action if a queue row were deleted",
     "UPDATE judgments SET queue_id = NULL WHERE queue_id = 1"),
]


def populate(url: str) -> None:
    engine = create_engine_for(url)
    migrate.upgrade(engine)
    for topic in ("t1", "t2"):
        create_topic(engine, topic)
        store_ranking(engine, topic, "q", [RankedDocument(f"{topic}-{i}") for i in range(PER_TOPIC)])
        for start in range(0, PER_TOPIC - 1000, 1000):
            record_batch(engine, topic, [BatchItem(f"{topic}-{i}", "1" if i % 9 == 0 else "0")
                                         for i in range(start, start + 1000)], reviewer="ana")
        record_batch(engine, topic, [BatchItem(f"{topic}-{i}", "maybe" if i % 100 == 0 else "0")
                                     for i in range(PER_TOPIC - 1000, PER_TOPIC)], reviewer="bo")
    with engine.begin() as conn:  # an import's rows, as `import csv` leaves them (import_id set)
        import_id = conn.execute(text("INSERT INTO imports (kind, file_name, digest, rows, topics, options, "
                                      "created_at) VALUES ('csv', 'x.csv', 'abc', 20, 1, '', CURRENT_TIMESTAMP) "
                                      "RETURNING id")).scalar_one()
        # (the chain hashes of these rows no longer match: only the plans are of interest here)
        conn.execute(text("UPDATE judgments SET import_id = :i WHERE id % 1000 = 7"), {"i": import_id})
        conn.execute(text("ANALYZE"))
    engine.dispose()


def plan(conn: Connection, sql: str) -> list[str]:
    if conn.dialect.name == "sqlite":
        return [str(row[-1]) for row in conn.execute(text("EXPLAIN QUERY PLAN " + sql))]
    return [str(row[0]) for row in conn.execute(text("EXPLAIN " + sql))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="sqlite")
    args = parser.parse_args()
    name = "judgment_index_plans"
    url = fresh_database(args.db, Path(tempfile.mkdtemp()), name)
    try:
        populate(url)
        engine = create_engine_for(url)
        indexes = sorted(i["name"] for i in inspect(engine).get_indexes("judgments"))
        uniques = sorted(u["name"] for u in inspect(engine).get_unique_constraints("judgments"))
        print(f"{engine.dialect.name}: indexes of judgments at head: {', '.join(indexes)}; unique: "
              f"{', '.join(uniques)}; primary key: id")
        with engine.connect() as conn:
            for index, where, sql in QUERIES:
                shown = sql if len(sql) < 150 else sql[:140] + " ..."
                print(f"\n{index} — {where}\n  {shown}")
                for step in plan(conn, sql):
                    print(f"    {step}")
            conn.rollback()
        engine.dispose()
    finally:
        drop_database(args.db, name)


if __name__ == "__main__":
    main()
