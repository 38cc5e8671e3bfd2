"""The node's life: `l3mp ros` starts, shows itself on the graph and on SIGINT or SIGTERM ends cleanly,
its liveliness tokens withdrawn; it outlives its router; a slow service never holds up a quick one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zenoh
from ros_support import INTERFACES, running_operations, surveyed_home
from test_ros_node import _free_port, node_session, open_router, zenoh_session

from l3mp.ros.node import RosNode
from l3mp.ros.spec import ServiceSpec
from l3mp.ros.wire import Attachment, data_key, new_gid

pytestmark = pytest.mark.slow

TRIGGER = "std_srvs/srv/Trigger"


def _peer(port: int) -> zenoh.Session:
    return zenoh_session("peer", connect=f"tcp/127.0.0.1:{port}")


def _tokens(session: zenoh.Session) -> list[str]:
    return sorted(str(r.ok.key_expr) for r in session.liveliness().get("@ros2_lv/0/**", timeout=2.0) if r.ok)


def _await_tokens(session: zenoh.Session, present: bool, needle: str = "/%/%/l3mp") -> list[str]:
    """The graph's tokens once one holding ``needle`` is there (or none is): liveliness changes are events."""
    changed = threading.Event()
    watcher = session.liveliness().declare_subscriber("@ros2_lv/0/**", lambda _: changed.set())
    try:
        for _ in range(120):
            tokens = _tokens(session)
            if any(needle in t for t in tokens) == present:
                return tokens
            changed.wait(1.0)
            changed.clear()
        raise AssertionError(f"the node's tokens are {'absent' if present else 'still there'}: {tokens}")
    finally:
        watcher.undeclare()


def _trigger(session: zenoh.Session, name: str) -> str:
    """Call the Trigger service ``name`` once a server of it is known (matching is an event, not a wait)."""
    key = data_key(0, name, TRIGGER, INTERFACES.type_hash(TRIGGER))
    querier = session.declare_querier(key, target=zenoh.QueryTarget.ALL_COMPLETE, timeout=30.0)
    matched = threading.Event()
    listener = querier.declare_matching_listener(lambda status: matched.set() if status.matching else None)
    try:
        assert querier.matching_status or matched.wait(60), f"no server of {name}"
        payload = INTERFACES.encode(INTERFACES.new(f"{TRIGGER}_Request"), f"{TRIGGER}_Request")
        attachment = Attachment.now(sequence=1, gid=new_gid()).encode()
        errors = []
        for reply in querier.get(payload=payload, attachment=attachment):
            if reply.ok is not None:
                return str(INTERFACES.decode(reply.ok.payload.to_bytes(), f"{TRIGGER}_Response").message)
            errors.append(reply.err.payload.to_string() if reply.err is not None else "?")
        raise NoAnswer(f"no answer from {name}: {errors}")
    finally:
        listener.undeclare()
        querier.undeclare()


class NoAnswer(AssertionError):
    pass


def _answered(session: zenoh.Session, name: str, tries: int = 5) -> str:
    """The service's answer, asked again a bounded few times: the routes to a queryable settle after
    its server is matched, so a first query may find the router still wiring them (no reply, no error)."""
    answers = []
    for _ in range(tries):
        try:
            return _trigger(session, name)
        except NoAnswer as exc:
            answers.append(str(exc))
            time.sleep(1.0)  # a pause between tries, not a bound on how long an answer takes
    raise NoAnswer(f"{tries} tries: {answers}")


@pytest.fixture
def router_port() -> Iterator[int]:
    port = _free_port()
    router = open_router(port)
    yield port
    router.close()  # type: ignore[no-untyped-call]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_l3mp_ros_ends_cleanly_on_a_signal_and_withdraws_its_tokens(
    tmp_path: Path, router_port: int, signum: int
) -> None:
    with running_operations(tmp_path) as ops:
        memory = surveyed_home(ops)
    endpoints = f'connect/endpoints=["tcp/127.0.0.1:{router_port}"];listen/endpoints=["tcp/127.0.0.1:0"]'
    env = {**os.environ, "L3MP_SQLITE_PATH": str(tmp_path / "ros.db"), "ZENOH_CONFIG_OVERRIDE": endpoints}
    watcher = _peer(router_port)
    node = subprocess.Popen(
        [sys.executable, "-m", "l3mp", "ros", "--memory", memory],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _await_tokens(watcher, present=True, needle="%problem_expert%add_problem_predicate/")
        tokens = _await_tokens(watcher, present=True, needle="/%l3mp%report/")
        assert any("/SS/%/%/l3mp/%problem_expert%add_problem_predicate/" in t for t in tokens)
        assert any(t.endswith("/NN/%/%/l3mp") for t in tokens)
        node.send_signal(signum)
        _, err = node.communicate(timeout=60)
        assert node.returncode == 0, err[-3000:]
        assert "Traceback" not in err
        _await_tokens(watcher, present=False)
    finally:
        node.kill()
        watcher.close()  # type: ignore[no-untyped-call]


def test_the_node_outlives_its_router(tmp_path: Path) -> None:
    port = _free_port()
    router = open_router(port)
    node = RosNode(
        name="l3mp",
        interfaces=INTERFACES,
        session=node_session(port),
        services=[
            ServiceSpec(
                name="~/ping",
                type_name=TRIGGER,
                handle=lambda _: INTERFACES.new(f"{TRIGGER}_Response", success=True, message="pong"),
            )
        ],
    ).start()
    client = _peer(port)
    try:
        assert _answered(client, "/l3mp/ping") == "pong"
        client.close()  # type: ignore[no-untyped-call]
        router.close()  # type: ignore[no-untyped-call]
        router = open_router(port)  # the router comes back on its port
        client = _peer(port)
        _await_tokens(client, present=True)  # the node found the router again and re-announced itself
        assert _answered(client, "/l3mp/ping") == "pong"
    finally:
        node.close()
        client.close()  # type: ignore[no-untyped-call]
        router.close()  # type: ignore[no-untyped-call]


def test_a_slow_service_does_not_hold_up_the_quick_ones(router_port: int) -> None:
    release = threading.Event()
    started = threading.Event()

    def slow(_: Any) -> Any:
        started.set()
        release.wait(60)  # a long plan, until the test lets it end
        return INTERFACES.new(f"{TRIGGER}_Response", success=True, message="planned")

    def quick(_: Any) -> Any:
        return INTERFACES.new(f"{TRIGGER}_Response", success=True, message="quick")

    node = RosNode(
        name="l3mp",
        interfaces=INTERFACES,
        session=node_session(router_port),
        services=[
            ServiceSpec(name="~/plan", type_name=TRIGGER, handle=slow, slow=True),
            ServiceSpec(name="~/state", type_name=TRIGGER, handle=quick),
        ],
    ).start()
    client = _peer(router_port)
    answers: list[str] = []
    try:
        _await_tokens(client, present=True)
        planning = threading.Thread(target=lambda: answers.append(_answered(client, "/l3mp/plan")))
        planning.start()
        assert started.wait(30)
        assert [_answered(client, "/l3mp/state") for _ in range(3)] == ["quick"] * 3  # while the plan runs
        assert not answers  # the plan is still running
        release.set()
        planning.join(30)
        assert answers == ["planned"]
    finally:
        release.set()
        node.close()
        client.close()  # type: ignore[no-untyped-call]
