"""docker-compose.yml cannot run here (no Docker engine), so its service settings are checked
against the Settings model: every L3MP_* variable is a real setting, and the values parse."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from l3mp.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
_VARIABLE = re.compile(r"\$\{(\w+)(:?[-?])?([^}]*)\}")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _resolved(value: object) -> str:
    """A compose value with ``${VAR:-default}`` replaced by its default (or a stand-in when required)."""

    def default(match: re.Match[str]) -> str:
        operator = match.group(2) or ""
        return match.group(3) if operator.endswith("-") else "set"  # ${X:?msg} / ${X}: the user sets it

    return _VARIABLE.sub(default, str(value))


def test_the_service_and_neo4j_are_defined_with_health_checks_and_volumes(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"neo4j", "l3mp"} <= services.keys()
    assert services["neo4j"]["image"].startswith("neo4j:5.26")
    for name in ("neo4j", "l3mp"):
        assert services[name]["healthcheck"]["test"], name
        assert services[name]["volumes"], name
    assert services["l3mp"]["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert (ROOT / services["l3mp"]["build"] / "Dockerfile").is_file()


def test_every_l3mp_variable_is_a_setting_and_parses(compose: dict[str, Any]) -> None:
    environment = compose["services"]["l3mp"]["environment"]
    names = {f"L3MP_{field.upper()}" for field in Settings.model_fields}
    unknown = sorted(k for k in environment if k.startswith("L3MP_") and k not in names)
    assert not unknown, f"not settings: {unknown}"
    values = {k.removeprefix("L3MP_").lower(): _resolved(v) for k, v in environment.items()}
    settings = Settings(**values)
    assert settings.store == "neo4j"
    assert settings.neo4j_uri == "bolt://neo4j:7687"  # the service reaches Neo4j by its compose name


def test_the_service_publishes_its_port_on_localhost_only(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        assert all(str(p).startswith("127.0.0.1:") for p in service.get("ports", ())), name


def test_the_dockerfile_installs_cpu_torch_and_serves() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "download.pytorch.org/whl/cpu" in dockerfile
    assert '"l3mp", "serve"' in dockerfile and "HEALTHCHECK" in dockerfile
