"""Random applicable actions in the ``household`` domain, for the evaluator benchmark: each action
kind is bound from the home's fixed layout (which room a fixture stands in, which rooms connect,
which faucet serves a sink) and the world's indexes of the current state, never by grounding all
actions."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from kg_memory import Fact
from planning import GroundAction, World
from sim.household import LIQUIDS, ROBOT, Home


class Chooser:
    """Random applicable ground actions: the home's fixed layout plus the world's indexes (never grounding all).

    Each ``kinds`` entry binds one action kind in the current state or gives ``None``;
    :meth:`next` tries the kinds in random order and returns the first that binds.
    """

    def __init__(self, world: World, home: Home, rng: random.Random) -> None:
        self.world, self.home, self.rng = world, home, rng
        fixtures: dict[str, list[str]] = {room: [] for room in home.rooms}
        for name in (*home.receptacles, *home.appliances):  # where furniture stands never changes
            fixtures[home.room_of[name]].append(name)
        self.fixtures = {room: tuple(sorted(names)) for room, names in fixtures.items()}
        self.kinds: dict[str, Callable[[], GroundAction | None]] = {
            "move": self._move,
            "pick": self._pick,
            "take_out": self._take_out,
            "place": self._place,
            "put_in": self._put_in,
            "open_container": lambda: self._container("open_container", opened=False, type_="container"),
            "close_container": lambda: self._container("close_container", opened=True, type_="container"),
            "switch_on": lambda: self._appliance("switch_on", on=False),
            "switch_off": lambda: self._appliance("switch_off", on=True),
            "wash": self._wash,
            "run_washer": lambda: self._container("run_washer", opened=False, type_="washer"),
            "run_dryer": lambda: self._container("run_dryer", opened=False, type_="dryer"),
            "give": self._give,
            "fill": self._fill,
            "pour_out": self._pour_out,
            "answer_phone": self._answer_phone,
        }
        self._names = sorted(self.kinds)

    def next(self) -> GroundAction:
        for name in self.rng.sample(self._names, len(self._names)):
            action = self.kinds[name]()
            if action is not None:
                return action
        raise RuntimeError("no action applies: the robot is stuck")

    # state --------------------------------------------------------------------------------

    @property
    def room(self) -> str:
        return next(iter(self.world.facts_of("robot_at"))).args[1]

    @property
    def held(self) -> str | None:
        held = self.world.facts_of("held")
        return next(iter(held)).args[0] if held else None

    def _here(self, type_: str) -> list[str]:
        """The receptacles or appliances of ``type_`` (or a subtype) in the robot's room, sorted."""
        return [x for x in self.fixtures[self.room] if self.world.is_a(x, type_)]

    def _holds(self, predicate: str, *args: str) -> bool:
        return self.world.holds(Fact.unchecked(predicate, args))

    def _with(self, predicate: str, name: str, position: int) -> list[str]:
        """The other argument of binary ``predicate`` facts with ``name`` at ``position``, sorted."""
        facts = self.world.facts_about(name)
        return sorted(f.args[1 - position] for f in facts if f.predicate == predicate and f.args[position] == name)

    def _pick_one(self, options: Sequence[str]) -> str | None:
        return self.rng.choice(options) if options else None

    # kinds --------------------------------------------------------------------------------

    def _move(self) -> GroundAction | None:
        room = self.room
        to = self._pick_one(self.home.neighbours[room])
        return GroundAction("move", (ROBOT, room, to)) if to else None

    def _pick(self) -> GroundAction | None:
        if self.held:
            return None
        receptacles = self._here("receptacle")
        for receptacle in self.rng.sample(receptacles, len(receptacles)):
            item = self._pick_one(self._with("on", receptacle, 1))
            if item:
                return GroundAction("pick", (ROBOT, item, receptacle, self.room))
        return None

    def _take_out(self) -> GroundAction | None:
        if self.held:
            return None
        for container in self._here("container"):
            item = self._pick_one(self._with("inside", container, 1)) if self._holds("open", container) else None
            if item:
                return GroundAction("take_out", (ROBOT, item, container, self.room))
        return None

    def _place(self) -> GroundAction | None:
        receptacle, held = self._pick_one(self._here("receptacle")), self.held
        return GroundAction("place", (ROBOT, held, receptacle, self.room)) if held and receptacle else None

    def _put_in(self) -> GroundAction | None:
        held = self.held
        container = self._pick_one([c for c in self._here("container") if self._holds("open", c)])
        return GroundAction("put_in", (ROBOT, held, container, self.room)) if held and container else None

    def _container(self, action: str, opened: bool, type_: str) -> GroundAction | None:
        container = self._pick_one([c for c in self._here(type_) if self._holds("open", c) is opened])
        return GroundAction(action, (ROBOT, container, self.room)) if container else None

    def _appliance(self, action: str, on: bool) -> GroundAction | None:
        appliance = self._pick_one([x for x in self._here("appliance") if self._holds("switched_on", x) is on])
        return GroundAction(action, (ROBOT, appliance, self.room)) if appliance else None

    def _sink_and_faucet(self) -> tuple[str, str] | None:
        """A sink in the robot's room whose faucet is on."""
        for sink in self._here("sink"):
            faucet = self.home.faucet_of[sink]
            if self._holds("switched_on", faucet):
                return sink, faucet
        return None

    def _wash(self) -> GroundAction | None:
        held, found = self.held, self._sink_and_faucet()
        if held is None or found is None or not self.world.is_a(held, "dish") or not self._holds("dirty", held):
            return None
        return GroundAction("wash", (ROBOT, held, *found, self.room))

    def _filled(self, cup: str) -> bool:
        return any(self._holds("filled", cup, liquid) for liquid in LIQUIDS)

    def _fill(self) -> GroundAction | None:
        held, found = self.held, self._sink_and_faucet()
        if held is None or found is None or not self.world.is_a(held, "cup"):
            return None
        if self._holds("dirty", held) or self._filled(held):
            return None
        return GroundAction("fill", (ROBOT, held, *found, self.room))

    def _pour_out(self) -> GroundAction | None:
        held, sink = self.held, self._pick_one(self._here("sink"))
        if held is None or sink is None or not self.world.is_a(held, "cup") or not self._filled(held):
            return None
        return GroundAction("pour_out", (ROBOT, held, sink, self.room))

    def _give(self) -> GroundAction | None:
        held, person = self.held, self._pick_one(self._with("person_in", self.room, 1))
        return GroundAction("give", (ROBOT, held, person, self.room)) if held and person else None

    def _answer_phone(self) -> GroundAction | None:
        held = self.held
        if held is None or not self._holds("ringing", held):
            return None
        return GroundAction("answer_phone", (ROBOT, held))
