"""One router per resource; ``app.py`` mounts them under ``/v1`` (health and readiness at the root)."""
