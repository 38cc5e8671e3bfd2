"""The runtime's inbox: tasks and reports queued from a JSON-lines file (``l3mp daemon --inbox``)."""

from __future__ import annotations

import json

from kg_memory.errors import L3mpError


class InboxError(L3mpError):
    """A line of the daemon's inbox file that is not a task or a report; carries the line."""

    def __init__(self, line: int, value: object, problem: str) -> None:
        self.line = line
        self.value = value
        super().__init__(f"inbox line {line}: {problem}: {value!r}")


def read_inbox(text: str) -> tuple[dict[str, str], ...]:
    """JSON lines, each ``{"task": "...", "goal": "(PDDL)"}`` (goal optional) or ``{"report": "..."}``."""
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise InboxError(number, line, f"not JSON ({exc})") from exc
        is_task = isinstance(entry, dict) and "task" in entry and entry.keys() <= {"task", "goal"}
        if not (is_task or (isinstance(entry, dict) and entry.keys() == {"report"})):
            raise InboxError(number, entry, 'expected {"task": ..., "goal"?: ...} or {"report": ...}')
        if not all(isinstance(v, str) and v.strip() for v in entry.values()):
            raise InboxError(number, entry, "every value must be non-empty text")
        entries.append(entry)
    return tuple(entries)
