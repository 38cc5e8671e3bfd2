"""Where each variant's language model comes from: the simulated oracle, the configured
OpenAI-compatible model, or a cassette recorded by an earlier run.

Every lane (seed, variant) gets its own cassette file, ``DIR/seed<N>/<variant>.jsonl``, so a replay
serves each pipeline exactly the answers it heard; ``DIR/manifest.json`` keeps the run's model name
and parameters, which a replay takes over so that it re-runs the same episodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from l3mp.llm import CassettePlayer, CassetteRecorder, LanguageModel
from sim import Simulator
from sim.model import ErrorRates, SimulatedModel

MANIFEST = "manifest.json"
KINDS = ("simulated", "configured")


class ReplayError(SystemExit):
    """A cassette folder that cannot be replayed (missing, or not written by ``--record``)."""


def cassette_path(folder: Path, seed: int, variant: str) -> Path:
    return folder / f"seed{seed}" / f"{variant}.jsonl"


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSource:
    """Builds each lane's model; ``name`` labels every result file and plot."""

    kind: str  # "simulated", "configured" or "replay"
    name: str
    rates: ErrorRates
    record: Path | None = None
    replay: Path | None = None
    configured: LanguageModel | None = None  # one client shared by the lanes (it keeps no state)

    @property
    def simulated(self) -> bool:
        return self.name.startswith("simulated")

    def for_lane(self, seed: int, variant: str, sim: Simulator) -> tuple[LanguageModel, SimulatedModel | None]:
        """The model a lane talks to, and the oracle behind it (to brief and audit), if any."""
        if self.replay is not None:
            path = cassette_path(self.replay, seed, variant)
            if not path.is_file():
                raise ReplayError(f"--replay: no cassette {path}; was this seed and variant recorded?")
            return CassettePlayer(path), None
        oracle: SimulatedModel | None = None
        if self.kind == "simulated":
            oracle = SimulatedModel(sim.world, self.rates, seed=seed)
            inner: LanguageModel = oracle
        else:
            assert self.configured is not None
            inner = self.configured
        if self.record is not None:
            return CassetteRecorder(inner, cassette_path(self.record, seed, variant)), oracle
        return inner, oracle


def simulated_name(rates: ErrorRates) -> str:
    """The simulated model's own label (it reads its world only when it answers: an empty one will do)."""
    from kg_memory import DomainRegistry
    from planning import World

    return SimulatedModel(World(DomainRegistry().get("household"), (), ()), rates).label


def configured_source(rates: ErrorRates, record: Path | None) -> ModelSource:
    from l3mp.settings import Settings
    from l3mp.wiring import configured_model

    settings = Settings()
    name = f"{settings.llm_model} (OpenAI-compatible, {settings.llm_base_url})"
    return ModelSource(kind="configured", name=name, rates=rates, record=record, configured=configured_model(settings))


def write_manifest(folder: Path, name: str, parameters: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"model": name, "parameters": parameters}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ReplayError(f"--replay {folder}: no {MANIFEST}; record a run there first with --record") from exc
    except ValueError as exc:
        raise ReplayError(f"--replay {folder}: {MANIFEST} is not JSON ({exc})") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("parameters"), dict):
        raise ReplayError(f"--replay {folder}: {MANIFEST} holds no parameters")
    return manifest
