"""``import covidence`` (issue 28 item 4): a Covidence review's list exports (one CSV per list, no decision
column) become the topic's population and, by list, its labels; bad rows name file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.errors import InputError
from reviewdepth.services.files.covidence_import import import_covidence
from reviewdepth.services.review.judgments import list_judgments
from reviewdepth.store.models import Judgment, Topic

DATA = Path(__file__).resolve().parents[1] / "data" / "screening" / "covidence"
FILES = sorted(str(p) for p in DATA.glob("review_4242_*.csv"))  # Covidence's own names carry each file's list
# the fixtures' studies by list, read off the files by eye
STUDIES = {"irrelevant": ["#11", "#12"], "included": ["#13"], "excluded": ["#14"], "fulltext": ["#15", "#16"]}


def _labels(engine: Engine, topic: str) -> dict[str, str]:
    return {j.doc_id: j.label for j in list_judgments(engine, topic)}


@pytest.mark.parametrize(("level", "expected"), [
    ("final", {"#11": "0", "#12": "0", "#13": "1", "#14": "0"}),
    ("abstract", {"#11": "0", "#12": "0", "#13": "1", "#14": "1", "#15": "1", "#16": "1"}),
])
def test_each_list_gives_its_label(engine: Engine, level: str, expected: dict[str, str]) -> None:
    summary = import_covidence(engine, FILES, topic="C", level=level)
    assert summary.rows == 6 and summary.lists == {k: len(v) for k, v in STUDIES.items()}
    assert summary.stored == len(expected) and summary.unlabelled == 6 - len(expected)
    assert _labels(engine, "C") == expected
    assert {(j.reviewer, j.role, j.queue) for j in list_judgments(engine, "C")} == {("covidence", "review",
                                                                                     "covidence")}
    with engine.connect() as conn:
        assert conn.execute(select(Topic.population_size).where(Topic.name == "C")).scalar_one() == 6


def test_a_list_named_on_the_command_line_and_the_cli(engine: Engine, tmp_path: Path) -> None:
    screen = tmp_path / "to_screen.csv"
    screen.write_text('"Title","Covidence #"\n"Unscreened","#17"\n')
    db = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["import", "covidence", *FILES, f"screen={screen}", "--topic", "C",
                                               "--db", db])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("imported 7 Covidence studies (1 excluded, 2 fulltext, 1 included, "
                                    "2 irrelevant, 1 screen)")
    assert "stored 4 judgments (level final), 3 studies undecided" in result.stdout
    again = CliRunner().invoke(create_cli(), ["import", "covidence", FILES[0], "--topic", "D", "--db", db])
    assert again.exit_code != 0 and "already imported" in again.stderr


def test_round_trip_through_a_workbook(engine: Engine, tmp_path: Path) -> None:
    pytest.importorskip("openpyxl")
    from reviewdepth.services.files.judgment_files import record_judgment_file
    from reviewdepth.services.review.exports import export_xlsx

    import_covidence(engine, FILES, topic="C")
    book = tmp_path / "C.xlsx"
    book.write_bytes(export_xlsx(engine, "C").data)
    import_covidence(engine, FILES, topic="D", again=True, level="abstract")  # the same studies, other labels
    before = len(list_judgments(engine, "D"))
    record_judgment_file(engine, "D", str(book), reviewer="nobody")
    after = list_judgments(engine, "D")[before:]
    assert [(j.doc_id, j.label, j.reviewer, j.role, j.queue) for j in after] == [
        (j.doc_id, j.label, j.reviewer, j.role, j.queue) for j in list_judgments(engine, "C")]


def test_bad_files_are_refused_at_their_line(engine: Engine, tmp_path: Path) -> None:
    twice = tmp_path / "twice.csv"
    twice.write_text('"Title","Covidence #"\n"A","#20"\n"B","#13"\n')
    empty = tmp_path / "empty.csv"
    empty.write_text('"Title","Covidence #"\n"A","#21"\n"B",""\n')
    no_id = tmp_path / "no_id.csv"
    no_id.write_text('"Title","Ref"\n"A","1"\n')
    unnamed = tmp_path / "export.csv"
    unnamed.write_text('"Title","Covidence #"\n"A","#22"\n')
    db = engine.url.render_as_string(hide_password=False)
    for files, path, line, field in (
            ([*FILES, f"included={twice}"], twice, 3, "Covidence #"),
            ([f"excluded={empty}"], empty, 3, "Covidence #"),
            ([f"included={no_id}"], no_id, 1, "Covidence #"),
            ([str(unnamed)], unnamed, None, "list")):
        with pytest.raises(InputError) as caught:
            import_covidence(engine, files, topic="C")
        assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), line, field)
        result = CliRunner().invoke(create_cli(), ["import", "covidence", *files, "--topic", "C", "--db", db])
        assert result.exit_code == 2 and result.stderr == f"reviewdepth: error: {caught.value}\n"
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Topic)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(Judgment)).scalar_one() == 0
