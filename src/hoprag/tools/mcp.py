"""A `SearchTool` served to MCP clients (Claude Desktop, IDE agents, any Model Context Protocol
client) over the stdio transport or the streamable HTTP transport, with the official `mcp`
SDK, 2.x (hoprag's mcp extra, README's Install). `hoprag mcp --table films [--http
HOST:PORT]` runs it from the shell.

* `tools/list` shows one tool: the SearchTool's name, description and arguments' JSON schema
  (`tool.json_schema()`, the same descriptions, enums and examples an OpenAI or LangChain agent
  sees), its output schema (`ANSWER_JSON_SCHEMA`, what `answer.to_dict()` holds) and its
  annotations: read-only, not destructive, idempotent, a closed world (it reads one table).
* `tools/call` runs `await tool.arun(**arguments)`. Results come back as text content (the
  numbered documents, `answer.text`) and as structured content (`answer.to_dict()`: results,
  resolved entities, statements with their bound parameters, stats). A follow-up (an ambiguous
  or unknown name) is a normal result, not an error: its text is the question listing the
  candidates, its structured content holds them under `follow_up`, so the agent asks the user.
* A malformed call (a wrong type, a value outside an enum, an unknown parameter, two scopes)
  is a tool error result (`is_error`) whose text starts "Invalid arguments:" and names the
  parameter, the value and what is allowed; a store failure (Cassandra unreachable, a table
  gone, a request the store refuses) is one starting "The search failed:". The client never
  sees a traceback (an unexpected exception is logged to stderr and reported by its type and
  message), and the server keeps serving.

`warm_up(tool)` answers one call on a fixed topic before serving, so that what a first call pays
once (the embedding model's load, imports, prepared statements) is not paid by a client's first
call; `hoprag mcp` does it before it serves.

Over stdio the server writes only the protocol to stdout; everything else goes to stderr.
Over HTTP it serves the SDK's streamable HTTP endpoint at `/mcp` with uvicorn, on loopback
unless told otherwise, until SIGINT or SIGTERM. Each request's Host and Origin headers are
checked against DNS rebinding (`transport_security`). A request's answer is one JSON body
(not an event stream), so a signal that stops the server lets a tool call under way finish and
be answered; after the grace period (`GRACE_SECONDS`) whatever is still open (a longer call, a
request half sent) is cancelled and the server stops."""

from __future__ import annotations

import contextlib
import importlib
import io
import ipaddress
import logging
import math
import os
import re
import socket
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

from hoprag import __version__
from hoprag.errors import HopragError, InvalidInputError, invalid
from hoprag.tools.answer import ANSWER_JSON_SCHEMA
from hoprag.tools.schema import Topic
from hoprag.tools.tool import SearchTool

if TYPE_CHECKING:
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.server.transport_security import TransportSecuritySettings

    from hoprag.stores.base import Store

__all__ = [
    "GRACE_SECONDS",
    "INSTALL_HINT",
    "MCP_PATH",
    "SERVER_NAME",
    "ToolFactory",
    "aserve_http",
    "aserve_stdio",
    "build_server",
    "call_result",
    "is_loopback",
    "load_factory",
    "make_tool",
    "require_mcp",
    "serve_http",
    "serve_stdio",
    "tool_definition",
    "transport_security",
    "warm_up",
]

INSTALL_HINT = "install hoprag's mcp extra (from a clone: pip install '.[mcp]'; README, Install)"
SERVER_NAME = "hoprag"
"""The name the server gives itself in MCP's initialisation."""
MCP_PATH = "/mcp"
"""Where the HTTP transport's endpoint is (`http://HOST:PORT/mcp`)."""

GRACE_SECONDS = 10.0
"""How long an HTTP server told to stop lets open requests finish before it cancels them."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""The host names any loopback server answers to (its own address too), as a URL spells them."""

WARM_UP_TOPIC = "warm-up"
"""The topic of `warm_up`'s call."""

ToolFactory = Callable[["Store"], SearchTool]
"""What `--tool module:factory` names: a callable taking the store and returning the tool."""

_SPEC = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
log = logging.getLogger(__name__)


def require_mcp() -> None:
    """Nothing when the `mcp` SDK 2.x can be imported; an ImportError naming
    `INSTALL_HINT` otherwise (also for the 1.x SDK, whose server API differs)."""
    try:
        importlib.import_module("mcp.server.lowlevel")
        importlib.import_module("mcp.server.stdio")
        import mcp.types

        mcp.types.ToolAnnotations(read_only_hint=True)  # 2.x spelling; 1.x has readOnlyHint
    except (ImportError, TypeError, ValueError) as exc:
        raise ImportError(
            f"serving a tool over MCP needs the `mcp` SDK 2.x, which is not installed: "
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

    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


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
        structured_content=answer.to_dict(),
        is_error=False,
    )


def warm_up(tool: SearchTool) -> None:
    """Answer one call of `tool` as a client's call is answered (`call_result`), on the topic
    "warm-up" (with no arguments when the tool has no Topic), and drop the answer: the first
    call a client makes then costs what the next one does. A failed call is logged as a
    warning, not raised: the server then answers each call's failure as usual."""
    import anyio
    from mcp import types

    topic = next((p.name for p in tool.parameters if isinstance(p, Topic)), None)
    arguments = {} if topic is None else {topic: WARM_UP_TOPIC}
    result = anyio.run(call_result, tool, arguments)
    if result.is_error:
        said = [c.text for c in result.content if isinstance(c, types.TextContent)]
        log.warning("%s: the warm-up call failed: %s", tool.name, " ".join(said))


def tool_definition(tool: SearchTool) -> types.Tool:
    """`tool` as MCP lists it: name, description, input and output schemas, and annotations
    saying it only reads (read-only, not destructive, idempotent, a closed world)."""
    from mcp import types

    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.json_schema(),
        output_schema=ANSWER_JSON_SCHEMA,
        annotations=types.ToolAnnotations(
            title=tool.name,
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


def build_server(tool: SearchTool) -> Server[Any]:
    """A low-level MCP `Server` offering `tool` (its own argument checks, not a JSON-schema
    check, so errors name the parameter as the other paths do)."""
    require_mcp()
    from mcp import types
    from mcp.server.lowlevel import Server

    listed = types.ListToolsResult(tools=[tool_definition(tool)])

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != tool.name:
            return _error(f"Unknown tool {params.name!r}: this server offers {tool.name!r}")
        return await call_result(tool, params.arguments)

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=tool.description,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


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


async def aserve_http(
    tool: SearchTool,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    ready: Callable[[str], None] | None = None,
    grace: float = GRACE_SECONDS,
) -> None:
    """Serve `tool` over MCP's streamable HTTP transport at `http://host:port/mcp` until
    SIGINT or SIGTERM, then stop taking connections, let open requests finish for up to
    `grace` seconds (rounded up to whole seconds), cancel what is still open and return (the
    signal is not raised again). `ready(url)` is called once the socket listens (with the
    port the system chose when `port` is 0). Requests are checked as
    `transport_security(host)` says."""
    _check_address(host, port)
    _check_grace(grace)
    require_mcp()
    import anyio

    app = build_server(tool).streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,  # an answer is one body, not a stream a stopping server ends
        transport_security=transport_security(host),
    )
    server = _http_server(app, host, port, grace)
    with _listening_socket(host, port) as sock:  # an OSError here names the address
        url = f"http://{_url_host(host)}:{sock.getsockname()[1]}{MCP_PATH}"
        async with anyio.create_task_group() as tg:
            tg.start_soon(_report_ready, server, url, ready)
            await server.serve(sockets=[sock])
            tg.cancel_scope.cancel()


def serve_http(
    tool: SearchTool,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    ready: Callable[[str], None] | None = None,
    grace: float = GRACE_SECONDS,
) -> None:
    """`aserve_http` from synchronous code (it runs its own event loop)."""
    import anyio

    anyio.run(lambda: aserve_http(tool, host=host, port=port, ready=ready, grace=grace))


def is_loopback(host: str) -> bool:
    """Whether `host` ("localhost", an address in 127.0.0.0/8, ::1; with or without IPv6
    brackets) reaches only this machine."""
    host = host.removeprefix("[").removesuffix("]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]")).is_unspecified
    except ValueError:
        return False


def transport_security(host: str) -> TransportSecuritySettings:
    """The DNS-rebinding checks of a server bound to `host`. A request's Host header must
    name `host` or, when `host` is a loopback address (any of 127.0.0.0/8, ::1, localhost),
    any loopback name (`LOOPBACK_NAMES`), on any port; otherwise it is refused with 421. An
    Origin header, when sent, must be `http://` on one of those hosts (403 otherwise). A
    wildcard address (0.0.0.0, ::) answers under any name, so it gets no Host or Origin
    check."""
    from mcp.server.transport_security import TransportSecuritySettings

    if _is_wildcard(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = [_url_host(host)]
    if is_loopback(host):
        names += [name for name in LOOPBACK_NAMES if name not in names]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[spelled for name in names for spelled in (name, f"{name}:*")],
        allowed_origins=[spelled for name in names
                         for spelled in (f"http://{name}", f"http://{name}:*")],
    )  # fmt: skip


def _http_server(app: Any, host: str, port: int, grace: float) -> Any:
    """A uvicorn server for `app` that stops on SIGINT or SIGTERM (a second SIGINT: at once)
    and then returns, instead of raising the signal again after its graceful shutdown as
    uvicorn does. Open requests get `grace` seconds to finish, then are cancelled."""
    import signal
    import threading

    import uvicorn

    class QuietServer(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            before = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig: int, frame: Any) -> None:
            # Not sse_starlette's patched handler: that one sets a process-wide flag which
            # ends every event stream at once, and would end them in later servers too.
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            self.should_exit = True

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=math.ceil(grace),
    )
    return QuietServer(config)


def _check_grace(grace: Any) -> None:
    """InvalidInputError naming `grace` unless it is a finite number of seconds >= 0."""
    if isinstance(grace, bool) or not isinstance(grace, int | float) or not 0 <= grace < math.inf:
        raise invalid("grace", grace, "a number of seconds >= 0, e.g. 10")


def _check_address(host: Any, port: Any) -> None:
    """InvalidInputError naming `host` or `port` unless they are a non-empty host name or
    address and a port in 0..65535."""
    if not isinstance(host, str) or not host.strip():
        raise invalid("host", host, "a host name or IP address, e.g. '127.0.0.1'")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise invalid("port", port, "an int in 0..65535 (0: any free port)")


def _listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port), IPv6 when `host` has a colon."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


async def _report_ready(server: Any, url: str, ready: Callable[[str], None] | None) -> None:
    """Call `ready(url)` once uvicorn's `server` listens (nothing if it stops first)."""
    import anyio

    while not server.started:
        if server.should_exit:
            return
        await anyio.sleep(0.05)
    if ready is not None:
        ready(url)
