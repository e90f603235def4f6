"""Settings of the HTTP API (``REVIEWDEPTH_`` prefix, like the rest)."""

from __future__ import annotations

from reviewdepth.settings import Settings


class ApiSettings(Settings):
    """``REVIEWDEPTH_MAX_BODY_BYTES`` bounds JSON bodies; ``REVIEWDEPTH_MAX_UPLOAD_BYTES`` bounds run files and
    multipart uploads (``text/plain``, ``multipart/form-data``, ``application/octet-stream``). Larger → 413.
    ``REVIEWDEPTH_KEY_CACHE_SECONDS`` (default 5): see `reviewdepth.api.auth.KeyCache`."""

    max_body_bytes: int = 16 * 1024 * 1024
    max_upload_bytes: int = 4 * 1024 * 1024 * 1024
    max_page_size: int = 10_000
    key_cache_seconds: float = 5.0
    """``REVIEWDEPTH_KEY_CACHE_SECONDS``: how long a verified key is trusted without a database lookup; a key
    revoked by another process is refused at most this long after (0 looks every key up on every request)."""


def api_settings(settings: Settings) -> ApiSettings:
    """The API settings for ``settings`` (a plain `Settings` gets the API defaults, or the environment's)."""
    if isinstance(settings, ApiSettings):
        return settings
    return ApiSettings(database_url=settings.database_url)
