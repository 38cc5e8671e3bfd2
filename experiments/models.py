"""The packaged local models on this machine: for each installed one and 1 and 2 threads, load time, RSS,
prompt evaluation and generation tokens/s, and the time to score candidate sentences after a shared
prefix through /v1/completions (echo + logprobs, one request per candidate, the prefix reused); then RSS
with and without scoring (``logits_all``) at two context sizes.

    python -m experiments.models [--models smollm2-135m,gemma3-270m] [--threads 1,2] [--candidates 20]
        [--budget 120] [--out experiments/results/models.json]

A scoring pass stops after ``--budget`` seconds: it reports the candidates it scored, their mean and the
projection to all of them (marked as such).
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from experiments.harness import RESULTS, Benchmark, header, machine_info, write_results
from l3mp.llm.local import MODELS, LocalServer, PackagedModel, free_port

PROMPT_TOKENS = 1000
PREFIX_TOKENS = 800
GENERATED_TOKENS = 64
FILL = 0.9  # of the context, for the RSS of a full context

ROOMS = ("kitchen", "hallway", "bedroom", "bathroom", "living room", "study", "garage", "pantry")
THINGS = ("mug", "book", "remote", "towel", "phone", "kettle", "lamp", "basket", "spoon", "charger")


def sentence(n: int) -> str:
    """One of many distinct household sentences (about fifteen tokens)."""
    thing, room, other = THINGS[n % len(THINGS)], ROOMS[n % len(ROOMS)], ROOMS[(n // 3) % len(ROOMS)]
    return f"At step {n} the robot saw the {thing} on a shelf in the {room}, then went to the {other}. "


def post(server: LocalServer, path: str, payload: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """Seconds the request took, and its JSON reply."""
    request = urllib.request.Request(
        server.base_url.removesuffix("/v1") + path,
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=1800) as reply:
        answer: dict[str, Any] = json.load(reply)
    return time.perf_counter() - start, answer


def text_of(server: LocalServer, tokens: int, first: int = 0) -> str:
    """Sentences from ``first`` on, up to about ``tokens`` tokens of this model's tokenizer."""
    text, n = "", first
    while True:
        longer = text + sentence(n)
        _, reply = post(server, "/extras/tokenize", {"input": longer})
        if len(reply["tokens"]) > tokens:
            return text
        text, n = longer, n + 1


def rss_mb(server: LocalServer) -> tuple[int, int]:
    """The server process's resident set now and at its peak, in MB."""
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text(encoding="utf-8")
    fields = dict(line.split(":", 1) for line in status.splitlines())
    return int(fields["VmRSS"].split()[0]) // 1024, int(fields["VmHWM"].split()[0]) // 1024


def started(model: PackagedModel, **options: Any) -> tuple[LocalServer, float]:
    server = LocalServer.of(model, port=free_port(), **options)
    start = time.perf_counter()
    server.start(wait=600)
    return server, time.perf_counter() - start


def completion(server: LocalServer, prompt: str, **options: Any) -> tuple[float, dict[str, Any]]:
    return post(server, "/v1/completions", {"prompt": prompt, "max_tokens": 1, "temperature": 0} | options)


def speeds(model: PackagedModel, threads: int) -> dict[str, Any]:
    """Load, RSS, prompt evaluation and generation rates, scoring off."""
    server, load_s = started(model, threads=threads, scoring=False)
    try:
        rss_load, _ = rss_mb(server)
        prompt = text_of(server, PROMPT_TOKENS)
        prompt_s, reply = completion(server, prompt)
        prompt_tokens = reply["usage"]["prompt_tokens"]
        story = "Once upon a time a small robot lived in a big house. Every morning it"
        generation_s, reply = completion(server, story, max_tokens=GENERATED_TOKENS)
        generated = reply["usage"]["completion_tokens"]
        _, rss_peak = rss_mb(server)
    finally:
        server.stop()
    return {
        "load_s": round(load_s, 2),
        "rss_loaded_mb": rss_load,
        "rss_peak_mb": rss_peak,
        "prompt_tokens": prompt_tokens,
        "prompt_tokens_per_s": round(prompt_tokens / prompt_s, 1),
        "generated_tokens": generated,
        "generation_tokens_per_s": round(generated / generation_s, 1),  # includes the short prompt's evaluation
    }


def scoring(model: PackagedModel, threads: int, candidates: int, budget: float) -> dict[str, Any]:
    """Candidate sentences scored after a shared prefix (echo + logprobs), scoring on; then the same
    requests without echo, which is the model's share of the time."""
    server, load_s = started(model, threads=threads, scoring=True, ctx=2048)
    try:
        prefix = text_of(server, PREFIX_TOKENS)
        sentences = [sentence(1000 + n) for n in range(candidates)]
        prompt_s, reply = completion(server, text_of(server, PROMPT_TOKENS, first=500))
        first_s, reply = completion(server, prefix + sentences[0], echo=True, logprobs=1)
        prompt_tokens = reply["usage"]["prompt_tokens"]
        scored, spent = [], 0.0
        for candidate in sentences[1:]:
            seconds, reply = completion(server, prefix + candidate, echo=True, logprobs=1)
            assert reply["choices"][0]["logprobs"]["token_logprobs"][-2] is not None
            scored.append(seconds)
            spent += seconds
            if spent > budget:
                break
        model_only = [completion(server, prefix + candidate)[0] for candidate in sentences[1 : 1 + len(scored)]]
        _, rss_peak = rss_mb(server)
    finally:
        server.stop()
    mean = sum(scored) / len(scored)
    return {
        "load_s": round(load_s, 2),
        "prompt_tokens_per_s_scoring_on": round(PROMPT_TOKENS / prompt_s, 1),
        "scored_prompt_tokens": prompt_tokens,
        "first_candidate_s": round(first_s, 2),  # evaluates the prefix too
        "candidates_measured": len(scored),
        "candidate_mean_s": round(mean, 3),
        "candidate_eval_only_mean_s": round(sum(model_only) / len(model_only), 3),
        "all_candidates_s": round(first_s + sum(scored), 1),
        "all_candidates_projected_s": round(first_s + mean * (candidates - 1), 1),
        "projected": len(scored) < candidates - 1,
        "rss_peak_mb": rss_peak,
    }


def rss_by_context(model: PackagedModel, contexts: Sequence[int]) -> list[dict[str, Any]]:
    """RSS loaded and after a plain completion that fills most of the context, scoring off and on."""
    rows = []
    for ctx in contexts:
        for on in (False, True):
            server, _ = started(model, threads=2, scoring=on, ctx=ctx)
            try:
                loaded, _ = rss_mb(server)
                completion(server, text_of(server, int(FILL * ctx)))
                full, peak = rss_mb(server)
            finally:
                server.stop()
            rows.append({"ctx": ctx, "scoring": on, "rss_loaded_mb": loaded, "rss_full_mb": full, "rss_peak_mb": peak})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--models", default=",".join(MODELS), help="packaged model names, comma-separated")
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--budget", type=float, default=120.0, help="seconds of scoring per run before projecting")
    parser.add_argument("--contexts", default="2048,8192", help="context sizes for the RSS table")
    args = parser.parse_args(argv)
    console = Console(width=180)
    names = [name for name in args.models.split(",") if MODELS[name].installed()]
    threads = [int(t) for t in args.threads.split(",")]
    runs: list[dict[str, Any]] = []
    memory: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        model = MODELS[name]
        for count in threads:
            console.print(f"{name}, {count} thread(s)")
            run = {"model": name, "threads": count, **speeds(model, count)}
            run["scoring"] = scoring(model, count, args.candidates, args.budget)
            runs.append(run)
            console.print(run)
        memory[name] = rss_by_context(model, [int(c) for c in args.contexts.split(",")])
        console.print(memory[name])
    machine = machine_info(llama_cpp_python=_llama_version())
    results = {**header("models", args, machine), "runs": runs, "rss_by_context": memory}
    write_results(args.out, results)
    console.print(table(runs))
    console.print(memory_table(memory))
    return 0


def table(runs: list[dict[str, Any]]) -> Table:
    out = Table(title="packaged models (scoring: candidates after a shared prefix, echo + logprobs)")
    for column in (
        "model", "threads", "load s", "RSS MB", "prompt tok/s", "prompt tok/s (scoring on)", "gen tok/s",
        "candidate s (eval only)", "all candidates s", "peak RSS scoring MB",
    ):  # fmt: skip
        out.add_column(column, justify="left" if column == "model" else "right")
    for run in runs:
        score = run["scoring"]
        total = f"{score['all_candidates_projected_s']}{' (projected)' if score['projected'] else ''}"
        out.add_row(
            run["model"], str(run["threads"]), str(run["load_s"]), str(run["rss_loaded_mb"]),
            str(run["prompt_tokens_per_s"]), str(score["prompt_tokens_per_s_scoring_on"]),
            str(run["generation_tokens_per_s"]),
            f"{score['candidate_mean_s']} ({score['candidate_eval_only_mean_s']})", total, str(score["rss_peak_mb"]),
        )  # fmt: skip
    return out


def memory_table(memory: dict[str, list[dict[str, Any]]]) -> Table:
    out = Table(title=f"RSS (MB): loaded, and after a prompt filling {FILL:.0%} of the context")
    for column in ("model", "ctx", "scoring", "loaded", "full", "peak"):
        out.add_column(column, justify="left" if column == "model" else "right")
    for name, rows in memory.items():
        for row in rows:
            out.add_row(
                name, str(row["ctx"]), "on" if row["scoring"] else "off",
                str(row["rss_loaded_mb"]), str(row["rss_full_mb"]), str(row["rss_peak_mb"]),
            )  # fmt: skip
    return out


def _llama_version() -> str:
    from importlib.metadata import version

    return version("llama-cpp-python")


BENCHMARK = Benchmark(name="models", results=RESULTS / "models.json", main=main)

if __name__ == "__main__":
    sys.exit(main())
