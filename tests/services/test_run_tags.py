"""A run's queues are named after the run tag of each topic's own lines (issue 39): the tag most of the topic's
lines carry, not the tag of the file's last line. CLEF 2017's amc run tags each topic with its own number (1 to 30),
so every topic's queue used to be named '12', the last topic's; a topic with a stray tag is said to be so in the
printed line (and the API's ``notes``)."""

from __future__ import annotations

import gzip
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.files.imports import import_run
from reviewdepth.store.models import Queue, Topic

MIXED = ("T Q0 a 1 3 10\nT Q0 b 2 2 10\nT Q0 c 3 1 12\n"  # T: mostly 10, its last line 12
         "U Q0 a 1 2 7\nU Q0 b 2 1 7\n"                    # U: 7 throughout
         "V Q0 a 1 9 12\n")                                 # V, the file's last line: 12


def stored_queues(engine: Engine) -> dict[str, set[tuple[str, str | None]]]:
    """Topic -> its queues as (name, run tag)."""
    with engine.connect() as conn:
        rows = conn.execute(select(Topic.name, Queue.name, Queue.run_tag).join(Queue, Queue.topic_id == Topic.id))
        out: dict[str, set[tuple[str, str | None]]] = defaultdict(set)
        for topic, queue, tag in rows:
            out[topic].add((queue, tag))
    return dict(out)


def most_common_tags(text: str) -> dict[str, str]:
    """The oracle: per topic, the tag most of its lines carry (ties: the first seen), counted line by line."""
    per_topic: dict[str, Counter[str]] = defaultdict(Counter)
    first_seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(text.splitlines()):
        fields = line.split()
        if len(fields) >= 6:
            per_topic[fields[0]][fields[5]] += 1
            first_seen.setdefault((fields[0], fields[5]), number)
    return {topic: min(counts, key=lambda t: (-counts[t], first_seen[(topic, t)]))
            for topic, counts in per_topic.items()}


def test_each_topic_is_named_after_the_tag_most_of_its_lines_carry(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "mixed.run"
    run.write_text(MIXED)
    summary = import_run(engine, str(run))
    expected = most_common_tags(MIXED)
    assert expected == {"T": "10", "U": "7", "V": "12"}
    assert stored_queues(engine) == {t: {(tag, tag)} for t, tag in expected.items()}
    assert summary.queues == ["10", "7", "12"]
    assert summary.notes == ["topic 'T': its lines carry 2 run tags ('10' on 2 lines, '12' on 1 line); its queue "
                             "is named '10', the tag most of them carry"]


def test_a_given_queue_name_keeps_each_topics_run_tag(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "mixed.run"
    run.write_text(MIXED)
    summary = import_run(engine, str(run), queue_name="mine", topics=["T", "U"])
    assert stored_queues(engine) == {"T": {("mine", "10")}, "U": {("mine", "7")}}
    assert summary.queues == ["mine"] and len(summary.notes) == 1 and "queue 'mine' keeps run tag '10'" in \
        summary.notes[0]


def test_the_printed_line_says_a_topics_tags_differ(tmp_path: Path, empty_db_url: str) -> None:
    run = tmp_path / "mixed.run"
    run.write_text(MIXED)

    def invoke(*args: str) -> Any:
        return CliRunner().invoke(create_cli(), [*args, "--db", empty_db_url])

    assert invoke("db", "upgrade").exit_code == 0
    result = invoke("import", "run", str(run))
    assert result.exit_code == 0, result.output
    first, note = result.stdout.splitlines()
    assert first.startswith("imported 6 ranked documents into 3 queues named after their topics' run tags "
                            "('10', '7', '12') of 3 topics")
    assert note == ("  topic 'T': its lines carry 2 run tags ('10' on 2 lines, '12' on 1 line); its queue is named "
                    "'10', the tag most of them carry")


def test_clef_2017_amc_run_names_each_topics_queue_after_its_own_tag(engine: Engine, shared: Any) -> None:
    path = shared("clef-tar-2017", "runs", "amc.run.gz")
    text = gzip.decompress(path.read_bytes()).decode()
    expected = most_common_tags(text)
    assert len(set(expected.values())) == 30  # the case: 30 topics, each with its own tag, the last one '12'
    summary = import_run(engine, str(path))
    assert stored_queues(engine) == {t: {(tag, tag)} for t, tag in expected.items()}
    assert summary.notes == []  # no topic's lines disagree
