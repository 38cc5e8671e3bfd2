"""What the service leaves alive after start-up is out of the garbage collector's full passes while it
serves (those passes stalled every request in flight), and back in its reach when it stops."""

from __future__ import annotations

import gc
from pathlib import Path

from fastapi.testclient import TestClient

from l3mp.service import create_app
from l3mp.settings import Settings


def test_start_up_objects_are_frozen_while_serving(tmp_path: Path) -> None:
    gc.unfreeze()
    with TestClient(create_app(Settings(sqlite_path=tmp_path / "gc.db"))) as client:
        assert client.get("/health").status_code == 200
        assert gc.get_freeze_count() > 10_000  # the domains' parser, the routes, the settings
    assert gc.get_freeze_count() == 0
