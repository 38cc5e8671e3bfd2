"""The web dashboard, served by the REST service at ``/`` (see ``static/README.md`` for the front end)."""

from l3mp.service.dashboard.routes import install

__all__ = ["install"]
