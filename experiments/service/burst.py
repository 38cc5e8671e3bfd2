"""The service under a burst of NL updates at a model that stalls: does ``GET /health`` stay fast?

A local model server that speaks the OpenAI chat-completions protocol and holds every request
(:class:`StallingModel`); the real server (``l3mp serve``, a subprocess) configured against it with
a few model slots and a short route deadline; a burst of concurrent NL updates fired from a process
of its own (``python -m experiments.service.burst_client URL MEMORY N TIMEOUT``: one JSON line per
outcome), so that the client side of the burst does not share a GIL with the health probe, which
polls ``GET /health`` every 50 ms until the burst has ended. :func:`measure_burst` returns each
request's outcome and each probe's latency; ``python -m experiments service`` reports them
(``--burst-only`` for this part alone), and ``tests/l3mp/service/test_busy.py`` holds the same
run to bounds a busy machine meets.
"""

from __future__ import annotations

import contextlib
import gc
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from rich.table import Table

from experiments.harness import judged, judged_all, measures_table, ms, verdict
from experiments.service.server import Server, create_home

REQUESTS = 50
SLOTS = 4  # L3MP_MODEL_CONCURRENCY
DEADLINE = 6.0  # L3MP_MODEL_ROUTE_DEADLINE, seconds
MODEL_TIMEOUT = 3.0  # L3MP_LLM_TIMEOUT, seconds, with no retry
STALL = 60.0  # how long the model holds each request (or until it is stopped)
PROBE_EVERY = 0.05  # seconds between GET /health probes
TARGET_HEALTH_MAX_MS = 100.0
MEMORY = "home"


# -- the model that stalls ------------------------------------------------------------------------


class StallingModel:
    """``with StallingModel(stall=30) as model: ... model.base_url ...``; ``model.received`` counts calls.

    Every request is held ``stall`` seconds, or until the ``with`` block ends, before it is answered.
    """

    def __init__(self, stall: float = 30.0) -> None:
        self.stall = stall
        self.received = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with model._lock:
                    model.received += 1
                model._stop.wait(model.stall)
                body = json.dumps(_completion('{"edits": []}')).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up waiting, as it should

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> StallingModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def _completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stall",
        "object": "chat.completion",
        "created": 0,
        "model": "stall",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def server_settings(model_url: str, slots: int = SLOTS, deadline: float = DEADLINE) -> dict[str, str]:
    """The server's environment: the stalling model, ``slots`` model slots, a ``deadline`` per route."""
    return {
        "L3MP_LLM_BASE_URL": model_url,
        "L3MP_LLM_API_KEY": "local",
        "L3MP_LLM_TIMEOUT": f"{MODEL_TIMEOUT:g}",
        "L3MP_LLM_MAX_RETRIES": "0",
        "L3MP_MODEL_CONCURRENCY": str(slots),
        "L3MP_MODEL_ROUTE_DEADLINE": f"{deadline:g}",
        "L3MP_RETRIEVER": "full",
    }


@dataclass(frozen=True)
class Outcome:
    """One NL update: HTTP status (0: no answer), client-side seconds, Retry-After, the error's code."""

    status: int
    seconds: float
    retry_after: str | None
    code: str | None


# -- the measurement ------------------------------------------------------------------------------


@dataclass(kw_only=True)
class Burst:
    """What a burst measured: each request's outcome, each /health probe's seconds and failures."""

    requests: int
    slots: int
    deadline: float
    outcomes: list[Outcome] = field(default_factory=list)
    health: list[float] = field(default_factory=list)
    health_failures: list[str] = field(default_factory=list)
    model_received: int = 0


def measure_burst(
    workdir: Path, requests: int = REQUESTS, slots: int = SLOTS, deadline: float = DEADLINE, stall: float = STALL
) -> Burst:
    """Start a stalling model and a server against it; fire the burst; probe /health until it has ended."""
    burst = Burst(requests=requests, slots=slots, deadline=deadline)
    with StallingModel(stall=stall) as model:
        env = server_settings(model.base_url, slots, deadline)
        with Server(workdir / "burst.db", workdir / "burst-server.log", env=env) as server:
            create_home(server.url, MEMORY)
            _fire(server.url, burst)
        burst.model_received = model.received
    return burst


def _fire(url: str, burst: Burst) -> None:
    command = [sys.executable, "-m", "experiments.service.burst_client", url, MEMORY, str(burst.requests)]
    command.append(str(burst.deadline + 10))  # the client's timeout: past the deadline, with slack
    with (
        _no_collector(),
        httpx.Client(timeout=5.0) as probe,
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as client,
    ):
        while client.poll() is None:
            started = time.monotonic()
            try:
                status = probe.get(f"{url}/health").status_code
                if status != 200:
                    burst.health_failures.append(f"HTTP {status}")
            except httpx.HTTPError as exc:
                burst.health_failures.append(f"{type(exc).__name__}: {exc}")
            burst.health.append(time.monotonic() - started)
            time.sleep(PROBE_EVERY)
        out, err = client.communicate()
    if client.returncode != 0:
        raise RuntimeError(f"the burst's client exited with {client.returncode}: {err.strip()[-2000:]}")
    for line in out.splitlines():
        o = json.loads(line)
        burst.outcomes.append(Outcome(o["status"], o["seconds"], o["retry_after"], o["code"]))


@contextlib.contextmanager
def _no_collector() -> Iterator[None]:
    """This process's garbage collector off: run after the load variants, whose leftovers it holds,
    a full collection takes tens of milliseconds, and one that fell in a probe would be counted as
    the server's. The probing loop allocates little."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# -- the figures ----------------------------------------------------------------------------------


def refused_on_arrival(burst: Burst) -> list[Outcome]:
    """The requests refused at once because every model slot was taken (503 ``busy``), not queued."""
    return [o for o in burst.outcomes if o.status == 503 and o.code == "busy"]


def figures(burst: Burst) -> dict[str, Any]:
    """The burst's results-file entry: its set-up, outcomes and /health latencies (ms; null without a probe)."""
    refused = refused_on_arrival(burst)
    health = burst.health
    seconds = [o.seconds for o in burst.outcomes]
    return {
        "requests": burst.requests,
        "model_slots": burst.slots,
        "route_deadline_s": burst.deadline,
        "model_timeout_s": MODEL_TIMEOUT,
        "answered": len(burst.outcomes),
        "outcomes": dict(Counter(f"{o.status} {o.code or ''}".strip() for o in burst.outcomes).most_common()),
        "refused_on_arrival": len(refused),
        "refused_max_ms": round(1000 * max(o.seconds for o in refused), 1) if refused else None,
        "request_max_s": round(max(seconds), 3) if seconds else None,
        "within_deadline": sum(1 for s in seconds if s <= burst.deadline),
        "model_calls": burst.model_received,
        "health": {
            "probes": len(health),
            "every_ms": round(1000 * PROBE_EVERY),
            "failed": len(burst.health_failures),
            "failures": burst.health_failures[:10],
            "p50_ms": ms(health, 50) if health else None,
            "p95_ms": ms(health, 95) if health else None,
            "max_ms": round(1000 * max(health), 3) if health else None,
            "slowest_ms": [round(1000 * s, 1) for s in sorted(health)[-3:]],
        },
    }


def judge(burst: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The burst's targets: /health's slowest probe (a failed probe misses it), and every request
    answered within the route deadline (seconds as the client measured them)."""
    health = burst["health"]
    slowest = health["max_ms"]
    fast = None if slowest is None else slowest < TARGET_HEALTH_MAX_MS and not health["failed"]
    return {
        "burst /health max ms": judged(f"max < {TARGET_HEALTH_MAX_MS:g} ms", slowest, fast, samples=health["probes"]),
        "burst requests within deadline": judged_all(
            f"all end within the {burst['route_deadline_s']:g} s deadline", burst["within_deadline"], burst["requests"]
        ),
    }


def table(burst: dict[str, Any], targets: dict[str, dict[str, Any]]) -> Table:
    health = burst["health"]

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    outcomes = ", ".join(f"{n} x {kind}" for kind, n in burst["outcomes"].items()) or "-"
    return measures_table(
        f"service: {burst['requests']} NL updates at once, model stalling, {burst['model_slots']} model slots, "
        f"{burst['route_deadline_s']:g} s route deadline",
        [
            ("outcomes (status, code)", outcomes),
            ("refused on arrival", f"{burst['refused_on_arrival']}/{burst['requests']}"),
            ("slowest refusal ms", cell(burst["refused_max_ms"])),
            ("slowest request s", "-" if burst["request_max_s"] is None else f"{burst['request_max_s']:.2f}"),
            ("within the deadline", verdict(targets["burst requests within deadline"])),
            ("calls that reached the model", str(burst["model_calls"])),
            (
                f"GET /health probes (every {health['every_ms']} ms) / failed",
                f"{health['probes']} / {health['failed']}",
            ),
            (
                "GET /health p50 / p95 / max ms",
                f"{cell(health['p50_ms'])} / {cell(health['p95_ms'])} / {cell(health['max_ms'])}",
            ),
            ("GET /health slowest", verdict(targets["burst /health max ms"])),
        ],
    )
