"""How a sample's documents were coded: plain data that the report's sample rows carry
(`reviewdepth.report.model.SampleRow`) and the wording reads (`reviewdepth.report.wording.sample_coding_text`).
Its own module, below both, so neither imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SampleCoding:
    """How some of a sample's documents were coded (`services.evidence.sample_coding.sample_coding_counts`): the
    ``documents`` whose latest decision (the one label policy ``latest`` reads) was recorded in ``role``,
    after the sample was drawn or before it (``after_draw``), through ``door``: ``import`` (a file: ``import_kind``
    names the importer, e.g. csv, xlsx, judgments), ``api``, ``library`` (``import reviewdepth``'s review functions)
    or ``cli`` (one judgment or a ``judge --file``)."""

    role: str
    after_draw: bool
    door: str
    import_kind: str | None
    documents: int
