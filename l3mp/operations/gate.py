"""Model-bound work (NL updates, plans) off the request threads, bounded and rate-limited.

Sync routes share one thread pool with everything else, so 42 requests stalled on a model once held
``GET /health`` for 88 s. Here that work runs in a pool of its own, as large as the number of
slots: a request that finds no free slot is refused at once (503 with Retry-After) instead of
queueing, and one that outlives its deadline is answered 503 while its work finishes in its slot.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from l3mp.operations.errors import Overloaded

T = TypeVar("T")


class RateLimit:
    """At most ``per_minute`` requests per key in any minute (a token bucket per key, refilled
    continuously). Hand-written because pyrate-limiter starts a thread per limiter that outlives it."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, key: str) -> None:
        """Spend one token of ``key`` or raise :class:`Overloaded` (429) saying when one is back."""
        rate = self.per_minute / 60.0
        now = time.monotonic()
        with self._lock:
            tokens, when = self._buckets.get(key, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - when) * rate)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                wait = math.ceil((1.0 - tokens) / rate)
                raise Overloaded(429, "rate_limited", f"over {self.per_minute} model requests a minute", wait)
            self._buckets[key] = (tokens - 1.0, now)


def client_key(api_key: str | None, host: str | None) -> str:
    """Who is rate-limited: the API key (hashed, never kept) or else the client's address."""
    if api_key:
        return "key:" + hashlib.sha256(api_key.encode()).hexdigest()[:16]
    return f"host:{host or '?'}"


class ModelGate:
    """``concurrency`` slots and a pool of as many threads; ``deadline`` seconds per request."""

    def __init__(self, concurrency: int, deadline: float, per_minute: int) -> None:
        self.concurrency = concurrency
        self.deadline = deadline
        self.rate = RateLimit(per_minute)
        self._slots = threading.BoundedSemaphore(concurrency)
        self._busy = 0  # slots taken (read without the lock by the early refusal: a hint only)
        self._count = threading.Lock()
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="l3mp-model")

    async def run(self, work: Callable[[], T], *, key: str | None = None) -> T:
        """``work()`` in a free slot; ``key`` is rate-limited first (when the work calls the model)."""
        if key is not None:
            self.rate.take(key)
        if not self._slots.acquire(blocking=False):
            raise self.refusal()
        with self._count:
            self._busy += 1

        def in_slot() -> T:
            try:
                return work()
            finally:  # when the work ends, not when the request gave up on it
                with self._count:
                    self._busy -= 1
                self._slots.release()

        future = asyncio.get_running_loop().run_in_executor(self._pool, in_slot)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.deadline)
        except TimeoutError:
            message = f"no answer within the {self.deadline:g} s deadline; what the work recorded is in the history"
            raise Overloaded(503, "deadline_exceeded", message, max(1, math.ceil(self.deadline / 10))) from None

    @property
    def full(self) -> bool:
        return self._busy >= self.concurrency

    def refusal(self) -> Overloaded:
        retry = max(1, math.ceil(self.deadline / 10))
        return Overloaded(503, "busy", f"all {self.concurrency} model slots are busy; try again later", retry)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
