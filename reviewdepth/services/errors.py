"""Errors the services raise; each door maps them (CLI: message + exit 2; API: problem+json 4xx)."""

from __future__ import annotations


class ServiceError(Exception):
    """A request that cannot be carried out; the message says why and what to do."""


class NotFound(ServiceError):
    pass


class Conflict(ServiceError):
    pass


class Invalid(ServiceError):
    pass
