"""Service benchmark: concurrent sensor updates to one memory; /health under a burst of NL updates.

The real server runs as a subprocess (``l3mp serve``'s app, through ``experiments.service.instrumented``,
which adds the write groups' counters) on an embedded SQLite store in a temporary directory, once per
load variant (``--variants``, each on a fresh database):

- ``generator``: the load generator (``experiments.service.loadgen``) as a process of its own, on the
  same cores: ``--clients`` connections post ``--updates`` observations each to one memory, each client in
  a room of its own, every observation changing three facts (a lamp switched, a mug moved);
- ``batch``: the same load through ``POST .../observations/batch``, ``--batch`` observations per request;
- ``off``: the same load with group commit off (``L3MP_GROUP_COMMIT=off``): one write at a time;
- ``in-process``: the earlier load, threads in this process, each with its own ``httpx.Client``,
  posting kitchen observations that disagree (lamp on or off, mug on the table or in the sink).

A 409 (the server gave up after its own retries) is retried by the client and counted; only 2xx
responses are acknowledged. Afterwards each run is checked for lost updates: every acknowledged
update is in the history once, as applied or noop, and replaying the history's applied deltas in
sequence order from the empty state gives exactly the memory's final facts (and its version).
Reported per variant: acknowledged observations/s, p50 and p99 latency of requests, the server's CPU
time per observation (user + system, psutil), the generator's CPU, no-ops, groups, and this machine's
speed right before it (``experiments.service.calibration``: the group's side of the same writes alone,
in one thread) with the server's CPU against it, the figure comparable from hour to hour; judged against
the issue's targets (>= 1,000 observations/s, p99 <= 50 ms and <= 0.5 ms of server CPU per
observation with the generator on the same cores; the CPU also through the batch door).

Then the burst (``experiments.service.burst``): a second server, configured against a local model
that stalls, with 4 model slots and a 6 s route deadline, takes 50 concurrent NL updates while
``GET /health`` is polled every 50 ms. Reported: the probes' p50, p95 and max latency, judged against
max < 100 ms; how many updates were refused on arrival; every update's end within its deadline.
``--burst-only`` runs the burst alone (about ten seconds); its results file then holds the burst only.

    python -m experiments service [--clients 20] [--updates 500] [--variants generator,batch,off,in-process]
        [--batch 25] [--burst-only] [--out experiments/results/service.json]
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from experiments.harness import RESULTS, Benchmark, header, machine_info, write_results
from experiments.service.burst import figures, judge, measure_burst, table
from experiments.service.calibration import group_side
from experiments.service.load import (
    VARIANTS,
    Tally,
    load_targets,
    lost_updates,
    measure_load,
    report_load,
    run_load,
)
from experiments.service.server import Server, create_home, free_port


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--updates", type=int, default=500, help="updates per client")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"some of {', '.join(VARIANTS)}")
    parser.add_argument("--batch", type=int, default=25, help="observations per request of the batch variant")
    parser.add_argument("--burst-only", action="store_true", help="only the burst of NL updates at a stalling model")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.variants.split(",")) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variants {unknown}: use some of {', '.join(VARIANTS)}")
    variants = [
        replace(VARIANTS[v], batch=args.batch) if v == "batch" else VARIANTS[v] for v in args.variants.split(",")
    ]
    console = Console()
    load: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="l3mp-service-bench-") as tmp:
        for variant in [] if args.burst_only else variants:
            console.print(f"load: {variant.name} ({variant.about}), load average {_loadavg()}")
            speed = group_side(args.clients)  # this machine's speed right before the variant
            measured = measure_load(args.clients, args.updates, Path(tmp), variant)
            ratio = measured["server_cpu_ms_per_observation"] / speed["group_side_ms_per_observation"]
            load[variant.name] = {
                **measured,
                "loadavg": _loadavg(),
                "machine_now": speed,
                "server_cpu_vs_group_side": round(ratio, 2),
            }
        burst = figures(measure_burst(Path(tmp)))
    targets = {} if args.burst_only else load_targets(load)
    targets.update(judge(burst))
    results = {
        **header("service", args, machine_info(httpx=httpx.__version__)),
        "load": load,
        "burst": burst,
        "targets": targets,
    }
    if args.burst_only:  # the load's parameters did not apply
        unused = ("clients", "updates", "variants", "batch")
        results["parameters"] = {k: v for k, v in results["parameters"].items() if k not in unused}
    write_results(args.out, results)
    failed = False if args.burst_only else report_load(console, args, load, targets)
    console.print(table(burst, targets))
    for failure in burst["health"]["failures"]:
        console.print(f"[red]GET /health failed: {failure}")
    console.print(f"results: {args.out}")
    # a missed target is reported, not a failure; a lost update or a failed client is
    return 1 if failed else 0


def _loadavg() -> str:
    """The 1, 5 and 15 minute load averages: figures taken on a busy machine say so."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


BENCHMARK = Benchmark(name="service", results=RESULTS / "service.json", main=main)

# the service tests start their servers and loads through this package
__all__ = ["BENCHMARK", "Server", "Tally", "create_home", "free_port", "lost_updates", "main", "run_load"]
