"""``l3mp plan``: plan from a memory for a request in English, a PDDL goal, or a problem file's goal.

    l3mp plan "Bring the blue mug to Alice" --memory home      # through the configured model
    l3mp plan --memory home --goal "(held mug_1 robot_1)"      # no model
    l3mp plan --memory blocks --goal-file p01.pddl --json      # an IPC problem's goal, validated
                                                               # against that file as well

    l3mp plan "Bring the glass to Irene" --memory home --open-world --json
    l3mp plan "Bring the glass to Irene" --memory home --open-world --answer "the glass=glass_2"

Its exit code says the plan's outcome (:data:`EXIT_CODES`, listed in ``l3mp plan --help``); 1 is an
error, as for every command.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from l3mp.cli._base import CliState, json_option, pass_state
from l3mp.outcomes import PlanOutcome
from retrieval.retrievers import RETRIEVERS

if TYPE_CHECKING:
    from kg_memory import WorldMemory
    from l3mp._json import JSONObject
    from l3mp.pipelines import PlanReport


# The one mapping of outcomes to exit codes (1 stays the code of an error).
EXIT_CODES: Mapping[PlanOutcome, int] = MappingProxyType(
    {
        PlanOutcome.SOLVED: 0,
        PlanOutcome.UNSOLVABLE: 2,
        PlanOutcome.TIMEOUT: 2,
        PlanOutcome.ERROR: 2,
        PlanOutcome.INVALID_REQUEST: 2,
        PlanOutcome.INVALID_GOAL: 2,
        PlanOutcome.NEEDS_INFORMATION: 3,  # the questions are in --json
        PlanOutcome.IMPOSSIBLE: 4,  # the issues name the gaps
        PlanOutcome.NEEDS_EXPLORATION: 5,  # the plan is an information-gathering sub-goal's
    }
)


def _exit_codes_help() -> str:
    by_code: dict[int, list[str]] = {1: ["an error"]}
    for outcome, code in EXIT_CODES.items():
        by_code.setdefault(code, []).append(outcome.value)
    lines = [f"{code}  {', '.join(names)}" for code, names in sorted(by_code.items())]
    return "\b\nExit codes:\n" + "\n".join(lines)


def _seconds(ctx: click.Context, param: click.Parameter, value: float) -> float:
    # float() reads "nan" and "inf": neither is a time a planner can be given
    if not (math.isfinite(value) and value > 0):
        raise click.BadParameter(f"{value}: give a positive number of seconds", ctx=ctx, param=param)
    return value


@click.command(epilog=_exit_codes_help())
@click.argument("request", default="")
@click.option("--memory", required=True)
@click.option("--goal", help="a PDDL goal formula")
@click.option(
    "--goal-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="a PDDL problem file: plan for its :goal and validate on it",
)
@click.option("--retriever", type=click.Choice(RETRIEVERS), help="default: L3MP_RETRIEVER or search")
@click.option("--planner", default="fast-downward", show_default=True)
@click.option(
    "--timeout", type=float, default=60.0, show_default=True, callback=_seconds, help="seconds per planner call"
)
@click.option("--no-full-state", is_flag=True, help="never plan on the whole state")
@click.option("--open-world", is_flag=True, help="ask about unclear mentions, explore for unknown locations")
@click.option("--answer", "answers", multiple=True, help="MENTION=ENTITY, answering a needs_information question")
@click.option(
    "--optimal",
    is_flag=True,
    help="the cheapest plan, proven (A* with LM-cut) within --timeout per search; else the best found, said so",
)
@json_option
@pass_state
def plan(
    state: CliState,
    request: str,
    memory: str,
    goal: str | None,
    goal_file: Path | None,
    retriever: str | None,
    planner: str,
    timeout: float,
    no_full_state: bool,
    open_world: bool,
    answers: tuple[str, ...],
    optimal: bool,
    as_json: bool,
) -> int:
    """Plan from a memory: a request in English (needs a model), --goal or --goal-file."""
    from kg_memory import WorldMemory
    from l3mp.pipelines import PlanConfig, TaskPlanner
    from l3mp.wiring import configured_model, nl_reader
    from planning.pddl_io import read_text

    if goal is not None and goal_file is not None:
        raise click.UsageError("give --goal or --goal-file, not both")
    if not request.strip() and goal is None and goal_file is None:
        raise click.UsageError("give a request, --goal or --goal-file")
    settings = state.settings()
    config = PlanConfig(
        retriever=retriever or settings.retriever,
        planner=planner,
        timeout=timeout,
        full_state=not no_full_state,
        deadline=settings.plan_deadline,
        fallback=settings.retrieval_fallback,
        optimal=optimal,
        reader=nl_reader(settings),
        ranker=settings.nl_ranker,
        max_facts=settings.context_facts,
    )
    with state.opened_store(settings) as store:
        world = WorldMemory.open(store, memory)
        original = read_text(goal_file, "problem") if goal_file else None
        if original is not None and goal_file is not None:
            goal = _goal_of(world, original, goal_file)
        model = None if goal is not None else configured_model(settings)
        if open_world or answers:
            from l3mp.pipelines.openworld import OpenWorldPlanner

            report = OpenWorldPlanner(world, model, config).plan(request, goal=goal, answers=_answers(answers))
        else:
            report = TaskPlanner(world, model, config).plan(request, goal=goal)
        record = report.to_json()
        if original is not None and report.solved:
            from planning.validate import validate_plan

            record["validation"] = validate_plan(world.domain.pddl, original, report.plan).to_json()
    if as_json:
        sys.stdout.write(json.dumps(record, indent=2) + "\n")
    else:
        _print(state, report, record)
    return EXIT_CODES[report.status]


def _answers(pairs: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for pair in pairs:
        mention, sep, entity = pair.rpartition("=")
        if not sep or not mention.strip() or not entity.strip():
            raise click.BadParameter(f"{pair!r}: write MENTION=ENTITY, e.g. 'the glass=glass_2'", param_hint="--answer")
        found[mention.strip()] = entity.strip()
    return found


def _goal_of(memory: WorldMemory, text: str, path: Path) -> str:
    from planning.pddl_io import read_problem

    return read_problem(memory.domain, text, str(path)).goal_text


def _print(state: CliState, report: PlanReport, record: JSONObject) -> None:
    from planning import numbered

    console = state.console
    colour = "green" if report.solved else "red"
    console.print(f"[{colour}]{report.status}[/]  goal: {escape(report.goal or '-')}  tier: {report.tier or '-'}")
    if report.explanation:
        console.print(numbered(report.explanation), markup=False)
    if report.cost_explanation:
        console.print(report.cost_explanation, markup=False)
    if report.optimality:
        console.print(f"  not proven optimal: {report.optimality}", markup=False)
    for issue in report.issues:
        console.print(f"  - {issue}", markup=False)
    for question in report.questions:
        console.print(f"  ? {json.dumps(question.to_json())}", markup=False)
    if "validation" in record:
        console.print(f"validated against the problem file: {record['validation']}", markup=False)
    timings = ", ".join(f"{k} {v:.2f} s" for k, v in report.timings.items())
    console.print(f"[dim]{timings}[/]")
