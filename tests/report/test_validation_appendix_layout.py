"""The validation PDF's appendix keeps each cell inside its column (issue 39): with fixed relative widths a long
coding ran into the coder's column, and the PDF's text read "not relevant (non-responsive)qc1". Columns are now
sized by their content, and a cell wider than the page allows wraps inside its column.

The check is geometric and independent of the renderer: every text run of the appendix is read back from the PDF
with its position (pypdf), measured with the core font's metrics (fpdf2's `get_string_width`), and must end before
the next run on the same line begins."""

from __future__ import annotations

import io
from collections import defaultdict
from itertools import pairwise
from pathlib import Path

import pytest
from sqlalchemy import Engine

from reviewdepth.report.validation_render import render_pdf
from reviewdepth.services.answers.report import ReportOptions
from reviewdepth.services.answers.validation import build_validation
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample

POINTS_PER_MM = 72 / 25.4
APPENDIX_FONT_SIZE = 7.0
HEADINGS = {"sample", "rank", "document", "coding", "coder", "role", "recorded (UTC)"}


def appendix_pdf(engine: Engine, tmp_path: Path, *, doc_prefix: str, coder: str) -> bytes:
    """60 ranked documents, the first 30 reviewed, a sample of 10 of the rest coded non-responsive by ``coder``."""
    run = tmp_path / "v.run"
    run.write_text("".join(f"t Q0 {doc_prefix}{i} {i + 1} {100 - i} r\n" for i in range(60)))
    import_run(engine, str(run))
    record_judgments(engine, "t", [(f"{doc_prefix}{i}", "1" if i % 3 == 0 else "0") for i in range(30)],
                     reviewer="alice")
    sample = draw_sample(engine, "t", 10, frame="unreviewed", seed=3)
    record_judgments(engine, "t", [(d, "non-responsive") for d in sample.doc_ids], reviewer=coder, role="sample")
    return render_pdf(build_validation(engine, "t", ReportOptions(targets=["0.8"])))


def appendix_lines(pdf: bytes) -> list[list[tuple[float, str]]]:
    """The appendix's text runs (7-point text, the page footers left out) grouped by page and baseline, each
    line's runs as (x in points, text) in x order."""
    from pypdf import PdfReader

    lines: dict[tuple[int, float], list[tuple[float, str]]] = defaultdict(list)
    for number, page in enumerate(PdfReader(io.BytesIO(pdf)).pages):
        def visit(text: str, _cm: object, tm: list[float], _font: object, size: float, number: int = number) -> None:
            if text.strip() and size == APPENDIX_FONT_SIZE and "validation document - page" not in text:
                lines[(number, round(tm[5], 2))].append((tm[4], text.strip()))
        page.extract_text(visitor_text=visit)
    # top of the page first: PDF's y grows upwards
    return [sorted(runs) for _, runs in sorted(lines.items(), key=lambda item: (item[0][0], -item[0][1]))]


def overlaps(lines: list[list[tuple[float, str]]]) -> list[tuple[str, str]]:
    """Pairs of neighbouring runs on one line where the first ends after the second begins."""
    from fpdf import FPDF

    metrics = FPDF(unit="mm")
    metrics.set_font("Helvetica", size=APPENDIX_FONT_SIZE)
    bold = FPDF(unit="mm")
    bold.set_font("Helvetica", style="B", size=APPENDIX_FONT_SIZE)
    found = []
    for runs in lines:
        for (x, text), (next_x, next_text) in pairwise(runs):
            font = bold if text in HEADINGS else metrics  # the headings are bold, the cells regular
            end = x + font.get_string_width(text) * POINTS_PER_MM
            if end > next_x + 0.01:
                found.append((text, next_text))
    return found


def test_coding_and_coder_are_apart(engine: Engine, tmp_path: Path) -> None:
    pdf = appendix_pdf(engine, tmp_path, doc_prefix="d", coder="qc1")
    lines = appendix_lines(pdf)
    rows = [[text for _, text in runs] for runs in lines if "qc1" in [t for _, t in runs]]
    assert len(rows) == 10  # one line per sample document
    assert all("not relevant (non-responsive)" in row and row.index("qc1") ==
               row.index("not relevant (non-responsive)") + 1 for row in rows)
    assert overlaps(lines) == []


@pytest.mark.sqlite_only
def test_cells_too_wide_for_the_page_wrap_inside_their_column(engine: Engine, tmp_path: Path) -> None:
    coder = "a.reviewer.with.a.rather.long.address@litigation-support.example.com"
    pdf = appendix_pdf(engine, tmp_path, doc_prefix="ENRON-PRODUCTION-VOLUME-0007-CONTROL-NUMBER-", coder=coder)
    lines = appendix_lines(pdf)
    assert overlaps(lines) == []
    texts = [t for runs in lines for _, t in runs]
    assert coder not in texts  # too wide for any column the page allows: wrapped...
    first = [i for i, t in enumerate(texts) if coder.startswith(t) and len(t) > 5]
    assert len(first) == 10
    for i in first:  # ...and each piece is on a line of its own, in its column, the whole address there
        pieces, rest = [], coder
        for t in texts[i:]:
            if rest.startswith(t):
                pieces.append(t)
                rest = rest[len(t):]
            if not rest:
                break
        assert "".join(pieces) == coder and len(pieces) > 1


def test_the_check_finds_the_overlap_it_is_for() -> None:
    """The overlap the issue saw: a coding run into the next column is found."""
    assert overlaps([[(100.0, "not relevant (non-responsive)"), (150.0, "qc1")]]) == [
        ("not relevant (non-responsive)", "qc1")]
    assert overlaps([[(100.0, "not relevant (non-responsive)"), (200.0, "qc1")]]) == []
