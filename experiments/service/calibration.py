"""How fast this machine runs a write's own work right now: the measure of its speed that the service
benchmark reports beside each load variant.

This machine's speed moves from hour to hour (the same code has taken 0.76 ms of server CPU per
observation one morning and 1.8 ms that evening), so a figure taken at one hour says little next to
one taken at another. Before each variant, the group's side of a write runs alone, in this process and
one thread, with no HTTP: the generator's observations (ten clients' rooms to a group) parsed from
their JSON bodies and written through the operations' group commit, as a leader of the service
commits them. Its thread CPU per observation is the yardstick: the server's CPU divided by it is
comparable from hour to hour, as the server's alone is not.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from experiments.service.loadgen import changing_observation, owned_entities
from l3mp.examples import survey_json
from l3mp.operations import Operations, Services
from l3mp.operations.models import EntitiesIn, MemoryIn, ObservationsIn
from l3mp.settings import Settings
from l3mp.wiring import open_store

MEMORY = "calibration"
GROUP = 10  # observations to a group, about what the generator's groups hold
BLOCKS = 5  # the median block is reported: a moment's slowdown of the machine moves one block
ROUNDS = 20  # groups to a block
WARM_ROUNDS = 10  # groups before the clock (the view warm, the code paths taken once)


def group_side(clients: int = 20) -> dict[str, Any]:
    """The group's side alone: thread CPU ms per observation (the median of the blocks), and the blocks."""
    group = min(GROUP, clients)
    with tempfile.TemporaryDirectory(prefix="l3mp-calibration-") as tmp:
        settings = Settings(sqlite_path=Path(tmp) / "calibration.db", retriever="full")
        services = Services(settings=settings, store=open_store(settings))
        try:
            ops = Operations(services=services)
            ops.create_memory(MemoryIn(name=MEMORY, domain="example_home"))
            ops.add_entities(MEMORY, EntitiesIn.model_validate(survey_json()))
            ops.add_entities(MEMORY, EntitiesIn.model_validate(owned_entities(clients)))
            bodies = [_body(step, group) for step in range(WARM_ROUNDS + BLOCKS * ROUNDS)]
            for body in bodies[:WARM_ROUNDS]:
                _write(ops, body)
            blocks = []
            for start in range(WARM_ROUNDS, len(bodies), ROUNDS):
                began = time.thread_time()
                for body in bodies[start : start + ROUNDS]:
                    _write(ops, body)
                blocks.append(1000 * (time.thread_time() - began) / (ROUNDS * group))
        finally:
            services.close()
    return {
        "group_side_ms_per_observation": round(statistics.median(blocks), 3),
        "blocks_ms": [round(b, 3) for b in blocks],
        "about": f"the group's side alone, one thread, no HTTP: groups of {group} observations",
    }


def _body(step: int, clients: int) -> bytes:
    """One group's observations as one batch body: each client's room at ``step`` (each changes facts)."""
    return json.dumps({"observations": [changing_observation(c, step) for c in range(clients)]}).encode()


def _write(ops: Operations, body: bytes) -> None:
    """One group; every observation must be applied, or the blocks would time other work."""
    for answer in ops.observe_batch(MEMORY, ObservationsIn.model_validate_json(body)):
        if isinstance(answer, Exception) or answer.status != "applied":
            why = answer if isinstance(answer, Exception) else f"{answer.status}: {answer.issues}"
            raise RuntimeError(f"the calibration's writes failed: {why}")
