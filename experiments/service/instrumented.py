"""``l3mp serve`` as the service benchmark runs it, plus what only a benchmark wants: the write groups'
counters written to ``--stats`` when the server stops, and optionally a CPU profile of every thread.

The app and uvicorn's options are those of ``l3mp serve`` (l3mp/cli/serve.py); settings come from
the ``L3MP_*`` environment as there.

    python -m experiments.service.instrumented --port 8000 --stats stats.json [--profile server.prof]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import pstats
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any


class ThreadProfiles:
    """One cProfile per thread (cProfile sees only the thread that enabled it), merged at the end."""

    def __init__(self) -> None:
        self._profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        threading.setprofile(self._first_call)  # each thread started from now on profiles itself
        self._enable()

    def _first_call(self, *_: Any) -> None:
        sys.setprofile(None)
        self._enable()

    def _enable(self) -> None:
        profile = cProfile.Profile()
        with self._lock:
            self._profiles.append(profile)
        profile.enable()

    def dump(self, path: Path) -> None:
        threading.setprofile(None)
        with self._lock:
            profiles = list(self._profiles)
        stats = pstats.Stats(profiles[0])
        for profile in profiles[1:]:
            try:
                stats.add(profile)
            except TypeError:  # a thread's profile that recorded nothing
                continue
        stats.dump_stats(str(path))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.service.instrumented")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--stats", type=Path, required=True, help="the write groups' counters, written at exit")
    parser.add_argument("--profile", type=Path, help="a pstats file of every thread's CPU, written at exit")
    args = parser.parse_args(argv)

    import uvicorn

    from l3mp.service import create_app
    from l3mp.settings import Settings

    sys.setswitchinterval(0.001)  # as l3mp serve
    app = create_app(Settings())
    profiles = ThreadProfiles() if args.profile else None
    if profiles is not None:
        profiles.start()
    # uvicorn re-raises the signal that stopped it once it is down: end as an exit, so the files get written
    signal.signal(signal.SIGTERM, _exit)
    with contextlib.suppress(SystemExit):
        uvicorn.run(app, host=args.host, port=args.port, log_level="info", access_log=False)
    services = getattr(app.state, "services", None)
    if services is not None:
        args.stats.write_text(json.dumps(asdict(services.groups.stats())), encoding="utf-8")
    if profiles is not None:
        profiles.dump(args.profile)
    return 0


def _exit(*_: object) -> None:
    raise SystemExit(0)


if __name__ == "__main__":
    raise SystemExit(main())
