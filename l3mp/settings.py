"""One typed settings object, read from the environment (``L3MP_*``) only when built."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

# The schemes the Neo4j driver takes (it refuses others only when a store is first opened).
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="L3MP_", frozen=True)

    store: Literal["sqlite", "neo4j"] = "sqlite"
    sqlite_path: Path = Path("l3mp.db")
    # the page cache (MiB) of each SQLite connection that writes; readers keep SQLite's 2 MiB
    sqlite_writer_cache_mib: int = Field(default=64, ge=1)
    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr = SecretStr("")
    neo4j_database: str | None = None
    # how long a request waits for Neo4j before it is a 503: connecting and taking a pooled
    # connection (each), and retrying a transaction on a transient error (was 10 s + 5 s: 6-8 s)
    neo4j_timeout: float = Field(default=2.0, gt=0)
    neo4j_retry_time: float = Field(default=1.0, ge=0)
    # domains brought by users (`l3mp pddl import`), one folder per domain, named as the domain
    domains_path: Path = Path(".l3mp/domains")

    llm_base_url: str = "https://api.openai.com/v1"
    llm_model: str = "gpt-4o-mini"
    llm_api_key: SecretStr = SecretStr("")
    # one model call's total time, retries included (not per read)
    llm_timeout: float = Field(default=60.0, gt=0)
    llm_max_retries: int = Field(default=3, ge=0)
    llm_structured: bool | None = None  # older switch: None = auto, True = json_schema, False = none
    # output constraint: auto steps down json_schema → json_object_schema (JSON mode with the schema,
    # llama.cpp's grammar) → json_object → none as the server refuses each; llm_output wins over llm_structured
    llm_output: Literal["auto", "json_schema", "json_object_schema", "json_object", "none"] | None = None
    llm_max_tokens: int = Field(default=512, ge=1)  # output tokens per call: a runaway reply stops here
    llm_max_reply_chars: int = Field(default=20_000, ge=100)  # a longer reply is an unusable answer
    llm_stream: bool = True  # read replies as generated, so a call given up on stops the server too

    # one deadline per operation, model calls and re-prompts included
    update_deadline: float = Field(default=120.0, gt=0)  # seconds per natural-language update
    plan_deadline: float = Field(default=120.0, gt=0)  # seconds per plan request: model stages and planner calls
    # when the model's query graph stays unusable (RS): entities = ask for an entity selection (R+),
    # words = the neighbourhood of entities whose names or labels share a word with the request, none = reject
    retrieval_fallback: Literal["entities", "words", "none"] = "words"
    # how a model reads what people say: write = it writes the edits (capable models); choose = the
    # changes the domain allows are read off the words and the state (small local models, nl_choose.py);
    # auto = choose for the packaged local models, write otherwise. nl_ranker: whether and how the
    # choosing reader asks the model where the words leave a choice open: likelihood scores the
    # readings (on a server that can: `l3mp model serve` with scoring on; otherwise the words alone),
    # choice has it copy one out, none asks the person
    nl_reader: Literal["auto", "write", "choose"] = "auto"
    # facts in a retrieved context (R+ and RS) shown to a model that writes: fewer make small models'
    # prompts short; None keeps each retriever's own (RS 80, R+ 200)
    context_facts: int | None = Field(default=None, ge=1)
    nl_ranker: Literal["choice", "likelihood", "none"] = "likelihood"

    # REST service (l3mp.service): with api_key set, every mutating route needs it in X-API-Key;
    # read_only_api_key allows reads only. Bodies above max_request_bytes are refused unread.
    api_key: SecretStr | None = None
    read_only_api_key: SecretStr | None = None
    max_request_bytes: int = Field(default=1_000_000, gt=0)
    # streamed JSON Lines imports (POST /v1/memories/import.jsonl) spool to disk under their own limit
    max_import_bytes: int = Field(default=8_000_000_000, gt=0)
    retriever: Literal["full", "entities", "search"] = "search"
    # the search retriever's MiniLM runtime: torch, onnx (ONNX Runtime, the same vectors, exported
    # once from the packaged weights) or onnx-int8 (int8 weights, vectors of its own)
    embedder: Literal["torch", "onnx", "onnx-int8"] = "torch"
    # model-bound routes (NL updates, plans): at most model_concurrency at once per process, each
    # answered within model_route_deadline seconds (503 after it, the work finishing in its slot);
    # more get 503 with Retry-After at once. Each API key (or client address) may start
    # model_rate_per_minute requests that call the model per minute (429 beyond).
    model_concurrency: int = Field(default=4, ge=1, le=256)
    model_route_deadline: float = Field(default=150.0, gt=0)
    model_rate_per_minute: int = Field(default=60, ge=1)
    verify_updates: bool = True
    # MCP (l3mp mcp, /mcp): prefer = a report or plan in English runs on the client's own model
    # when the client can sample (a call's use_client_model wins); never = always the configured model
    mcp_sampling: Literal["prefer", "never"] = "prefer"
    # Host headers /mcp accepts besides 127.0.0.1 and localhost (DNS-rebinding protection), e.g.
    # "robot.local:8000" or "robot.local:*"; their http(s) origins are accepted too
    mcp_allowed_hosts: list[str] = Field(default_factory=list)
    # seconds between reads of a subscribed memory's history (the change feed behind resource updates)
    mcp_watch_poll: float = Field(default=0.5, gt=0)
    # ROS 2 (l3mp ros): seconds between reads of the memory's history behind the ~/updates topic
    ros_updates_poll: float = Field(default=0.5, gt=0)
    # fast writes (observations, deltas) to one memory: on = the writes that arrive while one group
    # commits are verified and committed together as the next group (each keeps its own verdict and
    # update); off = one write at a time, each its own transaction. wait_ms holds a group open that
    # much longer for more writers (0: a lone writer waits for nothing); max caps a group's size.
    group_commit: bool = True
    group_commit_wait_ms: float = Field(default=0.0, ge=0, le=100)
    group_commit_max: int = Field(default=64, ge=1, le=1024)
    # on a store that can (SQLite): a group led by a request on the event loop is proposed, verified
    # and written on the loop's thread, its COMMIT alone waiting for the disk on a thread of its own;
    # a group that would wait for the write lock, or fail, goes to a worker thread whole
    group_commit_on_loop: bool = True
    # planning: ask for the cheapest plan, proven within each search's deadline (REST and runtime
    # default; a request's own "optimal" wins)
    plan_optimal: bool = False

    @field_validator("neo4j_uri")
    @classmethod
    def _neo4j_uri(cls, uri: str) -> str:
        # checked here, not by the driver: it wraps a port above 65535 round instead of refusing it
        parts = urlsplit(uri)
        if parts.scheme not in NEO4J_SCHEMES or not parts.hostname:
            schemes = ", ".join(NEO4J_SCHEMES)
            raise ValueError(f"{uri!r} is no Neo4j address: write SCHEME://HOST[:PORT], SCHEME one of {schemes}")
        try:
            port = parts.port
        except ValueError:
            port = 0
        if port is not None and not 1 <= port <= 65535:
            raise ValueError(f"{uri!r}: the port must be a number in 1..65535")
        return uri

    @property
    def neo4j_auth(self) -> tuple[str, str] | None:
        password = self.neo4j_password.get_secret_value()
        return (self.neo4j_user, password) if password else None


def problems(exc: ValidationError | SettingsError) -> list[str]:
    """What is wrong with the settings, one line per problem, each naming its ``L3MP_*`` variable
    (a secret's value is never repeated)."""
    if isinstance(exc, SettingsError):  # a JSON-valued variable that is not JSON
        field = re.search(r'field "(\w+)"', str(exc))
        if field is None:
            return [str(exc)]
        return [f'{_variable(field.group(1))}: must be JSON, e.g. ["a", "b"] ({exc.__cause__ or exc})']
    found = []
    for error in exc.errors():
        name, *rest = [str(part) for part in error["loc"]] or ["?"]
        where = f" (item {'.'.join(rest)})" if rest else ""
        message = str(error["ctx"]["error"]) if error["type"] == "value_error" else error["msg"]
        secret = "SecretStr" in str(Settings.model_fields[name].annotation) if name in Settings.model_fields else True
        got = "" if secret or error["type"] == "value_error" else f", not {error['input']!r}"
        found.append(f"{_variable(name)}{where}: {message}{got}")
    return found


def _variable(field: str) -> str:
    return f"{Settings.model_config.get('env_prefix', '')}{field}".upper()
