"""``import rayyan`` (issue 28 item 4): a Rayyan export's members' decisions (RAYYAN-INCLUSION in the notes
column) become judgments by those members, a Maybe a maybe decision; an article's first exclusion reason is its
exclusions' reason, the file's reasons join the topic's list; bad notes name file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.errors import InputError
from reviewdepth.services.files.rayyan_import import import_rayyan
from reviewdepth.services.review.judgments import list_judgments
from reviewdepth.services.review.screening import screening_settings
from reviewdepth.store.models import Judgment, Topic, TopicReason

DATA = Path(__file__).resolve().parents[1] / "data" / "screening"
ARTICLES = DATA / "rayyan_articles.csv"
REASONS = "Rayyan exclusion reasons: wrong population, wrong outcome"
# the fixture's decisions, read off the file by eye: (key, member, label, decision, reason, note)
EXPECTED = [("r101", "Alice", "1", "include", None, None), ("r101", "Bob", "1", "include", None, None),
            ("r102", "Alice", "0", "exclude", "wrong population", REASONS),
            ("r102", "Bob", "maybe", "maybe", None, None),
            ("r102", "Chen Wei", "0", "exclude", "wrong population", REASONS),
            ("r104", "Bob", "0", "exclude", None, None), ("r104", "Alice", "1", "include", None, None),
            ("r105", "Chen Wei", "maybe", "maybe", None, None)]


def _log(engine: Engine, topic: str) -> list[tuple[object, ...]]:
    return [(j.doc_id, j.reviewer, j.label, j.decision, j.reason, j.note) for j in list_judgments(engine, topic)]


def test_each_members_decision_becomes_their_judgment(engine: Engine) -> None:
    summary = import_rayyan(engine, str(ARTICLES), topic="S")
    assert (summary.rows, summary.stored, summary.maybe, summary.unlabelled, summary.reviewers, summary.reasons) == (
        5, 8, 2, 1, 3, 2)
    assert _log(engine, "S") == EXPECTED
    assert {(j.relevant, j.grade, j.role, j.queue) for j in list_judgments(engine, "S") if j.label == "1"} == {
        (True, 1, "review", "rayyan")}
    assert {(j.relevant, j.grade) for j in list_judgments(engine, "S") if j.label == "maybe"} == {(None, None)}
    # Rayyan's reasons are the review's list: every reason the file names joins the topic's, in file order
    assert summary.reasons_added == ["wrong population", "wrong outcome"]
    assert screening_settings(engine, "S").reasons == ["wrong population", "wrong outcome"]
    with engine.connect() as conn:
        assert conn.execute(select(Topic.population_size).where(Topic.name == "S")).scalar_one() == 5


def test_known_reasons_only(engine: Engine, tmp_path: Path) -> None:
    """With add_reasons=False (--known-reasons) a reason the topic lacks refuses the file at its article, and the
    database is as it was; once the topic lists it, the file is stored and the list is unchanged."""
    from reviewdepth.services.files.ris_import import import_ris

    pytest.importorskip("rispy")
    records = tmp_path / "articles.ris"
    records.write_text("".join(f"TY  - JOUR\nID  - x{i}\nER  - \n\n" for i in range(1, 3)))
    import_ris(engine, str(records), topic="S")
    with pytest.raises(InputError) as caught:
        import_rayyan(engine, str(ARTICLES), topic="S", add_reasons=False)
    assert (caught.value.line, caught.value.field) == (5, "notes") and "'wrong population'" in caught.value.message
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Judgment)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(TopicReason)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(TopicReason)).scalar_one() == 0
    screening_settings(engine, "S", add=["wrong population"])
    summary = import_rayyan(engine, str(ARTICLES), topic="S", add_reasons=False)
    assert summary.reasons_added == [] and summary.reasons == 2
    assert screening_settings(engine, "S").reasons == ["wrong population"]
    assert _log(engine, "S") == EXPECTED


def test_round_trip_through_a_workbook(engine: Engine, tmp_path: Path) -> None:
    """Import, export (xlsx: the judgment log, maybes and reasons included), re-import into a topic of the same
    articles with the same reasons: same judgments."""
    pytest.importorskip("openpyxl")
    pytest.importorskip("rispy")
    from reviewdepth.services.files.judgment_files import record_judgment_file
    from reviewdepth.services.files.ris_import import import_ris
    from reviewdepth.services.review.exports import export_xlsx

    import_rayyan(engine, str(ARTICLES), topic="S")
    book = tmp_path / "S.xlsx"
    book.write_bytes(export_xlsx(engine, "S").data)
    records = tmp_path / "articles.ris"
    records.write_text("".join(f"TY  - JOUR\nID  - r10{i}\nER  - \n\n" for i in range(1, 6)))
    import_ris(engine, str(records), topic="T", queue_name="rayyan")
    screening_settings(engine, "T", add=["wrong population"])
    record_judgment_file(engine, "T", str(book), reviewer="nobody")
    assert _log(engine, "T") == _log(engine, "S") == EXPECTED


def test_cli_summary_counts_the_maybes(engine: Engine) -> None:
    db = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["import", "rayyan", str(ARTICLES), "--topic", "S", "--db", db])
    assert result.exit_code == 0, result.output
    assert ("stored 8 judgments by 3 reviewers (2 Maybe, 2 exclusions with a reason; added 2 exclusion reasons "
            "to the topic's list), 1 article undecided") in result.stdout
    again = CliRunner().invoke(create_cli(), ["import", "rayyan", str(ARTICLES), "--topic", "S", "--db", db])
    assert again.exit_code != 0 and "already imported" in again.stderr


BAD = [  # (text replaced, replacement, line, field): one database for every case
    ('""Bob""=>""Maybe""', '""Bob""=>""Undecided""', 5, "notes"),
    ('""Bob""=>""Maybe""', '""Bob"" Maybe', 5, "notes"),
    ('""Chen Wei""=>""Maybe""', '""Chen Wei""=>""Maybe"", ""Chen Wei""=>""Included""', 8, "notes"),
    ("r104,", "r101,", 7, "key"),
    ("r103,", ",", 6, "key"),
    ("wrong population,wrong outcome", "wrong population,wrong\x01outcome", 5, "notes"),
    ("key,title", "id,title", 1, "key"),
]


def test_bad_rows_are_refused_at_their_line(engine: Engine, tmp_path: Path) -> None:
    db = engine.url.render_as_string(hide_password=False)
    text = ARTICLES.read_text()
    for number, (old, new, line, field) in enumerate(BAD):
        path = tmp_path / f"articles{number}.csv"
        assert old in text
        path.write_text(text.replace(old, new, 1))
        with pytest.raises(InputError) as caught:
            import_rayyan(engine, str(path), topic="S")
        assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), line, field)
        result = CliRunner().invoke(create_cli(), ["import", "rayyan", str(path), "--topic", "S", "--db", db])
        assert result.exit_code == 2 and result.stderr == f"reviewdepth: error: {caught.value}\n"
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Topic)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(Judgment)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(TopicReason)).scalar_one() == 0
