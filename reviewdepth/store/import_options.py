"""What an import recorded in its ``options`` (`reviewdepth.store.models.ImportRecord.options`), read back.

The options are ``key=value`` parts joined by ``;``, written by `reviewdepth.services.files.imports.record_import`. Two
parts lead them, in this order, each a JSON value (so a topic or source name holding ``;`` or ``=`` reads back
whole): ``topics=[...]``, the topics of its file an import took when it took only some; and ``source={"type": ...,
"name": ...}``, where the records a population import stored were identified (PRISMA 2020's databases, registers
and other methods), when the import declared it (``--source-type``/``--source-name``). The parts after them
(``queue=…;ids=…``) are for people to read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

TOPICS_OPTION = "topics="  # leads an import's options when it took only some topics of its file: a JSON list
SOURCE_OPTION = "source="  # follows it when the import declared where its records were identified: a JSON object


@dataclass(frozen=True)
class RecordSource:
    """Where an import's records were identified: a PRISMA 2020 source type (database, register, other) and the
    source's name as the team gave it (``MEDLINE``, ``ClinicalTrials.gov``, ``citation searching``)."""

    type: str
    name: str


def _leading(options: str, key: str, start: int) -> tuple[object, int] | None:
    """The JSON value of part ``key`` at ``start`` and where the next part starts, or None when it is not there."""
    if not options.startswith(key, start):
        return None
    value, end = json.JSONDecoder().raw_decode(options, start + len(key))
    return value, end + 1 if options.startswith(";", end) else end


def imported_topics(options: str) -> frozenset[str] | None:
    """The topics an import took, or None when it took every topic of its file."""
    found = _leading(options, TOPICS_OPTION, 0)
    return None if found is None else frozenset(found[0])  # type: ignore[call-overload]


def imported_source(options: str) -> RecordSource | None:
    """The source an import declared for its records, or None when it declared none."""
    topics = _leading(options, TOPICS_OPTION, 0)
    found = _leading(options, SOURCE_OPTION, 0 if topics is None else topics[1])
    if found is None:
        return None
    value = found[0]
    assert isinstance(value, dict)
    return RecordSource(str(value["type"]), str(value["name"]))


def leading_options(taken: list[str] | None, source: RecordSource | None) -> str:
    """The leading parts (module docstring) for an import that took ``taken`` topics and declared ``source``."""
    out = ""
    if taken is not None:
        out += f"{TOPICS_OPTION}{json.dumps(sorted(taken), ensure_ascii=False)};"
    if source is not None:
        out += f"{SOURCE_OPTION}{json.dumps({'type': source.type, 'name': source.name}, ensure_ascii=False)};"
    return out
