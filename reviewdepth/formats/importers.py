"""The file formats ``reviewdepth import`` reads, each declared once.

An `ImportFormat` gives the format's name (the ``reviewdepth import NAME`` command and the ``POST
/topics/{topic}/imports/NAME`` route), a one-line description, the reader in `reviewdepth.formats` that turns
its bytes into plain records, the media types the API takes it under, the command's options and what it stores.
`FORMATS` is in the order ``reviewdepth import --help`` lists the commands. The CLI registers one command per
entry and the API one route per entry with media types; `reviewdepth.services.files.importers` binds each entry to
its use case; the format table of docs/formats.md is generated from `FORMATS` (`markdown`).

A format whose reader gives `DecidedRecord` rows (a review platform's export: records in file order, each with
its members' decisions) declares ``stores="decisions"`` and needs nothing else: the shared use case
(`reviewdepth.services.files.importers.import_decisions`), command and route take its records as a topic's
population and its decisions as judgments, with the options of `DECISIONS_OPTIONS`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

OCTETS = "application/octet-stream"
CSV_TYPES = (OCTETS, "text/plain", "text/csv", "text/tab-separated-values")
RIS_TYPES = (OCTETS, "text/plain", "application/x-research-info-systems")
ZIP_TYPES = (OCTETS, "application/zip")
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
XLSX_TYPES = (OCTETS, XLSX)
RECORDS_TYPES = (*CSV_TYPES, XLSX)  # `import records` reads a CSV/TSV or a workbook

# run: queues of ranked documents; judgments: judgments of existing or new topics; population: a topic's
# records (and any labels in them); decisions: a topic's records and each member's decision (`DecidedRecord`)
Stores = Literal["run", "judgments", "population", "decisions"]
# body: the file is the request body (one of ``media_types``); form: a multipart form (Covidence's lists); none:
# no ``imports/NAME`` route (runs are sent with ``PUT /topics/{topic}/queues/{queue}``; qrels have no route)
ApiBody = Literal["body", "form", "none"]


class DecidedRecord(Protocol):
    """One record of a ``stores="decisions"`` format: its document id, the line it starts on and its members'
    decisions, each (member, 1 included / 0 excluded / None maybe) in the file's order."""

    @property
    def doc_id(self) -> str: ...

    @property
    def line(self) -> int: ...

    @property
    def decisions(self) -> tuple[tuple[str, int | None], ...]: ...


@dataclass(frozen=True)
class ImportOption:
    """One option of an import: ``name`` the keyword the use case takes and the API's query parameter, ``flag``
    the CLI's option, ``default`` (None for ``--topic``: required), ``help`` the text both doors show."""

    name: str
    flag: str
    help: str
    default: str | bool | None = None


@dataclass(frozen=True)
class ImportFormat:
    """One import format (module docstring). ``options``: the CLI options of its command, as written, in the
    order ``--help`` lists them; ``example``: a small file shown in the OpenAPI document (text formats)."""

    name: str
    description: str
    reader: str
    stores: Stores
    file_help: str
    media_types: tuple[str, ...] = ()
    api: ApiBody = "body"
    options: tuple[str, ...] = ()
    example: str | None = None

    def load_reader(self) -> Callable[..., object]:
        """The reader function ``reader`` names."""
        module, function = self.reader.rsplit(".", 1)
        loaded: Callable[..., object] = getattr(importlib.import_module(f"reviewdepth.formats.{module}"), function)
        return loaded

    @property
    def option_flags(self) -> tuple[str, ...]:
        """The CLI options of the command, its kind's when it declares none."""
        if self.stores == "decisions" and not self.options:
            return tuple(option.flag for option in DECISIONS_OPTIONS)
        return self.options


# the options of a `stores="decisions"` format's command and route (the use case's keywords)
DECISIONS_OPTIONS = (
    ImportOption("topic", "--topic", "The topic whose population the records are."),
    ImportOption("queue_name", "--queue", "Name of the queue of the records in file order (default: the format's "
                                          "name)."),
    ImportOption("again", "--again", "Import a file already imported.", False),
)

FORMATS: tuple[ImportFormat, ...] = (
    ImportFormat("run", "TREC or CLEF TAR run: one queue per topic, topics created as needed",
                 "runs.parse_run", "run", "TREC or CLEF TAR run (gzip ok, '-' for stdin).", api="none",
                 options=("--queue", "--order", "--topic", "--again")),
    ImportFormat("qrels", "TREC qrels as judgments (graded values kept)",
                 "trec.parse_qrels", "judgments", "TREC qrels (gzip ok, '-' for stdin).", api="none",
                 options=("--reviewer", "--level", "--again")),
    ImportFormat("csv", "a screening or review-platform CSV/TSV export (ASReview's among them): one judgment per "
                 "labelled row",
                 "csv_judgments.read_export", "judgments", "CSV/TSV export (UTF-8, UTF-8-BOM or Windows-1252).",
                 CSV_TYPES, options=("--map", "--topic", "--reviewer", "--level", "--again", "--role", "--queue",
                                     "--allow-unqueued", "--date-format"),
                 example="doc,label\nd1,1\nd2,0\n"),
    ImportFormat("asreview", "an ASReview LAB project file (.asreview): a queue in ASReview's order, its decisions",
                 "asreview.read_asreview", "decisions", "ASReview LAB project file (.asreview).", ZIP_TYPES,
                 options=("--topic", "--queue", "--reviewer", "--again")),
    ImportFormat("ris", "a RIS file's records as a topic's population, ASReview's and Rayyan's labels in its notes",
                 "ris.read_ris_records", "population", "RIS file of the records to screen.", RIS_TYPES,
                 options=("--topic", "--queue", "--reviewer", "--ids", "--again", "--source-type", "--source-name"),
                 example="TY  - JOUR\nID  - d1\nN1  - ASReview_relevant\nER  - \n"),
    ImportFormat("xlsx", "an Excel workbook of judgments (the columns of judge --file and export xlsx)",
                 "xlsx.read_sheet_xlsx", "judgments", "Excel workbook (.xlsx) of judgments.", XLSX_TYPES,
                 options=("--topic", "--reviewer", "--role", "--queue", "--allow-unqueued", "--add-reasons",
                          "--again")),
    ImportFormat("rayyan", "a Rayyan export (articles.csv): its articles as a topic's population, each member's "
                 "decision",
                 "rayyan.read_rayyan", "decisions", "Rayyan CSV export (articles.csv).", CSV_TYPES,
                 options=("--topic", "--queue", "--add-reasons", "--again"),
                 example='key,notes\nr1,"RAYYAN-INCLUSION: {""Ana""=>""Maybe""}"\n'),
    ImportFormat("covidence", "a Covidence review's list exports (CSV, one per list): each study's list as its "
                 "label",
                 "covidence.read_covidence", "population", "Covidence reference exports (CSV), one per list.",
                 api="form", options=("--topic", "--level", "--reviewer", "--queue", "--again")),
    ImportFormat("records", "a records file (CSV, TSV or .xlsx: Scopus, Embase, SYNERGY, ASReview datasets) as a "
                 "topic's population, or its documents' bibliographic fields",
                 "records.read_screening_records", "population",
                 "Records file: CSV/TSV (UTF-8, UTF-8-BOM or Windows-1252) or .xlsx.", RECORDS_TYPES,
                 options=("--topic", "--queue", "--ids", "--reviewer", "--again", "--source-type", "--source-name"),
                 example="record_id,title,label_included\n0,A first record,1\n1,A second record,\n"),
)
BY_NAME = {f.name: f for f in FORMATS}
# every media type an import takes: the API's request gate bounds them by the upload limit, not the JSON one
IMPORT_TYPES = frozenset(media for f in FORMATS for media in f.media_types)


def body_formats() -> Sequence[ImportFormat]:
    """The formats the API takes as a request body (``POST /topics/{topic}/imports/NAME``)."""
    return [f for f in FORMATS if f.api == "body"]


# --- documentation ------------------------------------------------------------------------------------------

DOC_BEGIN = "<!-- BEGIN GENERATED from reviewdepth/formats/importers.py (python -m reviewdepth.formats.importers) -->"
DOC_END = "<!-- END GENERATED -->"


def _api_text(f: ImportFormat) -> str:
    if f.api == "none":
        return "`PUT /topics/{topic}/queues/{queue}`" if f.stores == "run" else "none"
    route = f"`POST /topics/{{topic}}/imports/{f.name}`"
    if f.api == "form":
        return f"{route} (a form, one file per field)"
    return f"{route} ({', '.join(f'`{m}`' for m in f.media_types)})"


def markdown() -> str:
    """The generated format table of docs/formats.md, markers included."""
    rows = ["| format | what it stores | options | API (media types) | reader |", "|---|---|---|---|---|"]
    rows += [f"| `import {f.name}` | {f.description} | {' '.join(f'`{o}`' for o in f.option_flags)} | "
             f"{_api_text(f)} | `{f.reader}` |" for f in FORMATS]
    return "\n".join([DOC_BEGIN, "", *rows, "", DOC_END]) + "\n"


def docs_section(text: str) -> str:
    """The generated section of docs/formats.md's text (markers included)."""
    start = text.index(DOC_BEGIN)
    end = text.index(DOC_END, start) + len(DOC_END)
    return text[start:end] + "\n"


def rewrite(page: Path) -> None:
    """Regenerate the format table of ``page``."""
    text = page.read_text()
    page.write_text(text.replace(docs_section(text), markdown()))


if __name__ == "__main__":  # regenerate the format table of docs/formats.md
    rewrite(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/formats.md"))
