"""The node's Zenoh session, configured exactly as an rmw_zenoh node's is.

rmw_zenoh's default session is a peer that connects to the router on ``tcp/localhost:7447``
(``ros2 run rmw_zenoh_cpp rmw_zenohd``), listens on a free local port, does not scout by multicast and
timestamps what it sends: :data:`RMW_ZENOH_DEFAULTS`, over Zenoh's own defaults for the rest. The same
environment variables change it:
``ZENOH_SESSION_CONFIG_URI`` (another json5 file), ``ZENOH_CONFIG_OVERRIDE`` (``key=value`` pairs
separated by ``;``, values in json5: ``mode="client";connect/endpoints=["tcp/10.0.0.2:7447"]``),
``ROS_DOMAIN_ID`` and ``ZENOH_ROUTER_CHECK_ATTEMPTS`` (how many one-second checks for a router before
going on without one; 0 waits for one, a negative number skips the check).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import zenoh

from l3mp.ros.errors import RosSessionError

# where rmw_zenoh's DEFAULT_RMW_ZENOH_SESSION_CONFIG.json5 differs from Zenoh's defaults
RMW_ZENOH_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("mode", '"peer"'),
    ("connect/endpoints", '["tcp/localhost:7447"]'),
    ("listen/endpoints", '["tcp/localhost:0"]'),
    ("scouting/multicast/enabled", "false"),
    ("timestamping/enabled", '{"router": true, "peer": true, "client": false}'),
    ("queries_default_timeout", "10000"),
)


@dataclass(frozen=True, kw_only=True)
class SessionConfig:
    domain_id: int = 0
    config_file: Path | None = None  # None: rmw_zenoh's default session (RMW_ZENOH_DEFAULTS)
    overrides: tuple[tuple[str, str], ...] = ()
    router_check_attempts: int = 1

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SessionConfig:
        env = os.environ if env is None else env
        uri = env.get("ZENOH_SESSION_CONFIG_URI") or None
        return cls(
            domain_id=_integer(env, "ROS_DOMAIN_ID", 0),
            config_file=Path(uri.removeprefix("file://")) if uri else None,
            overrides=parse_overrides(env.get("ZENOH_CONFIG_OVERRIDE", "")),
            router_check_attempts=_integer(env, "ZENOH_ROUTER_CHECK_ATTEMPTS", 1),
        )

    def zenoh_config(self) -> zenoh.Config:
        if self.config_file is None:
            config = zenoh.Config()
            settings = RMW_ZENOH_DEFAULTS + self.overrides
        else:
            try:
                config = zenoh.Config.from_file(str(self.config_file))
            except zenoh.ZError as exc:
                raise RosSessionError(f"cannot read the Zenoh session configuration {self.config_file}: {exc}") from exc
            settings = self.overrides
        for key, value in settings:
            try:
                config.insert_json5(key, value)
            except zenoh.ZError as exc:
                raise RosSessionError(f"Zenoh setting {key}={value}: {exc}") from exc
        return config


def parse_overrides(text: str) -> tuple[tuple[str, str], ...]:
    """``mode="client";connect/endpoints=["tcp/10.0.0.2:7447"]`` → ((key, json5 value), ...)."""
    pairs = []
    for part in _split_outside_brackets(text):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise RosSessionError(f"ZENOH_CONFIG_OVERRIDE: {part!r} is not key=value")
        pairs.append((key.strip(), value.strip()))
    return tuple(pairs)


def _split_outside_brackets(text: str) -> list[str]:
    parts, depth, quoted, start = [], 0, False, 0
    for i, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "[{":
            depth += 1
        elif not quoted and char in "]}":
            depth -= 1
        elif not quoted and depth == 0 and char == ";":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


def _integer(env: Mapping[str, str], name: str, default: int) -> int:
    value = env.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise RosSessionError(f"{name} must be an integer, not {value!r}") from None
