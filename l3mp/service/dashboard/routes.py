"""The dashboard's routes: the page at ``/``, its static files, and the read-only JSON it needs.

Writes (revert) and plans go through the ordinary ``/v1`` routes with the key the person typed in, so
the dashboard has exactly the REST service's access rules. The page and its static files hold no data
and are public; every data route here needs read access like ``/v1``'s reads.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from importlib import resources
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BeforeValidator, Field
from starlette.concurrency import run_in_threadpool

from kg_memory.model import MAX_NAME_LENGTH
from l3mp.service.dashboard import detail, views
from l3mp.service.dashboard.detail import OutlineOut
from l3mp.service.dashboard.events import history_stream
from l3mp.service.dashboard.index import UNPLACED
from l3mp.service.deps import MemoryDep, ReadAccess, ServicesDep, StoreDep
from l3mp.service.errors import RESPONSES
from l3mp.service.schemas import GraphOut

PREFIX = "/dashboard"
STATIC = "l3mp.service.dashboard"

# Defence in depth behind escaping everything (the page builds its DOM with textContent only): no inline
# script, no script or connection to anywhere but this service. Inline styles are allowed because
# Cytoscape.js writes style attributes on its canvas elements; a style cannot run script.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"
)

page = APIRouter(include_in_schema=False)
api = APIRouter(prefix=f"{PREFIX}/api", tags=["dashboard"], dependencies=[ReadAccess], responses=RESPONSES)


@lru_cache(maxsize=8)
def _index(root_path: str) -> str:
    """The page. Its files are named relative to it; under a root path they are named from that path,
    so the page also loads where a proxy serves it at the prefix without its slash (``/robots/home``)."""
    page = (resources.files(STATIC) / "static" / "index.html").read_text(encoding="utf-8")
    if not root_path:
        return page
    return page.replace('="dashboard/static/', f'="{escape(root_path.rstrip("/"))}/dashboard/static/')


@page.get("/", response_class=HTMLResponse)
def index(request: Request) -> HTMLResponse:
    headers = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
    return HTMLResponse(_index(request.scope.get("root_path", "")), headers=headers)


@api.get("/memories")
def list_memories(store: StoreDep) -> list[dict[str, Any]]:
    """Every memory with its domain, entity and fact counts, version and last update."""
    return views.memories(store)


_MAX_SEQ = 2**53  # the largest integer a browser's JavaScript holds exactly
_VERSION = Query(ge=0, le=_MAX_SEQ, description="the state at this past version")
_ROOM = Query(max_length=MAX_NAME_LENGTH, description=f"only this room ({UNPLACED}: what is in none)")
_FLOOR = Query(max_length=MAX_NAME_LENGTH, description="only this floor (its rooms' floor attribute)")


@api.get("/memories/{memory}/graph")
def graph(
    memory: MemoryDep,
    version: Annotated[int | None, _VERSION] = None,
    room: Annotated[str | None, _ROOM] = None,
    floor: Annotated[str | None, _FLOOR] = None,
) -> GraphOut:
    """Entities (with where each is drawn) and facts as named columns, now or at ``version`` with the
    difference from now: the whole memory, or one ``room`` or ``floor`` of it (see ``outline``)."""
    if room is None and floor is None:
        return views.graph(memory, version)
    return detail.part(memory, room=room, floor=floor, version=version)


@api.get("/memories/{memory}/outline")
def outline(memory: MemoryDep, version: Annotated[int | None, _VERSION] = None) -> OutlineOut:
    """A large memory at a glance: floors, rooms with what is in them counted, and the links between
    rooms; the page then asks ``graph`` for a room or a floor as it is opened."""
    return detail.outline(memory, version)


@api.get("/memories/{memory}/entities/{name}")
def entity(memory: MemoryDep, name: str) -> dict[str, Any]:
    """One entity: label, attributes, its facts in English and the updates that touched it."""
    found = views.entity(memory, name)
    if found is None:
        raise HTTPException(404, f"memory {memory.name!r} has no entity {name!r}")
    return found


@api.get("/memories/{memory}/runtime")
def runtime(memory: MemoryDep) -> list[dict[str, Any]]:
    """The robot runtime's recent tasks, with their plans and the causes of each replan."""
    return views.runtime_tasks(memory)


def _sequence_number(value: object) -> object:
    """A Last-Event-ID as the sequence number it must be: ASCII digits (``str.isdigit`` also takes
    "²"), none to resume from when it is empty; the bounds are checked after it is an int."""
    if not isinstance(value, str) or not value:
        return None
    if not (value.isascii() and value.isdigit()):
        raise ValueError("expected the sequence number of an update, in digits")
    return value


_SINCE_SEQ = Query(ge=0, le=_MAX_SEQ, description="stream updates after this sequence number")
_LAST_EVENT_ID = Header(alias="last-event-id", description="the last update received; resume after it")
_Seq = Annotated[int, Field(ge=0, le=_MAX_SEQ)]  # bounds on the int: an absent header (None) has none


@api.get("/memories/{memory}/events", response_class=StreamingResponse)
async def events(
    memory: str,
    request: Request,
    services: ServicesDep,
    since_seq: Annotated[int, _SINCE_SEQ] = 0,
    last_event_id: Annotated[_Seq | None, BeforeValidator(_sequence_number), _LAST_EVENT_ID] = None,
) -> StreamingResponse:
    """New history rows as server-sent events (``update``; a reconnect resumes after Last-Event-ID).

    The header is read with ``since_seq``'s bounds and, like a bad ``since_seq``, one that is not a
    sequence number in them is a 422: the page's browser only echoes the ids this stream sent, so a
    bad one is a client's mistake, and resuming from elsewhere would silently repeat or skip updates.

    Async on purpose: a stream lives as long as the page, and a sync handler would hold a worker thread
    for all that time; here only each short store read borrows one.
    """
    # an unknown memory is a 404, not a stream; the stream follows the record: the spelling the store
    # keys on, and the creation time that tells this memory from one made again under its name
    record = await run_in_threadpool(services.store.get_memory, memory)
    if last_event_id is not None:
        since_seq = max(since_seq, last_event_id)
    stream = history_stream(services.store, record, since_seq, request.is_disconnected)
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream, media_type="text/event-stream", headers=headers)


def install(app: FastAPI) -> None:
    """Serve the dashboard from ``app``: the page at ``/``, static files and data under ``/dashboard``."""
    app.include_router(page)
    app.include_router(api)
    static = resources.files(STATIC) / "static"
    app.mount(f"{PREFIX}/static", StaticFiles(directory=str(static)), name="dashboard-static")
