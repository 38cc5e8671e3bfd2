"""ROS 2 message and service types read from their ``.msg`` / ``.srv`` texts: CDR encoding and RIHS01 hashes.

rosbags parses the definitions, builds the message classes and (de)serialises CDR. Two things it does
not do as ROS 2 does, so they are done here:

* Services. A ``.srv`` is split at its ``---`` into ``Name_Request`` and ``Name_Response``; the service's
  type hash is rosidl's, the hash of a type ``pkg/srv/Name`` with the fields ``request_message``,
  ``response_message`` and ``event_message`` (``Name_Event``: the event info and at most one request and
  one response), so those two are registered too, for hashing only.
* Names and ``char``. rosbags spells a service's types ``pkg/srv/msg/Name_Request``; rosidl (and the
  hash) spell them ``pkg/srv/Name_Request``. A ``.msg`` ``char`` is IDL ``uint8`` in rosidl's type
  description, while rosbags hashes it as a char: the definitions are rewritten before registration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.interfaces import Nodetype
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from l3mp.ros.errors import RosTypeError

BUNDLED = "l3mp.ros"


def interfaces_root() -> Path:
    """The bundled definitions (``l3mp/ros/interfaces``): plansys2_msgs, std_msgs, l3mp_msgs, ..."""
    return Path(str(resources.files(BUNDLED) / "interfaces"))


@dataclass(frozen=True)
class Interfaces:
    """Every type of the definitions under one root, ready to build, encode, decode and hash."""

    store: Typestore
    services: frozenset[str]

    @classmethod
    def load(cls, *more: Path) -> Interfaces:
        """The bundled definitions and those under ``more`` roots (``<root>/<package>/msg|srv/*``)."""
        return _load((interfaces_root(), *more))

    def new(self, type_name: str, **fields: Any) -> Any:
        """A message of ``type_name`` (e.g. ``plansys2_msgs/msg/Param``); fields not given take their
        zero value (0, "", false, an empty sequence, a zero nested message)."""
        cls = self._class(type_name)
        values = {
            name: fields.pop(name) if name in fields else self._zero(kind) for name, kind in self._fields(type_name)
        }
        if fields:
            raise RosTypeError(type_name, f"has no field {', '.join(sorted(fields))}")
        return cls(**values)

    def encode(self, message: Any, type_name: str) -> bytes:
        """CDR, little-endian, with its 4-byte encapsulation header (as rmw_zenoh sends it)."""
        try:
            return bytes(self.store.serialize_cdr(message, type_name))
        except Exception as exc:  # rosbags raises plain errors for a message that does not fit its type
            raise RosTypeError(type_name, f"cannot encode {message!r}: {exc}") from exc

    def decode(self, data: bytes, type_name: str) -> Any:
        try:
            return self.store.deserialize_cdr(data, type_name)
        except Exception as exc:  # truncated or foreign bytes
            raise RosTypeError(type_name, f"cannot decode {len(data)} bytes: {exc}") from exc

    def type_hash(self, type_name: str) -> str:
        """``RIHS01_<sha256>`` of a message (``pkg/msg/Name``) or service (``pkg/srv/Name``) type."""
        if type_name not in self.store.fielddefs:
            raise RosTypeError(type_name, "is not among the loaded definitions")
        return str(self.store.hash_rihs01(type_name))

    def _class(self, type_name: str) -> Any:
        try:
            return self.store.types[type_name]
        except KeyError:
            raise RosTypeError(type_name, "is not among the loaded definitions") from None

    def _fields(self, type_name: str) -> list[tuple[str, Any]]:
        return list(self.store.fielddefs[type_name][1])

    def _zero(self, kind: Any) -> Any:
        node, detail = kind
        if node == Nodetype.BASE:
            return _zero_base(detail[0])
        if node == Nodetype.NAME:
            return self.new(detail)
        element, length = detail
        if element[0] == Nodetype.BASE and element[1][0] not in _TEXT:
            # rosbags takes numeric arrays and sequences as numpy arrays
            return np.zeros(length if node == Nodetype.ARRAY else 0, dtype=_NUMPY.get(element[1][0], element[1][0]))
        return [self._zero(element) for _ in range(length)] if node == Nodetype.ARRAY else []


_TEXT = ("string", "wstring")
_NUMPY = {"byte": "uint8", "char": "uint8", "octet": "uint8"}


def _zero_base(base: str) -> Any:
    if base in _TEXT:
        return ""
    if base == "bool":
        return False
    return 0.0 if base.startswith("float") else 0


def _split(type_name: str) -> tuple[str, str, str]:
    parts = type_name.split("/")
    if len(parts) != 3 or parts[1] not in ("msg", "srv") or not all(parts):
        raise RosTypeError(type_name, "is not a type name of the form pkg/msg/Name or pkg/srv/Name")
    return parts[0], parts[1], parts[2]


@cache
def _load(roots: tuple[Path, ...]) -> Interfaces:
    types: dict[str, Any] = {}
    for path in sorted(p for root in roots for p in root.glob("*/msg/*.msg")):
        types.update(_parsed(path.read_text(encoding="utf-8"), f"{path.parent.parent.name}/msg/{path.stem}"))
    services = []
    for path in sorted(p for root in roots for p in root.glob("*/srv/*.srv")):
        name = f"{path.parent.parent.name}/srv/{path.stem}"
        request, response = _halves(path)
        types.update(_parsed(request, f"{name}_Request"))
        types.update(_parsed(response, f"{name}_Response"))
        types.update(_service_description(name))
        services.append(name)
    store = get_typestore(Stores.EMPTY)
    store.register(types)
    return Interfaces(store=store, services=frozenset(services))


def _halves(path: Path) -> tuple[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    cut = [i for i, line in enumerate(lines) if line.strip() == "---"]
    if len(cut) != 1:
        raise RosTypeError(str(path), "a service definition needs exactly one '---' line")
    return "\n".join(lines[: cut[0]]) + "\n", "\n".join(lines[cut[0] + 1 :]) + "\n"


def _service_description(name: str) -> dict[str, Any]:
    """The two types rosidl hashes a service by (never sent: hashing only)."""
    event = f"service_msgs/msg/ServiceEventInfo info\n{name}_Request[<=1] request\n{name}_Response[<=1] response\n"
    service = f"{name}_Request request_message\n{name}_Response response_message\n{name}_Event event_message\n"
    return {**_parsed(event, f"{name}_Event"), **_parsed(service, name)}


def _parsed(text: str, name: str) -> dict[str, Any]:
    return dict(_as_rosidl(get_types_from_msg(text, name)))


def _as_rosidl(value: Any) -> Any:
    """rosbags' parse with rosidl's spelling of service types and ``char`` as ``uint8``."""
    if value == ("char", 0):
        return ("uint8", 0)
    if isinstance(value, str):
        return value.replace("/srv/msg/", "/srv/")
    if isinstance(value, Mapping):
        return {_as_rosidl(k): _as_rosidl(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(_as_rosidl(v) for v in value)
    return value


def dds_type_name(type_name: str) -> str:
    """``plansys2_msgs/srv/GetProblem`` → ``plansys2_msgs::srv::dds_::GetProblem_`` (as rmw_zenoh keys it)."""
    pkg, kind, name = _split(type_name)
    return f"{pkg}::{kind}::dds_::{name}_"
