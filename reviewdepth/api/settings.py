"""Settings of the HTTP API (``REVIEWDEPTH_`` prefix, like the rest)."""

from __future__ import annotations

from reviewdepth.settings import Settings


class ApiSettings(Settings):
    """``REVIEWDEPTH_MAX_BODY_BYTES`` bounds JSON bodies; ``REVIEWDEPTH_MAX_UPLOAD_BYTES`` bounds run files and
    multipart uploads (``text/plain``, ``multipart/form-data``, ``application/octet-stream``). Larger → 413."""

    max_body_bytes: int = 16 * 1024 * 1024
    max_upload_bytes: int = 4 * 1024 * 1024 * 1024
    max_page_size: int = 10_000


def api_settings(settings: Settings) -> ApiSettings:
    """The API settings for ``settings`` (a plain `Settings` gets the API defaults, or the environment's)."""
    if isinstance(settings, ApiSettings):
        return settings
    return ApiSettings(database_url=settings.database_url)
