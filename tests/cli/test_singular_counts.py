"""One of a thing is said in the singular (issue 39): a file of one record, one judgment, one row prints
"1 judgment", "1 ranked document", "1 topic", never "1 judgments" or "topic(s)"; other counts (zero included)
take the plural."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.estimation.plural import counted

# "1 <word>s" where the word is one of the nouns the summaries count (a number other than 1 may take the plural)
WRONG_PLURAL = re.compile(r"(?<![\d,.])1 (?:\w+ )?(?:judgments|documents|records|rows|topics|reviewers|reasons|"
                          r"decisions|articles|studies|migrations|breaks)\b|\(s\)")


def invoke(*args: str) -> str:
    result = CliRunner().invoke(create_cli(), list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_counted_takes_the_singular_for_one_only() -> None:
    assert counted(1, "judgment") == "1 judgment"
    assert counted(0, "judgment") == "0 judgments"
    assert counted(2, "ranked document") == "2 ranked documents"
    assert counted(1_500, "record") == "1,500 records"
    assert counted(1, "study", "studies") == "1 study" and counted(3, "study", "studies") == "3 studies"


def test_one_line_files_are_summarised_in_the_singular(tmp_path: Path, empty_db_url: str) -> None:
    db = empty_db_url
    invoke("db", "upgrade", "--db", db)
    run = tmp_path / "one.run"
    run.write_text("T Q0 d1 1 0.9 mine\n")
    qrels = tmp_path / "one.qrels"
    qrels.write_text("T 0 d1 1\n")
    csv = tmp_path / "one.csv"
    csv.write_text("doc,label\nd1,1\n")
    judged = tmp_path / "one-judgment.csv"
    judged.write_text("doc,label\nd1,0\n")
    lines = {
        "run": invoke("import", "run", str(run), "--db", db),
        "qrels": invoke("import", "qrels", str(qrels), "--db", db),
        "csv": invoke("import", "csv", str(csv), "--topic", "T", "--db", db),
        "judge": invoke("judge", "T", "--file", str(judged), "--reviewer", "ana", "--db", db),
        "reasons": invoke("topic", "reasons", "T", "--add", "off topic", "--db", db),
        "agreement": invoke("agreement", "T", "--db", db),
        "prisma": invoke("prisma", "T", "--db", db),
    }
    assert lines["run"].startswith("imported 1 ranked document into queue 'mine' of 1 topic (")
    assert lines["qrels"].startswith("imported 1 judgment for 1 topic (")
    assert lines["csv"].startswith("imported 1 row for topic T (")
    assert "stored 1 judgment, skipped 0 unlabelled rows" in lines["csv"]
    assert lines["judge"].startswith("recorded 1 judgment of T (id ")
    assert lines["reasons"].splitlines()[0] == "T: 1 exclusion reason"
    assert "1 document judged by 2+ of 3 reviewers" in lines["agreement"]
    assert "3 reviewers: 1" in lines["prisma"], lines["prisma"]
    for name, text in lines.items():
        assert WRONG_PLURAL.search(text) is None, (name, text)


@pytest.mark.sqlite_only
def test_the_pattern_catches_what_it_should(empty_db_url: str) -> None:
    """The check above can fail: it finds the forms issue 39 reported."""
    for wrong in ("imported 1 judgments for 1 topic(s)", "1 ranked documents", "stored 1 records"):
        assert WRONG_PLURAL.search(wrong) is not None
    assert WRONG_PLURAL.search("imported 11 judgments, 2 topics, 0.1 records") is None
