"""The packaged local models on this machine: for each installed one and 1 and 2 threads, load time, RSS,
prompt evaluation and generation tokens/s, and the time to score candidate sentences after a shared
prefix, one request per candidate with the prefix reused: through l3mp's /v1/score, and through
/v1/completions with echo + logprobs; then RSS with and without scoring (``logits_all``) at two
context sizes.

    python -m experiments.models [--models smollm2-135m,gemma3-270m] [--threads 1,2] [--candidates 20]
        [--echoes 1] [--out experiments/results/models.json]

The echo path formats every prompt token's log-probabilities in Python (a sort of the vocabulary per
token), so only ``--echoes`` candidates take it; the total for all of them is projected from those.
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


def score(server: LocalServer, prefix: str, candidate: str) -> float:
    seconds, reply = post(server, "/v1/score", {"prompt": prefix, "continuation": candidate})
    assert len(reply["token_logprobs"]) > 0
    return seconds


def echo(server: LocalServer, prefix: str, candidate: str) -> float:
    seconds, reply = completion(server, prefix + candidate, echo=True, logprobs=1)
    assert reply["choices"][0]["logprobs"]["token_logprobs"][-2] is not None
    return seconds


def scoring(model: PackagedModel, threads: int, candidates: int, echoes: int) -> dict[str, Any]:
    """Candidate sentences scored after a shared prefix, scoring on: through /v1/score, all of them;
    through /v1/completions with echo + logprobs, the first ``echoes`` (each as costly as the next)."""
    server, load_s = started(model, threads=threads, scoring=True, ctx=2048)
    try:
        prefix = text_of(server, PREFIX_TOKENS)
        sentences = [" " + sentence(1000 + n).strip() for n in range(candidates)]
        prompt_s, _ = completion(server, text_of(server, PROMPT_TOKENS, first=500))
        first_s = score(server, prefix, sentences[0])  # evaluates the prefix too
        rest = [score(server, prefix, candidate) for candidate in sentences[1:]]
        _, reply = post(server, "/v1/score", {"prompt": prefix, "continuation": sentences[0]})
        _, rss_score_peak = rss_mb(server)
        echoed = [echo(server, prefix, candidate) for candidate in sentences[1 : 1 + echoes]]
        _, rss_peak = rss_mb(server)
    finally:
        server.stop()
    echo_mean = sum(echoed) / len(echoed) if echoed else None
    return {
        "load_s": round(load_s, 2),
        "prompt_tokens_per_s_scoring_on": round(PROMPT_TOKENS / prompt_s, 1),
        "prefix_tokens": reply["prompt_tokens"],
        "candidate_tokens": len(reply["token_logprobs"]),
        "score_first_s": round(first_s, 2),
        "score_candidate_mean_s": round(sum(rest) / len(rest), 3),
        "score_all_s": round(first_s + sum(rest), 2),
        "echo_candidates_measured": len(echoed),
        "echo_candidate_mean_s": None if echo_mean is None else round(echo_mean, 2),
        # the prefix evaluated once, then every candidate at the measured echo cost
        "echo_all_projected_s": None if echo_mean is None else round(first_s + echo_mean * (candidates - 1), 1),
        "rss_peak_score_mb": rss_score_peak,
        "rss_peak_mb": rss_peak,  # after the echoes too
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
    parser.add_argument("--echoes", type=int, default=1, help="candidates also scored through echo + logprobs")
    parser.add_argument("--contexts", default="2048,8192", help="context sizes for the RSS table")
    args = parser.parse_args(argv)
    console = Console(width=200)
    names = [name for name in args.models.split(",") if MODELS[name].installed()]
    threads = [int(t) for t in args.threads.split(",")]
    runs: list[dict[str, Any]] = []
    memory: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        model = MODELS[name]
        for count in threads:
            console.print(f"{name}, {count} thread(s)")
            run = {"model": name, "threads": count, **speeds(model, count)}
            run["scoring"] = scoring(model, count, args.candidates, args.echoes)
            runs.append(run)
            console.print(run)
            write_results(args.out, results(args, runs, memory, complete=False))
        memory[name] = rss_by_context(model, [int(c) for c in args.contexts.split(",")])
        console.print(memory[name])
    write_results(args.out, results(args, runs, memory, complete=True))
    console.print(table(runs))
    console.print(memory_table(memory))
    return 0


def results(
    args: Any, runs: list[dict[str, Any]], memory: dict[str, list[dict[str, Any]]], *, complete: bool
) -> dict[str, Any]:
    """The results file, written after each run too (``complete`` false until the end)."""
    machine = machine_info(llama_cpp_python=_llama_version())
    return {**header("models", args, machine), "complete": complete, "runs": runs, "rss_by_context": memory}


def table(runs: list[dict[str, Any]]) -> Table:
    out = Table(title="packaged models (scoring: candidates after a shared prefix, one request each)")
    for column in (
        "model", "threads", "load s", "RSS MB", "prompt tok/s", "prompt tok/s scoring on", "gen tok/s",
        "/v1/score first s", "/v1/score per candidate s", "/v1/score all s", "echo per candidate s",
        "echo all s (projected)", "peak RSS /v1/score MB", "peak RSS echo MB",
    ):  # fmt: skip
        out.add_column(column, justify="left" if column == "model" else "right")
    for run in runs:
        score = run["scoring"]
        out.add_row(
            run["model"], str(run["threads"]), str(run["load_s"]), str(run["rss_loaded_mb"]),
            str(run["prompt_tokens_per_s"]), str(score["prompt_tokens_per_s_scoring_on"]),
            str(run["generation_tokens_per_s"]), str(score["score_first_s"]), str(score["score_candidate_mean_s"]),
            str(score["score_all_s"]), str(score["echo_candidate_mean_s"]), str(score["echo_all_projected_s"]),
            str(score["rss_peak_score_mb"]), str(score["rss_peak_mb"]),
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
