"""A `SearchTool` served to MCP clients (Claude Desktop, IDE agents, any Model Context Protocol
client) over the stdio transport, with the official `mcp` package (`pip install
'hoprag[mcp]'`). `hoprag mcp --table films` runs it from the shell.

* `tools/list` shows one tool: the SearchTool's name, description and arguments' JSON schema
  (`tool.json_schema()`, the same descriptions, enums and examples an OpenAI or LangChain agent
  sees).
* `tools/call` runs `await tool.arun(**arguments)`. Results come back as text content (the
  numbered documents, `answer.text`) and as structured content (`answer.to_dict()`: results,
  resolved entities, statements with their bound parameters, stats). A follow-up (an ambiguous
  or unknown name) is a normal result, not an error: its text is the question listing the
  candidates, its structured content holds them under `follow_up`, so the agent asks the user.
* A malformed call (a wrong type, a value outside an enum, an unknown parameter, two scopes)
  is a tool error result (`isError: true`) whose text starts "Invalid arguments:" and names the
  parameter, the value and what is allowed; a store failure (Cassandra unreachable, a table
  gone, a request the store refuses) is one starting "The search failed:". The client never
  sees a traceback (an unexpected exception is logged to stderr and reported by its type and
  message), and the server keeps serving.

The server writes only the protocol to stdout; everything else goes to stderr."""

from __future__ import annotations

import importlib
import io
import logging
import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

from hoprag.errors import HopragError, InvalidInputError, invalid
from hoprag.tools.tool import SearchTool

if TYPE_CHECKING:
    from mcp import types
    from mcp.server.lowlevel import Server

    from hoprag.stores.base import Store

__all__ = [
    "INSTALL_HINT",
    "SERVER_NAME",
    "ToolFactory",
    "build_server",
    "call_result",
    "load_factory",
    "make_tool",
    "require_mcp",
    "serve_stdio",
]

INSTALL_HINT = "pip install 'hoprag[mcp]'"
SERVER_NAME = "hoprag"
"""The name the server gives itself in MCP's initialisation."""

ToolFactory = Callable[["Store"], SearchTool]
"""What `--tool module:factory` names: a callable taking the store and returning the tool."""

_SPEC = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
log = logging.getLogger(__name__)


def require_mcp() -> None:
    """Nothing when the `mcp` package can be imported; an ImportError naming
    `pip install 'hoprag[mcp]'` otherwise."""
    try:
        importlib.import_module("mcp.server.lowlevel")
        importlib.import_module("mcp.server.stdio")
    except ImportError as exc:
        raise ImportError(
            f"serving a tool over MCP needs the `mcp` package, which is not installed: "
            f"{INSTALL_HINT}"
        ) from exc


def load_factory(spec: str, *, argument: str = "tool") -> ToolFactory:
    """The callable named by `spec`, `package.module:function`, imported by module path (the
    current directory is searched too, as `python -m` does); an `InvalidInputError` naming
    `argument` when the text is not of that form, the module cannot be imported or the name is
    missing or not callable."""
    if not isinstance(spec, str) or not _SPEC.match(spec):
        raise invalid(
            argument, spec, "MODULE:FACTORY, e.g. mypackage.tools:make_tool (a dotted module "
            "path, a colon, a function name)",
        )  # fmt: skip
    module_name, attr = spec.split(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise invalid(
            argument, spec, f"an importable module (importing {module_name!r} failed: {exc})"
        ) from None
    factory = getattr(module, attr, None)
    if factory is None or not callable(factory):
        what = "missing" if factory is None else f"{type(factory).__name__} {factory!r}"
        raise invalid(
            argument, spec, f"a callable factory(store) -> SearchTool in {module_name} "
            f"({attr!r} is {what})",
        )  # fmt: skip
    return factory  # type: ignore[no-any-return]


def make_tool(factory: ToolFactory, store: Store, *, argument: str = "tool") -> SearchTool:
    """`factory(store)`, checked to be a `SearchTool` (an `InvalidInputError` naming
    `argument` otherwise)."""
    tool = factory(store)
    if not isinstance(tool, SearchTool):
        raise invalid(
            argument, getattr(factory, "__qualname__", factory),
            f"a factory returning a hoprag.tools.SearchTool (it returned a "
            f"{type(tool).__name__})",
        )  # fmt: skip
    return tool


def _error(text: str) -> types.CallToolResult:
    from mcp import types

    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


async def call_result(
    tool: SearchTool, arguments: Mapping[str, Any] | None
) -> types.CallToolResult:
    """The MCP result of one call of `tool` (see the module docstring): the answer's text and
    structured `to_dict()`, or a tool error result for malformed arguments or a failure."""
    from mcp import types

    given = dict(arguments or {})
    try:
        tool.check_arguments(given)  # the call's own mistakes, before anything is sent
    except InvalidInputError as exc:
        return _error(f"Invalid arguments: {exc}")
    try:
        answer = await tool.arun(**given)
    except InvalidInputError as exc:
        # One naming a parameter is the call's (a topic needed, a name the store cannot take);
        # any other is the store refusing the search (a table gone, a field not declared).
        if exc.argument in {p.name for p in tool.parameters}:
            return _error(f"Invalid arguments: {exc}")
        log.warning("%s: the store refused the search: %s", tool.name, exc)
        return _error(f"The search failed: {exc}")
    except HopragError as exc:
        log.warning("%s: the search failed: %s", tool.name, exc)
        return _error(f"The search failed: {exc}")
    except Exception as exc:  # never a traceback to the client; the log has it
        log.exception("%s: unexpected error", tool.name)
        return _error(f"The search failed: {type(exc).__name__}: {exc}")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=answer.text)],
        structuredContent=answer.to_dict(),
        isError=False,
    )


def build_server(tool: SearchTool) -> Server:
    """A low-level MCP `Server` offering `tool` (its own argument checks, not the package's
    JSON-schema check, so errors name the parameter as the other paths do)."""
    require_mcp()
    from mcp import types
    from mcp.server.lowlevel import Server

    server: Server = Server(SERVER_NAME, instructions=tool.description)
    schema = tool.json_schema()

    @server.list_tools()  # type: ignore[untyped-decorator, no-untyped-call]
    async def list_tools() -> list[types.Tool]:
        return [types.Tool(name=tool.name, description=tool.description, inputSchema=schema)]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if name != tool.name:
            return _error(f"Unknown tool {name!r}: this server offers {tool.name!r}")
        return await call_result(tool, arguments)

    return server


async def aserve_stdio(
    tool: SearchTool, *, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> None:
    """Serve `tool` over MCP's stdio transport until the client closes `stdin` (default: the
    process's stdin and stdout, as bytes, UTF-8)."""
    require_mcp()
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(tool)
    # A byte that is not UTF-8 becomes U+FFFD: that line is then a parse error the server
    # answers, instead of a decoding error that ends the server before it answers anything.
    text_in = io.TextIOWrapper(stdin or sys.stdin.buffer, encoding="utf-8", errors="replace")
    reader = anyio.wrap_file(text_in)
    writer = anyio.wrap_file(io.TextIOWrapper(stdout or sys.stdout.buffer, encoding="utf-8"))
    async with stdio_server(reader, writer) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_stdio(
    tool: SearchTool, *, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> None:
    """`aserve_stdio` from synchronous code (it runs its own event loop)."""
    import anyio

    anyio.run(lambda: aserve_stdio(tool, stdin=stdin, stdout=stdout))
