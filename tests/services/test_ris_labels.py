"""RIS with labels in and out in ASReview's convention (issue 28 item 4): ``N1 ASReview_relevant`` /
``ASReview_irrelevant`` become judgments on ``import ris``; ``export ris`` writes them back; import → export →
re-import gives the same judgments."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.errors import InputError
from reviewdepth.services.review.exports import export_ris
from reviewdepth.services.review.judgments import list_judgments, record_judgment
from reviewdepth.store.models import Judgment, Topic

pytest.importorskip("rispy", reason="RIS needs the ris extra (rispy)")
from reviewdepth.services.files.ris_import import import_ris

DATA = Path(__file__).resolve().parents[1] / "data" / "screening"
LABELLED = DATA / "labelled.ris"


def _file_labels(text: str) -> dict[str, str]:
    """The labels the fixture states, read by splitting its records by hand (not through rispy)."""
    out: dict[str, str] = {}
    for position, block in enumerate(text.split("ER  - ")[:-1], start=1):
        tags = dict(re.findall(r"^(ID|AN)  - (.*)$", block, re.M))
        doc = tags.get("ID") or tags.get("AN") or str(position)
        words = re.findall(r"ASReview_(relevant|irrelevant|not_seen)\b", block)
        if words and words[0] != "not_seen":
            out[doc] = "1" if words[0] == "relevant" else "0"
    return out


def _judged(engine: Engine, topic: str) -> dict[str, tuple[str, bool | None]]:
    return {j.doc_id: (j.label, j.relevant) for j in list_judgments(engine, topic)}


def test_asreview_notes_become_judgments_and_round_trip(engine: Engine, tmp_path: Path) -> None:
    summary = import_ris(engine, str(LABELLED), topic="A")
    expected = _file_labels(LABELLED.read_text())
    assert expected == {"pm1": "1", "pm2": "0", "555": "1"}
    assert summary.rows == 5 and summary.stored == len(expected) and summary.unlabelled == 5 - len(expected)
    judged = _judged(engine, "A")
    assert judged == {d: (lab, lab == "1") for d, lab in expected.items()}
    assert {j.reviewer for j in list_judgments(engine, "A")} == {"asreview"}

    exported = export_ris(engine, "A")
    assert (exported.rows, exported.relevant, exported.nonrelevant) == (5, 2, 1)
    path = tmp_path / "A.ris"
    path.write_text(exported.text)
    assert _file_labels(exported.text) == expected  # the notes as ASReview writes them
    assert exported.text.count("ASReview_not_seen") == 2
    import_ris(engine, str(path), topic="B")
    assert _judged(engine, "B") == judged

    # a judgment recorded here is exported and read back too
    record_judgment(engine, "B", "pm4", "1", reviewer="ana", queue="records")
    path.write_text(export_ris(engine, "B").text)
    import_ris(engine, str(path), topic="C")
    assert _judged(engine, "C") == {**judged, "pm4": ("1", True)}


def test_export_over_the_original_records_keeps_every_tag(engine: Engine, tmp_path: Path) -> None:
    import_ris(engine, str(LABELLED), topic="A")
    record_judgment(engine, "A", "pm1", "0", reviewer="ana", queue="records")  # the latest label changes
    exported = export_ris(engine, "A", records=str(LABELLED))
    text = exported.text
    for line in ("TI  - Knee outcomes after surgery", "N1  - read by two", "KW  - screening",
                 "ZZ  - a tag rispy does not know", "AN  - 555"):
        assert line in text.splitlines()
    assert "Screened in 2024" not in text  # an ASReview note is replaced by the current label, not kept beside it
    assert _file_labels(text) == {"pm1": "0", "pm2": "0", "555": "1"}
    path = tmp_path / "again.ris"
    path.write_text(text)
    import_ris(engine, str(path), topic="B")
    assert _judged(engine, "B") == {"pm1": ("0", False), "pm2": ("0", False), "555": ("1", True)}


def test_two_labels_in_one_record_are_refused_at_its_line(engine: Engine, tmp_path: Path) -> None:
    text = LABELLED.read_text().replace("N1  - read by two", "N1  - ASReview_relevant")
    path = tmp_path / "both.ris"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        import_ris(engine, str(path), topic="A")
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 7, "N1")
    db = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["import", "ris", str(path), "--topic", "A", "--db", db])
    assert result.exit_code == 2 and result.stderr == f"reviewdepth: error: {caught.value}\n"
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Topic)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(Judgment)).scalar_one() == 0


def test_cli_round_trip(engine: Engine, tmp_path: Path) -> None:
    db = engine.url.render_as_string(hide_password=False)
    cli = create_cli()
    result = CliRunner().invoke(cli, ["import", "ris", str(LABELLED), "--topic", "A", "--db", db])
    assert result.exit_code == 0, result.output
    assert "stored 3 judgments" in result.stdout and "2 records unlabelled" in result.stdout
    out = tmp_path / "out.ris"
    result = CliRunner().invoke(cli, ["export", "ris", "A", "-o", str(out), "--db", db])
    assert result.exit_code == 0, result.output
    assert "wrote 5 records" in result.stdout
    result = CliRunner().invoke(cli, ["import", "ris", str(out), "--topic", "B", "--db", db])
    assert result.exit_code == 0, result.output
    assert _judged(engine, "B") == _judged(engine, "A")


RAYYAN_RIS = """TY  - JOUR
ID  - r1
TI  - Included by one, excluded by the other
N1  - RAYYAN-INCLUSION: {"Alice"=>"Included", "Bob"=>"Excluded"} | RAYYAN-LABELS: ML
ER  -

TY  - JOUR
ID  - r2
TI  - A maybe and an exclusion
N1  - Imported from Embase | RAYYAN-INCLUSION: {"Bob"=>"Maybe", "Alice"=>"Excluded"}
ER  -

TY  - JOUR
ID  - r3
TI  - Nobody decided
ER  -
""".replace("ER  -\n", "ER  - \n")  # RIS ends a record with "ER  - " (the space kept out of the source)


def test_rayyans_ris_export_gives_each_members_decision(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "rayyan.ris"
    path.write_text(RAYYAN_RIS)
    summary = import_ris(engine, str(path), topic="R")
    assert (summary.stored, summary.decisions, summary.maybe, summary.unlabelled) == (4, 4, 1, 1)
    assert [(j.doc_id, j.reviewer, j.label, j.decision) for j in list_judgments(engine, "R")] == [
        ("r1", "Alice", "1", "include"), ("r1", "Bob", "0", "exclude"), ("r2", "Bob", "maybe", "maybe"),
        ("r2", "Alice", "0", "exclude")]
    bad = tmp_path / "bad.ris"
    bad.write_text(RAYYAN_RIS.replace('"Bob"=>"Maybe"', '"Bob"=>"Perhaps"'))
    with pytest.raises(InputError) as caught:
        import_ris(engine, str(bad), topic="S")
    assert (caught.value.line, caught.value.field) == (7, "N1") and "'Perhaps'" in caught.value.message
    db = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["import", "ris", str(bad), "--topic", "S", "--db", db])
    assert result.exit_code == 2 and result.stderr == f"reviewdepth: error: {caught.value}\n"
    assert [t.name for t in _topics(engine)] == ["R"]


def _topics(engine: Engine) -> list[Topic]:
    with engine.connect() as conn:
        return list(conn.execute(select(Topic)).all())
