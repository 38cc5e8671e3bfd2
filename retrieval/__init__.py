"""Subgraph retrieval for updates and tasks: full graph (R-), entity selection (R+) and
search-based matching (RS, L3M+P Alg. 1-2), with entity embeddings computed once."""

from retrieval._graph import Connectivity, FactsConnectivity
from retrieval._onnx import OnnxEmbedder
from retrieval._search import MatchParams
from retrieval._text_cache import CachedEmbedder, shared_cache
from retrieval.context import Context, Found, Provenance, count_tokens
from retrieval.embedding import (
    Embedder,
    EmbeddingBackend,
    EntityEmbeddings,
    MemoryBackend,
    SentenceTransformerEmbedder,
    entity_text,
    text_hash,
)
from retrieval.errors import EmbeddingError, InvalidParameters, InvalidQuery, RetrievalError, UnknownRetriever
from retrieval.matcher import Alternative, Candidates, Matcher, MatchResult, relation_phrase
from retrieval.query import QueryEdge, QueryGraph, QueryNode, ReadQuery, read_answer
from retrieval.retrievers import (
    DEFAULT_RETRIEVER,
    RETRIEVERS,
    EntityParams,
    EntityRetriever,
    FullParams,
    FullRetriever,
    KeepsPerMemory,
    Retriever,
    SearchParams,
    SearchRetriever,
    StoreConnectivity,
    retriever,
)
from retrieval.runtimes import DEFAULT_EMBEDDER, EMBEDDERS, embedder_named
from retrieval.unknowns import context_unknowns

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "CachedEmbedder",
    "OnnxEmbedder",
    "embedder_named",
    "shared_cache",
    "text_hash",
    "context_unknowns",
    "DEFAULT_RETRIEVER",
    "RETRIEVERS",
    "Alternative",
    "Candidates",
    "Connectivity",
    "Context",
    "EmbeddingBackend",
    "EmbeddingError",
    "Embedder",
    "EntityEmbeddings",
    "EntityParams",
    "EntityRetriever",
    "FactsConnectivity",
    "Found",
    "FullParams",
    "FullRetriever",
    "InvalidParameters",
    "InvalidQuery",
    "KeepsPerMemory",
    "MatchParams",
    "MatchResult",
    "Matcher",
    "MemoryBackend",
    "Provenance",
    "QueryEdge",
    "QueryGraph",
    "QueryNode",
    "ReadQuery",
    "RetrievalError",
    "Retriever",
    "SearchParams",
    "SearchRetriever",
    "SentenceTransformerEmbedder",
    "StoreConnectivity",
    "UnknownRetriever",
    "count_tokens",
    "entity_text",
    "relation_phrase",
    "retriever",
    "read_answer",
]
