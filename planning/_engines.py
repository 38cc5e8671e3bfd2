"""Our unified-planning engines and the names callers use for them.

Fast Downward: up-fast-downward runs it in the caller's working directory, where it writes
``output.sas``: two plans made at once (threads, or two processes in one directory)
overwrite each other's file and come back with each other's plans. These subclasses put
the file beside the plan file, in the temporary directory unified-planning makes per call.

Every subprocess engine here also reaps its process on a timeout (see ``ReapedProcess``).
"""

from __future__ import annotations

from pathlib import Path

from up_fast_downward.fast_downward import FastDownwardOptimalPDDLPlanner, FastDownwardPDDLPlanner

from planning._subprocess_reaping import ReapedProcess

# our planner name -> (its unified-planning engine name, module, class), registered on first use
ENGINES = {
    "fast-downward": ("l3mp-fast-downward", __name__, "IsolatedFastDownward"),  # lama-first
    "fast-downward-opt": ("l3mp-fast-downward-opt", __name__, "IsolatedFastDownwardOptimal"),  # A* LM-cut
    "lapkt": ("l3mp-lapkt", "planning._lapkt", "LapktPlanner"),  # SIW+ then BFS(f)
}


def _private_sas(command: list[str], plan_filename: str) -> list[str]:
    sas = str(Path(plan_filename).with_name("output.sas"))
    return [*command[:2], "--sas-file", sas, *command[2:]]  # driver options go before the files


class IsolatedFastDownward(ReapedProcess, FastDownwardPDDLPlanner):  # type: ignore[misc]
    def _base_cmd(self, plan_filename: str) -> list[str]:
        return _private_sas(super()._base_cmd(plan_filename), plan_filename)


class IsolatedFastDownwardOptimal(ReapedProcess, FastDownwardOptimalPDDLPlanner):  # type: ignore[misc]
    def _base_cmd(self, plan_filename: str) -> list[str]:
        return _private_sas(super()._base_cmd(plan_filename), plan_filename)


def unavailable(planner: str) -> str | None:
    """Why one of our planners cannot run here (something missing), or ``None``."""
    if planner == "lapkt":
        from planning._lapkt import missing

        return missing()
    return None


def planner_names() -> tuple[str, ...]:
    """Ours that can run here, then every other one-shot planner unified-planning has installed.

    Left out: unified-planning's own names for the engines ours replace, and its meta-engines
    (``oversubscription[...]``, ``replanner[...]``), which need problems PDDL text cannot state.
    """
    from unified_planning.engines.mixins import OneshotPlannerMixin
    from unified_planning.shortcuts import get_environment

    factory = get_environment().factory
    internal = {name for name, _, _ in ENGINES.values()}
    others = sorted(
        name
        for name in factory.engines
        if name not in ENGINES
        and name not in internal
        and "[" not in name
        and issubclass(factory.engine(name), OneshotPlannerMixin)
    )
    return (*(name for name in ENGINES if unavailable(name) is None), *others)


def engine_name(planner: str) -> str:
    """The unified-planning engine to use for ``planner``, registering ours if needed."""
    from unified_planning.shortcuts import get_environment

    if planner not in ENGINES:
        return planner
    name, module, class_name = ENGINES[planner]
    factory = get_environment().factory
    if name not in factory.engines:
        factory.add_engine(name, module, class_name)
    return name
