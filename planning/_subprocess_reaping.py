"""Planner subprocesses reaped when unified-planning lets go of them (shared by our engines)."""

from __future__ import annotations

import subprocess


class ReapedProcess:
    """Reaps the planner's process when unified-planning lets go of it.

    On a timeout, unified-planning's ``run_command`` kills the process group and drops the
    ``Popen`` without waiting for it or closing its pipes: the zombie and two open files
    surface later as ``ResourceWarning`` s. It stores the ``Popen`` in ``engine._process``
    and resets that to ``None`` when done, which is the hook used here.
    """

    _l3mp_process: subprocess.Popen[bytes] | None = None

    @property
    def _process(self) -> subprocess.Popen[bytes] | None:
        return self._l3mp_process

    @_process.setter
    def _process(self, process: subprocess.Popen[bytes] | None) -> None:
        previous, self._l3mp_process = self._l3mp_process, process
        if previous is None or process is not None:
            return
        try:
            previous.wait(timeout=10)  # already sent SIGTERM; this only collects it
        except subprocess.TimeoutExpired:
            previous.kill()
            previous.wait()
        for stream in (previous.stdout, previous.stderr):
            if stream is not None:
                stream.close()
