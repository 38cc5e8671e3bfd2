"""The retrieval benchmark's run: its options, the chosen scales on the chosen stores, and its tables."""

from __future__ import annotations

import argparse
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from experiments.harness import (
    add_gc_argument,
    header,
    machine_info,
    open_store,
    progress,
    targets_table,
    write_results,
)
from experiments.retrieval.episodes import judge, run_scale, scales
from retrieval import DEFAULT_EMBEDDER, EMBEDDERS, embedder_named

SCALES = ("paper", "undescriptive", "large", "building")
DEFAULT_SCALES = ("paper", "undescriptive", "large")  # a building takes minutes to build and embed
STORES = ("sqlite", "neo4j")
QUERY_CACHES = ("warm", "cold")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="episode e uses home and simulator seed seed+e")
    parser.add_argument("--episodes", type=int, default=2, help="episodes per paper-scale home")
    parser.add_argument("--steps", type=int, default=100, help="steps per paper-scale episode")
    parser.add_argument("--task-every", type=int, default=5, help="every n-th step is a task (0: none)")
    parser.add_argument("--entities", type=int, default=10_000, help="entities of the large home")
    parser.add_argument("--large-steps", type=int, default=50, help="steps of the large home's one episode")
    parser.add_argument("--undescriptive", action="store_true", help="name the large home's entities object_N too")
    parser.add_argument("--building-entities", type=int, default=50_000, help="entities of the building")
    parser.add_argument("--building-steps", type=int, default=100, help="steps of the building's one episode")
    parser.add_argument("--scales", default=",".join(DEFAULT_SCALES), help="comma-separated: " + ", ".join(SCALES))
    parser.add_argument(
        "--embedder", default=DEFAULT_EMBEDDER, help="comma-separated MiniLM runtimes: " + ", ".join(EMBEDDERS)
    )
    parser.add_argument(
        "--query-cache",
        default="warm",
        help="comma-separated: warm (the memory's words pre-embedded, texts kept) or cold (every query embedded)",
    )
    parser.add_argument("--stores", default="sqlite", help="comma-separated: sqlite, neo4j (L3MP_NEO4J_*)")
    parser.add_argument("--hops", type=int, help="k of entities and search (default: theirs)")
    parser.add_argument("--max-facts", type=int, help="fact cap of entities and search (default: theirs)")
    add_gc_argument(parser, help="leave the setup's objects to the collector")


def _choices(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    chosen = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in allowed]
    if unknown or not chosen:
        raise SystemExit(f"unknown or no {what} {', '.join(unknown)}: use {', '.join(allowed)}")
    return chosen


def _params(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    shared = {k: v for k, v in (("hops", args.hops), ("max_facts", args.max_facts)) if v is not None}
    return {"entities": dict(shared), "search": dict(shared)}


def variants(args: argparse.Namespace) -> list[tuple[str, str, bool]]:
    """(key, embedder, cold) per run asked for: ``onnx`` warm is keyed ``onnx``, cold ``onnx/cold``."""
    embedders = _choices(args.embedder, EMBEDDERS, "embedders")
    caches = _choices(args.query_cache, QUERY_CACHES, "query caches")
    return [(e if c == "warm" else f"{e}/{c}", e, c == "cold") for e in embedders for c in caches]


def run_retrieval(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    """Run the chosen scales on the chosen stores with each chosen embedder, print the tables, write
    the JSON; the results. ``scales`` and ``targets`` are the first embedder's (by default torch,
    warm); every run's are under ``embedders``."""
    names = _choices(args.scales, SCALES, "scales")
    stores = _choices(args.stores, STORES, "stores")
    runs = variants(args)
    if min(args.episodes, args.steps, args.large_steps, args.building_steps) < 1 or args.entities < 50:
        raise SystemExit("use --episodes, --steps, --large-steps and --building-steps >= 1 and --entities >= 50")
    homes = scales(
        args.seed,
        episodes=args.episodes,
        steps=args.steps,
        large_entities=args.entities,
        large_steps=args.large_steps,
        large_undescriptive=args.undescriptive,
        task_every=args.task_every,
        building_entities=args.building_entities,
        building_steps=args.building_steps,
    )
    started = time.perf_counter()
    results: dict[str, Any] = {**header("retrieval", args, _machine()), "embedders": {}}
    results["load_average"] = {"start": [round(x, 2) for x in os.getloadavg()]}  # the machine may be shared
    for key, embedder_name, cold in runs:
        embedder = embedder_named(embedder_name)
        found: dict[str, Any] = {}
        for kind in stores:
            with open_store(kind) as store:
                for name in names:
                    scale = homes[name]
                    with progress(console, f"{name} on {kind}, {key}", scale.steps * scale.episodes) as advance:
                        found.setdefault(name, {})[kind] = run_scale(
                            scale,
                            store,
                            embedder,
                            params=_params(args),
                            on_step=lambda _scale, _step: advance(),
                            freeze_gc=not args.no_gc_freeze,
                            cold=cold,
                        )
        results["embedders"][key] = {"scales": found, "targets": judge(found)}
    first = results["embedders"][runs[0][0]]
    results["scales"], results["targets"] = first["scales"], first["targets"]
    results["wall_s"] = round(time.perf_counter() - started, 1)
    results["load_average"]["end"] = [round(x, 2) for x in os.getloadavg()]
    write_results(args.out, results)
    print_report(console, results)
    console.print(f"results written to {args.out} ({results['wall_s']} s)")
    return results


def _machine() -> dict[str, Any]:
    import torch

    return machine_info(torch_threads=torch.get_num_threads(), sqlite=sqlite3.sqlite_version)


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
    ("  excl. query embedding", lambda r: _percentiles(r, "latency_excl_embedding")),
    ("  entity sync (included)", lambda r: _percentiles(r, "entity_sync")),
    ("  excl. sync", lambda r: _percentiles(r, "latency_excl_sync")),
    ("query texts embedded", lambda r: f"{r['query_texts_embedded']} in {r['steps_embedding_query_texts']} steps"),
)


def _percentiles(figures: dict[str, Any], key: str) -> str:
    """``key``'s p50 / p95 in milliseconds."""
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


def print_report(console: Console, results: dict[str, Any]) -> None:
    for key, run in results.get("embedders", {"": results}).items():
        for name, by_store in run["scales"].items():
            for store, result in by_store.items():
                console.print(scale_table(name, f"{store}, {key}" if key else store, result))
        title = f"retrieval targets, {key}" if key else "retrieval targets"
        console.print(targets_table(title, run["targets"].values()))
