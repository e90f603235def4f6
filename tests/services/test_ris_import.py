"""``import ris``: a RIS file's records become a topic's population (size and a file-order queue)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.errors import InputError
from reviewdepth.services.review.exports import export_labels
from reviewdepth.services.review.judgments import record_judgment
from reviewdepth.store.models import Queue, QueueEntry, Topic

pytest.importorskip("rispy", reason="import ris needs the ris extra (rispy)")
from reviewdepth.services.files.ris_import import import_ris

RIS = """TY  - JOUR
ID  - pm101
TI  - Screening with active learning
N1  - ASReview_relevant
ER  -

TY  - JOUR
AN  - 55
TI  - Knee outcomes
ER  -

TY  - JOUR
TI  - A record without any id
ER  -
""".replace("ER  -\n", "ER  - \n")  # RIS ends a record with "ER  - " (the space kept out of the source)


def test_ris_records_become_the_population(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "records.ris"
    path.write_text(RIS)
    summary = import_ris(engine, str(path), topic="R")
    assert summary.rows == 3
    with engine.connect() as conn:
        assert conn.execute(select(Topic.population_size).where(Topic.name == "R")).scalar_one() == 3
        docs = list(conn.execute(select(QueueEntry.doc_id).join(Queue).where(Queue.name == "records")
                                 .order_by(QueueEntry.rank)).scalars())
    # the third record has neither ID nor AN: every record is numbered by its 0-based position, as ASReview
    # numbers them, and the summary says why
    assert docs == ["0", "1", "2"]
    assert summary.id_source == "position" and "has no ID or AN tag" in summary.ids
    record_judgment(engine, "R", "1", "1", reviewer="ana")
    # record 0 (pm101) carries ASReview_relevant in its notes: a judgment since issue 28
    assert export_labels(engine, "R", "csv").text.splitlines()[1:] == ["R,0,1", "R,1,1", "R,2,"]
    # with a tag on every record the tags are the ids (ID, else AN)
    path.write_text(RIS.replace("TI  - A record without any id", "ID  - b3\nTI  - A record without any id"))
    tagged = import_ris(engine, str(path), topic="R2")
    assert tagged.id_source == "tag"
    with engine.connect() as conn:
        docs = list(conn.execute(select(QueueEntry.doc_id).join(Queue).join(Topic).where(Topic.name == "R2")
                                 .order_by(QueueEntry.rank)).scalars())
    assert docs == ["pm101", "55", "b3"]


def test_bad_ris_is_refused_and_nothing_stored(engine: Engine, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ris"
    bad.write_text("this is not RIS\n")
    twice = tmp_path / "twice.ris"
    twice.write_text(RIS.replace("AN  - 55", "ID  - pm101"))
    # a repeated ID refuses the file under --ids tag, at the repeating record's line, naming the earlier one
    # (under auto it falls back to positions: test_merged_ris_with_repeated_ids_imports_by_position)
    for path, field, line, ids in ((bad, None, None, "auto"), (twice, "ID", 7, "tag")):
        with pytest.raises(InputError) as caught:
            import_ris(engine, str(path), topic="R", ids=ids)
        assert caught.value.path == str(path) and caught.value.field == field and caught.value.line == line
        assert ids == "auto" or "line 1" in str(caught.value)
    db = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["import", "ris", str(bad), "--topic", "R", "--db", db])
    assert result.exit_code == 2 and str(bad) in result.stderr and len(result.stderr.strip().splitlines()) == 1
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Topic)).scalar_one() == 0


@pytest.mark.parametrize(("text", "line", "field", "byte"), [
    (RIS.replace("TI  - Knee outcomes", "TI  - Knee\x00outcomes"), 9, "TI", "0x00"),
    (RIS.replace("AN  - 55", "AN  - 5\x1b5"), 8, "AN", "0x1B"),
    # a value continued on the next line belongs to the tag above it
    (RIS.replace("TI  - A record without any id", "TI  - A record\n   without\x07 any id"), 14, "TI", "0x07"),
])
def test_a_control_character_in_a_ris_field_is_refused_at_its_line(engine: Engine, tmp_path: Path, text: str,
                                                                   line: int, field: str, byte: str) -> None:
    """Issue 26 item 7: a NUL in a title was accepted; refused as the run, qrels and CSV importers refuse it."""
    path = tmp_path / "records.ris"
    path.write_bytes(text.encode())
    with pytest.raises(InputError) as caught:
        import_ris(engine, str(path), topic="R")
    assert str(caught.value) == f"{path}:{line}: field {field}: contains a control character (byte {byte})"
    db = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["import", "ris", str(path), "--topic", "R", "--db", db])
    assert result.exit_code == 2 and result.stderr == f"reviewdepth: error: {caught.value}\n"
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Topic)).scalar_one() == 0
