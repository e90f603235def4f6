"""``import_run(topics=…)`` on SQLite and PostgreSQL: only the chosen topics of a run are stored, a topic the file
does not hold is refused with nothing stored, and the duplicate check is per topic (an import of a file repeats an
earlier one of it when both take a topic in common)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.formats.errors import InputError
from reviewdepth.services.errors import Conflict
from reviewdepth.services.files.imports import import_run, imported_topics
from reviewdepth.store.models import ImportRecord, Queue, QueueEntry, Topic

TABLES = (Topic, Queue, QueueEntry, ImportRecord)


def run_file(tmp_path: Path) -> Path:
    """Topics A, B and C (in that order of first appearance), 3 documents each, one file order."""
    path = tmp_path / "three.run"
    path.write_text("".join(f"{t} Q0 {t.lower()}{i} {i} {10 - i} tag\n" for i in range(1, 4) for t in "BAC"))
    return path


def counts(engine: Engine) -> tuple[int, ...]:
    with engine.connect() as conn:
        return tuple(conn.execute(select(func.count()).select_from(t)).scalar_one() for t in TABLES)


def stored(engine: Engine) -> dict[str, list[str]]:
    with engine.connect() as conn:
        rows = conn.execute(select(Topic.name, Queue.name).join(Queue, Queue.topic_id == Topic.id)
                            .order_by(Topic.name, Queue.id)).all()
    out: dict[str, list[str]] = {}
    for topic, queue in rows:
        out.setdefault(topic, []).append(queue)
    return out


def test_only_the_chosen_topics(engine: Engine, tmp_path: Path) -> None:
    path = str(run_file(tmp_path))
    summary = import_run(engine, path, topics=["C", "A", "C"])
    assert (summary.topics, summary.rows) == (["A", "C"], 6)  # in the file's order
    assert stored(engine) == {"A": ["tag"], "C": ["tag"]}
    with engine.connect() as conn:
        record = conn.execute(select(ImportRecord.rows, ImportRecord.topics, ImportRecord.options)).one()
    assert record[:2] == (6, 2) and imported_topics(record[2]) == {"A", "C"}
    assert record[2].endswith(";queue=tag;order=given")


def test_a_topic_not_in_the_file_stores_nothing(engine: Engine, tmp_path: Path) -> None:
    path = str(run_file(tmp_path))
    before = counts(engine)
    with pytest.raises(InputError, match=r"field --topic: topics 'D', 'E' are not in the file \(it holds topics "
                                         r"'B', 'A', 'C'\)"):
        import_run(engine, path, topics=["A", "D", "E"])
    with pytest.raises(InputError, match=r"field --topic: .*must not contain '/'"):
        import_run(engine, path, topics=["A/1"])
    assert counts(engine) == before


def test_the_duplicate_check_is_per_topic(engine: Engine, tmp_path: Path) -> None:
    path = str(run_file(tmp_path))
    import_run(engine, path, topics=["A"])
    before = counts(engine)
    with pytest.raises(Conflict, match=r"topic 'A' of this file \(sha256 [0-9a-f]{12}…\) was already imported as "
                                       r"import 1 .*use --again to import it once more$"):
        import_run(engine, path, topics=["A"], queue_name="other")
    with pytest.raises(Conflict, match="topic 'A' of this file .* was already imported as import 1 .* "
                                       r"\(or --topic for its other topics\)"):
        import_run(engine, path, queue_name="other")  # the whole file takes A again
    with pytest.raises(Conflict, match="topic 'A' of this file"):
        import_run(engine, path, topics=["A", "B"], queue_name="other")
    assert counts(engine) == before
    import_run(engine, path, topics=["B", "C"])  # the others: no repeat
    with pytest.raises(Conflict, match=r"topics 'B', 'C' of this file .* were already imported as import 2 .*them"):
        import_run(engine, path, topics=["C", "B"], queue_name="other")
    import_run(engine, path, topics=["A"], queue_name="again", again=True)
    assert stored(engine) == {"A": ["tag", "again"], "B": ["tag"], "C": ["tag"]}


def test_a_whole_file_before_its_topics(engine: Engine, tmp_path: Path) -> None:
    path = str(run_file(tmp_path))
    import_run(engine, path)
    with pytest.raises(Conflict, match=r"topic 'B' of this file .* was already imported as import 1"):
        import_run(engine, path, topics=["B"], queue_name="other")
    with pytest.raises(Conflict, match=r"^.*: this file \(sha256 .*\) was already imported as import 1"):
        import_run(engine, path, queue_name="other")
    assert len(stored(engine)) == 3
