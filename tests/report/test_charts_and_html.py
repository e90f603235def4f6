"""The report's charts (one matplotlib path for SVG and PNG) and the HTML page (Jinja2 templates)."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from reviewdepth.report.charts import chart_figure, render_chart
from reviewdepth.report.depth_render import render_html
from reviewdepth.services.imports import import_run
from reviewdepth.services.judgments import record_judgments
from reviewdepth.services.report import ReportOptions, build_report

SVG = "{http://www.w3.org/2000/svg}"
BAND_RGB = (0x9E, 0xCA, 0xE1)


def series(band: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    depth = list(range(1, 401))
    found = [min(d // 4, 80) for d in depth]
    gain: dict[str, Any] = {"depth": depth, "found": found, "relevant_estimate": 90.0,
                            "relevant_lower": 84.0 if band else None, "relevant_upper": 120.0 if band else None,
                            "markers": [{"target": 0.8, "depth": 290, "conservative": 390}]}
    recall = [f / 90 for f in found]
    precision = [f / d for f, d in zip(found, depth, strict=True)]
    pr = {"recall": recall, "precision": precision,
          "interpolated_precision": [max(precision[i:]) for i in range(len(precision))]}
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
    gain, _ = series()
    gain["relevant_estimate"] = None
    words = texts(render_chart("gain", gain, {}, 0.95, "t", "svg"))
    assert "relevant found" in words and "stopping target 0.95" not in words
    assert "no estimate of |R| yet: nothing to plot" in texts(render_chart("pr", gain, {}, 0.95, "t", "svg"))


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
