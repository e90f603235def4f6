"""No key in the access log: the dashboard's ``GET /?key=KEY`` puts a key in a URL, and uvicorn's access log (on by
default) writes every request's path with its query. `KeyRedaction` rewrites each access-log record before it is
written: the value of every query parameter the request gate reads as ``key`` (its name decoded as the gate decodes
it, so ``k%65y=`` too) becomes ``[redacted]``, and so does whatever follows ``Bearer`` or the key cookie's name
anywhere in the record (a log format that adds headers)."""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote_plus

ACCESS_LOGGER = "uvicorn.access"
REDACTED = "[redacted]"
KEY_PARAMETER = "key"  # `reviewdepth.api.gate`'s sign-in parameter
_CREDENTIAL = re.compile(r"(?i)(\bbearer\s+|\breviewdepth_key=)[^\s;,\"']+")


def redacted_path(path: str) -> str:
    """``path`` (with its query) with the value of every ``key`` parameter replaced by ``[redacted]``."""
    base, mark, query = path.partition("?")
    if not mark:
        return path
    pieces = []
    for piece in query.split("&"):
        name, equals, _value = piece.partition("=")
        pieces.append(f"{name}={REDACTED}" if equals and unquote_plus(name) == KEY_PARAMETER else piece)
    return f"{base}?{'&'.join(pieces)}"


def redacted(value: object) -> object:
    if not isinstance(value, str):
        return value
    return _CREDENTIAL.sub(lambda found: found.group(1) + REDACTED, redacted_path(value))


class KeyRedaction(logging.Filter):
    """Takes the keys out of an access-log record (module docstring); never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redacted(arg) for arg in record.args)
        elif isinstance(record.msg, str):
            record.msg = str(redacted(record.msg))
        return True


_REDACTION = KeyRedaction()


def redact_access_log() -> None:
    """Install `KeyRedaction` on uvicorn's access logger, once per process (adding the same filter again does
    nothing)."""
    logging.getLogger(ACCESS_LOGGER).addFilter(_REDACTION)
