"""`hoprag mcp`: a search tool served to MCP clients over stdio."""

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


def cmd_mcp(args: argparse.Namespace) -> int:
    """`hoprag mcp`: check the arguments, connect, build the tool and serve it over MCP's
    stdio transport until the client closes stdin. Only the protocol reaches stdout: anything
    else printed meanwhile goes to stderr."""
    import contextlib

    from hoprag.tools.mcp import make_tool, serve_stdio

    protocol_out = sys.stdout.buffer
    with contextlib.redirect_stdout(sys.stderr):  # a --tool module may print at import
        factory = check_mcp_args(args)  # before connecting
        embedding = make_embedding(args.embedding) if args.embedding else None
        session = open_session(args)
        try:
            store = open_query_store(args, session, embedding)
            if args.access is not None:
                store = store.restricted(args.access)
            try:
                tool = make_tool(factory, store, argument="--tool")
            except InvalidInputError as exc:
                raise CliError(str(exc), 2) from None
            view = "" if args.access is None else " (an access view)"
            print(f"hoprag mcp: serving the tool {tool.name!r} on {args.keyspace}.{args.table}"
                  f"{view} over stdio", file=sys.stderr, flush=True)  # fmt: skip
            serve_stdio(tool, stdout=protocol_out)
            return 0
        finally:
            session.cluster.shutdown()
