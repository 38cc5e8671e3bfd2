"""The one place that builds backends from :class:`~l3mp.settings.Settings`: stores, the domain
registry, the language model and the default retriever. Everything else is handed what it needs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kg_memory import DomainRegistry, GraphStore
from l3mp.settings import Settings
from retrieval.retrievers import DEFAULT_RETRIEVER, RETRIEVERS

if TYPE_CHECKING:
    from l3mp.llm import LanguageModel

__all__ = [
    "BACKENDS",
    "DEFAULT_RETRIEVER",
    "RETRIEVERS",
    "configured_model",
    "domain_registry",
    "nl_reader",
    "open_store",
]


def _sqlite(settings: Settings, domains: DomainRegistry) -> GraphStore:
    from kg_memory.stores.sqlite import SQLiteStore

    return SQLiteStore(settings.sqlite_path, domains, writer_cache_mib=settings.sqlite_writer_cache_mib)


def _neo4j(settings: Settings, domains: DomainRegistry) -> GraphStore:
    from kg_memory.stores.neo4j import Neo4jStore

    store = Neo4jStore(
        settings.neo4j_uri,
        settings.neo4j_auth,
        domains,
        database=settings.neo4j_database,
        timeout=settings.neo4j_timeout,
        retry_time=settings.neo4j_retry_time,
    )
    try:
        store.init_schema()
    except BaseException:
        store.close()  # the driver's connections and threads, not left to the collector
        raise
    return store


# Backends by name, each imported when first opened (the Neo4j driver costs start-up time).
BACKENDS: dict[str, Callable[[Settings, DomainRegistry], GraphStore]] = {"sqlite": _sqlite, "neo4j": _neo4j}


def domain_registry(settings: Settings) -> DomainRegistry:
    """The shipped domains and those imported into ``settings.domains_path``.

    A memory records only its domain's name, so whoever opens it later must find the domain
    by that name: each imported domain has a folder named as the domain. A shipped domain
    keeps its name: a user folder named like one is not registered.
    """
    registry = DomainRegistry()
    root = settings.domains_path
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        if (folder / "domain.pddl").is_file() and folder.name not in registry:
            registry.register(folder.name, folder)
    return registry


def open_store(settings: Settings, domains: DomainRegistry | None = None) -> GraphStore:
    return BACKENDS[settings.store](settings, domains or domain_registry(settings))


def configured_model(settings: Settings) -> LanguageModel:
    """The OpenAI-compatible model the settings name (built on demand: commands without a model need no key)."""
    from l3mp.llm import OpenAICompatibleModel

    return OpenAICompatibleModel(
        settings.llm_base_url,
        settings.llm_model,
        settings.llm_api_key.get_secret_value(),
        timeout=settings.llm_timeout,
        max_retries=settings.llm_max_retries,
        structured=settings.llm_structured,
        output=settings.llm_output,
        max_tokens=settings.llm_max_tokens,
        max_reply_chars=settings.llm_max_reply_chars,
        stream=settings.llm_stream,
    )


def nl_reader(settings: Settings) -> str:
    """How the configured model reads what people say: ``auto`` chooses for the packaged local models
    (small ones write edits badly but rank readings well) and writes for any other."""
    if settings.nl_reader != "auto":
        return settings.nl_reader
    from l3mp.llm.local import MODELS

    local = {m.alias for m in MODELS.values()} | set(MODELS)
    return "choose" if settings.llm_model in local else "write"
