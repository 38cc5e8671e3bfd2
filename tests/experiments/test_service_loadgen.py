"""The service benchmark's load generator: every client's connection served from one thread, each
answer framed by its Content-Length, every observation acknowledged once by the real server."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import httpx
import pytest

from experiments.service import Server, create_home, lost_updates
from experiments.service.loadgen import _answer, generate, owned_entities


def test_an_answer_is_whole_only_with_all_of_its_body_and_keeps_what_follows() -> None:
    whole = b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}'
    assert _answer(whole[:20]) is None  # the head not yet read
    assert _answer(whole[:-1]) is None  # the body short of its length
    assert _answer(whole + b"HTTP/1.1 409") == (200, b'{"a":1}', b"HTTP/1.1 409")
    with pytest.raises(ConnectionError, match="without a Content-Length"):
        _answer(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n7\r\n")


def test_a_server_that_frames_no_length_ends_its_client_with_an_error_not_a_hang() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def serve() -> None:
            peer, _ = listener.accept()
            with peer:
                peer.recv(1 << 16)
                peer.sendall(b"HTTP/1.1 200 OK\r\nconnection: keep-alive\r\n\r\n{}")
                peer.recv(1)  # held open until the client closes it

        server = threading.Thread(target=serve, daemon=True)
        server.start()
        tally = generate(f"http://127.0.0.1:{port}", "m", clients=1, updates=3)
        server.join(timeout=10)
    (client,) = tally["clients"]
    assert client["acked"] == [] and len(client["errors"]) == 1
    assert "without a Content-Length" in client["errors"][0]


@pytest.mark.slow  # starts a server process
@pytest.mark.parametrize("batch", [1, 4])
def test_every_observation_is_acknowledged_once_and_applied(tmp_path: Path, batch: int) -> None:
    with Server(tmp_path / "service.db", tmp_path / "server.log") as server:
        create_home(server.url, "load")
        httpx.post(f"{server.url}/v1/memories/load/entities", json=owned_entities(5), timeout=60).raise_for_status()
        tally = generate(server.url, "load", clients=5, updates=10, batch=batch)
        acked = [i for c in tally["clients"] for i in c["acked"]]
        check = lost_updates(server.url, "load", acked)
    assert [c["errors"] for c in tally["clients"]] == [[]] * 5
    assert [len(c["acked"]) for c in tally["clients"]] == [10] * 5
    assert {s for c in tally["clients"] for s in c["statuses"]} == {"applied"}
    assert len({len(c["seconds"]) for c in tally["clients"]}) == 1  # a latency per request
    assert not check["problems"], check["problems"]
    assert check["applied"] == 1 + 1 + 50 and check["noop"] == 0  # the survey, the rooms, then each observation
