"""``l3mp daemon`` and ``l3mp demo``: the robot runtime on a simulated home (see ``l3mp.daemon``).

l3mp daemon --memory home --steps 40 --report .l3mp/daemon-report.json
l3mp demo      # the same on a fresh paper-scale home in .l3mp/demo.db, report in .l3mp/demo-report.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from kg_memory import GraphStore
from l3mp.settings import Settings, configured_model

DEMO_REPORT = Path(".l3mp/demo-report.json")


def add_commands(commands: Any) -> None:
    commands.add_parser("demo", help="the robot runtime on a fresh paper-scale simulated home (under 5 minutes)")
    daemon = commands.add_parser("daemon", help="run the robot runtime against the text household simulator")
    daemon.add_argument("--memory", default="home")
    daemon.add_argument("--steps", type=int, default=40)
    daemon.add_argument("--seed", type=int, default=0)
    daemon.add_argument("--task-every", type=int, default=5, help="a simulator task every n steps (0: none)")
    daemon.add_argument("--event-rate", type=float, default=0.3)
    daemon.add_argument("--error-rate", type=float, default=0.2, help="the simulated model's injected errors")
    daemon.add_argument("--retriever", choices=("full", "entities", "search"), default="search")
    daemon.add_argument("--real-model", action="store_true", help="use the configured model (L3MP_LLM_*)")
    daemon.add_argument("--report", type=Path, default=Path(".l3mp/daemon-report.json"))
    daemon.add_argument(
        "--inbox", type=Path, help='JSON lines queued at the start: {"task": ..., "goal"?: ...} or {"report": ...}'
    )


def run(args: argparse.Namespace, store: GraphStore, settings: Settings, console: Console) -> int:
    from l3mp.daemon import DaemonConfig, read_inbox, run_daemon, write_report

    if args.command == "demo":
        config, report_path, model = DaemonConfig(memory="demo_home"), DEMO_REPORT, None
    else:
        config = DaemonConfig(
            memory=args.memory,
            steps=args.steps,
            seed=args.seed,
            task_every=args.task_every,
            event_rate=args.event_rate,
            error_rate=args.error_rate,
            retriever=args.retriever,
            inbox=read_inbox(args.inbox.read_text(encoding="utf-8")) if args.inbox else (),
        )
        report_path = args.report
        model = configured_model(settings) if args.real_model else None
    run = run_daemon(store, config, console, model)
    record = write_report(report_path, run)
    summary = record["summary"]
    console.print(
        f"tasks {summary['tasks']}, replans {summary['replans']}, final accuracy "
        f"{summary['final_accuracy']}, {run.seconds:.0f} s; report written to {report_path}"
    )
    return 0
