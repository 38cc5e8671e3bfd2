"""Helpers for the ROS 2 door's tests: running operations over SQLite in a temporary folder, a surveyed
example home, a publisher that records, and CDR round trips.

Not a conftest: the root conftest is imported by name (``from conftest import ...``) elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import unique_name

from l3mp.examples import survey_json
from l3mp.operations import Operations, Services
from l3mp.operations.models import EntitiesIn, MemoryIn
from l3mp.ros.types import Interfaces
from l3mp.settings import Settings
from l3mp.wiring import open_store

INTERFACES = Interfaces.load()


@contextmanager
def running_operations(tmp_path: Path) -> Iterator[Operations]:
    """The operations of an l3mp whose store is SQLite under ``tmp_path`` (closed afterwards)."""
    settings = Settings(sqlite_path=tmp_path / "ros.db", retriever="full")
    services = Services(settings=settings, store=open_store(settings))
    try:
        yield Operations(services=services)
    finally:
        services.close()


def surveyed_home(ops: Operations) -> str:
    """A new ``example_home`` memory holding the surveyed home (version 1); its name."""
    name: str = unique_name("ros")
    ops.create_memory(MemoryIn(name=name, domain="example_home"))
    update = ops.add_entities(name, EntitiesIn(**survey_json()))
    assert update.status == "applied", update
    return name


def round_trip(message: Any, type_name: str) -> Any:
    """``message`` as the other side of the wire reads it (CDR encoded, then decoded)."""
    return INTERFACES.decode(INTERFACES.encode(message, type_name), type_name)


def call(handle: Any, service_type: str, **request: Any) -> Any:
    """Call a handler as the node does: the request and the response both cross the wire."""
    sent = round_trip(INTERFACES.new(f"{service_type}_Request", **request), f"{service_type}_Request")
    return round_trip(handle(sent), f"{service_type}_Response")


@dataclass
class RecordingPublisher:
    """A :class:`l3mp.ros.spec.Publisher` that keeps what it is given, in order."""

    sent: list[tuple[str, Any]] = field(default_factory=list)

    def publish(self, topic: str, message: Any) -> None:
        self.sent.append((topic, message))

    def on(self, topic: str) -> list[Any]:
        return [m for t, m in self.sent if t == topic]
