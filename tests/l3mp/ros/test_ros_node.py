"""l3mp's ROS 2 node end to end: another process plays the ROS 2 side (zenoh-ros2-sdk, an implementation
of rmw_zenoh's format independent of l3mp's), through a Zenoh session in router mode on a free port
standing in for rmw_zenohd. The node runs in this process, over SQLite, with a scripted model."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import zenoh
from fastapi.testclient import TestClient
from ros_support import surveyed_home

from l3mp.llm import ScriptedModel
from l3mp.operations import Operations, Services
from l3mp.ros.app import RosDoor, ros_door
from l3mp.ros.config import SessionConfig
from l3mp.ros.spec import ServiceSpec
from l3mp.service import create_app
from l3mp.settings import Settings
from l3mp.wiring import open_store
from planning.evaluator import GroundAction
from planning.validate import validate_plan

pytestmark = pytest.mark.slow

ROS_SIDE = Path(__file__).with_name("ros_side.py")
MOVE = {
    "remove": [{"predicate": "on", "args": ["mug_1", "table_1"]}],
    "add": [{"predicate": "on", "args": ["mug_1", "shelf_1"]}],
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def zenoh_session(mode: str, *, listen: str = "", connect: str = "") -> zenoh.Session:
    """A Zenoh session on 127.0.0.1 only, no multicast scouting."""
    config = zenoh.Config()
    config.insert_json5("mode", json.dumps(mode))
    config.insert_json5("listen/endpoints", json.dumps([listen] if listen else []))
    config.insert_json5("connect/endpoints", json.dumps([connect] if connect else []))
    config.insert_json5("scouting/multicast/enabled", "false")
    return zenoh.open(config)


def open_router(port: int) -> zenoh.Session:
    """A Zenoh session in router mode: what ``ros2 run rmw_zenoh_cpp rmw_zenohd`` runs."""
    return zenoh_session("router", listen=f"tcp/127.0.0.1:{port}")


def node_session(port: int) -> SessionConfig:
    """rmw_zenoh's default session, pointed at the test's router (as ZENOH_CONFIG_OVERRIDE would)."""
    connect = json.dumps([f"tcp/127.0.0.1:{port}"])
    return SessionConfig(overrides=(("connect/endpoints", connect), ("listen/endpoints", '["tcp/127.0.0.1:0"]')))


@dataclass
class Rig:
    port: int
    memory: str
    settings: Settings
    door: RosDoor
    results: list[Any] = field(default_factory=list)

    def ros_side(self, *steps: dict[str, Any]) -> list[Any]:
        """Run ``steps`` in another process, as the ROS 2 side; their results."""
        done = subprocess.run(
            [sys.executable, str(ROS_SIDE), str(self.port)],
            input=json.dumps(list(steps)),
            capture_output=True,
            text=True,
            timeout=180,
            cwd=Path(__file__).resolve().parents[3],
        )
        assert done.returncode == 0, done.stderr[-3000:]
        results: list[Any] = json.loads(done.stdout)
        return results

    @contextmanager
    def ros_side_running(self, *steps: dict[str, Any]) -> Iterator[Callable[[], None]]:
        """The ROS 2 side running ``steps``; the context gives a wait for its READY, and on leaving
        waits for it to end (its results in :attr:`results`)."""
        side = subprocess.Popen(
            [sys.executable, str(ROS_SIDE), str(self.port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[3],
        )
        assert side.stdin is not None and side.stderr is not None
        side.stdin.write(json.dumps(list(steps)))
        side.stdin.close()
        said: list[str] = []
        ready = threading.Event()

        def read_errors() -> None:
            assert side.stderr is not None
            for line in side.stderr:
                said.append(line)
                if line.strip() == "READY":
                    ready.set()

        reader = threading.Thread(target=read_errors, daemon=True)
        reader.start()

        def wait_ready() -> None:
            assert ready.wait(120), "".join(said)[-3000:]

        try:
            yield wait_ready
            assert side.stdout is not None
            out = side.stdout.read()  # until the side ends; stderr is the reader thread's
            side.wait(180)
        finally:
            side.kill()
            reader.join(10)
            side.__exit__(None, None, None)  # closes its pipes
        assert side.returncode == 0, "".join(said)[-3000:]
        self.results = json.loads(out)

    def rest(self) -> TestClient:
        return TestClient(create_app(self.settings))


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    opened: list[Any] = []

    def make(*, model: Any = None, extra: list[ServiceSpec] = ()) -> Rig:  # type: ignore[assignment]
        port = _free_port()
        opened.append(open_router(port))
        settings = Settings(sqlite_path=tmp_path / "ros.db", retriever="full")
        setup = Services(settings=settings, store=open_store(settings))
        try:
            memory = surveyed_home(Operations(services=setup))
        finally:
            setup.close()
        door = ros_door(settings=settings, memory=memory, session=node_session(port), model=model)
        door.node.add(services=extra)
        opened.append(door.start())
        return Rig(port=port, memory=memory, settings=settings, door=door)

    yield make
    for thing in reversed(opened):
        thing.close()


# what a request with no fields carries (std_msgs/Empty's placeholder)
EMPTY = {"request": {"_type": "std_msgs/msg/Empty", "structure_needs_at_least_one_member": 0}}


def _param(name: str, type_: str = "") -> dict[str, Any]:
    return {"_type": "plansys2_msgs/msg/Param", "name": name, "type": type_, "sub_types": []}


def _node(name: str, *params: str) -> dict[str, Any]:
    """A PlanSys2 predicate node, every field given (the ROS side builds nothing by default)."""
    return {
        "_type": "plansys2_msgs/msg/Node",
        "node_type": 5,
        "expression_type": 0,
        "modifier_type": 0,
        "node_id": 0,
        "children": {"_array": "uint32", "values": []},
        "name": name,
        "parameters": [_param(p) for p in params],
        "value": 0.0,
        "negate": False,
    }


def _predicate(service: str, name: str, *params: str) -> dict[str, Any]:
    return {
        "op": "call",
        "service": f"/problem_expert/{service}",
        "type": "plansys2_msgs/srv/AffectNode",
        "request": {"node": _node(name, *params)},
    }


def test_the_ros_side_sees_the_node_and_its_services_through_liveliness(rig: Callable[..., Rig]) -> None:
    setup = rig()
    wanted = ["/problem_expert/add_problem_predicate", "/planner/get_plan", "/l3mp/report", "/l3mp/observe"]
    services, nodes = setup.ros_side({"op": "services", "wait_for": wanted}, {"op": "nodes", "wait_for": ["/l3mp"]})
    assert services["/problem_expert/add_problem_predicate"] == ["plansys2_msgs/srv/AffectNode"]
    assert services["/problem_expert/get_problem_predicates"] == ["plansys2_msgs/srv/GetStates"]
    assert services["/planner/get_plan"] == ["plansys2_msgs/srv/GetPlan"]
    assert services["/l3mp/report"] == ["l3mp_msgs/srv/Report"] and "/l3mp/plan" in services
    assert "/l3mp" in nodes


def test_predicates_written_over_ros_are_verified_recorded_and_read_back(rig: Callable[..., Rig]) -> None:
    setup = rig()
    added, wrong_arity, wrong_type, unknown, two_places, read = setup.ros_side(
        _predicate("add_problem_predicate", "light_on", "lamp_1"),
        _predicate("add_problem_predicate", "light_on", "lamp_1", "kitchen"),
        _predicate("add_problem_predicate", "on", "kitchen", "table_1"),  # a room is not an item
        _predicate("add_problem_predicate", "teleported", "mug_1"),
        _predicate("add_problem_predicate", "on", "mug_1", "shelf_1"),
        {
            "op": "call",
            "service": "/problem_expert/get_problem_predicates",
            "type": "plansys2_msgs/srv/GetStates",
            "request": EMPTY,
            "hash_from_graph": True,
        },
    )
    assert added["success"] is True, added
    assert wrong_arity["success"] is False and "light_on" in wrong_arity["error_info"]
    assert wrong_type["success"] is False and "kitchen" in wrong_type["error_info"]
    assert unknown["success"] is False and "teleported" in unknown["error_info"]
    assert two_places["success"] is False and "mug_1" in two_places["error_info"]
    held = {(n["name"], tuple(p["name"] for p in n["parameters"])) for n in read["states"]}
    assert ("light_on", ("lamp_1",)) in held and ("on", ("mug_1", "table_1")) in held
    assert ("on", ("mug_1", "shelf_1")) not in held

    with setup.rest() as client:
        state = client.get(f"/v1/memories/{setup.memory}/state").json()
        assert "(light_on lamp_1)" in state["facts"] and "(on mug_1 shelf_1)" not in state["facts"]
        assert state["version"] == 2  # the survey, then the one accepted write; the refusals wrote nothing
        history = client.get(f"/v1/memories/{setup.memory}/history", params={"status": "rejected"}).json()
        assert len(history["updates"]) >= 2  # refused writes are recorded with their reasons


def test_an_instance_added_over_ros_waits_for_a_place_then_is_created_with_it(rig: Callable[..., Rig]) -> None:
    setup = rig()
    param = _param("cup_9", "dish")
    instance = {
        "op": "call",
        "service": "/problem_expert/add_problem_instance",
        "type": "plansys2_msgs/srv/AffectParam",
        "request": {"param": param},
    }
    declared, placed = setup.ros_side(instance, _predicate("add_problem_predicate", "on", "cup_9", "table_1"))
    assert declared["success"] is True and placed["success"] is True, placed
    with setup.rest() as client:
        facts = client.get(f"/v1/memories/{setup.memory}/facts", params={"entity": "cup_9"}).json()["facts"]
    assert facts == ["(on cup_9 table_1)"]


def test_get_plan_returns_a_plan_unified_planning_validates(rig: Callable[..., Rig]) -> None:
    setup = rig()
    (problem,) = setup.ros_side(
        {
            "op": "call",
            "service": "/problem_expert/get_problem",
            "type": "plansys2_msgs/srv/GetProblem",
            "request": EMPTY,
            "hash_from_graph": True,
        },
    )
    assert problem["success"] is True
    text = problem["problem"].replace("(:goal (and))", "").rstrip()
    goal_problem = text[: text.rstrip().rfind(")")] + "(:goal (and (on mug_1 shelf_1))))"
    domain = setup.door.services.store.domains.get("example_home").pddl
    (planned,) = setup.ros_side(
        {
            "op": "call",
            "service": "/planner/get_plan",
            "type": "plansys2_msgs/srv/GetPlan",
            "request": {"domain": domain, "problem": goal_problem},
            "timeout": 120,
        },
    )
    assert planned["success"] is True, planned["error_info"]
    steps = [item["action"] for item in planned["plan"]["items"]]
    assert steps and any("mug_1" in s for s in steps)

    plan = [GroundAction(name, tuple(args)) for name, *args in (step.strip("()").split() for step in steps)]
    assert validate_plan(domain, goal_problem, plan).valid
    assert not validate_plan(domain, goal_problem, plan[:-1]).valid  # the check can fail


def test_report_over_ros_applies_an_english_update(rig: Callable[..., Rig]) -> None:
    setup = rig(model=ScriptedModel([MOVE]))
    (answer,) = setup.ros_side(
        {
            "op": "call",
            "service": "/l3mp/report",
            "type": "l3mp_msgs/srv/Report",
            "request": {"text": "Alex moved the blue mug from the kitchen table to the hall shelf."},
        },
    )
    assert (answer["accepted"], answer["status"]) == (True, "applied"), answer["reasons"]
    assert answer["added"] == ["(on mug_1 shelf_1)"] and answer["removed"] == ["(on mug_1 table_1)"]


def test_a_subscriber_on_updates_hears_an_update_made_through_rest(rig: Callable[..., Rig]) -> None:
    setup = rig()
    listen = {
        "op": "listen",
        "topic": "/l3mp/updates",
        "type": "l3mp_msgs/msg/Update",
        "count": 1,
        "timeout": 60,
        "then": [
            {
                "op": "call",
                "service": "/problem_expert/get_problem_instances",
                "type": "plansys2_msgs/srv/GetProblemInstances",
                "request": EMPTY,
                "hash_from_graph": True,
            }
        ],
    }
    with setup.ros_side_running(listen) as ready:
        ready()
        with setup.rest() as client:
            moved = client.post(
                f"/v1/memories/{setup.memory}/deltas",
                json={"remove": ["(on mug_1 table_1)"], "add": ["(on mug_1 shelf_1)"], "input": "through REST"},
            )
            assert moved.status_code == 200, moved.text
    (result,) = setup.results
    heard = result["heard"]
    assert [u["input"] for u in heard] == ["through REST"]
    assert heard[0]["added"] == ["(on mug_1 shelf_1)"] and heard[0]["source"] == "api"
