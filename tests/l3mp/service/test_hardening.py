"""The error mapping and what a careless or hostile caller used to get."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import neo4j_uri, require_neo4j
from fastapi import FastAPI
from fastapi.testclient import TestClient
from service_support import Factory, client_factory, surveyed

from l3mp.service import create_app
from l3mp.service.errors import status_of
from l3mp.settings import Settings
from planning import PlanningError
from planning.goal_reader import GoalSyntaxError


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Factory]:
    yield from client_factory(tmp_path)


def test_head_answers_like_get_without_a_body(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    for path in ("/health", "/ready", f"/v1/memories/{name}", f"/v1/memories/{name}/facts"):
        got, head = client.get(path), client.head(path)
        assert head.status_code == got.status_code == 200, (path, head.status_code)
        assert head.content == b"" and head.headers["content-length"] == got.headers["content-length"]
    assert client.head("/v1/memories/nowhere").status_code == 404


def test_plans_need_the_write_key(make_client: Factory) -> None:
    client = make_client(api_key="writer", read_only_api_key="reader")
    name = surveyed(client, headers={"X-API-Key": "writer"})
    body = {"goal": "(on mug_1 table_1)"}
    assert client.post(f"/v1/memories/{name}/plans", json=body).status_code == 401
    assert client.post(f"/v1/memories/{name}/plans", json=body, headers={"X-API-Key": "reader"}).status_code == 403
    ok = client.post(f"/v1/memories/{name}/plans", json=body, headers={"X-API-Key": "writer"})
    assert ok.status_code == 200 and ok.json()["tier"] == "holds"
    # with only the write key configured, reads stay open but plans do not
    open_reads = make_client(api_key="writer", sqlite_path=Path(client.app.state.services.settings.sqlite_path))
    assert open_reads.get(f"/v1/memories/{name}").status_code == 200
    assert open_reads.post(f"/v1/memories/{name}/plans", json=body).status_code == 401


def test_domain_errors_never_become_500() -> None:
    assert status_of(PlanningError("unknown planner 'x'"))[0] == 422
    assert status_of(GoalSyntaxError("(and", "unbalanced"))[0] == 422
    sim_error = pytest.importorskip("sim.errors").SimulationError("the episode is malformed")
    assert status_of(sim_error) == (422, "invalid_input")


def test_an_unexpected_exception_is_a_json_500_with_a_request_id(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app: FastAPI = create_app(Settings(sqlite_path=tmp_path / "s.db"))

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("a bug")

    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/boom")
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["code"] == "internal_error" and error["request_id"] == response.headers["X-Request-ID"]
    assert "a bug" not in response.text  # the detail is in the log, not in the answer
    logged = [r for r in caplog.records if error["request_id"] in r.getMessage()]
    assert logged and logged[0].exc_info is not None  # with its traceback


class Proxy:
    """A TCP proxy to Neo4j on 127.0.0.1; ``close()`` is Neo4j killed: connections drop, new ones are refused."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.cut = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self._open.append(conn)
            if not self.cut.is_set():
                upstream = socket.create_connection(self.target)
                self._open.append(upstream)
                for a, b in ((conn, upstream), (upstream, conn)):
                    threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while not self.cut.is_set() and (data := a.recv(65536)):
                if self.cut.is_set():
                    return  # swallow: the server has gone silent
                b.sendall(data)
        except OSError:
            pass

    def close(self) -> None:
        self.cut.set()
        self.listener.close()
        for s in self._open:
            s.close()


@pytest.mark.neo4j
def test_a_neo4j_outage_is_a_503_within_seconds(tmp_path: Path) -> None:
    require_neo4j()
    uri = neo4j_uri().rsplit(":", 1)
    proxy = Proxy((uri[0].split("//")[-1], int(uri[1])))
    try:
        settings = Settings(store="neo4j", neo4j_uri=f"bolt://127.0.0.1:{proxy.port}", domains_path=tmp_path)
        with TestClient(create_app(settings)) as client:
            assert client.get("/ready").status_code == 200
            proxy.close()  # as if Neo4j were killed
            for _ in range(2):
                started = time.monotonic()
                response = client.get("/v1/memories")
                elapsed = time.monotonic() - started
                assert response.status_code == 503 and response.json()["error"]["code"] == "store_unavailable"
                assert response.headers["Retry-After"]
                assert elapsed < 5.0, elapsed  # was 6-8 s per request
    finally:
        proxy.close()
