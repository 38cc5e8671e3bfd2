"""Every Environment implementation, set up for the contract suite (test_environment_contract.py): the
household simulator's, and AI2-THOR's on the real ai2thor Controller against the scripted Unity side.

Each backend names an action the environment will do now (and a fact that holds after it) and a
well-formed one it will not do; whatever else differs between backends is here, and the contract's
assertions are written once, in the test module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from thor.thor_support import scripted_env

from kg_memory import DomainRegistry, Fact
from l3mp.runtime import Environment, TaskRequest
from planning.evaluator import GroundAction
from sim.environment import SimEnvironment
from sim.household import HomeSpec, generate_home
from sim.simulator import Simulator
from sim.thor import ThorEnvironment

SMALL = HomeSpec(seed=3, rooms=4, items=8, people=1)
MUG = "Mug|-01.76|+00.90|-00.62"  # in FloorPlan1, out of view from where the scripted agent starts


class Backend(Protocol):
    @property
    def env(self) -> Environment: ...

    def doable(self) -> tuple[GroundAction, Fact]:
        """An action the environment does now, and a fact that is false before it and true after."""
        ...

    def refused(self) -> GroundAction:
        """A well-formed action (known name, known objects) that the environment will not do now."""
        ...

    def say(self, text: str) -> None:
        """Someone tells the robot ``text`` (the environment's way of feeding reports)."""
        ...

    def add_task(self, text: str) -> TaskRequest:
        """Someone asks the robot for a task in English, with no PDDL goal."""
        ...

    def close(self) -> None: ...


class Household:
    """SimEnvironment over a small generated home, with nobody acting between the robot's actions."""

    def __init__(self) -> None:
        self.sim = Simulator(generate_home(SMALL), seed=3)
        self.simulated = SimEnvironment(self.sim)
        self.robot = self.sim.home.robot

    @property
    def env(self) -> Environment:
        return self.simulated

    def here(self) -> str:
        return next(f.args[1] for f in self.sim.state if f.predicate == "robot_at" and f.args[0] == self.robot)

    def doable(self) -> tuple[GroundAction, Fact]:
        here = self.here()
        there = min(f.args[1] for f in self.sim.state if f.predicate == "connected" and f.args[0] == here)
        return GroundAction("move", (self.robot, here, there)), Fact("robot_at", (self.robot, there))

    def refused(self) -> GroundAction:
        here = self.here()
        elsewhere = min(r for r in self.sim.world.objects_of("room") if r != here)
        return GroundAction("move", (self.robot, elsewhere, here))  # the robot is not where it would leave

    def say(self, text: str) -> None:
        self.simulated.say(text)

    def add_task(self, text: str) -> TaskRequest:
        return self.simulated.add_task(text)

    def close(self) -> None:
        """Nothing to release."""


class Thor:
    """ThorEnvironment on ai2thor's Controller, the Unity side scripted from FloorPlan1's recording."""

    def __init__(self, folder: Path) -> None:
        self.thor: ThorEnvironment = scripted_env(folder, DomainRegistry().get("thor"))
        self.mug = self.thor.names.name(MUG)

    @property
    def env(self) -> Environment:
        return self.thor

    def doable(self) -> tuple[GroundAction, Fact]:
        return GroundAction("go_to", ("robot_1", self.mug)), Fact("near", ("robot_1", self.mug))

    def refused(self) -> GroundAction:
        return GroundAction("drop", ("robot_1", self.mug))  # the hand is empty

    def say(self, text: str) -> None:
        self.thor.say(text)

    def add_task(self, text: str) -> TaskRequest:
        return self.thor.add_task(text)

    def close(self) -> None:
        self.thor.close()


BACKENDS: dict[str, Callable[[Path], Backend]] = {"household": lambda folder: Household(), "thor": Thor}
CLOSABLE = ("thor",)  # the environments holding something to release (THOR's process)
