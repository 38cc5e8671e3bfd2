"""The lab's commands: ``l3mp sim generate | show`` (simulator episodes), ``l3mp demo`` and ``l3mp daemon``
(the robot runtime on a simulated home, see :mod:`sim.daemon`). The product's CLI names them and
imports this module only when one of them runs.

    l3mp sim generate --seed 0 --out episode.jsonl
    l3mp daemon --memory home --steps 40 --report .l3mp/daemon-report.json
    l3mp demo      # the same on a fresh paper-scale home in .l3mp/demo.db, report in .l3mp/demo-report.json
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from l3mp.cli import CliState, pass_state
from retrieval.retrievers import RETRIEVERS

DEMO_REPORT = Path(".l3mp/demo-report.json")
DEMO_DB = Path(".l3mp/demo.db")
LOCAL_DEMO_REPORT = Path(".l3mp/demo-local-report.json")
LOCAL_DEMO_DB = Path(".l3mp/demo-local.db")


@click.group()
def sim() -> None:
    """The text household simulator."""


@sim.command()
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--steps", type=int, default=100, show_default=True, help="steps in all; every --task-every-th is a task")
@click.option("--task-every", type=int, default=5, show_default=True)
@click.option("--rooms", type=int, help="default: paper scale (35)")
@click.option("--items", type=int, help="default: paper scale (150)")
@click.option("--people", type=int, help="default: paper scale (25)")
@click.option("--undescriptive", is_flag=True, help="name entities object_17 etc., keep labels")
@click.option("--out", type=click.Path(path_type=Path), required=True)
@pass_state
def generate(state: CliState, /, **options: Any) -> int:
    """Generate an episode (events and tasks with reference plans) as JSONL."""
    _generate(options, state.console)
    return 0


@sim.command()
@click.argument("file", type=click.Path(path_type=Path))
@pass_state
def show(state: CliState, file: Path) -> int:
    """Summarize an episode file."""
    _show(file, state.console)
    return 0


@click.command()
@click.option(
    "--local-model",
    is_flag=True,
    help="answer with the local SmolLM2 model (llama.cpp, started and stopped here) instead of the simulated one",
)
@pass_state
def demo(state: CliState, local_model: bool) -> int:
    """The robot runtime on a fresh paper-scale simulated home (under 5 minutes with the simulated model)."""
    from sim.daemon import DaemonConfig

    config = DaemonConfig(memory="demo_home")
    if not local_model:
        return _run_daemon(state, config, DEMO_REPORT, real_model=False, sqlite_path=DEMO_DB)
    from l3mp.llm.local import DEFAULT_MODEL, LocalServer, free_port, packaged_model

    model = packaged_model(DEFAULT_MODEL)  # as `l3mp model serve` runs it: scoring on where it is cheap
    with LocalServer.of(model, port=free_port(), scoring=model.scores_by_default(model.ctx)) as server:
        state.console.print(f"local model {server.alias} at {server.base_url}")
        return _run_daemon(
            state,
            config,
            LOCAL_DEMO_REPORT,
            real_model=True,
            sqlite_path=LOCAL_DEMO_DB,
            llm_base_url=server.base_url,
            llm_model=server.alias,
        )


@click.command()
@click.option(
    "--env",
    "env_name",
    type=click.Choice(["sim", "thor"]),
    default="sim",
    show_default=True,
    help="the text simulator, or AI2-THOR (needs a Unity build: --executable)",
)
@click.option("--scene", default="FloorPlan1", show_default=True, help="AI2-THOR scene (--env thor)")
@click.option(
    "--executable",
    type=click.Path(path_type=Path, dir_okay=False),
    help="a local AI2-THOR Unity build (--env thor; default: AI2THOR_EXECUTABLE)",
)
@click.option("--force-action", is_flag=True, help="send forceAction with every THOR action (--env thor)")
@click.option("--travel", is_flag=True, help="plan in thor-travel: going to an object costs the distance (--env thor)")
@click.option("--optimal/--satisficing", default=None, help="plans proven cheapest (default: L3MP_PLAN_OPTIMAL)")
@click.option("--memory", default="home", show_default=True)
@click.option("--steps", type=int, default=40, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--task-every", type=int, default=5, show_default=True, help="a simulator task every n steps (0: none)")
@click.option("--event-rate", type=float, default=0.3, show_default=True)
@click.option("--error-rate", type=float, default=0.2, show_default=True, help="the simulated model's injected errors")
@click.option("--retriever", type=click.Choice(RETRIEVERS), help="default: L3MP_RETRIEVER or search")
@click.option("--real-model", is_flag=True, help="use the configured model (L3MP_LLM_*)")
@click.option("--report", type=click.Path(path_type=Path), default=Path(".l3mp/daemon-report.json"), show_default=True)
@click.option(
    "--inbox",
    type=click.Path(path_type=Path, dir_okay=False),
    help='JSON lines queued at the start: {"task": ..., "goal"?: ...} or {"report": ...}',
)
@pass_state
def daemon(
    state: CliState,
    env_name: str,
    scene: str,
    executable: Path | None,
    force_action: bool,
    travel: bool,
    optimal: bool | None,
    memory: str,
    steps: int,
    seed: int,
    task_every: int,
    event_rate: float,
    error_rate: float,
    retriever: str | None,
    real_model: bool,
    report: Path,
    inbox: Path | None,
) -> int:
    """Run the robot runtime against the text household simulator (or AI2-THOR: --env thor)."""
    from l3mp.runtime import read_inbox
    from sim.daemon import DaemonConfig

    queued = read_inbox(inbox.read_text(encoding="utf-8")) if inbox else ()
    optimal = state.settings().plan_optimal if optimal is None else optimal
    if env_name == "thor":
        build = executable or _thor_build()
        thor = {
            "scene": scene,
            "executable": build,
            "force_action": force_action,
            "memory": memory,
            "steps": steps,
            "domain": "thor-travel" if travel else "thor",
            "optimal": optimal,
        }
        return _run_thor(state, thor, retriever, real_model, report, queued)
    config = DaemonConfig(
        memory=memory,
        steps=steps,
        seed=seed,
        task_every=task_every,
        event_rate=event_rate,
        error_rate=error_rate,
        retriever=retriever or state.settings().retriever,
        optimal=optimal,
        inbox=queued,
    )
    return _run_daemon(state, config, report, real_model=real_model)


def _thor_build() -> Path:
    import os

    named = os.environ.get("AI2THOR_EXECUTABLE")
    if not named:
        raise click.ClickException(
            "--env thor needs a local AI2-THOR Unity build: pass --executable PATH (or set AI2THOR_EXECUTABLE). "
            "Without a build, `l3mp thor replay` runs recorded sessions."
        )
    return Path(named)


def _run_thor(
    state: CliState,
    thor: dict[str, Any],
    retriever: str | None,
    real_model: bool,
    report_path: Path,
    inbox: tuple[dict[str, str], ...],
) -> int:
    import json

    from l3mp.wiring import configured_model
    from sim.thor.daemon import ThorDaemonConfig, run_thor_daemon
    from sim.thor.environment import ThorConfig

    build: Path = thor["executable"]
    if not build.is_file():
        raise click.ClickException(f"{build}: no AI2-THOR build there (a Unity executable is needed)")
    settings = state.settings()
    config = ThorDaemonConfig(
        thor=ThorConfig(scene=thor["scene"], executable=str(build), force_action=thor["force_action"]),
        memory=thor["memory"],
        steps=thor["steps"],
        retriever=retriever or settings.retriever,
        inbox=inbox,
        domain=thor["domain"],
        optimal=thor["optimal"],
    )
    model = configured_model(settings) if real_model else None
    with state.opened_store(settings) as store:
        run = run_thor_daemon(store, config, state.console, model)
    report_path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "model": run.model,
        "seconds": round(run.seconds, 1),
        "forced_steps": run.forced,
        "run": run.report.to_json(),
    }
    report_path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    summary = run.report.summary()
    state.console.print(f"tasks {summary['tasks']}, forced steps {run.forced}; report written to {report_path}")
    return 0


def _run_daemon(state: CliState, config: Any, report_path: Path, *, real_model: bool, **defaults: Any) -> int:
    from l3mp.wiring import configured_model, nl_reader
    from sim.daemon import run_daemon, write_report

    settings = state.settings(**defaults)
    if settings.store == "sqlite":
        settings.sqlite_path.parent.mkdir(parents=True, exist_ok=True)
    model = configured_model(settings) if real_model else None
    if real_model:
        config = replace(config, reader=nl_reader(settings), ranker=settings.nl_ranker)
    with state.opened_store(settings) as store:
        run = run_daemon(store, config, state.console, model)
    record = write_report(report_path, run)
    summary = record["summary"]
    state.console.print(
        f"tasks {summary['tasks']}, replans {summary['replans']}, final accuracy "
        f"{summary['final_accuracy']}, {run.seconds:.0f} s; report written to {report_path}"
    )
    return 0


def _generate(args: dict[str, Any], console: Console) -> None:
    from sim.episode import EpisodeConfig, generate_episode, write_episode
    from sim.household import HomeSpec

    sizes = {k: args[k] for k in ("rooms", "items", "people") if args[k] is not None}
    spec = HomeSpec(seed=args["seed"], undescriptive_names=args["undescriptive"], **sizes)
    config = EpisodeConfig(seed=args["seed"], steps=args["steps"], task_every=args["task_every"], spec=spec)
    started = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task("generating", total=args["steps"])

        def on_step(record: dict[str, Any]) -> None:
            progress.update(bar, advance=1, description=f"step {record['step']}: {record['type']} {record['kind']}")

        steps = write_episode(args["out"], generate_episode(config, on_step))
    out = args["out"]
    console.print(f"wrote {steps} steps to {out} in {time.perf_counter() - started:.1f} s")


def _show(path: Path, console: Console) -> None:
    from sim.episode import read_episode, summarize

    summary = summarize(read_episode(path))
    console.print(
        f"[bold]{path}[/]: seed {summary['seed']}, {summary['entities']} entities, {summary['facts']} facts, "
        f"{summary['events']} events, {summary['tasks']} tasks "
        f"(mean reference plan {summary['mean_plan_length']:.1f} steps)"
    )
    _counts(console, "entities by type", summary["entity_types"])
    _counts(console, "events by category", summary["events_by_category"])
    _counts(console, "events by kind", summary["events_by_kind"])
    _counts(console, "events by wording", summary["events_by_vagueness"])
    _counts(console, "tasks by kind", summary["tasks_by_kind"])
    console.print("[bold]sample events[/]")
    for text in summary["event_samples"]:
        console.print(f"  • {text}")
    console.print("[bold]sample tasks[/]")
    for text, goal, length in summary["task_samples"]:
        console.print(f"  • {text}\n    goal {goal}, reference plan of {length} steps")


def _counts(console: Console, title: str, counts: dict[str, int]) -> None:
    table = Table(title=title, show_header=False)
    for key, value in counts.items():
        table.add_row(key, str(value))
    console.print(table)
