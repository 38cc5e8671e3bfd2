"""Lanes (a model, its threads, a reading configuration) run over both data sets, written and printed."""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from rich.console import Console

from experiments.harness import machine_info, open_store, parameters, progress, write_results
from experiments.realmodel.data import SETS, Report, Task, load_reports, load_tasks
from experiments.realmodel.reading import CONFIGS, DEFAULT_CONFIG, Config, read_reports, read_tasks, surveyed_memory
from experiments.realmodel.report import judge, print_report, summarize
from experiments.realmodel.serving import (
    ScoredTokens,
    client_settings,
    product_client,
    product_scorer,
    recording,
    recording_scores,
    replaying,
    replaying_scores,
    server_for,
    time_to_first_token,
)
from kg_memory import WorldMemory
from l3mp.llm import LanguageModel
from l3mp.llm.local import DEFAULT_MODEL, MODELS, LocalServer
from l3mp.llm.scoring import TextScorer
from l3mp.settings import Settings

WORDS = "words"  # the lane of the words-alone reader: no model, no server
DEFAULT_THREADS = 1  # what `l3mp model serve` uses


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--models",
        default=DEFAULT_MODEL,
        help=f"packaged models, comma-separated: {', '.join(MODELS)} (default: {DEFAULT_MODEL})",
    )
    parser.add_argument("--threads", default=str(DEFAULT_THREADS), help="server threads to measure, comma-separated")
    parser.add_argument(
        "--configs",
        default=f"{DEFAULT_CONFIG},choose+none",
        help=f"reading configurations, comma-separated: {', '.join(CONFIGS)} (write takes the longest)",
    )
    parser.add_argument("--limit", type=int, help="only the first N reports and tasks of each set")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the lanes already in --out that this run does not measure (each lane names its run)",
    )
    traffic = parser.add_mutually_exclusive_group()
    traffic.add_argument("--record", type=Path, help="record each lane's model traffic here (one cassette a lane)")
    traffic.add_argument("--replay", type=Path, help="replay each lane from its cassette here (no server)")


def lane_key(model: str, threads: int | None, config: Config) -> str:
    return f"{WORDS}/{config.name}" if not config.needs_model else f"{model}/t{threads}/{config.name}"


def cassette_slug(model: str, threads: int, config: Config) -> str:
    return f"{model}_t{threads}_{config.name.replace('+', '-')}"


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _chosen(args: argparse.Namespace) -> tuple[list[str], list[int], list[Config]]:
    models, configs = _split(args.models), _split(args.configs)
    if unknown := [m for m in models if m not in MODELS]:
        raise SystemExit(f"unknown model(s) {', '.join(unknown)}: use {', '.join(MODELS)}")
    if unknown := [c for c in configs if c not in CONFIGS]:
        raise SystemExit(f"unknown configuration(s) {', '.join(unknown)}: use {', '.join(CONFIGS)}")
    try:
        threads = [int(t) for t in _split(args.threads)]
    except ValueError:
        raise SystemExit(f"--threads takes whole numbers, not {args.threads!r}") from None
    if not configs or not threads or min(threads) < 1 or (args.limit is not None and args.limit < 1):
        raise SystemExit("use at least one configuration, threads ≥ 1 and --limit ≥ 1")
    return models, threads, [CONFIGS[c] for c in configs]


def data(limit: int | None) -> tuple[list[Report], list[Task]]:
    """Both sets' reports and tasks, the first ``limit`` of each set if given."""
    reports = [r for s in SETS for r in load_reports(s)[:limit]]
    tasks = [t for s in SETS for t in load_tasks(s)[:limit]]
    return reports, tasks


def run_lane(
    memory: WorldMemory,
    model: LanguageModel | None,
    config: Config,
    reports: Sequence[Report],
    tasks: Sequence[Task],
    *,
    settings: Settings,
    console: Console,
    label: str,
    scorer: TextScorer | None = None,
) -> dict[str, Any]:
    """One lane's rows and summary; a likelihood lane ranks through ``scorer``."""
    start = time.perf_counter()
    counted = ScoredTokens(inner=scorer) if scorer is not None else None
    with progress(console, label, len(reports) + len(tasks)) as advance:
        report_rows = read_reports(memory, model, config, reports, settings=settings, scorer=counted, advance=advance)
        task_rows = read_tasks(memory, model, config, tasks, settings=settings, scorer=counted, advance=advance)
    return {
        "config": config.name,
        "reader": config.reader,
        "ranker": config.ranker if config.reader == "choose" else None,
        "wall_s": round(time.perf_counter() - start, 1),
        "summary": summarize(report_rows, task_rows),
        "reports": report_rows,
        "tasks": task_rows,
    }


def run_benchmark(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    models, threads, configs = _chosen(args)
    load_start = os.getloadavg()
    started = time.perf_counter()
    reports, tasks = data(args.limit)
    settings = Settings()
    lanes: dict[str, dict[str, Any]] = {}
    servers: dict[str, dict[str, Any]] = {}
    with open_store("sqlite") as store:
        memory = surveyed_memory(store)
        for config in (c for c in configs if not c.needs_model):
            key = lane_key("", None, config)
            lane = run_lane(memory, None, config, reports, tasks, settings=settings, console=console, label=key)
            lanes[key] = {"model": None, "threads": None, "server": None, **lane}
        for name in models:
            for count in threads:
                run_model(name, count, [c for c in configs if c.needs_model], memory, reports, tasks, args=args,
                          settings=settings, console=console, lanes=lanes, servers=servers)  # fmt: skip
    run = _run_record(args, reports, tasks, list(lanes), load_start=load_start, started=started)
    run["servers"] = servers  # a lane's server, under its run: a later run may measure the same one again
    results = _combined(run, lanes, settings, _earlier(args.out) if args.merge else {})
    write_results(args.out, results)
    print_report(console, results)
    console.print(f"results written to {args.out} ({run['wall_s']} s)")
    return results


def run_model(
    name: str,
    threads: int,
    configs: Sequence[Config],
    memory: WorldMemory,
    reports: Sequence[Report],
    tasks: Sequence[Task],
    *,
    args: argparse.Namespace,
    settings: Settings,
    console: Console,
    lanes: dict[str, dict[str, Any]],
    servers: dict[str, dict[str, Any]],
) -> None:
    """The lanes of one model at one thread count: from cassettes, or against a server started for them."""
    if not configs:
        return
    served = f"{name}/t{threads}"

    def lane(model: LanguageModel, config: Config, scorer: TextScorer | None) -> dict[str, Any]:
        label = lane_key(name, threads, config)
        return run_lane(
            memory, model, config, reports, tasks, settings=settings, console=console, label=label, scorer=scorer
        )

    if args.replay is not None:
        for config in configs:
            slug = cassette_slug(name, threads, config)
            player = replaying(args.replay, slug)
            figures = lane(player, config, replaying_scores(args.replay, slug) if config.scores else None)
            lanes[lane_key(name, threads, config)] = {
                "model": name,
                "threads": threads,
                "server": None,
                "cassette": slug,
                "unplayed": player.remaining,
                **figures,
            }
        return
    with server_for(name, threads, scoring=True if any(c.scores for c in configs) else None) as server:
        texts = [r.text for r in reports]
        servers[served] = {"model": name, "threads": threads, "ctx": server.ctx, "scoring": server.scoring}
        servers[served]["ttft"] = time_to_first_token(server, memory.domain, texts)
        for config in configs:
            figures = served_lane(server, config, lane, record=args.record, slug=cassette_slug(name, threads, config))
            lanes[lane_key(name, threads, config)] = {"model": name, "threads": threads, "server": served, **figures}


def served_lane(
    server: LocalServer,
    config: Config,
    lane: Callable[[LanguageModel, Config, TextScorer | None], dict[str, Any]],
    *,
    record: Path | None,
    slug: str,
) -> dict[str, Any]:
    """One lane against ``server``, through the product's client (and scorer), recorded if asked."""
    client = product_client(server)
    scorer = product_scorer(client) if config.scores else None
    try:
        if record is not None:
            recorded = recording_scores(scorer, record, slug) if scorer is not None else None
            with recording(client, record, slug) as model:
                figures = lane(model, config, recorded)
            figures["cassette"] = slug
        else:
            figures = lane(client, config, scorer)
        return {"client": client_settings(client), **figures}
    finally:
        client.close()
        if scorer is not None:
            scorer.close()


def _run_record(
    args: argparse.Namespace,
    reports: Sequence[Report],
    tasks: Sequence[Task],
    lanes: list[str],
    *,
    load_start: tuple[float, float, float],
    started: float,
) -> dict[str, Any]:
    """What a results file says about one run: when, where (the load average at its start and end), how."""
    load_end = os.getloadavg()
    return {
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_info(
            llama_cpp_python=_version("llama_cpp_python"),
            load_average_start=[round(x, 2) for x in load_start],
            load_average_end=[round(x, 2) for x in load_end],
        ),
        "parameters": parameters(args),
        "mode": "replayed" if args.replay else ("recorded" if args.record else "live"),
        "data": {
            "reports": {s: sum(r.set == s for r in reports) for s in SETS},
            "tasks": {s: sum(t.set == s for t in tasks) for s in SETS},
        },
        "lanes": lanes,
        "wall_s": round(time.perf_counter() - started, 1),
    }


def _combined(
    run: dict[str, Any],
    lanes: dict[str, dict[str, Any]],
    settings: Settings,
    earlier: dict[str, Any],
) -> dict[str, Any]:
    """The results file: this run's lanes, and the earlier file's other lanes (each naming its run)."""
    kept = {k: v for k, v in earlier.get("lanes", {}).items() if k not in lanes}
    runs, kept = _still_measuring(earlier.get("runs", []), kept)
    runs.append(run)
    for lane in lanes.values():  # which run measured it, and over how many of each set's items
        lane["run"], lane["limit"] = len(runs) - 1, run["parameters"]["limit"]
    default = lane_key(DEFAULT_MODEL, DEFAULT_THREADS, CONFIGS[DEFAULT_CONFIG])
    results: dict[str, Any] = {
        "benchmark": "realmodel",
        **{k: run[k] for k in ("time", "machine", "parameters", "mode")},
        "settings": {
            "retriever": settings.retriever,
            "nl_reader": settings.nl_reader,
            "nl_ranker": settings.nl_ranker,
            "update_deadline": settings.update_deadline,
            "plan_deadline": settings.plan_deadline,
        },
        "runs": runs,
        "lanes": {**kept, **lanes},
        "default_lane": default,
    }
    results["targets"] = judge(results["lanes"].get(default), default)
    return results


def _still_measuring(
    runs: list[dict[str, Any]], lanes: dict[str, dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The earlier runs that still measure a kept lane (each listing only those), lanes renumbered."""
    used = sorted({lane["run"] for lane in lanes.values()})
    number = {old: new for new, old in enumerate(used)}
    left = [{**runs[old], "lanes": [k for k, v in lanes.items() if v["run"] == old]} for old in used]
    return left, {k: {**v, "run": number[v["run"]]} for k, v in lanes.items()}


def _earlier(path: Path) -> dict[str, Any]:
    """The results already at ``path``, to merge into; none if there are none."""
    if not path.is_file():
        return {}
    earlier: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if earlier.get("benchmark") != "realmodel":
        raise SystemExit(f"{path} is not a realmodel results file: not merging into it")
    return earlier


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
