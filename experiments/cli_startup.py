"""How fast the command line starts: ``l3mp --help``, ``l3mp state`` and ``l3mp history`` timed as whole
processes, each several times (min / median / max).

    python -m experiments cli [--runs 7] [--out experiments/results/cli.json]
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from experiments.harness import RESULTS, Benchmark, header, judged, machine_info, measures_table, verdict, write_results

# (what, arguments after `l3mp --db FILE`, target seconds): the start-up budget per command
COMMANDS: tuple[tuple[str, tuple[str, ...], float], ...] = (
    ("l3mp --help", ("--help",), 0.5),
    ("l3mp state home", ("state", "home"), 1.5),
    ("l3mp history home", ("history", "home"), 1.5),
)


def _l3mp() -> list[str]:
    """The installed ``l3mp`` script beside this interpreter, or the module as a fallback."""
    script = Path(sys.executable).with_name("l3mp")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "l3mp"]


def _prepare(db: Path) -> None:
    """A memory to show: the paper-scale simulated home, surveyed once (and the domain's parse cached)."""
    command = [*_l3mp(), "--db", str(db), "init", "home", "--sim-home", "0"]
    subprocess.run(command, check=True, capture_output=True)


def _time(command: list[str], runs: int) -> list[float]:
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        seconds.append(time.perf_counter() - start)
    return seconds


def measure(runs: int) -> dict[str, Any]:
    """Wall seconds per command (a whole process each time), min / median / max over ``runs``."""
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="l3mp-cli-") as folder:
        db = Path(folder) / "cli.db"
        _prepare(db)
        for label, arguments, target in COMMANDS:
            seconds = _time([*_l3mp(), "--db", str(db), *arguments], runs)
            median = round(statistics.median(seconds), 3)
            figures[label] = {
                "min_s": round(min(seconds), 3),
                "median_s": median,
                "max_s": round(max(seconds), 3),
                "target": judged(f"median < {target} s", median, median < target),
            }
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--runs", type=int, default=7, help="runs per command")
    args = parser.parse_args(argv)
    if args.runs < 1 or (shutil.which(_l3mp()[0]) is None and not Path(_l3mp()[0]).is_file()):
        parser.error("use --runs >= 1, with l3mp installed beside this interpreter")
    figures = measure(args.runs)
    targets = {label: entry.pop("target") for label, entry in figures.items()}
    results = {**header("cli", args, machine_info()), "commands": figures, "targets": targets}
    write_results(args.out, results)
    rows = [
        (label, f"{f['min_s']:.2f} / {f['median_s']:.2f} / {f['max_s']:.2f} s  {verdict(targets[label])}")
        for label, f in figures.items()
    ]
    Console().print(measures_table("CLI start-up (min / median / max)", rows))
    return 0


BENCHMARK = Benchmark(name="cli", results=RESULTS / "cli.json", main=main)
