"""The embedding model's cost said, and paid once (issue #49, part 4), as a user runs the
commands: `hoprag load`, `query` and `mcp` (stdio and HTTP) as subprocesses with the real
all-MiniLM-L6-v2 (the minilm step of scripts/setup) against the real node. Twenty notes are
loaded once for the module with MiniLM, the embedding cache in a directory of the module's own
(so that the first load really loads the model). The stand-in model's unit tests, which prove
the order of line and load in-process, are in tests/unit/test_model_load.py."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from keyspaces import new_keyspace
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

LOADING = "loading the embedding model (all-MiniLM-L6-v2) ..."
LOADED = "loaded the embedding model in "
TESTS = Path(__file__).resolve().parents[1]
NOTES = 20


class Notes:
    """The loaded notes: where they live, the environment the commands ran in (cache, path)
    and what the first load printed."""

    def __init__(self, contact: str, keyspace: str, env: dict[str, str], load: Any) -> None:
        self.contact = contact
        self.keyspace = keyspace
        self.env = env
        self.load = load

    def args(self, *args: str) -> list[str]:
        """`python -m hoprag.cli ARGS` against the notes' keyspace."""
        return [sys.executable, "-m", "hoprag.cli", *args, "--keyspace", self.keyspace,
                "--contact-points", self.contact]  # fmt: skip

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.args(*args), capture_output=True, text=True, check=False,
                              timeout=600, env=self.env)  # fmt: skip


def _write_notes(path: Path) -> None:
    animals = ["cats", "dogs", "horses", "owls", "whales"]
    with path.open("w") as f:
        for i in range(NOTES):
            text = f"a note about {animals[i % 5]} and their habits, number {i}"
            f.write(json.dumps({"id": f"n{i}", "title": f"Note {i}", "text": text}) + "\n")


@pytest.fixture(scope="module")
def notes(
    tmp_path_factory: pytest.TempPathFactory, cassandra_contact_points: str, cassandra_session: Any
) -> Notes:
    where = tmp_path_factory.mktemp("model_load")
    _write_notes(where / "notes.jsonl")
    env = dict(os.environ, HOPRAG_CACHE_DIR=str(where / "cache"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")]))
    notes = Notes(cassandra_contact_points, new_keyspace(cassandra_session), env, None)
    notes.load = notes.run("load", "jsonl", "--path", str(where / "notes.jsonl"), "--table",
                           "notes", "--embedding", "minilm")  # fmt: skip
    assert notes.load.returncode == 0, notes.load.stderr
    return notes


def test_load_says_it_loads_the_model_before_its_progress_and_a_cached_load_never_loads(
    notes: Notes, tmp_path: Path
) -> None:
    err = notes.load.stderr
    assert err.index(LOADING) < err.index(LOADED) < err.index("load jsonl [")
    assert err.count(LOADING) == 1
    assert f"loaded {NOTES} documents into {notes.keyspace}.notes" in notes.load.stdout
    # The same notes into another table: every vector is in the cache, the model never loads.
    _write_notes(tmp_path / "notes.jsonl")
    again = notes.run("load", "jsonl", "--path", str(tmp_path / "notes.jsonl"), "--table",
                      "notes_again", "--embedding", "minilm")  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "embedding model" not in again.stderr
    assert f"loaded {NOTES} documents into {notes.keyspace}.notes_again" in again.stdout


def test_query_with_minilm_says_on_stderr_it_loads_the_model_and_keeps_stdout_json(
    notes: Notes,
) -> None:
    r = notes.run("query", "owls and their habits", "--table", "notes", "--edges",
                  "title:title", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0] == LOADING and lines[1].startswith(LOADED) and lines[1].endswith("s")
    doc = json.loads(r.stdout)  # stdout is the JSON alone
    owls = {f"n{i}" for i in range(3, NOTES, 5)}
    assert doc["nodes"] and doc["nodes"][0]["id"] in owls


@contextlib.asynccontextmanager
async def mcp_client(notes: Notes, errlog: Path) -> AsyncIterator[ClientSession]:
    """The MCP SDK's client, initialised, on a `hoprag mcp` server process serving the notes
    with a topic-only tool over stdio (its stderr in `errlog`)."""
    args = notes.args("mcp", "--table", "notes", "--tool", "mcp_factory:topic_tool")
    params = StdioServerParameters(command=args[0], args=args[1:], env=notes.env)
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


async def _call_times(notes: Notes, errlog: Path, calls: int) -> list[float]:
    """The seconds each of `calls` tool calls took, the first call first, after the client
    listed the tools (as an agent does before it calls one) and paid its own first-result
    cost: it compiles the tool's output schema the first time it checks a result (about 10 ms
    here, the client's and not the server's), so it is given an empty result to reject first."""
    async with mcp_client(notes, errlog) as session:
        assert [t.name for t in (await session.list_tools()).tools] == ["note_search"]
        empty = types.CallToolResult(content=[], structured_content={})
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await session.validate_tool_result("note_search", empty)
        times = []
        for i in range(calls):
            began = time.perf_counter()
            result = await session.call_tool("note_search", {"topic": f"owls {i}"})
            times.append(time.perf_counter() - began)
            assert result.is_error is False and result.structured_content is not None
    return times


async def test_mcp_over_stdio_loads_the_model_once_before_it_serves_the_first_call(
    notes: Notes, tmp_path: Path
) -> None:
    """The server loads the model (and answers one warm-up call) before it serves, so a
    client's first call does not pay the model's load: the server says it loaded the model
    once, before "serving", and no call loads it again. (Structure, not time: the first
    call's seconds against the later ones' varied 2-9x on this shared machine.)"""
    errlog = tmp_path / "server.err"
    times = await _call_times(notes, errlog, 6)
    said = errlog.read_text()
    assert len(times) == 6
    assert said.count(LOADING) == 1 and said.count(LOADED) == 1, said
    assert said.index(LOADING) < said.index(LOADED) < said.index("hoprag mcp: serving")


def test_mcp_over_http_loads_the_model_before_it_listens(notes: Notes) -> None:
    args = notes.args("mcp", "--table", "notes", "--tool", "mcp_factory:topic_tool", "--http",
                      "127.0.0.1:0")  # fmt: skip
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=notes.env)  # fmt: skip
    assert process.stderr is not None
    lines: list[str] = []
    try:
        for line in process.stderr:  # until it listens (or ends)
            lines.append(line)
            if "over streamable HTTP at " in line:
                break
    finally:
        process.terminate()
        process.communicate(timeout=60)
    said = "".join(lines)
    assert said.index(LOADING) < said.index(LOADED) < said.index("over streamable HTTP at "), said
