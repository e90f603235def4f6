"""The report's charts (one matplotlib path for SVG and PNG) and the HTML page (Jinja2 templates)."""

from __future__ import annotations

import dataclasses
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from markupsafe import escape
from sqlalchemy import Engine

from reviewdepth.report.charts import chart_figure, render_chart
from reviewdepth.report.depth_render import render_html
from reviewdepth.report.model import Gain, GainMarker, PrecisionRecall
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments

SVG = "{http://www.w3.org/2000/svg}"
BAND_RGB = (0x9E, 0xCA, 0xE1)


def series(band: bool = True) -> tuple[Gain, PrecisionRecall]:
    depth = list(range(1, 401))
    found = [min(d // 4, 80) for d in depth]
    gain = Gain(depth=depth, found=found, relevant_estimate=90.0, relevant_lower=84.0 if band else None,
                relevant_upper=120.0 if band else None, markers=[GainMarker(0.8, 290, 390)])
    recall = [f / 90 for f in found]
    precision = [f / d for f, d in zip(found, depth, strict=True)]
    pr = PrecisionRecall(recall=recall, precision=precision,
                         interpolated_precision=[max(precision[i:]) for i in range(len(precision))])
    return gain, pr


def texts(svg: bytes) -> list[str]:
    return [(el.text or "").strip() for el in ET.fromstring(svg).iter(f"{SVG}text")]


def test_svg_is_byte_deterministic() -> None:
    gain, pr = series()
    first = render_chart("gain", gain, pr, 0.95, "recall against depth (T)", "svg", 0.95)
    render_chart("pr", gain, pr, 0.95, "other", "svg")  # ids must not depend on what was drawn before
    assert render_chart("gain", gain, pr, 0.95, "recall against depth (T)", "svg", 0.95) == first
    assert first.startswith(b"<svg") and b"<metadata>" not in first and b"Date" not in first


@pytest.mark.parametrize("kind", ["gain", "pr"])
def test_recall_ticks_legend_and_target(kind: str) -> None:
    gain, pr = series()
    svg = render_chart(kind, gain, pr, 0.95, "t", "svg", 0.95)
    words = texts(svg)
    ticks = [w for w in words if re.fullmatch(r"\d\.\d", w)]
    assert {"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"} <= set(ticks)  # the recall axis, not "0 0 0 1 1"
    assert "recall (estimated)" in words
    assert "stopping target 0.95" in words
    legend = [g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("id", "").startswith("legend")]
    assert legend, "every chart has a legend"
    if kind == "pr":
        assert {"precision", "interpolated precision"} <= set(words)
    else:
        assert "documents reviewed (rank)" in words and "95% interval (|R| 84 to 120)" in words


def band_pixels(png: bytes) -> int:
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)
    # the band is #9ecae1 at 60 % over white
    expected = np.array([round(0.6 * c + 0.4 * 255) for c in BAND_RGB])
    return int((np.abs(pixels - expected).max(axis=2) <= 3).sum())


def test_confidence_band_in_svg_and_png() -> None:
    gain, pr = series()
    figure = chart_figure("gain", gain, pr, 0.95, "t", 0.95)
    assert any("interval" in str(c.get_label()) for c in figure.axes[0].collections)
    assert "#9ecae1" in render_chart("gain", gain, pr, 0.95, "t", "svg", 0.95).decode()
    with_band = band_pixels(render_chart("gain", gain, pr, 0.95, "t", "png", 0.95))
    without = band_pixels(render_chart("gain", *series(band=False), 0.95, "t", "png", 0.95))
    assert with_band > 2000 and without < 50


def test_no_estimate_of_r_plots_relevant_found() -> None:
    gain = dataclasses.replace(series()[0], relevant_estimate=None)
    words = texts(render_chart("gain", gain, PrecisionRecall(), 0.95, "t", "svg"))
    assert "relevant found" in words and "stopping target 0.95" not in words
    assert "no estimate of |R| yet: nothing to plot" in texts(render_chart("pr", gain, PrecisionRecall(), 0.95, "t",
                                                                           "svg"))


@pytest.mark.sqlite_only
def test_html_headers_wrappers_print_and_escaping(engine: Engine, tmp_path: Path) -> None:
    topic = "<script>alert(1)&$x$"  # a topic name may not contain "/"
    run = tmp_path / "t.run"
    run.write_text("".join(f"{topic} Q0 d{i} {i + 1} {300 - i} sys\n" for i in range(300)))
    import_run(engine, str(run))
    record_judgments(engine, topic, [(f"d{i}", "1" if i % 3 == 0 else "0") for i in range(120)], reviewer="r")
    page = render_html(build_report(engine, topic, ReportOptions()))
    assert "<script" not in page and "&lt;script&gt;alert(1)&amp;$x$" in page
    headers = re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", page)
    assert headers and not [h for h in headers if "_" in h]
    assert "Conservative depth" in headers and "Target recall" in headers
    # every table scrolls inside its own box, which the stylesheet lets scroll sideways; paper gets its own rules
    assert page.count("<table") == page.count('<div class="table-wrap"') > 5
    assert re.search(r"\.table-wrap\s*\{[^}]*overflow-x:\s*auto", page)
    assert "@media print" in page and page.count("<svg") == 2


def test_numbers_on_the_page_are_counts_and_fractions() -> None:
    from reviewdepth.report.depth_render import number_text

    assert [number_text(v, "count") for v in (137.0, 1234567.0, 47.275, 12, 0.0)] == [
        "137", "1,234,567", "47.3", "12", "0"]
    assert [number_text(v, "fraction") for v in (0.84614, 1.0, 0, 0.0005)] == ["0.846", "1.000", "0.000", "0.001"]
    assert [number_text(v, "target") for v in (0.95, 0.8, 1.0)] == ["0.95", "0.8", "1"]
    # auto: an int is a count, a float in [-1, 1] a fraction, any other float a count
    assert [number_text(v) for v in (2500, 0.5, -0.25, 137.0, 88.25)] == ["2,500", "0.500", "-0.250", "137", "88.2"]
    assert [number_text(v) for v in (None, True, "x")] == ["—", "yes", "x"]


@pytest.mark.sqlite_only
def test_html_page_fits_a_window_and_a_phone(engine: Engine, tmp_path: Path) -> None:
    """A report with a rest sample: counts print whole (|R| bounds), estimates to 1 decimal, fractions to 3; the
    answer is one paragraph a sentence (no terminal line breaks); the depth table leaves the text that every row
    shares to a note under it; every cell carries its header for the phone layout."""
    from reviewdepth.report.depth_render import answer_lines
    from reviewdepth.services.review.samples import draw_sample

    run = tmp_path / "t.run"
    run.write_text("".join(f"t Q0 d{i} {i + 1} {300 - i} sys\n" for i in range(300)))
    import_run(engine, str(run))
    relevant = {f"d{i}" for i in range(0, 300, 7)} | {f"d{i}" for i in range(0, 60, 2)}
    record_judgments(engine, "t", [(f"d{i}", str(int(f"d{i}" in relevant))) for i in range(120)], reviewer="r")
    sample = draw_sample(engine, "t", 60, frame="unreviewed", seed=3)
    record_judgments(engine, "t", [(d, str(int(d in relevant))) for d in sample.doc_ids], reviewer="r",
                     role="sample")
    report = build_report(engine, "t", ReportOptions())
    page = render_html(report)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", page, re.S)
    assert cells and not [c for c in cells if re.fullmatch(r"-?[\d,]+\.\d{4,}", c)], "no 137.0000 on the page"
    elusion = next(e.estimate for e in report.estimates if e.estimate.method == "elusion")
    bounds = [float(v) for v in (elusion.point, elusion.lower, elusion.upper or 0)]
    assert all(isinstance(v, float) for v in bounds) and bounds[1].is_integer()  # |R| as floats: 58.0, 50.0, …
    row = re.search(r"<tr><td[^>]*>elusion</td>(.*?)</tr>", page.split("Estimates of")[1], re.S)
    assert row is not None
    assert re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))[:3] == [
        f"{v:,.0f}" if v.is_integer() else f"{v:,.1f}" for v in bounds]
    # the answer: each sentence whole in its own paragraph, longer than a terminal line and without <br>
    answer = page.split('<div class="answer">')[1].split("</div>")[0]
    assert "<br" not in answer
    lines = answer_lines(report)
    assert max(map(len, lines)) > 80 and all(f"<p>{line}</p>" in answer for line in lines if "'" not in line)
    # the depth table: each distinct sentence of the projection's and the estimate's basis said once, under the
    # table, and named in the cells
    depth = page.split('id="depth"')[1].split("</div>")[0]
    depth_cells = re.findall(r'<td data-label="([^"]+)"[^>]*>(.*?)</td>', depth)
    assert depth_cells[0] == ("Target recall", "0.8")  # a target as written
    bases = {(r.forward_basis, r.basis) for r in report.depth}
    assert len(report.depth) == 4 and len(bases) == 2  # the first row's projection basis differs from the others'
    named = [text for label, text in depth_cells if label in ("Projection basis", "Estimate basis")]
    assert named == ["note 1", "note 2", "note 3", "note 2", "note 3", "note 2", "note 3", "note 2"]
    for name, column, text in (("note 1", "Projection basis", str(report.depth[0].forward_basis)),
                               ("note 2", "Estimate basis", report.depth[0].basis),
                               ("note 3", "Projection basis", str(report.depth[1].forward_basis))):
        assert f'<p class="note"><b>{name}</b> ({column}): {escape(text)}</p>' in page and escape(text) not in depth
    # every cell is labelled with its column for the phone layout, and the stylesheet has that layout
    assert len(re.findall(r'<td data-label="[^"]+"', page)) == len(cells)
    phone = re.search(r"@media screen and \(max-width: 40rem\)\s*\{([^@]*)\}", page)
    assert phone is not None and re.search(r"table\.rows td::before\s*\{[^}]*attr\(data-label\)", phone.group(1))
