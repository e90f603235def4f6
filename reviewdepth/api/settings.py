"""Settings of the HTTP API (``REVIEWDEPTH_`` prefix, like the rest)."""

from __future__ import annotations

from pydantic import Field

from reviewdepth.services.review.batches import IDEMPOTENCY_TTL_SECONDS
from reviewdepth.settings import Settings


class ApiSettings(Settings):
    """Body limits, each checked on ``Content-Length`` and on the first streamed byte past it (→ 413), and only
    once the request's key is verified (`reviewdepth.api.gate.RequestGate`):

    * ``REVIEWDEPTH_MAX_BODY_BYTES`` (16 MiB): JSON bodies, and bodies of any type not listed below;
    * ``REVIEWDEPTH_MAX_TEXT_BYTES``: files sent as the body: runs (``text/plain``, ``application/octet-stream``)
      and review-platform files to import (those two, ``text/csv``, ``application/zip``, …:
      `reviewdepth.api.gate.TEXT_TYPES`);
    * ``REVIEWDEPTH_MAX_MULTIPART_BYTES``: ``multipart/form-data`` uploads (``POST /evaluate``);
    * ``REVIEWDEPTH_MAX_UPLOAD_BYTES`` (4 GiB): the default of the two above;
    * ``REVIEWDEPTH_MAX_DECOMPRESSED_BYTES`` (256 MiB): the decompressed size of each gzip upload (a gzip
      bomb is refused at this size, having been decompressed in a stream to a temporary file, never whole in
      memory).
    * ``REVIEWDEPTH_MAX_IMPORT_BYTES`` (256 MiB): the size of a review-platform file an import endpoint takes
      (``/topics/{topic}/imports/…``; after gunzip): those importers read the whole file, as the CLI does.

    ``REVIEWDEPTH_KEY_CACHE_SECONDS`` (default 5): see `reviewdepth.api.auth.KeyCache`."""

    max_body_bytes: int = 16 * 1024 * 1024
    max_upload_bytes: int = 4 * 1024 * 1024 * 1024
    max_text_bytes: int | None = None
    max_multipart_bytes: int | None = None
    max_decompressed_bytes: int = 256 * 1024 * 1024
    max_import_bytes: int = 256 * 1024 * 1024
    idempotency_ttl_seconds: float = IDEMPOTENCY_TTL_SECONDS
    """``REVIEWDEPTH_IDEMPOTENCY_TTL_SECONDS`` (default 86400, one day): how long a judgment batch's
    ``idempotency_key`` is remembered; after that the same key is a new key (0 remembers keys for ever)."""
    max_page_size: int = 10_000
    key_cache_seconds: float = 5.0
    """``REVIEWDEPTH_KEY_CACHE_SECONDS``: how long a verified key is trusted without a database lookup; a key
    revoked by another process is refused at most this long after (0 looks every key up on every request)."""

    forwarded_allow_ips: str = ""
    """``REVIEWDEPTH_FORWARDED_ALLOW_IPS``: the addresses or networks (comma-separated; ``*`` for any) of the
    reverse proxies whose ``X-Forwarded-Proto`` and ``X-Forwarded-For`` `reviewdepth serve` honours (the scheme
    that makes the dashboard's key cookie ``Secure``, the client address in the access log). Empty (the default):
    none, so no client can claim HTTPS or another address."""

    header_timeout_seconds: float = Field(default=10.0, gt=0)
    """``REVIEWDEPTH_HEADER_TIMEOUT_SECONDS`` (default 10): the longest a request's headers may take to arrive,
    from the connection or the request's first byte (then 408 and the connection closed; `reviewdepth.api.timeouts`)."""
    body_timeout_seconds: float = Field(default=15.0, gt=0)
    """``REVIEWDEPTH_BODY_TIMEOUT_SECONDS`` (default 15): the longest pause between two parts of a request body
    (then 408 and the connection closed)."""

    @property
    def text_limit(self) -> int:
        return self.max_upload_bytes if self.max_text_bytes is None else self.max_text_bytes

    @property
    def multipart_limit(self) -> int:
        return self.max_upload_bytes if self.max_multipart_bytes is None else self.max_multipart_bytes


def api_settings(settings: Settings) -> ApiSettings:
    """The API settings for ``settings`` (a plain `Settings` gets the API defaults, or the environment's)."""
    if isinstance(settings, ApiSettings):
        return settings
    return ApiSettings(database_url=settings.database_url, busy_timeout_seconds=settings.busy_timeout_seconds)
