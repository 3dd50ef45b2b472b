"""`hoprag mcp`'s argument checks (exit 2 before anything connects) and `hoprag.tools.mcp`'s
results for each kind of call, in-process on a MemoryStore (the server process and the real
client are in tests/integration/test_mcp.py)."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
import time
from typing import Any

import pytest

from hoprag.cli import main
from hoprag.documents import Document
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores.memory import MemoryStore
from hoprag.tools import SearchTool, film_search_tool
from hoprag.tools.mcp import (
    INSTALL_HINT,
    call_result,
    load_factory,
    make_tool,
    require_mcp,
    serve_stdio,
)

# No node answers on port 1: a run that tried to connect would fail with exit 1.
NOWHERE = ["--contact-points", "127.0.0.1:1"]


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        (["--table", "bad-name"], "table 'bad-name' is not a plain name"),
        (["--keyspace", "my keyspace"], "keyspace 'my keyspace' is not a plain name"),
        (["--table", "films", "--tool", "nocolon"], "--tool must be MODULE:FACTORY"),
        (["--table", "films", "--tool", "a.b:c:d"], "--tool must be MODULE:FACTORY"),
        (["--table", "films", "--tool", "no_such_module_q:f"], "importing 'no_such_module_q'"),
        (["--table", "films", "--tool", "mcp_factory:missing"], "('missing' is missing)"),
        (["--table", "films", "--tool", "mcp_factory:NOT_CALLABLE"], "'NOT_CALLABLE' is int 3"),
        (["--tool", "mcp_factory:actor_tool"], "--tool needs --table"),
        (["--table", "films", "--embedding", "glove"], "unknown --embedding 'glove'"),
        (["--access-filter", "{tenant: acme}"], "--access-filter '{tenant: acme}' is not JSON"),
        (["--access-filter", "{}"], "--access-filter: access_filter must be a non-empty filter"),
        (["--access-filter", '{"year": {"$gte": "soon"}}'], "access_filter['year']['$gte']"),
        (["--http", "eighty"], "--http 'eighty': expected PORT or HOST:PORT"),
        (["--http", "127.0.0.1:65536"], "--http '127.0.0.1:65536': expected"),
        (["--http", ":8000"], "--http ':8000': expected"),
        (["--http", "localhost:-1"], "--http 'localhost:-1': expected"),
        (["--http", "[::1]:٨٠"], "--http '[::1]:٨٠': expected"),  # digits, but not ASCII
    ],
)
def test_mcp_refuses_bad_arguments_with_exit_2_before_connecting(
    capsys: pytest.CaptureFixture[str], flags: list[str], shown: str
) -> None:
    assert main(["mcp", *flags, *NOWHERE]) == 2
    out, err = capsys.readouterr()
    assert out == "" and shown in err and err.startswith("hoprag: error: ")
    assert "Traceback" not in err and "127.0.0.1:1" not in err


def test_mcp_without_the_mcp_package_names_the_extra_before_connecting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` raises ImportError
    with pytest.raises(ImportError, match=r"install hoprag's mcp extra \(from a clone: pip"):
        require_mcp()
    assert main(["mcp", "--table", "films", *NOWHERE]) == 1
    out, err = capsys.readouterr()
    assert out == "" and INSTALL_HINT in err and "127.0.0.1:1" not in err


def test_a_factory_that_returns_no_search_tool_is_refused_naming_the_flag() -> None:
    factory = load_factory("mcp_factory:not_a_tool", argument="--tool")
    with pytest.raises(ValueError, match=r"--tool must be a factory returning a hoprag"):
        make_tool(factory, MemoryStore(HashEmbedding(16)), argument="--tool")
    tool = make_tool(load_factory("mcp_factory:actor_tool"), MemoryStore(HashEmbedding(16)))
    assert isinstance(tool, SearchTool) and tool.name == "actor_films"


def _films() -> SearchTool:
    store = MemoryStore(HashEmbedding(32))
    rows = [
        ("f1", "My Darling Clementine", 1946, ["Henry Fonda", "Linda Darnell"], "Western", 96),
        ("f2", "Fort Apache", 1948, ["Henry Fonda", "John Wayne"], "Western", 94),
        ("f3", "Barbarella", 1968, ["Jane Fonda"], "Sci-Fi", 73),
        ("f4", "Easy Rider", 1969, ["Peter Fonda"], "Drama", 88),
    ]

    def doc(i: str, t: str, y: int, c: list[str], g: str, m: int) -> Document:
        metadata = {"title": t, "year": y, "cast": c, "genre": g, "director": "Someone",
                    "tomato_meter": m, "country": "United States"}  # fmt: skip
        return Document(id=i, content=f"{t}: a {g.lower()}", metadata=metadata)

    docs = [doc(*row) for row in rows]
    store.add(docs)
    return film_search_tool(store)


async def test_a_results_call_gives_the_text_and_the_answer_as_structured_content() -> None:
    tool = _films()
    result = await call_result(tool, {"topic": "western", "actor": "Henry Fonda"})
    expected = await tool.arun(topic="western", actor="Henry Fonda")
    assert result.is_error is False
    assert result.content[0].type == "text" and result.content[0].text == expected.text
    got, want = result.structured_content, expected.to_dict()
    assert got is not None and got["stats"].pop("seconds") >= 0
    want["stats"].pop("seconds")
    # explain() holds each hop's time, which differs from run to run: compare the rest.
    got_explain, want_explain = got["stats"].pop("explain"), want["stats"].pop("explain")
    assert _untimed(got_explain) == _untimed(want_explain)
    assert got == want
    assert {r["id"] for r in got["results"]} == {"f1", "f2"}


def _untimed(explain: str) -> list[list[str]]:
    """The explain() text without its seconds column (the hop lines' ninth field)."""
    rows = [line.split() for line in explain.splitlines()]
    return [r[:8] + r[9:] if r and r[0].isdigit() else r for r in rows]


async def test_a_follow_up_is_a_normal_result_with_the_candidates() -> None:
    result = await call_result(_films(), {"topic": "western", "actor": "fonda"})
    assert result.is_error is False and result.structured_content is not None
    follow_up = result.structured_content["follow_up"]
    assert {c["value"] for c in follow_up["candidates"]} == {
        "Henry Fonda", "Jane Fonda", "Peter Fonda"
    }  # fmt: skip
    assert result.content[0].text == follow_up["question"]


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [
        ({"topic": "western", "reviews": "good"}, "reviews must be one of"),
        ({"topic": "western", "year_to": "late"}, "year_to"),
        ({"topic": "western", "studio": "MGM"}, "studio"),
        ({"limit": 3}, "topic must be a text, unless one of actor"),
        (None, "topic must be a text"),
    ],
)
async def test_a_malformed_call_is_an_error_result_naming_the_parameter(
    arguments: dict[str, object] | None, shown: str
) -> None:
    result = await call_result(_films(), arguments)
    text = result.content[0].text
    assert result.is_error is True and text.startswith("Invalid arguments: ") and shown in text
    assert result.structured_content is None


def test_what_a_tool_module_prints_at_import_stays_off_the_protocol_stream(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue #28, 9: the module was imported before stdout was redirected."""
    code = main(["mcp", "--table", "films", "--tool", "mcp_noisy_factory:actor_tool", *NOWHERE])
    out, err = capsys.readouterr()
    assert code == 1  # no node answers on port 1: it got as far as connecting
    assert out == ""
    assert "mcp_noisy_factory imported" in err


class _KeptBytes(io.BytesIO):
    """A stdout that keeps what was written when the server closes it."""

    written = b""

    def close(self) -> None:
        self.written = self.getvalue()
        super().close()


def test_a_line_that_is_not_utf8_is_answered_and_the_server_keeps_serving() -> None:
    """Issue #28, 4: one byte that is not UTF-8 ended the server before it answered. The
    client's stdin stays open until both answers are out (at EOF a server may drop work)."""

    def line(message: dict[str, Any]) -> bytes:
        return json.dumps(message).encode() + b"\n"

    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    payload = (
        b"\xff\xfe not UTF-8 \x80\n"
        + line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        + line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    )
    read_end, write_end = os.pipe()
    stdout = _KeptBytes()
    server = threading.Thread(
        target=serve_stdio,
        args=(_films(),),
        kwargs={"stdin": os.fdopen(read_end, "rb", buffering=0), "stdout": stdout},
    )
    server.start()
    os.write(write_end, payload)
    for _ in range(600):  # up to 30 s
        if stdout.closed or b'"id":2' in stdout.getvalue():
            break
        time.sleep(0.05)
    os.close(write_end)
    server.join(30)
    assert not server.is_alive()
    answers = [json.loads(x) for x in stdout.written.decode().splitlines()]
    by_id = {a["id"]: a for a in answers if "id" in a}
    assert by_id[1]["result"]["serverInfo"]["name"] == "hoprag"
    assert [t["name"] for t in by_id[2]["result"]["tools"]] == ["film_search"]


@pytest.mark.parametrize(
    ("raw", "address"),
    [
        ("8000", ("127.0.0.1", 8000)),  # loopback unless told otherwise
        ("0", ("127.0.0.1", 0)),
        ("localhost:9", ("localhost", 9)),
        ("0.0.0.0:8080", ("0.0.0.0", 8080)),
        ("[::1]:8000", ("::1", 8000)),
    ],
)
def test_the_http_flag_reads_a_port_or_a_host_and_port(raw: str, address: tuple[str, int]) -> None:
    from hoprag.cli.mcp import http_address

    assert http_address(raw) == address
    assert http_address(None) is None


def test_the_listed_tool_is_read_only_with_the_answers_output_schema() -> None:
    """What MCP clients see besides the input schema: the annotations saying the tool only
    reads, and an output schema every structured result satisfies."""
    from hoprag.tools.answer import ANSWER_JSON_SCHEMA
    from hoprag.tools.mcp import tool_definition

    tool = _films()
    listed = tool_definition(tool)
    assert listed.name == tool.name and listed.input_schema == tool.json_schema()
    assert listed.output_schema == ANSWER_JSON_SCHEMA
    notes = listed.annotations
    assert notes is not None and notes.read_only_hint and not notes.destructive_hint
    assert notes.idempotent_hint and notes.open_world_hint is False
    wire = listed.model_dump(by_alias=True, exclude_none=True)  # MCP's JSON names
    assert wire["annotations"]["readOnlyHint"] is True and "outputSchema" in wire


@pytest.mark.parametrize(
    "arguments",
    [
        {"topic": "western", "actor": "Henry Fonda"},  # results, a resolved name
        {"topic": "western", "actor": "fonda"},  # a follow-up with candidates
        {"director": "Zzyzx Qwerty"},  # a follow-up with none
        {"genre": "Western", "limit": 3},  # a listing without a topic: null scores
    ],
)
async def test_every_kind_of_structured_result_satisfies_the_output_schema(
    arguments: dict[str, Any],
) -> None:
    import jsonschema

    from hoprag.tools.answer import ANSWER_JSON_SCHEMA

    jsonschema.Draft202012Validator.check_schema(ANSWER_JSON_SCHEMA)
    result = await call_result(_films(), arguments)
    assert result.is_error is False, result.content
    doc = result.structured_content
    jsonschema.Draft202012Validator(ANSWER_JSON_SCHEMA).validate(doc)
    broken = {**doc, "results": [{"id": 5}]}  # the schema can refuse
    assert not jsonschema.Draft202012Validator(ANSWER_JSON_SCHEMA).is_valid(broken)


@pytest.mark.parametrize(
    ("host", "port", "named"),
    [("", 8000, "host"), (None, 8000, "host"), ("127.0.0.1", 70000, "port"),
     ("127.0.0.1", -1, "port"), ("127.0.0.1", "8000", "port"), ("127.0.0.1", True, "port")],
)  # fmt: skip
def test_serving_over_http_refuses_a_bad_host_or_port_before_listening(
    host: object, port: object, named: str
) -> None:
    from hoprag.errors import InvalidInputError
    from hoprag.tools.mcp import serve_http

    with pytest.raises(InvalidInputError) as caught:
        serve_http(_films(), host=host, port=port)  # type: ignore[arg-type]
    assert caught.value.argument == named
