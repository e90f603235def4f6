"""The methods text of a topic (`reviewdepth.report.methods_text`): the report as ``reviewdepth report --format
json`` prints it, the topic's protocol fields and its newest audit stream, read and handed to the pure builder.
``reviewdepth methods`` and ``GET /topics/{t}/methods`` call `methods_of`."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Engine

from reviewdepth.report.methods_text import STYLES, Methods, build_methods
from reviewdepth.report.render import render
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.errors import Invalid, NotFound


def methods_documents(engine: Engine, topic: str, options: ReportOptions) -> dict[str, Any]:
    """The JSON documents the text is written from: ``report``, ``protocol`` and ``stream`` (None: no stream)."""
    from reviewdepth.services.answers.protocol import get_protocol
    from reviewdepth.services.evidence import audit as evidence_audit
    from reviewdepth.store.snapshot import read_snapshot

    report = json.loads(render(build_report(engine, topic, options), "json"))
    try:
        with read_snapshot(engine) as conn:
            record = evidence_audit.stream_with_evidence(conn, topic)
        stream: dict[str, Any] | None = json.loads(json.dumps(record.as_dict(), default=str))
    except NotFound:
        stream = None
    return {"report": report, "protocol": get_protocol(engine, topic).as_dict(), "stream": stream}


def methods_of(engine: Engine, topic: str, options: ReportOptions, style: str = "prisma") -> Methods:
    if style not in STYLES:
        raise Invalid(f"style: must be one of {', '.join(STYLES)}, not {style!r}")
    if len(options.targets) != 1:
        raise Invalid("a methods text is for one target recall")
    return build_methods(methods_documents(engine, topic, options), style)
