"""Every domain error answers with its own code: the error tree, walked from the product's packages,
against the REST error table (l3mp.service.errors.CODES)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

import pytest

from kg_memory import L3mpError
from l3mp.llm import CassetteError, LLMError, ScriptExhausted, UnrecordedRequest
from l3mp.runtime import InboxError
from l3mp.service.errors import CODES, mapped_class, status_of
from planning import PlanningError, WorldError

PRODUCT = ("kg_memory", "retrieval", "planning", "perception", "l3mp")

# the few errors that deliberately answer with a parent's code, and why
SHARED: dict[type[Exception], tuple[type[Exception], str]] = {
    ScriptExhausted: (LLMError, "a scripted stand-in for the model: its failure is the model's, to a client"),
    UnrecordedRequest: (LLMError, "a replayed stand-in for the model: its failure is the model's, to a client"),
    CassetteError: (LLMError, "a replayed stand-in for the model: its failure is the model's, to a client"),
    InboxError: (L3mpError, "the daemon's inbox file, never a route's; the service may not import the runtime"),
}


def _import_product() -> None:
    """Every module of the product, so that every error class it defines exists."""
    for name in PRODUCT:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            if not module.name.endswith("__main__"):  # a command line, run on import
                importlib.import_module(module.name)


def _subclasses(root: type[Exception]) -> Iterator[type[Exception]]:
    for child in root.__subclasses__():
        yield child
        yield from _subclasses(child)


@pytest.fixture(scope="module")
def error_tree() -> list[type[Exception]]:
    _import_product()
    found = {root for root in _subclasses(L3mpError) if root.__module__.split(".")[0] in PRODUCT}
    return sorted({L3mpError, *found}, key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


def test_the_walk_finds_the_errors_of_every_product_package(error_tree: list[type[Exception]]) -> None:
    packages = {cls.__module__.split(".")[0] for cls in error_tree}
    assert packages == set(PRODUCT)
    assert {WorldError, PlanningError, InboxError, ScriptExhausted} <= set(error_tree)


def test_every_domain_error_maps_to_its_own_entry(error_tree: list[type[Exception]]) -> None:
    wrong = {}
    for cls in error_tree:
        expected = SHARED[cls][0] if cls in SHARED else cls
        if mapped_class(cls) is not expected:
            wrong[cls.__qualname__] = (mapped_class(cls), expected)
    assert not wrong, f"answers with another class's entry (found, expected): {wrong}"


def test_shared_entries_are_real_parents_with_a_reason(error_tree: list[type[Exception]]) -> None:
    for cls, (parent, reason) in SHARED.items():
        assert cls in error_tree and cls not in CODES
        assert parent in cls.__mro__[1:] and parent in CODES
        assert reason.strip()


def test_no_two_entries_share_a_code() -> None:
    codes = [code for _status, code in CODES.values()]
    assert len(codes) == len(set(codes))


def test_a_subclass_is_never_shadowed_by_its_parent() -> None:
    for cls in CODES:
        for parent in cls.__mro__[1:]:
            if parent in CODES:
                assert mapped_class(cls) is cls, (cls, parent)


def test_world_errors_send_their_own_code() -> None:
    assert status_of(WorldError("no such table")) == (422, "world_error")
    assert status_of(PlanningError("unknown planner 'x'")) == (422, "planning_error")


def test_every_domain_error_is_a_client_error_or_a_retryable_upstream_one() -> None:
    assert all(400 <= status < 500 or status in (502, 503) for status, _code in CODES.values())
    assert status_of(RuntimeError("a bug")) == (500, "internal_error")
