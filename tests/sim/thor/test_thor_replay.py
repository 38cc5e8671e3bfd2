"""The 9 recorded AI2-THOR sessions replayed through the real Controller class and the Unity-side double.

Besides the replay's own check (the memory against perception's reading of the same recorded event),
a few steps per trace are checked against facts read by hand from the recorded JSON (``BY_HAND``), so
a perception that misread THOR would not pass by agreeing with itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import require_thor_data, thor_files

from kg_memory import DomainRegistry, Fact, WorldMemory
from kg_memory.stores import SQLiteStore
from sim.thor import ReplayResult, replay_trace
from sim.thor.data import read_trace

AGENT = "robot_1"  # THOR's agent in every memory
Facts = tuple[tuple[str, ...], ...]  # (predicate, objectId or AGENT, ...)


@dataclass(frozen=True, slots=True, kw_only=True)
class ByHand:
    """What one recorded step's metadata says, read by hand: facts that hold, and facts that do not."""

    step: int
    holds: Facts = ()
    lacks: Facts = ()


# Read from each trace's recorded metadata: ``inventoryObjects``, and the objects' ``parentReceptacles``,
# ``isOpen``, ``isToggled``. A comment gives the trace, step and action, and what the JSON says there.
BY_HAND: dict[str, tuple[ByHand, ...]] = {
    "pickup_mug.json.gz": (
        # step 1 PickupObject Apple: inventory [Apple]; the apple's parents [CounterTop|-00.08|...] → null;
        # the sponge's parents [SinkBasin] → null in the same step (physics, not the action)
        ByHand(
            step=1,
            holds=(("holding", AGENT, "Apple|-00.47|+01.15|+00.48"),),
            lacks=(
                ("hand_empty", AGENT),
                ("in_receptacle", "Apple|-00.47|+01.15|+00.48", "CounterTop|-00.08|+01.15|00.00"),
                ("in_receptacle", "DishSponge|-01.94|+00.75|-01.71", "Sink|-01.90|+00.97|-01.50|SinkBasin"),
            ),
        ),
        # step 2 DropHandObject: inventory []; the apple's parents [Floor]; the sponge's [Cabinet|-01.55|...]
        ByHand(
            step=2,
            holds=(
                ("hand_empty", AGENT),
                ("in_receptacle", "Apple|-00.47|+01.15|+00.48", "Floor|+00.00|+00.00|+00.00"),
                ("in_receptacle", "DishSponge|-01.94|+00.75|-01.71", "Cabinet|-01.55|+00.50|-01.97"),
            ),
            lacks=(("holding", AGENT, "Apple|-00.47|+01.15|+00.48"),),
        ),
        # step 4 DropHandObject: the mug's parents [Floor], no longer [CounterTop|-01.87|...]
        ByHand(
            step=4,
            holds=(("in_receptacle", "Mug|-01.76|+00.90|-00.62", "Floor|+00.00|+00.00|+00.00"),),
            lacks=(("in_receptacle", "Mug|-01.76|+00.90|-00.62", "CounterTop|-01.87|+00.95|-01.21"),),
        ),
    ),
    "open_fridge.json.gz": (
        # step 1 OpenObject Drawer|-01.56|+00.66|-00.20: isOpen true; the fridge's isOpen false
        ByHand(
            step=1,
            holds=(("is_open", "Drawer|-01.56|+00.66|-00.20"),),
            lacks=(("is_open", "Fridge|-02.10|+00.00|+01.07"),),
        ),
        # step 3 OpenObject Fridge: the fridge's isOpen true, the drawer's false again (closed at step 2)
        ByHand(
            step=3,
            holds=(("is_open", "Fridge|-02.10|+00.00|+01.07"),),
            lacks=(("is_open", "Drawer|-01.56|+00.66|-00.20"),),
        ),
        # step 4 CloseObject Fridge: isOpen false
        ByHand(step=4, lacks=(("is_open", "Fridge|-02.10|+00.00|+01.07"),)),
    ),
    "WashCutleryTask.json.gz": (
        # step 1 PickupObject Knife: inventory [Knife]; its parents [Drawer|-01.56|+00.84|-00.20] → null
        ByHand(
            step=1,
            holds=(("holding", AGENT, "Knife|-01.70|+00.79|-00.22"),),
            lacks=(("in_receptacle", "Knife|-01.70|+00.79|-00.22", "Drawer|-01.56|+00.84|-00.20"),),
        ),
        # step 4 PutObject SinkBasin: the knife's and the fork's parents [SinkBasin]; the sponge's null →
        # [Cabinet|-01.55|+00.50|-01.97] in the same step
        ByHand(
            step=4,
            holds=(
                ("hand_empty", AGENT),
                ("in_receptacle", "Fork|+00.95|+00.77|-02.37", "Sink|-01.90|+00.97|-01.50|SinkBasin"),
                ("in_receptacle", "Knife|-01.70|+00.79|-00.22", "Sink|-01.90|+00.97|-01.50|SinkBasin"),
                ("in_receptacle", "DishSponge|-01.94|+00.75|-01.71", "Cabinet|-01.55|+00.50|-01.97"),
            ),
            lacks=(("holding", AGENT, "Fork|+00.95|+00.77|-02.37"),),
        ),
        # step 7 ToggleObjectOn Faucet: isToggled true; the spoon's parents [SinkBasin]
        ByHand(
            step=7,
            holds=(
                ("is_on", "Faucet|-02.15|+00.91|-01.50"),
                ("in_receptacle", "Spoon|+00.98|+00.77|-02.29", "Sink|-01.90|+00.97|-01.50|SinkBasin"),
            ),
        ),
    ),
    "clean_up_kitchen.json.gz": (
        # step 2 PutObject GarbageCan: the apple's parents [Floor, GarbageCan] (two receptacles)
        ByHand(
            step=2,
            holds=(
                ("in_receptacle", "Apple|-00.47|+01.15|+00.48", "Floor|+00.00|+00.00|+00.00"),
                ("in_receptacle", "Apple|-00.47|+01.15|+00.48", "GarbageCan|-01.94|00.00|+02.03"),
            ),
            lacks=(("holding", AGENT, "Apple|-00.47|+01.15|+00.48"),),
        ),
        # step 4 PutObject GarbageCan: the tomato's parents [Floor, GarbageCan]; the sponge's null →
        # [Cabinet|-01.55|+00.50|-01.97]
        ByHand(
            step=4,
            holds=(
                ("in_receptacle", "Tomato|-00.39|+01.14|-00.81", "GarbageCan|-01.94|00.00|+02.03"),
                ("in_receptacle", "DishSponge|-01.94|+00.75|-01.71", "Cabinet|-01.55|+00.50|-01.97"),
            ),
        ),
        # step 7 PickupObject Egg: inventory [Egg]; its parents [Fridge] → null
        ByHand(
            step=7,
            holds=(("holding", AGENT, "Egg|-02.04|+00.81|+01.24"),),
            lacks=(("in_receptacle", "Egg|-02.04|+00.81|+01.24", "Fridge|-02.10|+00.00|+01.07"),),
        ),
    ),
    "clean_up_bathroom.json.gz": (
        # step 1 PickupObject Cloth: inventory [Cloth]; its parents [BathtubBasin] → null
        ByHand(
            step=1,
            holds=(("holding", AGENT, "Cloth|-00.27|+00.04|+01.02"),),
            lacks=(("in_receptacle", "Cloth|-00.27|+00.04|+01.02", "Bathtub|-00.21|+00.36|+00.92|BathtubBasin"),),
        ),
        # step 8 PutObject GarbageCan: the spray bottle's parents [Floor|-01.44|..., GarbageCan]; it was on
        # [Floor, SideTable|-03.17|...] before step 7 picked it up
        ByHand(
            step=8,
            holds=(
                ("in_receptacle", "SprayBottle|-03.09|+00.23|+00.29", "Floor|-01.44|-00.04|+01.85"),
                ("in_receptacle", "SprayBottle|-03.09|+00.23|+00.29", "GarbageCan|+00.05|00.00|+03.88"),
            ),
            lacks=(("in_receptacle", "SprayBottle|-03.09|+00.23|+00.29", "SideTable|-03.17|+00.00|+00.17"),),
        ),
    ),
    "clean_up_bedroom.json.gz": (
        # step 2 PutObject Box: the key chain's parents [Box, Floor]; it was on the desk
        ByHand(
            step=2,
            holds=(
                ("in_receptacle", "KeyChain|+01.74|+00.80|-01.29", "Box|+02.73|+00.20|+00.89"),
                ("in_receptacle", "KeyChain|+01.74|+00.80|-01.29", "Floor|+00.00|+00.00|+00.00"),
            ),
            lacks=(("in_receptacle", "KeyChain|+01.74|+00.80|-01.29", "Desk|+02.21|+00.01|-01.26"),),
        ),
        # step 5 PickupObject CellPhone: inventory [CellPhone]; its parents [Bed] → null
        ByHand(
            step=5,
            holds=(("holding", AGENT, "CellPhone|-00.26|+00.56|+00.52"),),
            lacks=(("in_receptacle", "CellPhone|-00.26|+00.56|+00.52", "Bed|-00.64|+00.01|+00.87"),),
        ),
    ),
    "clean_up_living_room.json.gz": (
        # step 3 PickupObject CreditCard: its parents [Chair|-01.86|+00.02|+01.84, DiningTable] → null;
        # the watch (put at step 2) has parents [Box, Floor|+00.00|+00.38|+00.00]
        ByHand(
            step=3,
            holds=(
                ("holding", AGENT, "CreditCard|-01.94|+00.68|+01.80"),
                ("in_receptacle", "Watch|-02.10|+00.73|-00.06", "Box|-03.36|+00.19|+06.43"),
            ),
            lacks=(
                ("in_receptacle", "CreditCard|-01.94|+00.68|+01.80", "Chair|-01.86|+00.02|+01.84"),
                ("in_receptacle", "CreditCard|-01.94|+00.68|+01.80", "DiningTable|-02.27|-00.02|+01.42"),
            ),
        ),
        # step 8 PutObject Box: the remote control, watch, credit card and key chain all have parents [Box, Floor]
        ByHand(
            step=8,
            holds=tuple(
                ("in_receptacle", thing, "Box|-03.36|+00.19|+06.43")
                for thing in (
                    "RemoteControl|-02.58|+00.74|-00.15",
                    "Watch|-02.10|+00.73|-00.06",
                    "CreditCard|-01.94|+00.68|+01.80",
                    "KeyChain|-00.27|+00.70|+03.13",
                )
            ),
            lacks=(("holding", AGENT, "RemoteControl|-02.58|+00.74|-00.15"),),
        ),
    ),
    "look_in_light_book.json.gz": (
        # step 1 ToggleObjectOff DeskLamp: isToggled true → false
        ByHand(step=1, lacks=(("is_on", "DeskLamp|-01.32|+01.24|-00.99"),)),
        # step 7 PickupObject Book (after five navigation steps): inventory [Book]; its parents [Bed] → null
        ByHand(
            step=7,
            holds=(("holding", AGENT, "Book|-00.90|+00.56|+01.18"),),
            lacks=(("in_receptacle", "Book|-00.90|+00.56|+01.18", "Bed|-00.64|+00.01|+00.87"),),
        ),
        # step 11 ToggleObjectOn DeskLamp: isToggled true; the book still in the inventory after walking
        ByHand(
            step=11,
            holds=(("is_on", "DeskLamp|-01.32|+01.24|-00.99"), ("holding", AGENT, "Book|-00.90|+00.56|+01.18")),
        ),
    ),
    "DoHomework.json.gz": (
        # step 1 ToggleObjectOff CellPhone (held): isToggled false; the laptop's isOpen and isToggled true
        ByHand(
            step=1,
            holds=(("is_on", "Laptop|-00.50|+00.56|+00.29"), ("is_open", "Laptop|-00.50|+00.56|+00.29")),
            lacks=(("is_on", "CellPhone|-00.26|+00.56|+00.52"),),
        ),
        # step 3 PutObject Drawer|-01.31|+00.45|-00.58 (opened at step 2): the phone's parents [Drawer, Floor]
        ByHand(
            step=3,
            holds=(
                ("hand_empty", AGENT),
                ("is_open", "Drawer|-01.31|+00.45|-00.58"),
                ("in_receptacle", "CellPhone|-00.26|+00.56|+00.52", "Drawer|-01.31|+00.45|-00.58"),
                ("in_receptacle", "CellPhone|-00.26|+00.56|+00.52", "Floor|+00.00|+00.00|+00.00"),
            ),
        ),
        # step 6 CloseObject Laptop: the laptop's isOpen and isToggled false; the drawer closed at step 4
        ByHand(
            step=6,
            lacks=(
                ("is_open", "Laptop|-00.50|+00.56|+00.29"),
                ("is_on", "Laptop|-00.50|+00.56|+00.29"),
                ("is_open", "Drawer|-01.31|+00.45|-00.58"),
            ),
        ),
        # step 9 MoveAhead: inventory [Pencil] (picked up from the desk at step 7)
        ByHand(
            step=9,
            holds=(("holding", AGENT, "Pencil|+02.01|+00.81|-01.17"),),
            lacks=(("in_receptacle", "Pencil|+02.01|+00.81|-01.17", "Desk|+02.21|+00.01|-01.26"),),
        ),
    ),
}


def _by_hand(result: ReplayResult, memory: WorldMemory, trace: str) -> list[str]:
    """How the memory after each hand-checked step differs from what the recording says there."""
    names = {str(e.attrs["object_id"]): n for n, e in memory.entities().items() if "object_id" in e.attrs}
    names[AGENT] = AGENT
    problems = []
    for expected in BY_HAND[trace]:
        facts = memory.state_at(result.steps[expected.step].version).facts
        for args in expected.holds:
            fact = Fact(args[0], tuple(names[a] for a in args[1:]))
            problems += [] if fact in facts else [f"step {expected.step}: memory lacks {fact} ({args})"]
        for args in expected.lacks:
            fact = Fact(args[0], tuple(names[a] for a in args[1:]))
            problems += [f"step {expected.step}: memory holds {fact} ({args})"] if fact in facts else []
    return problems


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SQLiteStore:
    return SQLiteStore(tmp_path_factory.mktemp("replay") / "replay.db", DomainRegistry())


@pytest.mark.parametrize("trace", thor_files("traces"))
def test_every_interaction_is_sent_as_recorded_and_memory_holds_what_the_recording_says(
    trace: str, store: SQLiteStore, thor_home: Path
) -> None:
    path = require_thor_data() / "traces" / trace
    recorded = read_trace(path)["steps"]
    result = replay_trace(path, store, trace.split(".")[0].lower())
    assert _by_hand(result, WorldMemory.open(store, trace.split(".")[0].lower()), trace) == []
    assert len(BY_HAND[trace]) >= 2
    problems = [(s.index, s.problems) for s in result.steps if not s.agrees or s.matched is False]
    assert result.ok, problems
    interactions = [s for s in result.steps if s.matched is not None]
    assert len(result.steps) == len(recorded) and interactions
    assert all(s.sent == s.recorded for s in interactions)
    assert result.totals["actions_matched"] == result.totals["interactions"] == len(interactions)
    assert (thor_home / ".ai2thor" / "log" / "unity.log").exists()  # the controller really launched the double


def test_an_action_other_than_the_recorded_one_is_refused_and_disagrees(tmp_path: Path, thor_home: Path) -> None:
    from ai2thor.controller import Controller

    from sim.thor.unity import write_executable

    path = require_thor_data() / "traces" / "pickup_mug.json.gz"
    config = {"backend": "replay", "trace": str(path), "log": str(tmp_path / "wire.jsonl")}
    controller = Controller(
        local_executable_path=str(write_executable(tmp_path, config)), scene="FloorPlan1", x_display=":0"
    )
    try:
        event = controller.step(action="PickupObject", objectId="Mug|-01.76|+00.90|-00.62", forceAction=True)
    finally:
        controller.stop()
    assert event.metadata["lastActionSuccess"] is False
    assert "the recording sent" in event.metadata["errorMessage"]
