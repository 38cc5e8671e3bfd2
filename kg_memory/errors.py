"""Exceptions: misuse and infrastructure failures (expected outcomes are values).

``L3mpError`` is the root for every package of the project; it lives here because
``kg_memory`` is the bottom layer and imports nothing of ours.
"""

from __future__ import annotations

from pathlib import Path


class L3mpError(Exception):
    """Root of every exception the project raises on purpose."""


class KgMemoryError(L3mpError):
    """Root of the world-state memory's exceptions."""


class DomainError(KgMemoryError):
    """A domain, rules or language file is missing or malformed."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class UnknownDomain(KgMemoryError):
    def __init__(self, name: str, known: tuple[str, ...] = ()) -> None:
        self.name = name
        hint = f"; known domains: {', '.join(known)}" if known else ""
        super().__init__(f"unknown domain {name!r}{hint}")


class UnknownMemory(KgMemoryError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"unknown memory {name!r}")


class MemoryExists(KgMemoryError):
    def __init__(self, name: str, problem: str = "already exists") -> None:
        self.name = name
        super().__init__(f"memory {name!r} {problem}")

    @classmethod
    def importing(cls, name: str) -> MemoryExists:
        """The name of a memory an import is filling (or was, until its process stopped)."""
        return cls(
            name,
            "is being imported (an import whose process stopped leaves it so: delete it with"
            " abandoned_import to free the name)",
        )

    @classmethod
    def in_use(cls, name: str) -> MemoryExists:
        """A memory asked to be deleted as an abandoned import whose import ended (or that never had one)."""
        return cls(name, "is not being imported: it is in use (deleting it is asked for without abandoned_import)")


class UnknownUpdate(KgMemoryError):
    def __init__(self, memory: str, update_id: str) -> None:
        self.memory = memory
        self.update_id = update_id
        super().__init__(f"memory {memory!r} has no update {update_id!r}")


class InvalidName(KgMemoryError):
    """A memory, entity, type or predicate name that cannot be stored safely."""

    def __init__(self, kind: str, name: object, rule: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f"invalid {kind} name {name!r}: {rule}")


class InvalidValue(KgMemoryError):
    """A core value (fact, entity, delta, update) built from bad input."""

    def __init__(self, what: str, value: object, problem: str) -> None:
        self.what = what
        self.value = value
        super().__init__(f"invalid {what} {value!r}: {problem}")


class VersionConflict(KgMemoryError):
    """The memory moved on since the caller read it; nothing was written."""

    def __init__(self, memory: str, expected: int, actual: int) -> None:
        self.memory = memory
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"memory {memory!r} is at version {actual}, not {expected}: it changed since it was read; "
            "re-read the state, re-verify the delta and apply again"
        )


class NotApplicable(KgMemoryError):
    """A delta handed to a store's commit does not apply to the stored state.

    The memory verifies before committing, so this signals misuse of the store API.
    """

    def __init__(self, memory: str, problem: str) -> None:
        self.memory = memory
        super().__init__(f"memory {memory!r}: {problem}; nothing was written")


class StoreUnavailable(KgMemoryError):
    """The database cannot be reached or failed mid-operation; nothing was written."""

    def __init__(self, backend: str, operation: str, cause: str, *, login_refused: bool = False) -> None:
        self.backend = backend
        self.operation = operation
        self.login_refused = login_refused  # the database answered, and refused who logs in
        super().__init__(f"{backend} store unavailable during {operation}: {cause}")


class StoreFailure(KgMemoryError):
    """The database refused an operation for a reason other than being unreachable."""

    def __init__(self, backend: str, operation: str, cause: str) -> None:
        self.backend = backend
        self.operation = operation
        super().__init__(f"{backend} store refused {operation}: {cause}")
