"""A topic's protocol fields: what TAR protocols and orders ask the producing party to disclose, entered once per
topic (``reviewdepth topic protocol``, ``PUT /topics/{t}/protocol``) and printed by the validation packet, each
as "not recorded" when absent.

Plain data and its one reading from a mapping (`TopicProtocol.from_fields`, which names the field it refuses);
the store keeps `TopicProtocol.as_fields` as canonical JSON and chains it with the topic
(`reviewdepth.store.evidence`). Nothing here evaluates the acceptance criterion: the validation service does, from
the report's figures."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import date
from typing import Any, Literal, get_args

Workflow = Literal["TAR 1.0", "TAR 2.0", "linear"]
WORKFLOWS: tuple[str, ...] = get_args(Workflow)
AcceptanceForm = Literal["recall", "elusion"]
TEXT_LENGTH = 2000
LIST_LENGTH = 1000
_ACCEPTANCE = re.compile(r"^\s*(recall\s*>=|elusion\s*<=)\s*([0-9.]+)\s*(%?)\s*(?:@\s*([0-9.]+)\s*(%?))?\s*$")


class ProtocolError(ValueError):
    """A protocol field refused: ``field`` names it, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass(frozen=True)
class Reviewer:
    name: str
    role: str


@dataclass(frozen=True)
class Acceptance:
    """The acceptance criterion agreed in advance: ``recall`` — the one-sided lower bound on recall at
    ``confidence`` is at least ``value``; ``elusion`` — the upper bound of the two-sided ``confidence`` interval
    of the elusion rate (relevant share of the discard pile) is at most ``value``."""

    form: AcceptanceForm
    value: float
    confidence: float

    @property
    def text(self) -> str:
        level = f"{self.confidence * 100:g} %"
        if self.form == "recall":
            return f"recall of at least {self.value:g} shown at {level} confidence (one-sided lower bound)"
        return f"the upper {level} bound of the elusion rate is at most {self.value * 100:g} % of the discard pile"

    @classmethod
    def parse(cls, text: str) -> Acceptance:
        """``recall>=0.8@0.95`` or ``elusion<=2%@95%`` (confidence 0.95 when left out)."""
        found = _ACCEPTANCE.match(text)
        if found is None:
            raise ProtocolError("acceptance", f"{text!r} is not 'recall>=VALUE[@CONFIDENCE]' or "
                                              "'elusion<=VALUE[@CONFIDENCE]' (e.g. recall>=0.8@0.95, elusion<=2%@95%)")
        form: AcceptanceForm = "recall" if found.group(1).startswith("recall") else "elusion"
        value = _fraction(found.group(2), found.group(3), "acceptance")
        confidence = 0.95 if found.group(4) is None else _fraction(found.group(4), found.group(5), "acceptance")
        return cls.checked(form, value, confidence)

    @classmethod
    def checked(cls, form: object, value: object, confidence: object) -> Acceptance:
        if form not in get_args(AcceptanceForm):
            raise ProtocolError("acceptance", f"form must be recall or elusion, not {form!r}")
        for name, x in (("value", value), ("confidence", confidence)):
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or not 0 < x < 1:
                raise ProtocolError("acceptance", f"{name} must be a number strictly between 0 and 1, not {x!r}")
        return cls(form, float(value), float(confidence))  # type: ignore[arg-type]


def _fraction(number: str, percent: str, field: str) -> float:
    try:
        value = float(number)
    except ValueError:
        raise ProtocolError(field, f"{number!r} is not a number") from None
    return value / 100 if percent else value


@dataclass(frozen=True)
class TopicProtocol:
    """The protocol fields; None: not recorded. ``duplicates_removed`` and ``threaded``: documents removed by
    de-duplication and suppressed by e-mail threading before review; ``produced`` and ``withheld``: documents
    produced and withheld (privilege) so far; ``blind``: whether the validation sample was coded blind (without
    the review's coding or the ranking in view)."""

    workflow: str | None = None
    platform: str | None = None
    model: str | None = None
    version: str | None = None
    custodians: list[str] | None = None
    date_from: str | None = None
    date_to: str | None = None
    excluded_types: list[str] | None = None
    processing_exceptions: str | None = None
    duplicates_removed: int | None = None
    threaded: int | None = None
    acceptance: Acceptance | None = None
    reviewers: list[Reviewer] | None = None
    blind: bool | None = None
    produced: int | None = None
    withheld: int | None = None

    def as_fields(self) -> dict[str, Any]:
        """The recorded fields only, as JSON-ready values (what the store keeps)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, Acceptance):
                value = {"form": value.form, "value": value.value, "confidence": value.confidence}
            elif f.name == "reviewers":
                value = [{"name": r.name, "role": r.role} for r in value]
            out[f.name] = value
        return out

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> TopicProtocol:
        """Read and check the fields of ``data`` (absent or None: not recorded); `ProtocolError` names a field."""
        known = {f.name for f in fields(cls)}
        for name in data:
            if name not in known:
                raise ProtocolError(str(name), f"not a protocol field (the fields: {', '.join(sorted(known))})")
        workflow = data.get("workflow")
        if workflow is not None and workflow not in WORKFLOWS:
            raise ProtocolError("workflow", f"must be one of {', '.join(WORKFLOWS)}, not {workflow!r}")
        acceptance = data.get("acceptance")
        if isinstance(acceptance, str):
            acceptance = Acceptance.parse(acceptance)
        elif isinstance(acceptance, Mapping):
            acceptance = Acceptance.checked(acceptance.get("form"), acceptance.get("value"),
                                            acceptance.get("confidence", 0.95))
        elif acceptance is not None:
            raise ProtocolError("acceptance", "must be a criterion such as recall>=0.8@0.95 or elusion<=0.02@0.95")
        reviewers = data.get("reviewers")
        if reviewers is not None:
            reviewers = [_reviewer(r) for r in _list(reviewers, "reviewers")]
        blind = data.get("blind")
        if blind is not None and not isinstance(blind, bool):
            raise ProtocolError("blind", f"must be true or false, not {blind!r}")
        date_from, date_to = _date(data.get("date_from"), "date_from"), _date(data.get("date_to"), "date_to")
        if date_from is not None and date_to is not None and date_from > date_to:
            raise ProtocolError("date_to", f"{date_to} is before date_from {date_from}")
        return cls(
            workflow=workflow, platform=_text(data.get("platform"), "platform"),
            model=_text(data.get("model"), "model"), version=_text(data.get("version"), "version"),
            custodians=_texts(data.get("custodians"), "custodians"), date_from=date_from, date_to=date_to,
            excluded_types=_texts(data.get("excluded_types"), "excluded_types"),
            processing_exceptions=_text(data.get("processing_exceptions"), "processing_exceptions"),
            duplicates_removed=_count(data.get("duplicates_removed"), "duplicates_removed"),
            threaded=_count(data.get("threaded"), "threaded"), acceptance=acceptance, reviewers=reviewers,
            blind=blind, produced=_count(data.get("produced"), "produced"),
            withheld=_count(data.get("withheld"), "withheld"))


def _text(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ProtocolError(field, f"must be non-empty text, not {value!r}")
    if len(value) > TEXT_LENGTH or any(c in value for c in "\n\r\t\x00"):
        raise ProtocolError(field, f"must be one line of at most {TEXT_LENGTH:,} characters")
    return value.strip()


def _list(value: object, field: str) -> list[Any]:
    if not isinstance(value, list) or not value or len(value) > LIST_LENGTH:
        raise ProtocolError(field, f"must be a non-empty list of at most {LIST_LENGTH:,} items")
    return value


def _texts(value: object, field: str) -> list[str] | None:
    if value is None:
        return None
    items = [_text(v, field) for v in _list(value, field)]
    return [v for v in items if v is not None]


def _count(value: object, field: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProtocolError(field, f"must be a whole number of documents, 0 or more, not {value!r}")
    return value


def _date(value: object, field: str) -> str | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise ProtocolError(field, f"must be a date as YYYY-MM-DD, not {value!r}") from None


def _reviewer(value: object) -> Reviewer:
    if isinstance(value, str):
        name, sep, role = value.partition(":")
        if not sep:
            raise ProtocolError("reviewers", f"{value!r} is not NAME:ROLE (e.g. ana:senior reviewer)")
        value = {"name": name, "role": role}
    if not isinstance(value, Mapping):
        raise ProtocolError("reviewers", f"each reviewer is NAME:ROLE or an object with name and role, not {value!r}")
    who, what = _text(value.get("name"), "reviewers"), _text(value.get("role"), "reviewers")
    if who is None or what is None:
        raise ProtocolError("reviewers", f"each reviewer needs a name and a role: {value!r}")
    return Reviewer(who, what)


@dataclass(frozen=True)
class RecordedProtocol:
    """A topic's protocol fields as stored: who recorded them and when (None and None: never recorded)."""

    topic: str
    fields: TopicProtocol
    recorded_at: str | None
    recorded_by: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "fields": self.fields.as_fields(), "recorded_at": self.recorded_at,
                "recorded_by": self.recorded_by}
