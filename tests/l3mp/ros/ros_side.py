"""The ROS 2 side of the ROS tests, in a process of its own: zenoh-ros2-sdk, an implementation of
rmw_zenoh's format independent of l3mp's, given the bundled definitions (so it never goes online).

    python ros_side.py ROUTER_PORT < steps.json > results.json

Each step is one of
    {"op": "services"}                                  the graph's services and their types
    {"op": "nodes", "wait_for": [...]}                  the graph's nodes (from the liveliness tokens)
    {"op": "call", "service": ..., "type": ..., "request": {...}, "timeout": s}
    {"op": "listen", "topic": ..., "type": ..., "then": [steps], "count": n, "timeout": s}
A request's nested message is {"_type": "pkg/msg/Name", ...every field}, a numeric sequence
{"_array": "uint32", "values": [...]}. Each step's result is one JSON
value, in order: the listen step's is the messages heard and its ``then`` steps' results; once those
steps have run (a call through the router orders the subscription before it), it writes READY to stderr.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

import numpy as np
from zenoh_ros2_sdk import (
    ROS2ServiceClient,
    ROS2Subscriber,
    get_message_class,
    get_registry,
    get_service_names_and_types,
)
from zenoh_ros2_sdk.discovery import ZenohSession

from l3mp.ros.types import interfaces_root

ROOT = interfaces_root()


def _halves(type_name: str) -> tuple[str, str]:
    package, _, name = type_name.split("/")
    text = (ROOT / package / "srv" / f"{name}.srv").read_text()
    request, _, response = text.partition("\n---\n")
    return request + "\n", response


def _definition(type_name: str) -> str:
    package, _, name = type_name.split("/")
    return (ROOT / package / "msg" / f"{name}.msg").read_text()


def _built(value: Any) -> Any:
    if isinstance(value, dict) and "_array" in value:  # a numeric sequence, as rosbags wants it
        return np.array(value["values"], dtype=value["_array"])
    if isinstance(value, dict) and "_type" in value:
        fields = {k: _built(v) for k, v in value.items() if k != "_type"}
        return get_message_class(value["_type"])(**fields)
    if isinstance(value, list):
        return [_built(v) for v in value]
    return value


def _plain(message: Any) -> Any:
    if hasattr(message, "__dataclass_fields__"):
        return {k: _plain(getattr(message, k)) for k in message.__dataclass_fields__ if k.islower()}
    if isinstance(message, list | tuple):
        return [_plain(m) for m in message]
    if hasattr(message, "tolist"):
        return message.tolist()
    return message


def _graph_hash(port: int, service: str, attempts: int = 30) -> str:
    """The type hash the service's server announces in its liveliness token. A session just opened
    may not have the router's graph yet, so the graph is asked again (a second apart) until it shows it."""
    session = ZenohSession.get_instance("127.0.0.1", port).session
    for _ in range(attempts):
        for reply in session.liveliness().get("@ros2_lv/0/**", timeout=1.0):
            parts = str(reply.ok.key_expr).split("/") if reply.ok is not None else []
            if len(parts) >= 13 and parts[5] == "SS" and parts[9].replace("%", "/") == service:
                return parts[11]
        time.sleep(1.0)
    raise SystemExit(f"no server of {service} on the graph")


def _call(port: int, step: dict[str, Any]) -> Any:
    request, response = _halves(step["type"])
    # The SDK leaves std_msgs/Empty's placeholder field out of the type description it hashes, so for
    # a service whose request or response holds an Empty its hash is not rosidl's: such a step takes
    # the hash the server announces on the graph instead.
    type_hash = _graph_hash(port, step["service"]) if step.get("hash_from_graph") else None
    client = ROS2ServiceClient(
        service_name=step["service"],
        srv_type=step["type"],
        request_definition=request,
        response_definition=response,
        node_name="ros_side",
        router_port=port,
        type_hash=type_hash,
        timeout=step.get("timeout", 30.0),
    )
    try:
        answer = client.call(**{k: _built(v) for k, v in step.get("request", {}).items()})
        if answer is None:  # the SDK logs why (no server on that key and hash, an error reply, ...)
            raise SystemExit(f"no answer from {step['service']} ({step['type']})")
        return _plain(answer)
    finally:
        client.close()


def _listen(port: int, step: dict[str, Any]) -> Any:
    heard: list[Any] = []
    enough = threading.Event()

    def on_message(message: Any) -> None:
        heard.append(_plain(message))
        if len(heard) >= step.get("count", 1):
            enough.set()

    subscriber = ROS2Subscriber(
        topic=step["topic"],
        msg_type=step["type"],
        callback=on_message,
        msg_definition=_definition(step["type"]),
        node_name="ros_side",
        router_port=port,
    )
    try:
        # a call through the router after subscribing: by its answer, the node knows of the subscriber
        then = [run(port, s) for s in step.get("then", [])]
        print("READY", file=sys.stderr, flush=True)  # the test may now make what it wants heard
        enough.wait(step.get("timeout", 30.0))
        return {"heard": heard, "then": then}
    finally:
        subscriber.close()


def _nodes(port: int) -> list[str]:
    session = ZenohSession.get_instance("127.0.0.1", port).session
    names = set()
    for reply in session.liveliness().get("@ros2_lv/0/**", timeout=2.0):
        if reply.ok is not None:
            parts = str(reply.ok.key_expr).split("/")
            if parts[5] == "NN":
                names.add(parts[7].replace("%", "/").rstrip("/") + "/" + parts[8])
    return sorted(names)


def run(port: int, step: dict[str, Any]) -> Any:
    op = step["op"]
    if op == "services":
        deadline = time.monotonic() + step.get("timeout", 10.0)
        while True:  # the graph fills as tokens arrive
            found = dict(get_service_names_and_types(router_port=port, timeout=1.0))
            if all(s in found for s in step.get("wait_for", [])) or time.monotonic() > deadline:
                return found
    if op == "nodes":
        deadline = time.monotonic() + step.get("timeout", 10.0)
        while True:  # a liveliness query may come back empty while the router is still busy
            names = _nodes(port)
            if all(n in names for n in step.get("wait_for", [])) or time.monotonic() > deadline:
                return names
    if op == "call":
        return _call(port, step)
    if op == "listen":
        return _listen(port, step)
    raise ValueError(f"unknown step {op!r}")


def main() -> None:
    port = int(sys.argv[1])
    get_registry(str(ROOT))  # offline: the SDK reads the definitions here instead of cloning them
    ZenohSession.get_instance("127.0.0.1", port)  # its one session, on the test's router (not on 7447)
    for path in sorted(ROOT.glob("*/msg/*.msg")):  # loaded up front, so nested types are known to it
        get_message_class(f"{path.parent.parent.name}/msg/{path.stem}")
    steps = json.load(sys.stdin)
    json.dump([run(port, step) for step in steps], sys.stdout)


if __name__ == "__main__":
    main()
