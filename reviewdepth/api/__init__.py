"""The HTTP API: ``create_app(settings)`` builds a FastAPI application over `reviewdepth.services`.

No module-level app or engine: the engine is opened in the application's lifespan and disposed at shutdown.
"""

from __future__ import annotations

from reviewdepth.api.app import app_from_environment, create_app
from reviewdepth.api.settings import ApiSettings

__all__ = ["ApiSettings", "app_from_environment", "create_app"]
