"""Fast Downward engines that keep their intermediate file to themselves.

up-fast-downward runs Fast Downward in the caller's working directory, where it writes
``output.sas``: two plans made at once (threads, or two processes in one directory)
overwrite each other's file and come back with each other's plans. These subclasses put
the file beside the plan file, in the temporary directory unified-planning makes per call.
"""

from __future__ import annotations

from pathlib import Path

from up_fast_downward.fast_downward import FastDownwardOptimalPDDLPlanner, FastDownwardPDDLPlanner

# our names for the engines, registered with unified-planning's factory on first use
ENGINES = {"fast-downward": "l3mp-fast-downward", "fast-downward-opt": "l3mp-fast-downward-opt"}


def _private_sas(command: list[str], plan_filename: str) -> list[str]:
    sas = str(Path(plan_filename).with_name("output.sas"))
    return [*command[:2], "--sas-file", sas, *command[2:]]  # driver options go before the files


class IsolatedFastDownward(FastDownwardPDDLPlanner):  # type: ignore[misc]
    def _base_cmd(self, plan_filename: str) -> list[str]:
        return _private_sas(super()._base_cmd(plan_filename), plan_filename)


class IsolatedFastDownwardOptimal(FastDownwardOptimalPDDLPlanner):  # type: ignore[misc]
    def _base_cmd(self, plan_filename: str) -> list[str]:
        return _private_sas(super()._base_cmd(plan_filename), plan_filename)


_CLASSES = {"l3mp-fast-downward": "IsolatedFastDownward", "l3mp-fast-downward-opt": "IsolatedFastDownwardOptimal"}


def engine_name(planner: str) -> str:
    """The unified-planning engine to use for ``planner``, registering ours if needed."""
    from unified_planning.shortcuts import get_environment

    name = ENGINES.get(planner, planner)
    factory = get_environment().factory
    if name in _CLASSES and name not in factory.engines:
        factory.add_engine(name, __name__, _CLASSES[name])
    return name
