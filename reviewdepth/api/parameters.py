"""Every request checked before an endpoint runs, by application dependencies:

* every path and query parameter against the store's vocabulary (`reviewdepth.store.validation`): never empty,
  names that can be stored (topic, queue, reviewer), integers within int64, no control characters in any other
  text. An endpoint can thus pass any parameter to a service and both databases see only values they can compare;
  a bad one is a 422 naming the parameter (`checked_parameters`). The OpenAPI document states the same rules on
  each parameter (`parameter_schema`);
* the media type of a body sent to an endpoint that takes a JSON body: JSON (``application/json`` or
  ``application/*+json``, as FastAPI parses them), else 415 (`checked_media_type`); FastAPI alone left such a body
  unparsed and answered 422."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError

from reviewdepth.api.problems import ApiProblem
from reviewdepth.store import validation

PARAMETER_LENGTH = 1000
_NAMES: dict[str, Callable[[object, str], str]] = {
    "topic": validation.topic_name, "queue": validation.queue_name, "reviewer": validation.reviewer_name}
_NAME_LENGTHS = {"topic": validation.TOPIC_LENGTH, "queue": validation.QUEUE_LENGTH,
                 "reviewer": validation.REVIEWER_LENGTH}
_IN_URLS = {"topic", "queue"}
# ``as_of``: a judgment id or a time (`services.review.judgments.parse_as_of`)
AS_OF = "as_of"
_INTEGER = re.compile(r"[+-]?[0-9]+")
_JSON_MEDIA_TYPE = re.compile(r"application/(?:[^/;\s]+\+)?json", re.IGNORECASE)


def parameter_error(where: str, name: str, value: str) -> dict[str, Any] | None:
    """The validation error of one parameter (as FastAPI reports them), or None when it is acceptable."""
    try:
        check = _NAMES.get(name)
        if value == "":
            raise validation.InvalidValue(name, "must not be empty (leave the parameter out instead)")
        if check is not None:
            check(value, name)
        elif _INTEGER.fullmatch(value):
            validation.digits(value, name, minimum=validation.INT64_MIN)
        else:
            validation.free_text(value, name, PARAMETER_LENGTH)
    except validation.InvalidValue as exc:
        return {"type": "value_error", "loc": (where, name), "msg": exc.message, "input": value}
    return None


def _strings(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its ``null`` branch: a query parameter left out is absent, it is never a JSON null (a
    client sending ``?x=null`` sends the text ``null``)."""
    branches = schema.get("anyOf")
    if not isinstance(branches, list) or {"type": "null"} not in branches:
        return schema
    rest = [b for b in branches if b != {"type": "null"}]
    out = {k: v for k, v in schema.items() if k != "anyOf"}
    return {**rest[0], **out} if len(rest) == 1 else {**out, "anyOf": rest}


def parameter_schema(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of a path or query parameter as FastAPI wrote it, with what `parameter_error` checks:
    names by the store's pattern and length, integers within int64, other free text non-empty, within
    `PARAMETER_LENGTH` and without control characters, ``as_of`` a judgment id or a date-time."""
    schema = _strings(schema)
    kind = schema.get("type")
    if name in _NAMES and kind == "string":
        return {**schema, "minLength": 1, "maxLength": _NAME_LENGTHS[name],
                "pattern": validation.identifier_pattern(in_urls=name in _IN_URLS)}
    if kind == "integer":
        low, high = schema.get("minimum", validation.INT64_MIN), schema.get("maximum", validation.INT64_MAX)
        return {**schema, "minimum": max(low, validation.INT64_MIN), "maximum": min(high, validation.INT64_MAX)}
    if name == AS_OF and kind == "string":
        id_pattern = f"^{validation.integer_pattern(0, validation.INT64_MAX, signs=False)}$"
        described = {k: v for k, v in schema.items() if k != "type"}
        return {**described, "anyOf": [{"type": "string", "pattern": id_pattern},
                                       {"type": "string", "format": "date-time"}],
                "description": "A judgment id, or a time (ISO 8601; UTC when it has no offset)."}
    if kind == "string" and not {"enum", "pattern", "format", "const"} & set(schema):
        return {**schema, "minLength": 1, "maxLength": min(schema.get("maxLength", PARAMETER_LENGTH),
                                                            PARAMETER_LENGTH),
                "pattern": validation.free_text_pattern()}
    if kind == "string":
        return {**schema, "minLength": max(schema.get("minLength", 0), 1)}
    return schema


async def checked_parameters(request: Request) -> None:
    """An application dependency: 422 when a path or query parameter fails `parameter_error`."""
    errors = [e for name, value in request.path_params.items() if isinstance(value, str)
              if (e := parameter_error("path", name, value)) is not None]
    errors += [e for name, value in request.query_params.multi_items()
               if (e := parameter_error("query", name, value)) is not None]
    if errors:
        raise RequestValidationError(errors)


def has_body(request: Request) -> bool:
    length = request.headers.get("content-length")
    return (length is not None and length.strip() not in ("", "0")) or "transfer-encoding" in request.headers


async def checked_media_type(request: Request) -> None:
    """An application dependency: 415 when a body sent to an endpoint whose body is JSON (a model, not form
    fields or files) is of another media type, or of none. A request without a body is left to the endpoint
    (its body may be optional)."""
    from fastapi import params

    body = getattr(request.scope.get("route"), "body_field", None)
    if body is None or isinstance(body.field_info, params.Form) or not has_body(request):
        return
    content_type = request.headers.get("content-type")
    media_type = (content_type or "").split(";", 1)[0].strip()
    if not _JSON_MEDIA_TYPE.fullmatch(media_type):
        raise ApiProblem(415, f"send the body as application/json, not {content_type or 'without a content type'!r}")
