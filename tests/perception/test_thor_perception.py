"""AI2-THOR metadata → observations of the thor domain, on all 80 recorded iTHOR scenes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import require_thor_data, thor_files

from kg_memory import DomainRegistry, UpdateStatus, WorldMemory
from kg_memory.stores import SQLiteStore
from l3mp.pipelines import SensorUpdater
from perception import ThorMetadataError, ThorNames, label_of, thor_observation

DOMAIN = DomainRegistry().get("thor")


def _scene(name: str) -> dict[str, dict[str, object]]:
    return dict(json.loads(gzip.decompress((require_thor_data() / "scenes" / name).read_bytes())))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SQLiteStore:
    return SQLiteStore(tmp_path_factory.mktemp("thor") / "scenes.db", DomainRegistry())


@pytest.mark.parametrize("scene", thor_files("scenes"))
def test_every_scene_becomes_a_memory_with_no_verifier_issue(scene: str, store: SQLiteStore) -> None:
    objects = _scene(scene)
    names = ThorNames(objects)
    memory = WorldMemory.create(store, scene.split("_")[0].lower(), "thor")
    update = SensorUpdater(memory).apply(thor_observation(objects, names, DOMAIN)).update
    assert update.status is UpdateStatus.APPLIED and update.issues == ()
    entities = memory.entities()
    assert len(entities) == len(objects) + 1  # and robot_1
    for object_id, obj in objects.items():
        entity = entities[names.name(object_id)]
        assert entity.attrs["object_id"] == object_id and entity.type == str(obj["objectType"]).lower()
    facts = memory.facts()
    held = [i for i, o in objects.items() if o["isPickedUp"]]
    assert (("hand_empty", ("robot_1",)) in {(f.predicate, f.args) for f in facts}) == (not held)
    for object_id, obj in objects.items():  # where THOR says each object is
        parents = {names.name(p) for p in obj["parentReceptacles"] or ()}
        stored = {f.args[1] for f in facts if f.predicate == "in_receptacle" and f.args[0] == names.name(object_id)}
        assert stored == parents


def test_names_are_reversible_collision_free_and_stable() -> None:
    objects = _scene("FloorPlan1_physics.json.gz")
    names = ThorNames(objects)
    given = {names.name(i) for i in objects}
    assert len(given) == len(objects)
    assert all(names.object_id(names.name(i)) == i for i in objects)
    assert names.name("Sink|-01.90|+00.97|-01.50|SinkBasin") == "sinkbasin_1"
    apples = sorted(i for i in objects if i.startswith("Apple|"))
    slice_id = f"{apples[0]}|AppleSliced_0"  # THOR's id for a slice, first seen after slicing
    assert names.name(slice_id) == "applesliced_1" and names.object_id("applesliced_1") == slice_id
    again = ThorNames(objects)
    assert all(again.name(i) == names.name(i) for i in objects)  # the same scene, the same names
    with pytest.raises(ThorMetadataError, match="no THOR object"):
        names.object_id("apple_99")


def test_labels_read_like_what_people_say() -> None:
    assert [label_of(t) for t in ("CounterTop", "TVStand", "SinkBasin", "Apple")] == [
        "counter top",
        "tv stand",
        "sink basin",
        "apple",
    ]
    objects = _scene("FloorPlan1_physics.json.gz")
    observation = thor_observation(objects, ThorNames(objects), DOMAIN)
    apple = observation.get(ThorNames(objects).name("Apple|-00.47|+01.15|+00.48"))
    assert apple is not None and apple.label == "apple on the counter top"


def test_the_visible_view_sees_what_thor_marks_visible_and_where_it_rests() -> None:
    objects = _scene("FloorPlan1_physics.json.gz")
    names = ThorNames(objects)
    seen = thor_observation(objects, names, DOMAIN, view="visible")
    visible = {names.name(i) for i, o in objects.items() if o["visible"]}
    parents = {names.name(p) for i, o in objects.items() if o["visible"] for p in o["parentReceptacles"] or ()}
    assert visible and set(seen.names()) - {"robot_1"} >= visible
    assert set(seen.names()) - {"robot_1"} <= visible | parents | {names.name(p) for p in _ancestors(objects)}
    robot = seen.get("robot_1")
    assert robot is not None and {o for p, o in robot.relations if p == "near"} == visible
    closed = {names.name(i) for i, o in objects.items() if o["openable"] and o["receptacle"] and not o["isOpen"]}
    assert set(seen.opaque) >= closed & set(seen.names())


def _ancestors(objects: dict[str, dict[str, object]]) -> set[str]:
    found: set[str] = set()
    todo = [p for o in objects.values() if o["visible"] for p in o["parentReceptacles"] or ()]  # type: ignore[union-attr]
    while todo:
        parent = todo.pop()
        if parent not in found:
            found.add(parent)
            todo.extend(objects[parent]["parentReceptacles"] or ())  # type: ignore[arg-type]
    return found


@pytest.mark.parametrize(
    ("data", "problem"),
    [({"objects": [{"objectId": "Apple|1|2|3"}]}, "lacks objectType"), ([1, 2], "expected THOR metadata")],
)
def test_metadata_that_is_not_thor_s_is_a_clear_error(data: object, problem: str) -> None:
    with pytest.raises(ThorMetadataError, match=problem):
        thor_observation(data, ThorNames(), DOMAIN)  # type: ignore[arg-type]


def test_the_receptacle_table_ships_with_the_domain() -> None:
    assert (Path(DOMAIN.path) / "receptacles.toml").is_file()
