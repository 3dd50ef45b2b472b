"""`hoprag mcp` as an MCP client meets it: a real server process (`python -m hoprag.cli mcp`,
over stdio, and with `--http` over streamable HTTP) on the films table in a real Cassandra 5.0
node, driven by the `mcp` SDK's own 2.x client (`stdio_client` or `streamable_http_client`, then
`ClientSession`, which checks each structured result against the tool's output schema). The
17,472 films are loaded once for the module by `hoprag load films --embedding hash:32` (declared
fields, values catalogue, load catalogue); answers are checked by SQL over movies.db and
against the same tool run in-process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from films_sql import films_where
from hoprag.datasets.films import movies_db_path
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.tools import SearchTool, film_search_tool
from hoprag.tools.answer import ANSWER_JSON_SCHEMA

DB = movies_db_path()
TESTS = Path(__file__).resolve().parents[1]
HENRY_WESTERNS = {"topic": "western", "actor": "Henry Fonda", "genre": "Western",
                  "reviews": "positive", "limit": 50}  # fmt: skip


class Films:
    """The loaded films: where they live and the same tool in-process."""

    def __init__(self, contact: str, keyspace: str, tool: SearchTool) -> None:
        self.contact = contact
        self.keyspace = keyspace
        self.tool = tool


@pytest.fixture(scope="module")
def films(
    cassandra_contact_points: str, cassandra_session: Any, films_keyspace: str
) -> Iterator[Films]:
    keyspace = films_keyspace
    store = CassandraStore(
        HashEmbedding(32),
        keyspace=keyspace,
        table="films",
        session=cassandra_session,
        create_schema=False,
    )
    yield Films(cassandra_contact_points, keyspace, film_search_tool(store))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")]))
    return env


@contextlib.asynccontextmanager
async def served(films: Films, errlog: Path, *flags: str) -> AsyncIterator[ClientSession]:
    """An initialised client session to a `hoprag mcp` server process started with `flags`
    (its stderr in `errlog`), over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hoprag.cli", "mcp", "--keyspace", films.keyspace,
              "--contact-points", films.contact, *flags],
        env=_env(),
    )  # fmt: skip
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


class HttpServer:
    """A `hoprag mcp --http 127.0.0.1:0` process: its URL, read from the line it prints on
    stderr once it listens, and its stderr so far."""

    def __init__(self, process: subprocess.Popen[str], url: str, lines: list[str]) -> None:
        self.process = process
        self.url = url
        self.lines = lines


@contextlib.contextmanager
def http_server(films: Films, *flags: str) -> Iterator[HttpServer]:
    """A running `hoprag mcp --http 127.0.0.1:0 ...` process; stopped with SIGTERM at the end,
    and it must then exit 0, saying it stopped."""
    process = subprocess.Popen(
        [sys.executable, "-m", "hoprag.cli", "mcp", "--keyspace", films.keyspace,
         "--contact-points", films.contact, "--http", "127.0.0.1:0", *flags],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=_env(),
    )  # fmt: skip
    assert process.stderr is not None
    lines: list[str] = []
    try:
        for line in process.stderr:  # until it listens (or ends)
            lines.append(line)
            if "over streamable HTTP at " in line:
                break
        url = lines[-1].split(" at ", 1)[1].split()[0] if lines else ""
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), lines
        yield HttpServer(process, url, lines)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        lines.append(err)
        assert process.returncode == 0, "".join(lines)
        assert out == "" and "hoprag mcp: stopped" in err
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


@contextlib.asynccontextmanager
async def http_session(url: str) -> AsyncIterator[ClientSession]:
    """An initialised client session over streamable HTTP."""
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def _text(result: Any) -> str:
    assert result.content and result.content[0].type == "text"
    return str(result.content[0].text)


async def test_the_server_lists_the_film_tool_and_answers_a_call_with_the_sql_films(
    films: Films, tmp_path: Path
) -> None:
    errlog = tmp_path / "server.err"
    async with served(films, errlog, "--table", "films") as session:
        listed = await session.list_tools()
        result = await session.call_tool("film_search", HENRY_WESTERNS)
    assert [t.name for t in listed.tools] == ["film_search"]
    (tool,) = listed.tools
    _check_listed(tool, films)
    props = tool.input_schema["properties"]
    for name in ("topic", "actor", "director", "worked_with_actor", "genre", "country",
                 "year_from", "year_to", "reviews", "limit"):  # fmt: skip
        assert name in props and props[name].get("description")
    assert result.is_error is False
    sql = films_where(DB, cast="Henry Fonda", genre="Western", meter_at_least=60)
    doc = result.structured_content
    assert doc is not None and len(sql) >= 5
    assert {r["id"] for r in doc["results"]} == set(sql)
    expected = await films.tool.arun(**HENRY_WESTERNS)
    assert _text(result) == expected.text == doc["text"]
    assert [r["id"] for r in doc["results"]] == [n.id for n in expected.nodes]
    assert any(s["operation"] == "cql" for s in doc["statements"])
    assert "serving the tool 'film_search'" in errlog.read_text()


def _check_listed(tool: Any, films: Films) -> None:
    """The film tool as listed: its description, input schema, output schema and
    annotations (it only reads)."""
    assert tool.description == films.tool.description
    assert tool.input_schema == films.tool.json_schema()
    assert tool.output_schema == ANSWER_JSON_SCHEMA
    notes = tool.annotations
    assert notes is not None and notes.read_only_hint is True
    assert notes.destructive_hint is False and notes.idempotent_hint is True
    assert notes.open_world_hint is False


async def test_over_http_the_server_lists_answers_refuses_and_stops_on_sigterm(
    films: Films,
) -> None:
    with http_server(films, "--table", "films") as server:
        async with http_session(server.url) as session:
            listed = await session.list_tools()
            result = await session.call_tool("film_search", HENRY_WESTERNS)
            malformed = await session.call_tool("film_search", {"topic": "w", "reviews": "good"})
        async with http_session(server.url) as again:  # a second client, the same server
            after = await again.call_tool("film_search", {"topic": "western", "limit": 1})
        assert "serving the tool 'film_search'" in "".join(server.lines)
    (tool,) = listed.tools
    _check_listed(tool, films)
    expected = await films.tool.arun(**HENRY_WESTERNS)
    doc = result.structured_content
    assert result.is_error is False and doc is not None
    assert [r["id"] for r in doc["results"]] == [n.id for n in expected.nodes]
    assert _text(result) == expected.text
    assert malformed.is_error is True and _text(malformed).startswith("Invalid arguments: ")
    assert "reviews" in _text(malformed)
    assert after.is_error is False and len(after.structured_content["results"]) == 1


async def test_over_http_an_access_view_holds_and_a_foreign_host_header_is_refused(
    films: Films,
) -> None:
    import httpx

    view = ("--table", "films", "--access-filter", '{"year": {"$gte": 1960}}')
    with http_server(films, *view) as server:
        async with http_session(server.url) as session:
            early = await session.call_tool("film_search", {**HENRY_WESTERNS, "year_to": 1959})
        # DNS rebinding: a page on another origin reaching the loopback server by name.
        async with httpx.AsyncClient() as client:
            foreign = await client.post(
                server.url,
                headers={"Host": "evil.example", "Content-Type": "application/json",
                         "Accept": "application/json, text/event-stream"},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )  # fmt: skip
        assert "(an access view)" in "".join(server.lines)
    assert early.is_error is False and early.structured_content["results"] == []
    assert foreign.status_code in (403, 421), foreign.text


async def test_an_ambiguous_name_is_a_follow_up_listing_the_fondas_not_an_error(
    films: Films, tmp_path: Path
) -> None:
    async with served(films, tmp_path / "server.err", "--table", "films") as session:
        result = await session.call_tool("film_search", {"topic": "western", "actor": "fonda"})
        unknown = await session.call_tool("film_search", {"director": "Zzyzx Qwerty"})
    assert result.is_error is False
    text = _text(result)
    assert text.startswith("Which did you mean by 'fonda' for actor:")
    fondas = {"Jane Fonda", "Henry Fonda", "Peter Fonda", "Bridget Fonda"}
    assert all(name in text for name in fondas)
    doc = result.structured_content
    assert doc is not None and doc["results"] == []
    assert doc["follow_up"]["parameter"] == "actor" and doc["follow_up"]["text"] == "fonda"
    assert fondas <= {c["value"] for c in doc["follow_up"]["candidates"]}
    assert unknown.is_error is False and _text(unknown).startswith("Nothing matched 'Zzyzx Qwerty'")
    assert unknown.structured_content is not None
    assert unknown.structured_content["follow_up"]["candidates"] == []


async def test_an_access_filter_serves_a_view_no_call_can_read_past(
    films: Films, tmp_path: Path
) -> None:
    errlog = tmp_path / "server.err"
    view = ("--table", "films", "--access-filter", '{"year": {"$gte": 1960}}')
    async with served(films, errlog, *view) as session:
        westerns = await session.call_tool("film_search", HENRY_WESTERNS)
        # An agent asking for the earlier years gets nothing from them.
        early = await session.call_tool(
            "film_search", {**HENRY_WESTERNS, "year_to": 1959, "limit": 50}
        )
    doc = westerns.structured_content
    assert westerns.is_error is False and doc is not None
    sql = films_where(DB, cast="Henry Fonda", genre="Western", meter_at_least=60, year_from=1960)
    assert sql and {r["id"] for r in doc["results"]} == set(sql)
    assert early.is_error is False and early.structured_content is not None
    assert early.structured_content["results"] == []
    assert "(an access view)" in errlog.read_text()


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [
        ({"topic": "western", "reviews": "good"}, "reviews must be one of 'positive', 'negative'"),
        ({"topic": "western", "limit": "many"}, "limit"),
        ({"topic": "western", "year_from": [1950]}, "year_from"),
        ({"topic": "western", "studio": "MGM"}, "studio"),
        ({"topic": "western", "year_from": 2000, "year_to": 1990}, "year_from must be at most"),
    ],
)
async def test_a_malformed_call_is_a_tool_error_naming_the_parameter(
    films: Films, tmp_path: Path, arguments: dict[str, Any], shown: str
) -> None:
    async with served(films, tmp_path / "server.err", "--table", "films") as session:
        result = await session.call_tool("film_search", arguments)
        # The server is still serving after a malformed call.
        after = await session.call_tool("film_search", {"topic": "western", "limit": 1})
    text = _text(result)
    assert result.is_error is True and text.startswith("Invalid arguments: ")
    assert shown in text and "Traceback" not in text
    assert after.is_error is False and len(after.structured_content["results"]) == 1


async def test_a_call_of_an_unknown_tool_is_a_tool_error(films: Films, tmp_path: Path) -> None:
    async with served(films, tmp_path / "server.err", "--table", "films") as session:
        result = await session.call_tool("film_serach", {"topic": "western"})
    assert result.is_error is True and "'film_search'" in _text(result)


async def test_tool_module_factory_serves_the_users_own_tool(films: Films, tmp_path: Path) -> None:
    flags = ("--table", "films", "--tool", "mcp_factory:actor_tool")
    async with served(films, tmp_path / "server.err", *flags) as session:
        listed = await session.list_tools()
        result = await session.call_tool(
            "actor_films", {"topic": "western", "actor": "henry fonda", "limit": 20}
        )
        refused = await session.call_tool("actor_films", {"topic": "western", "genre": "War"})
    assert [t.name for t in listed.tools] == ["actor_films"]
    assert set(listed.tools[0].input_schema["properties"]) == {"topic", "actor", "limit"}
    assert result.is_error is False and result.structured_content is not None
    ids = [r["id"] for r in result.structured_content["results"]]
    henry = set(films_where(DB, cast="Henry Fonda"))
    assert len(ids) == 20 and set(ids) <= henry and len(henry) > 20
    assert refused.is_error is True and "genre" in _text(refused)


@pytest.fixture
def notes(films: Films, cassandra_session: Any, tmp_path: Path) -> Films:
    """Five notes loaded by `hoprag load jsonl` into a new keyspace's `notes` table."""
    from keyspaces import new_keyspace

    keyspace = new_keyspace(cassandra_session)
    path = tmp_path / "notes.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"n{i}", "title": f"Note {i}", "text": f"about topic {i}"}) + "\n"
            for i in range(5)
        )
    )
    load = subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "load", "jsonl", "--path", str(path), "--table",
         "notes", "--embedding", "hash:32", "--keyspace", keyspace,
         "--contact-points", films.contact],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert load.returncode == 0, load.stderr
    return Films(films.contact, keyspace, films.tool)


async def test_a_store_failure_is_a_tool_error_and_the_server_keeps_serving(
    notes: Films, cassandra_session: Any, tmp_path: Path
) -> None:
    flags = ("--table", "notes", "--tool", "mcp_factory:topic_tool")
    async with served(notes, tmp_path / "server.err", *flags) as session:
        before = await session.call_tool("note_search", {"topic": "topic 2"})
        # The table goes away under the running server: its next search fails in Cassandra.
        cassandra_session.execute(f"DROP TABLE {notes.keyspace}.notes", timeout=60)
        failed = await session.call_tool("note_search", {"topic": "topic 2"})
        malformed = await session.call_tool("note_search", {"topic": "topic 2", "limit": 0})
    assert before.is_error is False and len(before.structured_content["results"]) == 3
    text = _text(failed)
    assert failed.is_error is True and text.startswith("The search failed: ")
    assert "Traceback" not in text
    assert malformed.is_error is True and "limit" in _text(malformed)


def test_stdout_carries_only_json_rpc_even_when_the_factory_prints(films: Films) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")]))
    server = subprocess.Popen(
        [sys.executable, "-m", "hoprag.cli", "mcp", "--keyspace", films.keyspace,
         "--contact-points", films.contact, "--table", "films",
         "--tool", "mcp_factory:noisy_tool"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        server.stdin.flush()

    try:
        send({"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
              "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})  # fmt: skip
        first = json.loads(server.stdout.readline())
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/list"})
        second = json.loads(server.stdout.readline())
        rest, err = server.communicate(timeout=60)  # closes stdin: the server ends
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert first["id"] == 1 and first["result"]["serverInfo"]["name"] == "hoprag"
    assert second["id"] == 2 and [t["name"] for t in second["result"]["tools"]] == ["actor_films"]
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in rest.splitlines() if line)
    assert "hello from the factory" in err and server.returncode == 0
