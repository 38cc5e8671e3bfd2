"""The REST service: ``create_app(settings)`` (FastAPI), versioned routes under ``/v1``."""

from l3mp.service.app import API_PREFIX, create_app

__all__ = ["API_PREFIX", "create_app"]
