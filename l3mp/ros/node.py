"""A ROS 2 node on rmw_zenoh's wire format, over one Zenoh session: services and publishers.

Services are Zenoh queryables declared complete on their key expressions; a request is answered in a
worker thread, never on Zenoh's own callback threads, and the slow ones (planning) in a pool of their
own, so that a long plan never holds up the quick services. Every entity has its liveliness token, so
``ros2 node list`` and ``ros2 service list`` show them; closing the node withdraws them.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import zenoh
import zenoh.ext

from l3mp.ros.config import SessionConfig
from l3mp.ros.errors import RosError
from l3mp.ros.spec import ServiceSpec, TopicSpec
from l3mp.ros.types import Interfaces
from l3mp.ros.wire import DEFAULT_QOS, LATCHED_QOS, Attachment, EntityKind, NodeIdentity, data_key, new_gid

log = logging.getLogger(__name__)

QUICK_WORKERS = 4
SLOW_WORKERS = 2


@dataclass(kw_only=True)
class _Outlet:
    """A declared publisher: its key, GID and sequence numbers."""

    spec: TopicSpec
    name: str
    publisher: Any
    gid: bytes = field(default_factory=new_gid)
    sequence: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    lock: threading.Lock = field(default_factory=threading.Lock)


class RosNode:
    """A node named ``name`` in ``namespace``, serving ``services`` and publishing on ``topics``."""

    def __init__(
        self,
        *,
        name: str,
        namespace: str = "/",
        interfaces: Interfaces,
        session: SessionConfig,
        services: Iterable[ServiceSpec] = (),
        topics: Iterable[TopicSpec] = (),
    ) -> None:
        self.name = name
        self.namespace = "/" + namespace.strip("/") if namespace.strip("/") else "/"
        self.interfaces = interfaces
        self.config = session
        self._services = list(services)
        self._topics = list(topics)
        self._declared: list[Any] = []  # queryables, publishers, tokens: undeclared in reverse on close
        self._outlets: dict[str, _Outlet] = {}
        self._quick = ThreadPoolExecutor(QUICK_WORKERS, thread_name_prefix="l3mp-ros")
        self._slow = ThreadPoolExecutor(SLOW_WORKERS, thread_name_prefix="l3mp-ros-slow")
        self._session: zenoh.Session | None = None
        self.identity: NodeIdentity | None = None

    def add(self, *, services: Iterable[ServiceSpec] = (), topics: Iterable[TopicSpec] = ()) -> None:
        """More services and topics, before :meth:`start` (parts that publish get the node first)."""
        if self._session is not None:
            raise RosError(f"node {self.name} is started: declare its services and topics before")
        self._services += services
        self._topics += topics

    # -- life ---------------------------------------------------------------------------------

    def start(self) -> RosNode:
        """Open the session (waiting for a router as configured), then declare the node and its entities."""
        try:
            self._session = zenoh.open(self.config.zenoh_config())
        except zenoh.ZError as exc:
            raise RosError(f"cannot open the Zenoh session: {exc}") from exc
        self._await_router(self._session)
        self.identity = NodeIdentity(
            domain=self.config.domain_id,
            session=str(self._session.info.zid()),
            name=self.name,
            namespace=self.namespace,
        )
        ids = itertools.count(1)
        self._declared.append(self._session.liveliness().declare_token(self.identity.node_token()))
        for topic in self._topics:
            self._advertise(topic, next(ids))
        for service in self._services:
            self._serve(service, next(ids))
        log.info("ROS 2 node %s%s up on domain %d", self.namespace.rstrip("/") + "/", self.name, self.config.domain_id)
        return self

    def close(self) -> None:
        """Withdraw every token, queryable and publisher, then close the session; answers in flight finish."""
        for declared in reversed(self._declared):
            try:
                declared.undeclare()
            except zenoh.ZError as exc:  # the session may already be gone
                log.debug("undeclaring %r: %s", declared, exc)
        self._declared.clear()
        self._quick.shutdown(wait=True, cancel_futures=True)
        self._slow.shutdown(wait=True, cancel_futures=True)
        if self._session is not None:
            self._session.close()  # type: ignore[no-untyped-call]  # zenoh's stub leaves it untyped
            self._session = None

    def __enter__(self) -> RosNode:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _await_router(self, session: zenoh.Session) -> None:
        attempts = self.config.router_check_attempts
        tried = 0
        while attempts >= 0 and not session.info.routers_zid():
            tried += 1
            if attempts and tried >= attempts:
                log.warning("no Zenoh router after %d checks; going on without one", tried)
                return
            time.sleep(1.0)

    # -- publishing ---------------------------------------------------------------------------

    def publish(self, topic: str, message: Any) -> None:
        """Send ``message`` on the declared ``topic`` (its name as declared), with rmw_zenoh's attachment."""
        outlet = self._outlets.get(topic)
        if outlet is None:
            raise RosError(f"topic {topic!r} is not declared by node {self.name}")
        payload = self.interfaces.encode(message, outlet.spec.type_name)
        with outlet.lock:  # one sequence, in order, per publisher
            attachment = Attachment.now(sequence=next(outlet.sequence), gid=outlet.gid)
            outlet.publisher.put(payload, attachment=attachment.encode())

    def _advertise(self, topic: TopicSpec, entity_id: int) -> None:
        session, identity = self._opened()
        name = identity.resolve(topic.name)
        type_hash = self.interfaces.type_hash(topic.type_name)
        key = data_key(identity.domain, name, topic.type_name, type_hash)
        if topic.latched:  # transient local: late subscribers get the last message from the cache
            publisher: Any = zenoh.ext.declare_advanced_publisher(
                session, key, cache=zenoh.ext.CacheConfig(1), publisher_detection=True
            )
        else:
            publisher = session.declare_publisher(key)
        self._declared.append(publisher)
        log.debug("publishing %s on %s", name, key)
        qos = LATCHED_QOS if topic.latched else DEFAULT_QOS
        self._announce(entity_id, EntityKind.PUBLISHER, name, topic.type_name, type_hash, qos)
        self._outlets[topic.name] = _Outlet(spec=topic, name=name, publisher=publisher)

    # -- services -----------------------------------------------------------------------------

    def _serve(self, service: ServiceSpec, entity_id: int) -> None:
        session, identity = self._opened()
        name = identity.resolve(service.name)
        type_hash = self.interfaces.type_hash(service.type_name)
        key = data_key(identity.domain, name, service.type_name, type_hash)
        pool = self._slow if service.slow else self._quick

        def on_query(query: zenoh.Query) -> None:
            try:
                pool.submit(self._answer, service, key, query)
            except RuntimeError:  # the node is closing: the pools take no more work
                with query:
                    query.reply_err(f"node {self.name} is shutting down")

        self._declared.append(session.declare_queryable(key, on_query, complete=True))
        log.debug("serving %s on %s", name, key)  # a client with another hash sees no server: compare
        self._announce(entity_id, EntityKind.SERVICE, name, service.type_name, type_hash, DEFAULT_QOS)

    def _answer(self, service: ServiceSpec, key: str, query: zenoh.Query) -> None:
        with query:  # finalised on leaving: the client learns that no more replies come
            try:
                asked = Attachment.decode(query.attachment.to_bytes() if query.attachment is not None else b"")
                payload = query.payload.to_bytes() if query.payload is not None else b""
                request = self.interfaces.decode(payload, f"{service.type_name}_Request")
            except RosError as exc:
                log.warning("%s: a request that is not rmw_zenoh's: %s", service.name, exc)
                query.reply_err(str(exc))
                return
            try:
                response = service.handle(request)
                body = self.interfaces.encode(response, f"{service.type_name}_Response")
            except Exception as exc:  # a handler's bug must not take the node down: the client hears of it
                log.exception("%s failed", service.name)
                query.reply_err(f"{service.name} failed: {exc}")
                return
            answered = Attachment.now(sequence=asked.sequence, gid=asked.gid)
            query.reply(key, body, attachment=answered.encode())

    def _announce(self, entity_id: int, kind: EntityKind, name: str, type_name: str, type_hash: str, qos: str) -> None:
        """The entity's liveliness token: how the ROS 2 graph learns of it."""
        session, identity = self._opened()
        token = identity.entity_token(
            entity_id=entity_id, kind=kind, name=name, type_name=type_name, type_hash=type_hash, qos=qos
        )
        self._declared.append(session.liveliness().declare_token(token))

    def _opened(self) -> tuple[zenoh.Session, NodeIdentity]:
        if self._session is None or self.identity is None:
            raise RosError(f"node {self.name} is not started")
        return self._session, self.identity
