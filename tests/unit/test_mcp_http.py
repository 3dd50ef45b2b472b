"""`hoprag.tools.mcp.serve_http` as an HTTP client meets it, in a server process of its own
(tests/mcp_http_server.py: a MemoryStore tool, no Cassandra) on a loopback address: the Host and
Origin checks on every loopback address (issue #50, 4), a tool call under way when SIGTERM
comes (answered, 12), and a request half sent when it comes (the server still stops, 13)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from hoprag.tools.mcp import transport_security

SERVER = Path(__file__).resolve().parents[1] / "mcp_http_server.py"
ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}},
}  # fmt: skip
pytestmark = pytest.mark.timeout(120)  # a server that never stops fails the test, not the run

STOP_SLACK = 20.0
"""Seconds a stopping server may take beyond its grace period (a loaded 2-core machine)."""


class Served:
    """A server process: its URL and the stderr lines read so far."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url
        self.lines: list[str] = []

    def wait_for(self, text: str) -> None:
        """Read stderr until a line holds `text` (an AssertionError if it ends first)."""
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)
            if text in line:
                return
        raise AssertionError(f"no {text!r} in {self.lines}")

    def stop(self, within: float) -> str:
        """SIGTERM, then the rest of stderr once it exits 0 within `within` seconds."""
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=within)
        assert self.process.returncode == 0, "".join(self.lines) + err
        return "".join(self.lines) + err


@contextlib.contextmanager
def served(host: str = "127.0.0.1", *, grace: float = 10, slow: float = 0) -> Iterator[Served]:
    """tests/mcp_http_server.py on `host` (port 0), killed at the end if still running."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), host, str(grace), str(slow)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert first.startswith("listening at http://"), first + process.stderr.read()
        yield Served(process, first.split(" at ", 1)[1].strip())
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


async def _session(client: httpx.AsyncClient, url: str) -> dict[str, str]:
    """Initialise a session; the headers that name it in later requests."""
    started = await client.post(url, headers=ACCEPT, json=INITIALIZE)
    assert started.status_code == 200, started.text
    headers = {**ACCEPT, "Mcp-Session-Id": started.headers["mcp-session-id"]}
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post(url, headers=headers, json=done)).status_code == 202
    return headers


def _call(topic: str) -> dict[str, Any]:
    params = {"name": "note_search", "arguments": {"topic": topic}}
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}


LOOPBACKS = ["127.0.0.2", "127.0.0.1", "localhost"]
if _ipv6_loopback():
    LOOPBACKS.append("::1")


@pytest.mark.parametrize("host", LOOPBACKS)
async def test_every_loopback_address_refuses_a_foreign_host_or_origin(host: str) -> None:
    with served(host) as server:
        port = server.url.rsplit(":", 1)[1].split("/")[0]
        async with httpx.AsyncClient() as client:
            own = await client.post(server.url, headers=ACCEPT, json=INITIALIZE)
            by_name = await client.post(
                server.url, headers={**ACCEPT, "Host": f"localhost:{port}",
                                     "Origin": f"http://localhost:{port}"}, json=INITIALIZE,
            )  # fmt: skip
            foreign_host = await client.post(
                server.url, headers={**ACCEPT, "Host": f"evil.example:{port}"}, json=INITIALIZE
            )
            foreign_origin = await client.post(
                server.url, headers={**ACCEPT, "Origin": "http://evil.example"}, json=INITIALIZE
            )
        server.stop(within=10 + STOP_SLACK)
    assert own.status_code == 200 and by_name.status_code == 200, (own.text, by_name.text)
    assert foreign_host.status_code == 421, foreign_host.text
    assert foreign_origin.status_code == 403, foreign_origin.text


def _checked(host: str, headers: dict[str, str]) -> int:
    """The status the SDK's check gives a POST with `headers` to a server bound to `host`
    (200 when it lets the request through)."""
    from mcp.server.transport_security import TransportSecurityMiddleware

    raw = [(k.lower().encode(), v.encode()) for k, v in {**ACCEPT, **headers}.items()]
    request = Request({"type": "http", "method": "POST", "path": "/mcp", "headers": raw})
    refused = asyncio.run(
        TransportSecurityMiddleware(transport_security(host)).validate_request(request, True)
    )
    return 200 if refused is None else refused.status_code


def test_a_non_loopback_address_accepts_only_its_own_host_and_origin() -> None:
    host = "192.0.2.7"
    assert _checked(host, {"Host": "192.0.2.7:8000"}) == 200
    assert _checked(host, {"Host": "192.0.2.7:8000", "Origin": "http://192.0.2.7:8000"}) == 200
    assert _checked(host, {"Host": "127.0.0.1:8000"}) == 421
    assert _checked(host, {"Host": "evil.example:8000"}) == 421
    assert _checked(host, {"Host": "192.0.2.7:8000", "Origin": "http://evil.example"}) == 403
    assert _checked("::1", {"Host": "[::1]:8000"}) == 200
    assert _checked("127.0.0.9", {"Host": "127.0.0.9:8000"}) == 200
    assert _checked("0.0.0.0", {"Host": "any.example:8000"}) == 200  # a wildcard: any name


async def test_sigterm_during_a_tool_call_lets_it_finish_and_answers_it() -> None:
    with served(grace=10, slow=3) as server:
        async with httpx.AsyncClient(timeout=60) as client:
            headers = await _session(client, server.url)
            call = asyncio.create_task(
                client.post(server.url, headers=headers, json=_call("sleepy rivers"))
            )
            await asyncio.to_thread(server.wait_for, "searching slowly")
            err = await asyncio.to_thread(server.stop, 10 + STOP_SLACK)
            answer = await call
    assert "stopped" in err
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert result["isError"] is False, result
    assert result["structuredContent"]["results"][0]["id"] == "n0"


async def test_a_call_longer_than_the_grace_period_gets_an_error_and_the_server_stops() -> None:
    with served(grace=1, slow=8) as server:
        async with httpx.AsyncClient(timeout=60) as client:
            headers = await _session(client, server.url)
            call = asyncio.create_task(
                client.post(server.url, headers=headers, json=_call("sleepy rivers"))
            )
            await asyncio.to_thread(server.wait_for, "searching slowly")
            err = await asyncio.to_thread(server.stop, 1 + STOP_SLACK)
            answer = await call
    assert "stopped" in err
    assert answer.status_code >= 500, answer.text


def test_a_half_sent_request_does_not_keep_the_server_from_stopping() -> None:
    with served(grace=1) as server:
        address = server.url.removeprefix("http://").split("/")[0]
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            head = (f"POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json"
                    "\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100"
                    '\r\n\r\n{"jsonrpc": ')  # fmt: skip
            sock.sendall(head.encode())
            time.sleep(0.5)  # the server reads the head and waits for the rest of the body
            err = server.stop(within=1 + STOP_SLACK)
            said = sock.recv(4096)
    assert "stopped" in err
    assert said == b"" or said.startswith(b"HTTP/1.1 5"), said


@pytest.mark.parametrize("grace", [-1, float("nan"), float("inf"), True, "10"])
def test_serving_over_http_refuses_a_grace_period_that_is_not_seconds(grace: object) -> None:
    from hoprag.errors import InvalidInputError
    from hoprag.tools.mcp import serve_http
    from mcp_http_server import note_tool

    with pytest.raises(InvalidInputError) as caught:
        serve_http(note_tool(0), host="127.0.0.1", port=0, grace=grace)  # type: ignore[arg-type]
    assert caught.value.argument == "grace"
