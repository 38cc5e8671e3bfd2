"""rmw_zenoh's wire format: key expressions, liveliness tokens, attachments and QoS strings.

What a ROS 2 node on rmw_zenoh puts on Zenoh (rmw_zenoh's design document):

* data: ``<domain>/<fully qualified name, no leading slash>/<DDS type name>/<RIHS01 hash>``;
* the graph: liveliness tokens ``@ros2_lv/<domain>/<session id>/<node id>/<entity id>/<kind>/<enclave>/
  <namespace>/<node>[/<name>/<DDS type>/<hash>/<qos>]``, names mangled (``/`` → ``%``, empty → ``%``);
* every publication, request and reply carries an attachment: the sequence number and the source
  timestamp (int64, little-endian) and the sender's GID (a length byte, 16, then 16 bytes). A reply
  echoes its request's sequence number and the client's GID.
"""

from __future__ import annotations

import secrets
import struct
import time
from dataclasses import dataclass
from enum import StrEnum

from l3mp.ros.errors import RosError
from l3mp.ros.types import dds_type_name

ADMIN_SPACE = "@ros2_lv"
GID_LENGTH = 16
_HEAD = struct.Struct("<qqB")

# reliable, volatile, keep last 10: the defaults of topics and services, as rmw_zenoh writes them
DEFAULT_QOS = "::,10:,:,:,,"
# reliable, transient local, keep last 1: a latched topic
LATCHED_QOS = ":1:,1:,:,:,,"


class EntityKind(StrEnum):
    NODE = "NN"
    PUBLISHER = "MP"
    SUBSCRIPTION = "MS"
    SERVICE = "SS"
    CLIENT = "SC"


class AttachmentError(RosError):
    """An attachment that is not rmw_zenoh's (names its length)."""


@dataclass(frozen=True, kw_only=True)
class Attachment:
    sequence: int
    timestamp_ns: int
    gid: bytes

    def encode(self) -> bytes:
        return _HEAD.pack(self.sequence, self.timestamp_ns, GID_LENGTH) + self.gid

    @classmethod
    def decode(cls, data: bytes) -> Attachment:
        if len(data) != _HEAD.size + GID_LENGTH or data[_HEAD.size - 1] != GID_LENGTH:
            raise AttachmentError(f"an rmw_zenoh attachment has {_HEAD.size + GID_LENGTH} bytes, not {len(data)}")
        sequence, stamp, _ = _HEAD.unpack_from(data)
        return cls(sequence=sequence, timestamp_ns=stamp, gid=bytes(data[_HEAD.size :]))

    @classmethod
    def now(cls, *, sequence: int, gid: bytes) -> Attachment:
        return cls(sequence=sequence, timestamp_ns=time.time_ns(), gid=gid)


def new_gid() -> bytes:
    return secrets.token_bytes(GID_LENGTH)


def mangle(name: str) -> str:
    return name.replace("/", "%") if name and name != "/" else "%"


def data_key(domain: int, name: str, type_name: str, type_hash: str) -> str:
    """The key expression of a topic or service ``name`` (fully qualified)."""
    return f"{domain}/{name.lstrip('/')}/{dds_type_name(type_name)}/{type_hash}"


@dataclass(frozen=True, kw_only=True)
class NodeIdentity:
    """Who the node is on the graph: its domain, session, name, namespace and enclave."""

    domain: int
    session: str  # the Zenoh session id, lowercase hex
    name: str
    namespace: str = "/"
    enclave: str = "/"
    node_id: int = 0

    def _prefix(self, entity_id: int, kind: EntityKind) -> str:
        return (
            f"{ADMIN_SPACE}/{self.domain}/{self.session}/{self.node_id}/{entity_id}/{kind}/"
            f"{mangle(self.enclave)}/{mangle(self.namespace)}/{self.name}"
        )

    def node_token(self) -> str:
        return self._prefix(self.node_id, EntityKind.NODE)

    def entity_token(
        self, *, entity_id: int, kind: EntityKind, name: str, type_name: str, type_hash: str, qos: str
    ) -> str:
        return f"{self._prefix(entity_id, kind)}/{mangle(name)}/{dds_type_name(type_name)}/{type_hash}/{qos}"

    def resolve(self, name: str) -> str:
        """A fully qualified name: absolute names stay, ``~/x`` is the node's own, others its namespace's."""
        space = self.namespace.rstrip("/")
        if name.startswith("/"):
            return name
        if name.startswith("~/"):
            return f"{space}/{self.name}/{name[2:]}"
        return f"{space}/{name}"
