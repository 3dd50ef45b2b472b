"""`hoprag mcp`: a search tool served to MCP clients over stdio or streamable HTTP."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from hoprag.cli.common import CliError, make_embedding, open_session
from hoprag.cli.options import access_filter_arg
from hoprag.cli.query import open_query_store
from hoprag.errors import InvalidInputError

# --- mcp --------------------------------------------------------------------------------------


def check_mcp_args(args: argparse.Namespace) -> Callable[[Any], Any]:
    """The tool factory of `hoprag mcp` (`--tool MODULE:FACTORY`, imported now, or the films
    tool), with the keyspace and table names checked and the `mcp` package found, before
    anything connects."""
    from hoprag.stores.cassandra.names import check_name
    from hoprag.tools import film_search_tool
    from hoprag.tools.mcp import load_factory, require_mcp

    args.keyspace = check_name(args.keyspace, what="keyspace")
    if args.table is None and args.tool is not None:
        raise CliError("--tool needs --table: the table the factory's store reads", 2)
    args.table = check_name(args.table or "films", what="table")
    args.access = access_filter_arg(args.access_filter)
    args.http_at = http_address(args.http)
    try:
        require_mcp()
    except ImportError as exc:
        raise CliError(str(exc), 1) from None
    if args.tool is None:
        return film_search_tool
    try:
        return load_factory(args.tool, argument="--tool")
    except InvalidInputError as exc:
        raise CliError(str(exc), 2) from None


HTTP_ALLOWED = "PORT or HOST:PORT ([IPv6]:PORT), the port in 0..65535 (0: any free port)"


def http_address(raw: str | None) -> tuple[str, int] | None:
    """`--http`'s host and port (host 127.0.0.1 when only a port is given), None without the
    flag; exit 2 naming the flag for anything else."""
    if raw is None:
        return None
    host, sep, port_text = raw.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", raw
    host = host.removeprefix("[").removesuffix("]")
    if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535 or not host:
        raise CliError(f"--http {raw!r}: expected {HTTP_ALLOWED}", 2)
    return host, int(port_text)


def cmd_mcp(args: argparse.Namespace) -> int:
    """`hoprag mcp`: check the arguments, connect, build the tool, answer one warm-up call
    (the embedding model's load, said on stderr, and a first search's imports and prepared
    statements: a client's first call then costs about what the next one does) and serve the
    tool over MCP's stdio transport until the client closes stdin, or over streamable HTTP
    (`--http`) until SIGINT or SIGTERM. Only the protocol reaches stdout: anything else
    printed meanwhile goes to stderr."""
    import contextlib

    protocol_out = sys.stdout.buffer
    with contextlib.redirect_stdout(sys.stderr):  # a --tool module may print at import
        factory = check_mcp_args(args)  # before connecting
        embedding = make_embedding(args.embedding) if args.embedding else None
        session = open_session(args)
        try:
            store = open_query_store(args, session, embedding)
            if args.access is not None:
                store = store.restricted(args.access)
            _serve(args, _tool(factory, store), protocol_out)
            return 0
        finally:
            session.cluster.shutdown()


def _tool(factory: Callable[[Any], Any], store: Any) -> Any:
    from hoprag.tools.mcp import make_tool

    try:
        return make_tool(factory, store, argument="--tool")
    except InvalidInputError as exc:
        raise CliError(str(exc), 2) from None


def _serve(args: argparse.Namespace, tool: Any, protocol_out: Any) -> None:
    """Serve `tool` over the transport the flags chose, saying so on stderr."""
    from hoprag.tools.mcp import is_loopback, serve_http, serve_stdio, warm_up

    warm_up(tool)  # the model's load (announced) and a first search's costs, before serving
    view = "" if args.access is None else " (an access view)"
    what = f"hoprag mcp: serving the tool {tool.name!r} on {args.keyspace}.{args.table}{view}"
    if args.http_at is None:
        print(f"{what} over stdio", file=sys.stderr, flush=True)
        serve_stdio(tool, stdout=protocol_out)
        return
    host, port = args.http_at
    if not is_loopback(host):
        print(f"hoprag mcp: warning: {host} is not a loopback address: anyone who reaches it "
              "can search this table (no authentication)", file=sys.stderr, flush=True)  # fmt: skip

    def ready(url: str) -> None:
        print(f"{what} over streamable HTTP at {url} (Ctrl-C stops it)", file=sys.stderr,
              flush=True)  # fmt: skip

    try:
        serve_http(tool, host=host, port=port, ready=ready)
    except OSError as exc:  # the address is taken or not ours
        raise CliError(f"--http {host}:{port}: cannot listen there ({exc})", 1) from None
    print("hoprag mcp: stopped", file=sys.stderr, flush=True)
