"""``import records`` (issue 39 item 3): a records file (ASReview's own datasets, a SYNERGY file) becomes a topic's
population and a queue in file order, its labels judgments, on SQLite and PostgreSQL; ``import ris`` of a merged
export whose ID tags repeat numbers its records by position; the same file may be two topics' population; bad
files (a label ASReview does not read, UTF-16, a RIS cut short) are one line and change nothing."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.errors import InputError
from reviewdepth.services.errors import Conflict
from reviewdepth.services.files.records_import import import_records
from reviewdepth.services.review.judgments import list_judgments
from reviewdepth.store.models import ImportRecord, Judgment, Queue, QueueEntry, RecordFields, Topic

from ..conftest import shared_data

DEMO = Path(__file__).resolve().parents[1] / "data" / "asreview" / "demo_data"
CSV_FILES = ["generic_labels.csv", "generic_partial_labels.csv", "record_id.csv", "generic_bad_record_id.csv",
             "generic_tab.tsv", "generic_semicolon.csv", "missing_values.csv", "embase.csv"]


def _state(engine: Engine) -> tuple[int, ...]:
    with engine.connect() as conn:
        return tuple(conn.execute(select(func.count()).select_from(t)).scalar_one()
                     for t in (Topic, Queue, QueueEntry, Judgment, ImportRecord, RecordFields))


def _queue(engine: Engine, topic: str) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(select(QueueEntry.doc_id).join(Queue).join(Topic).where(Topic.name == topic)
                                 .order_by(QueueEntry.rank)).scalars())


def _labels(engine: Engine, topic: str) -> dict[str, int]:
    return {j.doc_id: int(j.label) for j in list_judgments(engine, topic)}


@pytest.mark.parametrize("name", CSV_FILES)
def test_asreview_datasets_become_the_population_with_asreviews_ids_and_labels(engine: Engine, name: str) -> None:
    want = json.loads((DEMO / f"{name}.expected.json").read_text())
    summary = import_records(engine, str(DEMO / name), topic="A", ids="position")
    ids = [str(i) for i in want["record_ids"]]
    assert (summary.rows, summary.population) == (want["records"], True)
    assert _queue(engine, "A") == ids
    assert _labels(engine, "A") == {doc: label for doc, label in zip(ids, want["labels"], strict=True)
                                    if label is not None}
    with engine.connect() as conn:
        assert conn.execute(select(Topic.population_size).where(Topic.name == "A")).scalar_one() == want["records"]
        assert {j.reviewer for j in list_judgments(engine, "A")} <= {"asreview"}


def test_a_synergy_file_becomes_the_population(engine: Engine) -> None:
    path = shared_data("synergy", "Donners_2021_ids.csv.gz")
    with gzip.open(path, "rt", newline="") as source:
        rows = list(csv.DictReader(source))
    summary = import_records(engine, str(path), topic="D")
    assert (summary.rows, summary.id_source, summary.label_column) == (len(rows), "position", "label_included")
    assert _queue(engine, "D") == [str(i) for i in range(len(rows))]
    assert _labels(engine, "D") == {str(i): int(r["label_included"]) for i, r in enumerate(rows)}
    # a named column must give every record an id: SYNERGY's OpenAlex column has empty cells (records its
    # authors could not match), so the file is refused at the first, naming line and column
    empty_line = next(i for i, r in enumerate(rows, start=2) if not r["openalex_id"].strip())
    before = _state(engine)
    with pytest.raises(InputError) as caught:
        import_records(engine, str(path), topic="D2", ids="openalex_id")
    assert (caught.value.line, caught.value.field) == (empty_line, "openalex_id")
    assert _state(engine) == before
    # the same file into a second topic
    import_records(engine, str(path), topic="D2")
    assert _queue(engine, "D2") == _queue(engine, "D")


def test_the_same_file_into_a_second_topic_but_not_twice_into_one(engine: Engine) -> None:
    path = str(DEMO / "generic_labels.csv")
    import_records(engine, path, topic="A")
    import_records(engine, path, topic="B")
    before = _state(engine)
    with pytest.raises(Conflict, match="already imported"):
        import_records(engine, path, topic="A", queue_name="again")
    assert _state(engine) == before


@pytest.mark.parametrize(("text", "line", "field", "words"), [
    ("title,label_included\nA,1\nB,maybe\n", 3, "label_included", "not one ASReview reads"),
    ("record_id,title\nd1,A\nd1,B\n", 3, "record_id", "also on line 2"),
])
def test_bad_records_files_are_one_line_and_change_nothing(engine: Engine, tmp_path: Path, text: str, line: int,
                                                           field: str, words: str) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    before = _state(engine)
    with pytest.raises(InputError) as caught:
        import_records(engine, str(bad), topic="A", ids="auto" if field != "record_id" else "record_id")
    assert (caught.value.line, caught.value.field) == (line, field) and words in str(caught.value)
    assert _state(engine) == before


def test_cli_prints_the_id_rule_and_refuses_utf16_in_one_line(engine: Engine, tmp_path: Path) -> None:
    db = ("--db", engine.url.render_as_string(hide_password=False))
    result = CliRunner().invoke(create_cli(), ["import", "records", str(DEMO / "generic_labels.csv"), "--topic",
                                               "A", *db])
    assert result.exit_code == 0, result.output
    assert ("(queue 'records' in file order; ids: position, 0-based, as ASReview's record_id (the file's id "
            "column 'id' repeats '12345' at lines 2 and 3)): stored 6 judgments from column 'label_included' (3 "
            "relevant), 0 records unlabelled") in result.stdout
    wide = tmp_path / "wide.csv"
    wide.write_bytes((DEMO / "generic.csv").read_text().encode("utf-16"))
    before = _state(engine)
    result = CliRunner().invoke(create_cli(), ["import", "records", str(wide), "--topic", "W", *db])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert f"{wide}:1: the file is UTF-16 text; save it as UTF-8" in result.stderr
    assert _state(engine) == before


MERGED = ("TY  - JOUR\nID  - 1\nTI  - First search, first record\nN1  - ASReview_relevant\nER  - \n\n"
          "TY  - JOUR\nID  - 2\nTI  - First search, second record\nER  - \n\n"
          "TY  - JOUR\nID  - 1\nTI  - Second search, first record\nN1  - ASReview_irrelevant\nER  - \n")


def test_a_merged_ris_whose_ids_repeat_imports_by_position(engine: Engine, tmp_path: Path) -> None:
    pytest.importorskip("rispy")
    from reviewdepth.services.files.ris_import import import_ris

    path = tmp_path / "merged.ris"
    path.write_text(MERGED)
    summary = import_ris(engine, str(path), topic="M")
    assert summary.ids == ("ids: position, 0-based, as ASReview's record_id (the file's ID tags repeat '1' at lines "
                           "1 and 12)")
    assert _queue(engine, "M") == ["0", "1", "2"] and _labels(engine, "M") == {"0": 1, "2": 0}
    import_ris(engine, str(path), topic="M2")  # the same file, another topic
    assert _queue(engine, "M2") == ["0", "1", "2"]
    before = _state(engine)
    with pytest.raises(Conflict, match="already imported"):
        import_ris(engine, str(path), topic="M", queue_name="twice")
    with pytest.raises(InputError) as caught:
        import_ris(engine, str(path), topic="T", ids="tag")
    assert (caught.value.line, caught.value.field) == (12, "ID") and "line 1" in str(caught.value)
    cut = tmp_path / "cut.ris"
    cut.write_text(MERGED.removesuffix("ER  - \n"))
    with pytest.raises(InputError) as caught:
        import_ris(engine, str(cut), topic="T")
    assert (caught.value.line, caught.value.field) == (12, "ER")
    assert _state(engine) == before


def test_import_records_into_a_topic_with_a_queue_stores_only_its_documents_fields(engine: Engine) -> None:
    path = DEMO / "record_id.csv"
    import_records(engine, str(path), topic="R")
    with engine.connect() as conn:
        fields = conn.execute(select(func.count()).select_from(RecordFields)).scalar_one()
    assert fields == 10  # the population import stored the titles for dedupe too
    text = io.StringIO(path.read_text())
    first = next(csv.DictReader(text))
    assert first["record_id"] == "12" and _queue(engine, "R")[0] == "12"
