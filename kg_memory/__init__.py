"""The world-state memory: domain schema, core types, verification, stores and history."""

from kg_memory._pddl import UP_LOCK
from kg_memory.domain import Domain, DomainRegistry, PredicateSchema, load_domain
from kg_memory.errors import (
    DomainError,
    InvalidName,
    InvalidValue,
    KgMemoryError,
    L3mpError,
    MemoryExists,
    NotApplicable,
    StoreFailure,
    StoreUnavailable,
    UnknownDomain,
    UnknownMemory,
    UnknownUpdate,
    VersionConflict,
)
from kg_memory.formula import ActionSchema, And, Atom, Effect, Equals, Formula, Not, Or, Parameter, Quantified, Truth
from kg_memory.language import Language
from kg_memory.memory import DEFAULT_COMMIT_ATTEMPTS, Refused, WorldMemory
from kg_memory.model import (
    Delta,
    Entity,
    Fact,
    Issue,
    IssueCode,
    Memory,
    Neighbourhood,
    State,
    Update,
    UpdateSource,
    UpdateStatus,
)
from kg_memory.operations import ImportMismatch
from kg_memory.rules import Rules
from kg_memory.store import GraphStore
from kg_memory.verifier import StateView, Verifier

__all__ = [
    "DEFAULT_COMMIT_ATTEMPTS",
    "UP_LOCK",
    "And",
    "Atom",
    "Effect",
    "Equals",
    "Formula",
    "Not",
    "Or",
    "Quantified",
    "Refused",
    "Truth",
    "ActionSchema",
    "Delta",
    "Domain",
    "DomainError",
    "DomainRegistry",
    "Entity",
    "Fact",
    "GraphStore",
    "ImportMismatch",
    "InvalidName",
    "InvalidValue",
    "Issue",
    "IssueCode",
    "KgMemoryError",
    "L3mpError",
    "Language",
    "Memory",
    "MemoryExists",
    "Neighbourhood",
    "NotApplicable",
    "Parameter",
    "PredicateSchema",
    "Rules",
    "State",
    "StateView",
    "StoreFailure",
    "StoreUnavailable",
    "UnknownDomain",
    "UnknownMemory",
    "UnknownUpdate",
    "Update",
    "UpdateSource",
    "UpdateStatus",
    "VersionConflict",
    "Verifier",
    "WorldMemory",
    "load_domain",
]
