"""Retrieval benchmark: full, entity selection and search (RS) on simulator episodes.

Recall and precision of the facts each request needs, context tokens against the full graph's,
latency (no language model) and entity re-embedding, at paper scale with descriptive and with
``object_N`` names and on a 10,000-entity home; the same as ``l3mp bench retrieval``
(see ``experiments.retrieval_eval``).

    .venv/bin/python -m experiments.retrieval [--seed 0] [--episodes 2] [--steps 100] [--entities 10000]
        [--large-steps 50] [--stores sqlite,neo4j] [--out experiments/results/retrieval.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from experiments._common import description, verdict_word
from experiments._shared import progress

DEFAULT_OUT = Path("experiments/results/retrieval.json")
SCALES = ("paper", "undescriptive", "large")
STORES = ("sqlite", "neo4j")


def add_retrieval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="episode e uses home and simulator seed seed+e")
    parser.add_argument("--episodes", type=int, default=2, help="episodes per paper-scale home")
    parser.add_argument("--steps", type=int, default=100, help="steps per paper-scale episode")
    parser.add_argument("--task-every", type=int, default=5, help="every n-th step is a task (0: none)")
    parser.add_argument("--entities", type=int, default=10_000, help="entities of the large home")
    parser.add_argument("--large-steps", type=int, default=50, help="steps of the large home's one episode")
    parser.add_argument("--undescriptive", action="store_true", help="name the large home's entities object_N too")
    parser.add_argument("--scales", default=",".join(SCALES), help="comma-separated: " + ", ".join(SCALES))
    parser.add_argument("--stores", default="sqlite", help="comma-separated: sqlite, neo4j (L3MP_NEO4J_*)")
    parser.add_argument("--hops", type=int, help="k of entities and search (default: theirs)")
    parser.add_argument("--max-facts", type=int, help="fact cap of entities and search (default: theirs)")
    parser.add_argument("--no-gc-freeze", action="store_true", help="leave the setup's objects to the collector")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"results file (default {DEFAULT_OUT})")


def _choices(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    chosen = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in allowed]
    if unknown or not chosen:
        raise SystemExit(f"unknown or no {what} {', '.join(unknown)}: use {', '.join(allowed)}")
    return chosen


def _params(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    shared = {k: v for k, v in (("hops", args.hops), ("max_facts", args.max_facts)) if v is not None}
    return {"entities": dict(shared), "search": dict(shared)}


def run_retrieval(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    """Run the chosen scales on the chosen stores, print the tables, write the JSON; the results."""
    from experiments import retrieval_eval as ev
    from retrieval import SentenceTransformerEmbedder

    names = _choices(args.scales, SCALES, "scales")
    stores = _choices(args.stores, STORES, "stores")
    if min(args.episodes, args.steps, args.large_steps) < 1 or args.entities < 50:
        raise SystemExit("use --episodes, --steps and --large-steps >= 1 and --entities >= 50")
    homes = ev.scales(
        args.seed,
        episodes=args.episodes,
        steps=args.steps,
        large_entities=args.entities,
        large_steps=args.large_steps,
        large_undescriptive=args.undescriptive,
        task_every=args.task_every,
    )
    embedder = SentenceTransformerEmbedder()
    started = time.perf_counter()
    results: dict[str, Any] = {**_header(args), "scales": {}}
    for kind in stores:
        with ev.open_store(kind) as store:
            for name in names:
                scale = homes[name]
                total = scale.steps * scale.episodes
                with progress(console, f"{name} on {kind}", total) as advance:
                    found = ev.run_scale(
                        scale,
                        store,
                        embedder,
                        params=_params(args),
                        on_step=lambda _scale, _step: advance(),
                        freeze_gc=not args.no_gc_freeze,
                    )
                results["scales"].setdefault(name, {})[kind] = found
    results["wall_s"] = round(time.perf_counter() - started, 1)
    results["targets"] = ev.judge(results["scales"])
    _write(args.out, results)
    print_report(console, results)
    console.print(f"results written to {args.out} ({results['wall_s']} s)")
    return results


def _header(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    values = {k: v for k, v in vars(args).items() if k not in ("command", "bench_command", "store", "db")}
    return {
        "benchmark": "retrieval",
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "sqlite": sqlite3.sqlite_version,
        },
        "gc_frozen": not values.get("no_gc_freeze", False),
        "parameters": {k: str(v) if isinstance(v, Path) else v for k, v in values.items()},
    }


def _write(path: Path, results: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


# -- report ----------------------------------------------------------------------------------------


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


ROWS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("recall of needed facts", lambda r: _f(r["recall"])),
    ("  events / tasks", lambda r: f"{_f(r['recall_events'])} / {_f(r['recall_tasks'])}"),
    ("  steps with every fact", lambda r: _f(r["complete_share"])),
    ("precision", lambda r: _f(r["precision"])),
    ("context facts (mean)", lambda r: _f(r["facts_mean"], 1)),
    ("context tokens (mean)", lambda r: _f(r["tokens_mean"], 0)),
    ("  % of the full graph's", lambda r: f"{100 * r['token_ratio_mean']:.2f}"),
    ("latency p50 / p95 ms", lambda r: f"{r['latency_p50_ms']:.1f} / {r['latency_p95_ms']:.1f}"),
    ("  excl. query embedding", lambda r: _p(r, "latency_excl_embedding")),
    ("  entity sync (included)", lambda r: _p(r, "entity_sync")),
    ("  excl. sync", lambda r: _p(r, "latency_excl_sync")),
    ("query texts embedded", lambda r: f"{r['query_texts_embedded']} in {r['steps_embedding_query_texts']} steps"),
)


def _p(figures: dict[str, Any], key: str) -> str:
    return f"{figures[f'{key}_p50_ms']:.1f} / {figures[f'{key}_p95_ms']:.1f}"


def scale_table(name: str, store: str, result: dict[str, Any]) -> Table:
    home = result["home"]
    title = (
        f"{name} on {store}: {home.get('entities', 0):,} entities, {home.get('facts', 0):,} facts; "
        f"{result['episodes']} x {result['steps_per_episode']} steps; warm-up {result['warmup_s']:.1f} s, "
        f"entities re-embedded after it: {result['re_embedded_after_warmup']}"
    )
    table = Table(title=title)
    table.add_column("measure")
    retrievers = result["retrievers"]
    for retriever in retrievers:
        table.add_column(retriever, justify="right")
    for label, cell in ROWS:
        table.add_row(label, *(cell(figures) for figures in retrievers.values()))
    return table


def targets_table(targets: dict[str, dict[str, Any]]) -> Table:
    table = Table(title="retrieval targets")
    for column in ("target", "measured", "verdict"):
        table.add_column(column, justify="right" if column == "measured" else "left")
    for target in targets.values():
        table.add_row(target["target"], str(target["measured"]), verdict_word(target))
    return table


def print_report(console: Console, results: dict[str, Any]) -> None:
    for name, by_store in results["scales"].items():
        for store, result in by_store.items():
            console.print(scale_table(name, store, result))
    console.print(targets_table(results["targets"]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments retrieval", description=description(__doc__))
    add_retrieval_arguments(parser)
    run_retrieval(parser.parse_args(argv), Console())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
