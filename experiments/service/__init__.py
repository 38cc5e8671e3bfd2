"""Service benchmark: concurrent sensor updates to one memory; /health under a burst of NL updates.

The real server runs as a subprocess (``python -m l3mp --db FILE serve``) on an embedded SQLite store
in a temporary directory. ``--clients`` threads, each with its own ``httpx.Client``, post
``--updates`` kitchen observations each to one memory; the observations disagree (lamp on or off,
mug on the table or in the sink), so concurrent writes conflict and the store's optimistic
versioning has to serialize them. A 409 (the server gave up after its own retries) is retried by
the client and counted; only 2xx responses are acknowledged.

Afterwards the run is checked for lost updates: every acknowledged update is in the history as
applied or noop, and replaying the history's applied deltas in sequence order from the empty state
gives exactly the memory's final facts (and its version). Reported: acknowledged updates/s, p50 and
p99 latency of acknowledged requests, conflicts; judged against >= 300 updates/s.

Then the burst (``experiments.service.burst``): a second server, configured against a local model
that stalls, with 4 model slots and a 6 s route deadline, takes 50 concurrent NL updates while
``GET /health`` is polled every 50 ms. Reported: the probes' p50, p95 and max latency, judged against
max < 100 ms; how many updates were refused on arrival; every update's end within its deadline.
``--burst-only`` runs the burst alone (about ten seconds); its results file then holds the burst only.

    python -m experiments service [--clients 20] [--updates 500] [--burst-only]
        [--out experiments/results/service.json]
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import httpx
from rich.console import Console

from experiments.harness import RESULTS, Benchmark, header, machine_info, write_results
from experiments.service.burst import figures, judge, measure_burst, table
from experiments.service.load import Tally, load_targets, lost_updates, measure_load, report_load, run_load
from experiments.service.server import Server, create_home, free_port


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--updates", type=int, default=500, help="updates per client")
    parser.add_argument("--burst-only", action="store_true", help="only the burst of NL updates at a stalling model")
    args = parser.parse_args(argv)
    console = Console()
    with tempfile.TemporaryDirectory(prefix="l3mp-service-bench-") as tmp:
        load = {} if args.burst_only else measure_load(args.clients, args.updates, Path(tmp))
        burst = figures(measure_burst(Path(tmp)))
    targets = {} if args.burst_only else load_targets(load)
    targets.update(judge(burst))
    results = {
        **header("service", args, machine_info(httpx=httpx.__version__)),
        **load,
        "burst": burst,
        "targets": targets,
    }
    if args.burst_only:  # the load's parameters did not apply
        results["parameters"] = {k: v for k, v in results["parameters"].items() if k not in ("clients", "updates")}
    write_results(args.out, results)
    failed = False if args.burst_only else report_load(console, args, load, targets)
    console.print(table(burst, targets))
    for failure in burst["health"]["failures"]:
        console.print(f"[red]GET /health failed: {failure}")
    console.print(f"results: {args.out}")
    # a missed target is reported, not a failure; a lost update or a failed client is
    return 1 if failed else 0


BENCHMARK = Benchmark(name="service", results=RESULTS / "service.json", main=main)

# the service tests start their servers and loads through this package
__all__ = ["BENCHMARK", "Server", "Tally", "create_home", "free_port", "lost_updates", "main", "run_load"]
