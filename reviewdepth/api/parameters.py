"""Every request checked before an endpoint runs, by application dependencies:

* every path and query parameter against the store's vocabulary (`reviewdepth.store.validation`): names that can be
  stored (topic, queue, reviewer), integers within int64, no control characters in any other text. An endpoint can
  thus pass any parameter to a service and both databases see only values they can compare; a bad one is a 422
  naming the parameter (`checked_parameters`);
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
_INTEGER = re.compile(r"[+-]?[0-9]+")
_JSON_MEDIA_TYPE = re.compile(r"application/(?:[^/;\s]+\+)?json", re.IGNORECASE)


def parameter_error(where: str, name: str, value: str) -> dict[str, Any] | None:
    """The validation error of one parameter (as FastAPI reports them), or None when it is acceptable."""
    try:
        check = _NAMES.get(name)
        if check is not None:
            check(value, name)
        elif _INTEGER.fullmatch(value):
            validation.digits(value, name, minimum=validation.INT64_MIN)
        else:
            validation.free_text(value, name, PARAMETER_LENGTH)
    except validation.InvalidValue as exc:
        return {"type": "value_error", "loc": (where, name), "msg": exc.message, "input": value}
    return None


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
