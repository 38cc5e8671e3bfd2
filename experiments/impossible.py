"""Soundness of ``impossible``: random goals over tiny simulated homes, each answer judged.

Each home is the simulator's own (``sim.generate_home``) at a tiny size, sometimes with a few facts
forgotten (the robot nowhere, its hand neither empty nor full, a door gone), so that actions are
blocked too. Each goal is drawn from atoms over the domain's static and fluent predicates, ``and``,
``or``, ``not``, ``exists``, ``forall`` and implications. ``planning.reachability`` answers it; the
evaluator says whether it holds; every goal the check calls impossible goes to the planner on the
full state (the home's impossible goals as one disjunction first, which is unsolvable only if each
of them is; if the planner finds a plan for it, each goal alone). An ``impossible`` answer is unsound
when the goal holds or the planner finds a plan our evaluator accepts.

    python -m experiments impossible [--homes 400] [--goals 12] [--seed 0]
"""

from __future__ import annotations

import random
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rich.console import Console

from experiments.harness import (
    RESULTS,
    Benchmark,
    add_gc_argument,
    header,
    judged,
    machine_info,
    measures_table,
    ms,
    verdict,
    write_results,
)
from kg_memory import Domain, DomainRegistry, Fact
from kg_memory.formula import And, Atom, Formula, Not, Or, Parameter, Quantified
from planning import ActionEvaluator, World, problem_pddl, solve
from planning.reachability import analyse, goal_gaps, impossible_gaps
from sim import HomeSpec, generate_home

SOLVED, UNSOLVABLE = "solved", "unsolvable"
ROBOT = "robot_1"
HAND_EMPTY = Fact("hand_empty", (ROBOT,))

# -- tiny homes -----------------------------------------------------------------------------


def tiny_home(domain: Domain, seed: int) -> World:
    """A simulated home of one to three rooms and a few items and people, where the robot holds an
    item a third of the time; in half of them one to three facts (static ones too) are forgotten."""
    rng = random.Random(seed)
    spec = HomeSpec(seed=seed, rooms=rng.randint(1, 3), items=rng.randint(1, 6), people=rng.randint(0, 2))
    home = generate_home(spec)
    facts = sorted(home.facts, key=str)
    placed = [f for f in facts if f.predicate in ("on", "inside")]
    if placed and rng.random() < 1 / 3:
        where = rng.choice(placed)
        facts = [f for f in facts if f not in (where, HAND_EMPTY)] + [Fact("held", (where.args[0], ROBOT))]
    forgotten = set(rng.sample(facts, rng.choice((1, 2, 3)))) if rng.random() < 0.5 else set()
    return World(domain, home.entities, [f for f in facts if f not in forgotten])


# -- random goals ---------------------------------------------------------------------------

KINDS = ("atom", "not", "and", "or", "exists", "forall", "imply", "among")
WEIGHTS = (5, 2, 2, 2, 3, 2, 2, 3)


@dataclass(slots=True)
class GoalMaker:
    """Draws well-typed goals over one world: atoms name its objects or variables in scope."""

    world: World
    rng: random.Random
    fresh: int = 0
    _types: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        self._types = tuple(sorted(t for t in self.world.domain.types if t != "object"))

    def goal(self) -> Formula:
        return self.formula({}, self.rng.randint(0, 3))

    def formula(self, scope: dict[str, str], depth: int) -> Formula:
        kind = "atom" if depth <= 0 else self.rng.choices(KINDS, WEIGHTS)[0]
        if kind in ("exists", "forall"):
            return self.quantified(scope, depth, universal=kind == "forall")
        if kind in ("and", "or"):
            args = tuple(self.formula(scope, depth - 1) for _ in range(self.rng.randint(2, 3)))
            return And(args) if kind == "and" else Or(args)
        if kind == "not":
            return Not(self.formula(scope, depth - 1))
        if kind == "imply":
            return Or((Not(self.atom(scope)), self.formula(scope, depth - 1)))
        if kind == "among":
            return self.among(scope, depth)
        return self.atom(scope)

    def among(self, scope: dict[str, str], depth: int) -> Formula:
        """A goal over a collection the home's layout picks out: "some receptacle in the study has the
        book on it", "every light in the kitchen is off" (a static atom about a fresh variable)."""
        domain = self.world.domain
        schema = domain.predicates[self.rng.choice(sorted(domain.static_predicates - domain.functions))]
        slot = self.rng.randrange(len(schema.parameters))
        self.fresh += 1
        subtypes = [t for t in self._types if domain.is_subtype(t, schema.parameters[slot].type)]
        variable = Parameter(f"v{self.fresh}", self.rng.choice(subtypes))
        inner = {**scope, variable.name: variable.type}
        terms = [
            f"?{variable.name}" if i == slot else self.term(scope, p.type) for i, p in enumerate(schema.parameters)
        ]
        if not all(terms):
            return self.atom(scope)
        where = Atom(schema.name, tuple(t for t in terms if t))
        rest = self.formula(inner, depth - 1)
        if self.rng.random() < 0.5:
            return Quantified(False, (variable,), And((where, rest)))
        return Quantified(True, (variable,), Or((Not(where), rest)))

    def quantified(self, scope: dict[str, str], depth: int, *, universal: bool) -> Formula:
        self.fresh += 1
        variable = Parameter(f"v{self.fresh}", self.rng.choice(self._types))
        inner = {**scope, variable.name: variable.type}
        return Quantified(universal, (variable,), self.formula(inner, depth - 1))

    def atom(self, scope: dict[str, str]) -> Formula:
        domain = self.world.domain
        schemas = [p for p in domain.predicates.values() if not p.numeric]
        usable = [p for p in schemas if any(self._variables(scope, q.type) for q in p.parameters)]
        if usable and self.rng.random() < 0.8:  # mostly about a variable in scope, when one fits
            schemas = usable
        for _ in range(20):
            schema = self.rng.choice(schemas)
            terms = [self.term(scope, p.type) for p in schema.parameters]
            if all(terms):
                return Atom(schema.name, tuple(t for t in terms if t))
        return Atom(HAND_EMPTY.predicate, HAND_EMPTY.args)

    def term(self, scope: dict[str, str], type_: str) -> str | None:
        variables = self._variables(scope, type_)
        objects = self.world.objects_of(type_)
        if variables and (not objects or self.rng.random() < 0.7):
            return self.rng.choice(variables)
        return self.rng.choice(objects) if objects else None

    def _variables(self, scope: dict[str, str], type_: str) -> list[str]:
        return [f"?{v}" for v, t in scope.items() if self.world.domain.is_subtype(t, type_)]


# -- judging --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """One goal's answer and what it was judged against."""

    goal: str
    holds: bool
    gaps: tuple[str, ...]  # what ``impossible_gaps`` said: non-empty means ``impossible``
    relaxed_gaps: tuple[str, ...]  # the relaxation alone, without the "already holds" shortcut
    planner: str = ""  # for an impossible answer: the planner's outcome on the full state
    seconds: float = 0.0  # the check's

    @property
    def impossible(self) -> bool:
        return bool(self.gaps)

    @property
    def unsound(self) -> bool:
        """Called impossible although it holds or a plan reaches it."""
        return self.impossible and (self.holds or self.planner == SOLVED)

    @property
    def undecided(self) -> bool:
        """Called impossible and the planner neither found a plan nor proved there is none."""
        return self.impossible and not self.holds and self.planner not in (SOLVED, UNSOLVABLE)

    def to_json(self) -> dict[str, Any]:
        return {"goal": self.goal, "holds": self.holds, "gaps": list(self.gaps), "planner": self.planner}


def judge_home(world: World, goals: Sequence[Formula], timeout: float = 60.0) -> list[Verdict]:
    """Each goal's answer over ``world``, the impossible ones checked by the planner."""
    evaluator = ActionEvaluator(world.domain)
    facts = [(f.predicate, f.args) for f in world.facts]
    reach = analyse(world.domain, {n: e.type for n, e in world.entities.items()}, {p for p, _ in facts})
    verdicts = []
    for goal in goals:
        started = time.perf_counter()
        gaps = impossible_gaps(world, goal)
        seconds = time.perf_counter() - started
        holds = evaluator.evaluate(goal, world)
        relaxed = goal_gaps(reach, goal, facts)
        verdicts.append(Verdict(goal=str(goal), holds=holds, gaps=gaps, relaxed_gaps=relaxed, seconds=seconds))
    blocked = [g for g, v in zip(goals, verdicts, strict=True) if v.impossible and not v.holds]
    outcomes = planner_outcomes(world, blocked, timeout)
    return [replace(v, planner=outcomes.get(str(g), "")) for g, v in zip(goals, verdicts, strict=True)]


def planner_outcomes(world: World, goals: Sequence[Formula], timeout: float) -> dict[str, str]:
    """The planner's outcome for each goal (by its text): their disjunction first, since it is
    unsolvable only if every one of them is; each goal alone only when that is not proven."""
    if not goals:
        return {}
    whole = plan_outcome(world, goals[0] if len(goals) == 1 else Or(tuple(goals)), timeout)
    if whole == UNSOLVABLE or len(goals) == 1:
        return {str(g): whole for g in goals}
    return {str(g): plan_outcome(world, g, timeout) for g in goals}


def plan_outcome(world: World, goal: Formula, timeout: float) -> str:
    """``solved`` (a plan our evaluator accepts), ``unsolvable``, or what else the planner said."""
    domain = world.domain
    result = solve(domain, problem_pddl(domain, world.entities.values(), world.facts, goal), timeout=timeout)
    if not result.solved:
        return result.status.value
    outcome = ActionEvaluator(domain).validate(result.plan, world, goal)
    return SOLVED if outcome.executable and outcome.goal_reached else "plan rejected by the evaluator"


def run(homes: int, goals_per_home: int, seed: int = 0) -> list[Verdict]:
    """Goals over ``homes`` tiny homes (seeded from ``seed``), judged."""
    domain = DomainRegistry().get("household")
    verdicts: list[Verdict] = []
    for index in range(homes):
        world = tiny_home(domain, seed + index)
        maker = GoalMaker(world, random.Random(f"{seed}/{index}"))
        verdicts += judge_home(world, [maker.goal() for _ in range(goals_per_home)])
    return verdicts


# -- the benchmark --------------------------------------------------------------------------


def summary(verdicts: Sequence[Verdict]) -> dict[str, Any]:
    seconds = [v.seconds for v in verdicts]
    return {
        "goals": len(verdicts),
        "held": sum(v.holds for v in verdicts),
        "impossible": sum(v.impossible for v in verdicts),
        "impossible_confirmed_by_planner": sum(v.impossible and v.planner == UNSOLVABLE for v in verdicts),
        "unsound": sum(v.unsound for v in verdicts),
        "undecided": sum(v.undecided for v in verdicts),
        "relaxation_blocks_a_held_goal": sum(v.holds and bool(v.relaxed_gaps) for v in verdicts),
        "check_ms_p50": ms(seconds, 50),
        "check_ms_p95": ms(seconds, 95),
        "check_ms_mean": round(1000 * statistics.fmean(seconds), 3) if seconds else 0.0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--homes", type=int, default=400)
    parser.add_argument("--goals", type=int, default=12, help="goals per home")
    parser.add_argument("--seed", type=int, default=0)
    add_gc_argument(parser, help="(unused)")
    args = parser.parse_args(argv)
    console = Console()
    results = header("impossible", args, machine_info())
    started = time.perf_counter()
    verdicts = run(args.homes, args.goals, args.seed)
    figures = summary(verdicts) | {"wall_seconds": round(time.perf_counter() - started, 1)}
    reasons = Counter(g for v in verdicts for g in v.gaps)
    total, unsound = figures["goals"], figures["unsound"]
    results |= {
        "summary": figures,
        "common_gaps": [{"gap": g, "count": n} for g, n in reasons.most_common(15)],
        "unsound": [v.to_json() for v in verdicts if v.unsound],
        "undecided": [v.to_json() for v in verdicts if v.undecided],
        "examples": [v.to_json() for v in verdicts if v.impossible][:20],
        "targets": {
            "no unsound impossible": judged("0 unsound", unsound, unsound == 0, samples=figures["impossible"]),
            "every impossible decided": judged("0 undecided", figures["undecided"], figures["undecided"] == 0),
            "goals": judged(">= 1000 goals", total, total >= 1000),
        },
    }
    write_results(args.out, results)
    console.print(measures_table("impossible", [(k, str(v)) for k, v in figures.items()]))
    console.print(measures_table("targets", [(k, verdict(t)) for k, t in results["targets"].items()]))
    return 0


BENCHMARK = Benchmark(name="impossible", results=RESULTS / "impossible.json", main=main)
