"""The depth report's sections are declared once, as the dataclasses of `reviewdepth.report.model`: the JSON,
every renderer and the OpenAPI document follow them. This is the trace of CONTRIBUTING's recipe "Add a report
section": a section added to `Report` without its place in the table, the CSV and the HTML page (`WHERE`) fails
here, and so does a key renamed on one side only."""

from __future__ import annotations

import copy
import csv
import dataclasses
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import pytest
from sqlalchemy import Engine

from reviewdepth.report.depth_render import render_csv, render_html
from reviewdepth.report.model import FLATTEN, OMIT_NONE, Report
from reviewdepth.report.render import render
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.samples import draw_sample

# Where each section of `Report` is printed: (its sections in the CSV, a title in the table, a heading or marker of
# the HTML page); "{value}" stands for the field's own value. None: not in that format, and why.
WHERE: dict[str, tuple[tuple[str, ...] | None, str | None, str | None]] = {
    # the CSV is one topic's and queue's file (named when it is asked for); they are not rows of it
    "topic": (None, "topic {value}", "topic {value}"),
    "queue": (None, "queue {value}", "Queue <b>{value}</b>"),
    "answer": (("answer",), "next:", '<div class="answer">'),
    "summary": (("summary",), "population N", "population N ="),
    "estimates": (("relevant_estimate",), "|R| estimates", "Estimates of |R|"),
    "depth_basis": (("settings",), "depth uses {value}", "Computed from the <b>{value}</b> estimate"),
    "depth": (("depth",), "depth to target recall", "Depth to target recall"),
    "current": (("current",), "at the current depth", "At the current depth"),
    "recall": (("recall",), "recall of the reviewed prefix", "Recall of the reviewed prefix"),
    "stopping": (("stopping",), "stopping evidence", "Stopping evidence"),
    "measures": (("measures_reviewed_prefix",), "P_10", "P_10"),
    "completed_review": (("completed_review",), "completed review", "Completed review"),
    "samples": (("samples",), "samples (choice", "<h2>Samples</h2>"),
    "settings": (("settings",), "settings and provenance", "Settings and provenance"),
    "provenance": (("provenance",), "judgment_chain_head", "judgment_chain_head"),
    # the charts: drawn on the HTML page and by `reviewdepth plot`; their points are in the JSON
    "gain": (None, None, "recall against depth"),
    "precision_recall": (None, None, "precision-recall, reviewed prefix"),
    "review_quality": (("review_quality", "agreement", "qc", "policy_sensitivity"), "review quality",
                       "Review quality and PRISMA 2020 counts"),
    "prisma": (("prisma",), "PRISMA 2020", "PRISMA 2020"),
    # only with --produce-to RANK (absent from the JSON otherwise)
    "two_phase": (("two_phase",), "two-phase (TAR 1.0) validation at rank cutoff",
                  "<h2>Two-phase (TAR 1.0) validation at rank cutoff"),
}
# sections the CSV writes key by key (a field added to one of them gets its rows with no renderer edit):
# section -> its CSV name and the key naming each row of a list section
GENERIC_CSV: dict[str, tuple[str, str | None]] = {
    "answer": ("answer", None), "summary": ("summary", None), "depth": ("depth", "target"),
    "current": ("current", None), "recall": ("recall", "basis"), "samples": ("samples", "id"),
    "settings": ("settings", None), "provenance": ("provenance", None), "prisma": ("prisma", None),
    "two_phase": ("two_phase", None)}


def _reports(engine: Engine, tmp_path: Path) -> list[Report]:
    """A topic reviewed part way by two reviewers, with a QC sample and a sample of the rest; and a topic judged
    to the end (the completed review's measures)."""
    (tmp_path / "q.run").write_text("".join(f"T Q0 d{i:03d} {i} {1000 - i} s\n" for i in range(1, 81)))
    import_run(engine, str(tmp_path / "q.run"))
    truth = {f"d{i:03d}": int(i % 4 == 1) for i in range(1, 41)}
    record_batch(engine, "T", [BatchItem(d, str(v)) for d, v in truth.items()], reviewer="ann")
    record_batch(engine, "T", [BatchItem(d, str(1 - v if i % 5 == 0 else v))
                               for i, (d, v) in enumerate(truth.items()) if i < 20], reviewer="bob")
    qc = draw_sample(engine, "T", 10, frame="judged", seed=5)
    record_batch(engine, "T", [BatchItem(d, str(truth[d]), role="qc") for d in qc.doc_ids], reviewer="cy")
    rest = draw_sample(engine, "T", 15, frame="unreviewed", seed=7)
    record_batch(engine, "T", [BatchItem(d, "0", role="sample") for d in rest.doc_ids], reviewer="ann")
    (tmp_path / "done.run").write_text("".join(f"D Q0 e{i} {i} {100 - i} s\n" for i in range(1, 11)))
    import_run(engine, str(tmp_path / "done.run"))
    record_batch(engine, "D", [BatchItem(f"e{i}", str(int(i < 4))) for i in range(1, 11)], reviewer="ann")
    # T with the two-phase section at rank 60 (the sample of the rest covers both strata)
    return [build_report(engine, "T", ReportOptions(produce_to=60)), build_report(engine, "D", ReportOptions())]


def test_every_section_reaches_every_format(engine: Engine, tmp_path: Path) -> None:
    reports = _reports(engine, tmp_path)
    fields = [f.name for f in dataclasses.fields(Report)]
    missing = [name for name in fields if name not in WHERE]
    assert not missing, f"a section of Report has no place in the renderers (CONTRIBUTING: Add a report section): " \
                        f"{missing}"
    for name in fields:
        report = next((r for r in reports if getattr(r, name)), None)
        assert report is not None, f"no report of this test fills {name}"
        csv_sections, table_text, html_text = WHERE[name]
        value = str(getattr(report, name))
        rows = list(csv.reader(io.StringIO(render_csv(report))))[1:]
        if csv_sections is not None:
            assert any(row[0] in csv_sections for row in rows), name
        if table_text is not None:
            assert table_text.format(value=value) in render(report, "table", width=400), name
        if html_text is not None:
            assert html_text.format(value=value) in render_html(report), name
        assert name in json.loads(report.to_json())


def test_a_field_added_to_a_generic_section_is_in_the_csv(engine: Engine, tmp_path: Path) -> None:
    """The sections written key by key: every key of their JSON is a row (or column) of their CSV section."""
    report = _reports(engine, tmp_path)[0]
    data = json.loads(report.to_json())
    rows = list(csv.reader(io.StringIO(render_csv(report))))[1:]
    for name, (section, row_key) in GENERIC_CSV.items():
        names = {part.split(".")[0] for row in rows if row[0] == section for part in (row[1], row[2])}
        items = data[name] if isinstance(data[name], list) else [data[name]]
        for item in items:
            assert set(item) - {row_key} <= names, (name, set(item) - {row_key} - names)


def _written(section: type[Any]) -> dict[str, bool]:
    """The keys the JSON writes for a dataclass, each with whether it is always there (independently of the
    generator in `reviewdepth.api.schemas`)."""
    keys: dict[str, bool] = {}
    hints = get_type_hints(section)
    for item in dataclasses.fields(section):
        always = not item.metadata.get(OMIT_NONE)
        prefix = item.metadata.get(FLATTEN)
        if prefix is not None:
            inner = next(a for a in (get_args(hints[item.name]) or (hints[item.name],)) if a is not type(None))
            keys.update({prefix + k: always and v for k, v in _written(inner).items()})
        else:
            keys[item.name] = always
    keys.update({name: True for name in getattr(section, "JSON_PROPERTIES", ())})
    return keys


def _dataclasses_in(kind: Any) -> list[type[Any]]:
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return [kind]
    if get_origin(kind) in (dict, Mapping):
        return _dataclasses_in(get_args(kind)[1])
    return [c for arg in get_args(kind) for c in _dataclasses_in(arg)]


def _refs(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        if "$ref" in schema:
            return [schema["$ref"].rsplit("/", 1)[-1]]
        return [r for value in schema.values() for r in _refs(value)]
    if isinstance(schema, list):
        return [r for value in schema for r in _refs(value)]
    return []


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    from reviewdepth.api import ApiSettings, create_app

    document = create_app(ApiSettings(database_url="sqlite:///:memory:")).openapi()
    schemas: dict[str, Any] = document["components"]["schemas"]
    return schemas


def mismatches(components: dict[str, Any]) -> list[str]:
    """Where the document's report schema strays from the keys the JSON writes (properties, required keys),
    recursively from `Report` through every section."""
    found: list[str] = []
    checked: set[type[Any]] = set()

    def walk(section: type[Any], name: str) -> None:
        if section in checked:
            return
        checked.add(section)
        schema = components[name]
        written = _written(section)
        if set(schema["properties"]) != set(written):
            found.append(f"{name}: {sorted(set(schema['properties']) ^ set(written))}")
            return
        required, always = set(schema.get("required", [])), {k for k, there in written.items() if there}
        # a core result type written as it is (`TargetAnswer`, `RecallFigure`, …) is described by pydantic, which
        # leaves its fields with a default out of ``required``: the report's own sections say exactly what is there
        if not (required == always if section.__module__.startswith("reviewdepth.report") else required <= always):
            found.append(f"{name}: required {sorted(required ^ always)}")
        hints = get_type_hints(section)
        for item in dataclasses.fields(section):
            if FLATTEN in item.metadata:
                continue
            nested = _dataclasses_in(hints[item.name])
            refs = _refs(schema["properties"][item.name])
            if not nested:  # a scalar, or a record stated for the document (a calibration as it was stored)
                continue
            if len(refs) != len(nested):
                found.append(f"{name}.{item.name}: {refs}")
                continue
            for kind, ref in zip(nested, refs, strict=True):
                walk(kind, ref)

    walk(Report, "Report")
    assert len(checked) > 20
    return found


def test_the_report_schema_is_the_dataclasses(components: dict[str, Any]) -> None:
    """The OpenAPI report schema's properties and required keys equal the keys the JSON writes, recursively
    through every section: a key renamed in a section is renamed in the document too."""
    assert mismatches(components) == []


def test_a_key_renamed_on_one_side_is_caught(components: dict[str, Any]) -> None:
    strayed = copy.deepcopy(components)
    summary = strayed["ReportSummary"]
    summary["properties"]["reviewed_count"] = summary["properties"].pop("reviewed")
    assert mismatches(strayed) == ["ReportSummary: ['reviewed', 'reviewed_count']"]


def test_no_section_is_an_untyped_mapping() -> None:
    """No `Any` in the report's sections, through every nested type."""
    seen: set[type[Any]] = set()

    def anys(kind: Any, where: str) -> list[str]:
        if kind is Any:
            return [where]
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            if kind in seen:
                return []
            seen.add(kind)
            return [w for name, hint in get_type_hints(kind).items() if name in {f.name for f in
                    dataclasses.fields(kind)} for w in anys(hint, f"{kind.__name__}.{name}")]
        return [w for arg in get_args(kind) for w in anys(arg, where)]

    assert anys(Report, "Report") == []
    assert len(seen) > 20


def test_the_written_keys_follow_the_markers() -> None:
    @dataclasses.dataclass(frozen=True)
    class Section:
        kept: int
        optional: str | None = dataclasses.field(default=None, metadata={OMIT_NONE: True})

    assert _written(Section) == {"kept": True, "optional": False}
    assert _dataclasses_in(list[Section] | None) == [Section]
    assert _dataclasses_in(Mapping[str, Section]) == [Section]


def test_a_plot_draws_the_reports_chart(engine: Engine, tmp_path: Path) -> None:
    """`reviewdepth plot` builds only the curves (`services.answers.report.build_curves`), not the whole report: the
    same
    bytes as the report's own chart."""
    from reviewdepth.report.charts import chart_title, render_chart
    from reviewdepth.report.depth_render import main_target
    from reviewdepth.services.answers.plots import build_plot

    report = _reports(engine, tmp_path)[0]
    for kind in ("gain", "pr"):
        chart = render_chart(kind, report.gain, report.precision_recall, main_target(report),
                             chart_title(kind, "T"), "svg", report.settings.confidence)
        assert build_plot(engine, "T", kind, "svg").content == chart
