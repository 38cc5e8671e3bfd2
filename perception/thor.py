"""AI2-THOR's object metadata (ai2thor 5.0.0) as an :class:`Observation` of the ``thor`` domain.

THOR reports every object of the scene with each step: its type, capabilities, state, the
receptacles it rests in (``parentReceptacles``) and whether the agent sees it (``visible``). Perception
turns that into facts and reads every dynamic fact from THOR; nothing is predicted here.

Two views:

* ``"all"``: every object THOR reports (a scene import, and the replay's check against the recording);
* ``"visible"``: what the agent sees (the L3M+P paper's setting), plus the receptacles those objects rest
  in and what the agent holds, so every relation names an observed entity. A receptacle that is closed,
  or whose contents THOR lists but the agent does not all see, is opaque: not seeing its contents says
  nothing about whether they are still there.

In a domain with costs (``thor-travel``), perception also says where the agent stands (``at``), from the
agent's position THOR reports: at the object one of whose interactable poses (THOR's
``GetInteractablePoses``, given by the caller) the agent occupies, the one asked about last when several
match, or else at the object nearest it. It measures the ``distance`` between every two objects in view
(and the one it stands at), on the floor, between the positions THOR reports. The walk between the
poses THOR interacts from differs: the distance is what costs compare.

Object ids (``Sink|-01.90|+00.97|-01.50|SinkBasin``) are not PDDL names; :class:`ThorNames` maps them
both ways without collisions (``sinkbasin_1``), and each entity keeps its id in ``attrs["object_id"]``.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from kg_memory.domain import Domain
from kg_memory.errors import DomainError
from kg_memory.model import Fact, pddl_name
from perception.errors import ThorMetadataError
from perception.observation import Observation, ObservedEntity

View = Literal["all", "visible"]
ROBOT = "robot_1"  # the thor domain's constant for THOR's (single) agent
AT = "at"  # thor-travel: the object the agent stands at
DISTANCE = "distance"  # thor-travel: the floor distance between two objects, in metres
NOT_A_PLACE = frozenset(["Floor"])  # the whole floor is no place to stand at
POSE_TOLERANCE = 0.02  # metres: THOR puts the agent on the pose it was sent to, up to rounding
Poses = Mapping[str, Sequence[Mapping[str, Any]]]  # objectId → positions it can be reached from

# THOR's boolean capabilities → static unary predicates.
CAPABILITIES = {
    "pickupable": "pickupable",
    "receptacle": "receptacle",
    "openable": "openable",
    "toggleable": "toggleable",
    "sliceable": "sliceable",
    "dirtyable": "dirtyable",
    "canFillWithLiquid": "fillable",
    "cookable": "cookable",
    "breakable": "breakable",
}
# THOR's boolean state → dynamic unary predicates.
STATES = {
    "isOpen": "is_open",
    "isToggled": "is_on",
    "isDirty": "is_dirty",
    "isFilledWithLiquid": "filled",
    "isSliced": "is_sliced",
    "isCooked": "is_cooked",
    "isBroken": "is_broken",
}
TEMPERATURES = {"Hot": "is_hot", "Cold": "is_cold"}
REQUIRED = ("objectId", "objectType", *CAPABILITIES, *STATES, "visible", "parentReceptacles")
# Receptacles things go *in* (for labels: "the mug in the sink basin", "the apple on the counter top").
_INSIDE = frozenset(
    [
        "Fridge",
        "Microwave",
        "Drawer",
        "Cabinet",
        "Box",
        "GarbageCan",
        "SinkBasin",
        "BathtubBasin",
        "Safe",
        "Pot",
        "Pan",
        "Bowl",
        "Mug",
        "Cup",
        "LaundryHamper",
        "Toilet",
        "Dresser",
        "Kettle",
        "Vase",
    ]
)


class ThorNames:
    """objectId ↔ PDDL name: ``<type>_<n>`` numbered per type in objectId order, fixed once given.

    Ids first seen later (a slice of an apple) get the next free number of their type, so names
    never change and never collide; :meth:`object_id` inverts :meth:`name`.
    """

    def __init__(self, object_ids: Iterable[str] = ()) -> None:
        self._by_id: dict[str, str] = {}
        self._by_name: dict[str, str] = {}
        self._next: dict[str, int] = {}
        for object_id in sorted(object_ids):
            self.name(object_id)

    @classmethod
    def of(cls, pairs: Mapping[str, str]) -> ThorNames:
        """Names already given (``name -> objectId``, e.g. from a memory's entities)."""
        names = cls()
        for name, object_id in sorted(pairs.items()):
            names._bind(object_id, name)
        return names

    def name(self, object_id: str) -> str:
        known = self._by_id.get(object_id)
        if known is not None:
            return known
        base = _type_of_id(object_id).lower()
        number = self._next.get(base, 1)
        while f"{base}_{number}" in self._by_name:
            number += 1
        self._next[base] = number + 1
        return self._bind(object_id, f"{base}_{number}")

    def object_id(self, name: str) -> str:
        try:
            return self._by_name[name]
        except KeyError:
            raise ThorMetadataError(name, "no THOR object has this name in the scene") from None

    def __contains__(self, object_id: object) -> bool:
        return object_id in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)

    def _bind(self, object_id: str, name: str) -> str:
        name = pddl_name(name)
        if self._by_name.get(name, object_id) != object_id:
            raise ThorMetadataError(object_id, f"the name {name} is already taken by {self._by_name[name]}")
        self._by_id[object_id] = name
        self._by_name[name] = object_id
        return name


def _type_of_id(object_id: str) -> str:
    """``Apple|…`` → ``Apple``; ``Sink|…|SinkBasin`` → ``SinkBasin``; ``…|AppleSliced_0`` → ``AppleSliced``."""
    parts = object_id.split("|")
    last = parts[-1] if len(parts) > 4 else parts[0]
    head = re.match(r"[A-Za-z]+", last)
    if head is None:
        raise ThorMetadataError(object_id, "an objectId starts with its type, like Apple|-00.47|+01.15|+00.48")
    return head.group(0)


def label_of(object_type: str) -> str:
    """``CounterTop`` → ``counter top``; ``TVStand`` → ``tv stand``."""
    return " ".join(re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z]*|[a-z]+|\d+", object_type)).lower()


@cache
def _fits_table(path: Path) -> dict[str, frozenset[str]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return {k: frozenset(v) for k, v in data["fits"].items()}
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise DomainError(path, f"cannot read which types fit in which receptacles: {exc}") from exc


def fits_table(domain: Domain) -> Mapping[str, frozenset[str]]:
    """The domain's ``receptacles.toml``: object type → receptacle types it fits in."""
    return _fits_table(domain.path / "receptacles.toml")


def scene_objects(data: Any, source: str = "metadata") -> list[dict[str, Any]]:
    """The object list of an event's metadata (``{"objects": [...]}``) or of a scene file (objectId → object)."""
    if isinstance(data, Mapping) and isinstance(data.get("objects"), list):
        objects = data["objects"]
    elif isinstance(data, Mapping) and data and all(isinstance(v, Mapping) for v in data.values()):
        objects = list(data.values())
    else:
        raise ThorMetadataError(source, "expected THOR metadata with 'objects', or a map of objectId to object")
    for obj in objects:
        missing = [k for k in REQUIRED if not isinstance(obj, Mapping) or k not in obj]
        if missing:
            what = obj.get("objectId", "an object") if isinstance(obj, Mapping) else repr(obj)[:60]
            raise ThorMetadataError(source, f"{what} lacks {', '.join(missing)}")
    return [dict(o) for o in objects]


def held_ids(metadata: Mapping[str, Any], objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the agent holds: ``inventoryObjects`` in an event, ``isPickedUp`` in a scene file."""
    inventory = metadata.get("inventoryObjects")
    if isinstance(inventory, list):
        return [str(i["objectId"]) for i in inventory]
    return [str(o["objectId"]) for o in objects if o.get("isPickedUp")]


def thor_observation(
    metadata: Mapping[str, Any],
    names: ThorNames,
    domain: Domain,
    *,
    view: View = "all",
    time_step: int = 0,
    scene: str | None = None,
    poses: Poses | None = None,
) -> Observation:
    """The observation of one THOR event (or scene file) in ``view``; names are given to new ids.

    ``poses`` (``thor-travel``) are the positions THOR said each object can be reached from, in the
    order they were asked for: where the agent stands is read from its position against them."""
    objects = scene_objects(metadata)
    by_id = {str(o["objectId"]): o for o in objects}
    held = [i for i in held_ids(metadata, objects) if i in by_id]
    at = _standing(metadata, by_id, held, poses or {}) if AT in domain.predicates else None
    chosen = _chosen(by_id, [*held, *([at] if at else [])]) if view == "visible" else set(by_id)
    for object_id in sorted(chosen):
        names.name(object_id)
    fits = fits_table(domain)
    receptacles = [by_id[i] for i in sorted(chosen) if by_id[i]["receptacle"]]
    entities = [_entity(by_id[i], names, fits, receptacles, chosen, by_id) for i in sorted(chosen)]
    robot = ObservedEntity(
        name=ROBOT,
        type="agent",
        properties=() if held else ("hand_empty",),
        relations=(
            *(("holding", names.name(i)) for i in held),
            *(("near", names.name(i)) for i in sorted(chosen) if by_id[i]["visible"]),
            *([(AT, names.name(at))] if at else []),
        ),
    )
    opaque = [names.name(i) for i in sorted(chosen) if _opaque(by_id[i], by_id, view)]
    room = scene or str(metadata.get("sceneName") or "thor_scene")
    return Observation(
        room=pddl_name(re.sub(r"[^A-Za-z0-9_-]", "_", room)),
        robot=ROBOT,
        entities=(robot, *entities),
        opaque=tuple(opaque),
        time_step=time_step,
        measures=_distances(by_id, sorted(chosen), names) if DISTANCE in domain.functions else (),
    )


def thor_facts(
    metadata: Mapping[str, Any], names: ThorNames, domain: Domain, poses: Poses | None = None
) -> frozenset[Fact]:
    """Every fact THOR's metadata states (the ``all`` view): what a memory must agree with."""
    return thor_observation(metadata, names, domain, poses=poses).facts()


def floor_distance(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """Metres between two THOR positions on the floor (x and z; y is height), to the centimetre."""
    return round(math.dist((float(a["x"]), float(a["z"])), (float(b["x"]), float(b["z"]))), 2)


def _standing(
    metadata: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]], held: Sequence[str], poses: Poses
) -> str | None:
    """The objectId the agent stands at, from where THOR says the agent is (``None`` where it does not)."""
    agent = metadata.get("agent")
    here = agent.get("position") if isinstance(agent, Mapping) else None
    if not isinstance(here, Mapping):  # a scene file: where the agent will stand is not known yet
        return None
    # what it holds too: it stands where it reached the thing from until it walks off
    for object_id in reversed(list(poses)):
        if object_id in by_id and any(_on(here, pose) for pose in poses[object_id]):
            return object_id
    places = [
        (floor_distance(here, o["position"]), i)
        for i, o in by_id.items()
        if i not in held and o["objectType"] not in NOT_A_PLACE and isinstance(o.get("position"), Mapping)
    ]
    return min(places)[1] if places else None


def _on(here: Mapping[str, Any], pose: Mapping[str, Any]) -> bool:
    """Whether the agent at ``here`` occupies ``pose`` (on the floor: height and rotation aside)."""
    return math.dist((float(here["x"]), float(here["z"])), (float(pose["x"]), float(pose["z"]))) <= POSE_TOLERANCE


def _distances(
    by_id: Mapping[str, Mapping[str, Any]], chosen: Sequence[str], names: ThorNames
) -> tuple[tuple[str, tuple[str, str], float], ...]:
    """``distance`` both ways between every two chosen objects that have positions."""
    placed = [i for i in chosen if isinstance(by_id[i].get("position"), Mapping)]
    return tuple(
        (DISTANCE, (names.name(a), names.name(b)), floor_distance(by_id[a]["position"], by_id[b]["position"]))
        for a in placed
        for b in placed
        if a != b
    )


def _chosen(by_id: Mapping[str, Mapping[str, Any]], known: Sequence[str]) -> set[str]:
    """Visible objects, those the agent knows of unseen (what it holds, what it stands at), and
    (transitively) the receptacles they rest in."""
    chosen: set[str] = set()
    todo = [i for i, o in by_id.items() if o["visible"]] + list(known)
    while todo:
        object_id = todo.pop()
        if object_id in chosen or object_id not in by_id:
            continue
        chosen.add(object_id)
        todo.extend(by_id[object_id]["parentReceptacles"] or ())
    return chosen


def _entity(
    obj: Mapping[str, Any],
    names: ThorNames,
    fits: Mapping[str, frozenset[str]],
    receptacles: Sequence[Mapping[str, Any]],
    chosen: set[str],
    by_id: Mapping[str, Mapping[str, Any]],
) -> ObservedEntity:
    object_type = str(obj["objectType"])
    properties = [p for key, p in CAPABILITIES.items() if obj[key]] + [p for key, p in STATES.items() if obj[key]]
    if obj.get("temperature") in TEMPERATURES:
        properties.append(TEMPERATURES[obj["temperature"]])
    parents = [p for p in obj["parentReceptacles"] or () if p in chosen]
    relations = [("in_receptacle", names.name(p)) for p in parents]
    if obj["pickupable"]:
        kinds = fits.get(object_type, frozenset())
        relations += [("fits", names.name(r["objectId"])) for r in receptacles if r["objectType"] in kinds]
    return ObservedEntity(
        name=names.name(str(obj["objectId"])),
        type=object_type.lower(),
        label=_label(object_type, parents, by_id),
        properties=tuple(properties),
        relations=tuple(relations),
        attrs={"object_id": str(obj["objectId"])},
    )


def _label(object_type: str, parents: Sequence[str], by_id: Mapping[str, Mapping[str, Any]]) -> str:
    """``apple on the counter top``: what people call it, with where it was first seen."""
    words = label_of(object_type)
    if not parents:
        return words
    parent = str(by_id[parents[-1]]["objectType"])
    return f"{words} {'in' if parent in _INSIDE else 'on'} the {label_of(parent)}"


def _opaque(obj: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]], view: View) -> bool:
    """A closed receptacle; in the visible view also one whose listed contents are not all seen."""
    if not obj["receptacle"]:
        return False
    if obj["openable"] and not obj["isOpen"]:
        return True
    contents = obj.get("receptacleObjectIds") or ()
    return view == "visible" and any(not by_id.get(c, {}).get("visible", False) for c in contents)
