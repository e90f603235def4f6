"""Every path and query parameter of every endpoint checked against the store's vocabulary
(`reviewdepth.store.validation`) before an endpoint runs: names that can be stored (topic, queue, reviewer),
integers within int64, no control characters in any other text. An endpoint can thus pass any parameter to a
service and both databases see only values they can compare; a bad one is a 422 naming the parameter."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError

from reviewdepth.store import validation

PARAMETER_LENGTH = 1000
_NAMES: dict[str, Callable[[object, str], str]] = {
    "topic": validation.topic_name, "queue": validation.queue_name, "reviewer": validation.reviewer_name}
_INTEGER = re.compile(r"[+-]?[0-9]+")


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
