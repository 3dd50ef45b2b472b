"""The argument parser of every command (`build_parser`)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from hoprag.cli.ask import add_ask_arguments, cmd_ask
from hoprag.cli.common import DEFAULT_KEYSPACE, LOAD_BATCH
from hoprag.cli.delete import add_delete_arguments, cmd_delete
from hoprag.cli.fields import cmd_fields_declare, cmd_fields_list
from hoprag.cli.load import cmd_load
from hoprag.cli.mcp import cmd_mcp
from hoprag.cli.options import add_access_filter_argument
from hoprag.cli.query import cmd_query
from hoprag.cli.stats import cmd_stats
from hoprag.cli.version import VersionAction
from hoprag.recipes import RECIPES

if TYPE_CHECKING:
    pass

# --- entry point ------------------------------------------------------------------------------


DESCRIPTION = (
    "The `hoprag` command: load datasets into Cassandra, query them by graph traversal, show stats."
)
"""What `hoprag --help` says first."""

STRATEGY_HELP = """\
eager: every discovered node, hop by hop (breadth first).
mmr: maximal marginal relevance, --lambda-mult in [0, 1] trades relevance for diversity.
scored: best first by a score; --score-field FIELD scores a node by its numeric metadata
field (nodes without it rank last), without it the score is the similarity to the query.
beam: path search expanding the --beam-width best paths per hop."""


def _add_query_arguments(q: argparse.ArgumentParser) -> None:
    q.add_argument("text")
    q.add_argument("--table", required=True)
    q.add_argument(
        "--edges",
        help="FROM:TO pairs, e.g. keywords:keywords,links:$id (required unless --recipe)",
    )
    q.add_argument(
        "--allow-missing-fields",
        action="store_true",
        help="run even when an edge names a field no document read holds (warn instead)",
    )
    q.add_argument(
        "--recipe",
        choices=sorted(RECIPES),
        help="a named traversal: its edges, beam settings and ranking of the candidates after "
        "the run (multihop: the multi-hop question recipe of docs/quality.md; needs a "
        "--lexical table linked with mentions and phrases); --edges and the strategy's flags "
        "override its settings",
    )
    q.add_argument(
        "--strategy",
        choices=["eager", "mmr", "scored", "beam"],
        help="how nodes are chosen (default eager, beam with --recipe); see below",
    )
    q.add_argument("--select-k", type=int, help="how many nodes to return")
    q.add_argument("--start-k", type=int, help="start nodes from the vector search")
    q.add_argument("--adjacent-k", type=int, help="documents fetched per edge")
    q.add_argument("--max-depth", type=int, help="hops from a start node")
    q.add_argument(
        "--lexical-k",
        type=int,
        help="more start nodes from a BM25 search of the text (a table loaded with --lexical)",
    )
    q.add_argument("--lambda-mult", type=float, help="mmr only: 1 = relevance, 0 = diversity")
    q.add_argument("--beam-width", type=int, help="beam only: paths expanded per hop")
    q.add_argument(
        "--decay",
        type=float,
        help="beam only: the weight of a path's parent relevance in a new node's score (0..1)",
    )
    q.add_argument(
        "--lexical-weight",
        type=float,
        help="beam only: how much a start's BM25 score adds to its relevance",
    )
    q.add_argument(
        "--edge-weight",
        action="append",
        metavar="FIELD=W",
        help="beam only: weight a step along edges of FIELD by W, repeatable",
    )
    q.add_argument(
        "--score-field",
        help="scored only: a numeric metadata field to rank by (highest first; documents "
        "without it rank last); default: the similarity to the query",
    )
    q.add_argument("--filter", action="append", default=[], help="FIELD=VALUE, repeatable")
    q.add_argument("--root", action="append", help="an initial root id (depth 0), repeatable")
    q.add_argument(
        "--question-roots",
        type=int,
        metavar="N",
        help="also start from up to N documents whose titles the question names (the table's "
        "titles are read first); default: the recipe's (multihop: 3), else 0",
    )
    q.add_argument("--embedding", help="override the table's embedding (minilm, hash[:DIM])")
    q.add_argument(
        "--ann-overquery",
        type=int,
        default=1,
        help="ask Cassandra for N x k rows per vector search and keep the best k (default 1)",
    )
    q.add_argument(
        "--speculation",
        default="auto",
        help="edges asked ahead to save round trips: auto (default: wide over a link of 4 ms "
        "or more), on, wide, strategy, off, or a budget of queries; results never change",
    )
    q.add_argument("--json", action="store_true", help="print JSON instead of a table")
    q.add_argument("--stream", action="store_true", help="print each node as it is admitted")
    q.add_argument("--explain", action="store_true", help="print per-hop statistics")
    q.add_argument(
        "--html",
        metavar="FILE",
        help="also write a picture of the traversal to FILE: one self-contained HTML page "
        "(nodes by depth, followed edges labelled; hover for content); opens offline",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `hoprag` and its `load`, `query` and `stats` commands."""
    p = argparse.ArgumentParser(prog="hoprag", description=DESCRIPTION)
    p.add_argument("--version", action=VersionAction)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--keyspace", default=os.environ.get("HOPRAG_KEYSPACE", DEFAULT_KEYSPACE))
    common.add_argument(
        "--contact-points",
        default=None,
        help="host[:port],... (default: HOPRAG_CASSANDRA, then 127.0.0.1)",
    )
    env = os.environ.get
    common.add_argument(
        "--username",
        default=env("HOPRAG_CASSANDRA_USERNAME") or None,
        help="log in as this user (default: HOPRAG_CASSANDRA_USERNAME); the password comes "
        "from HOPRAG_CASSANDRA_PASSWORD, else a prompt",
    )
    for flag, var, what in (
        ("--tls-ca-file", "CA", "connect with TLS, trusting this PEM CA file"),
        ("--tls-cert-file", "CERT", "the PEM client certificate to present over TLS"),
        ("--tls-key-file", "KEY", "the PEM key of --tls-cert-file (if not in that file)"),
    ):
        common.add_argument(
            flag,
            default=env(f"HOPRAG_CASSANDRA_TLS_{var}_FILE") or None,
            help=f"{what} (default: HOPRAG_CASSANDRA_TLS_{var}_FILE)",
        )
    sub = p.add_subparsers(dest="cmd", required=True)

    ld = sub.add_parser("load", parents=[common], help="load a dataset or a JSONL file")
    ld.add_argument("dataset", choices=["foldoc", "films", "wordnet", "jsonl"])
    ld.add_argument("--path", help="the JSONL file (for `jsonl`); another data location")
    ld.add_argument("--limit", type=int, help="load at most this many documents")
    ld.add_argument("--table", help="table name (default: the dataset's name)")
    ld.add_argument("--embedding", default="minilm", help="minilm (default) or hash[:DIM]")
    ld.add_argument("--batch", type=int, default=LOAD_BATCH, help=argparse.SUPPRESS)
    ld.add_argument("--restart", action="store_true", help="ignore an earlier partial load")
    ld.add_argument(
        "--sync",
        action="store_true",
        help="make the table mirror the source: add what it lacks, rewrite what changed, "
        "delete what the source no longer has (and report how many of each)",
    )
    ld.add_argument(
        "--replication-factor",
        type=int,
        default=1,
        help="replication factor of the keyspace when it has to be created (default 1)",
    )
    ld.add_argument(
        "--consistency",
        help="consistency of the load's writes and progress reads, e.g. QUORUM or ALL on a "
        "cluster (default: the driver's LOCAL_ONE)",
    )
    ld.add_argument(
        "--link",
        metavar="FIELD",
        help="before loading, set FIELD to the ids of the documents whose titles each one's "
        "text mentions (hoprag.text.linking; follow it with --edges FIELD:$id)",
    )
    ld.add_argument(
        "--chunk",
        type=int,
        metavar="WORDS",
        help="split each text into passages of at most WORDS words (ids ID#0, ID#1, ...; "
        "fields parent, chunk, prev, next: follow with --edges parent:parent,next:$id,prev:$id)",
    )
    ld.add_argument(
        "--chunk-overlap",
        type=int,
        default=0,
        metavar="WORDS",
        help="with --chunk, start each passage with the last sentences of the one before, at "
        "most WORDS words (default 0)",
    )
    ld.add_argument(
        "--lexical",
        action="store_true",
        help="keep a lexical (BM25) index of the text for lexical starts (--lexical-k); a new "
        "table only (kept by every later load and store)",
    )
    ld.add_argument(
        "--holder-counts",
        action="store_true",
        help="keep how many documents hold each metadata value (CassandraStore.aholders); a "
        "new table only (kept by every later load, delete and store)",
    )
    ld.set_defaults(func=cmd_load)

    q = sub.add_parser(
        "query",
        parents=[common],
        help="traverse from a question",
        epilog=STRATEGY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_query_arguments(q)
    q.set_defaults(func=cmd_query)

    dl = sub.add_parser(
        "delete", parents=[common], help="delete documents of a table by id or by filter"
    )
    add_delete_arguments(dl)
    dl.set_defaults(func=cmd_delete)

    st = sub.add_parser("stats", parents=[common], help="documents and size of loaded tables")
    st.add_argument("--table")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_stats)

    fl = sub.add_parser("fields", help="declared fields: typed columns and the values catalogue")
    fsub = fl.add_subparsers(dest="fields_cmd", required=True)
    fd = fsub.add_parser(
        "declare",
        parents=[common],
        help="declare fields on an existing table (adds, backfills and indexes the columns)",
    )
    fd.add_argument("--table", required=True)
    fd.add_argument("pairs", nargs="+", metavar="FIELD=KIND", help="KIND: number, date, entity")
    fd.add_argument("--concurrency", type=int, default=64, help="backfill writes in flight")
    fd.add_argument(
        "--timeout", type=float, default=600.0, help="seconds to wait for the indexes to build"
    )
    fd.set_defaults(func=cmd_fields_declare)
    fls = fsub.add_parser("list", parents=[common], help="the declared fields of a table")
    fls.add_argument("--table", required=True)
    fls.add_argument("--json", action="store_true")
    fls.set_defaults(func=cmd_fields_list)

    ask = sub.add_parser(
        "ask",
        parents=[common],
        help="search the films with the agents' tool (exit 3: a follow-up question)",
    )
    add_ask_arguments(ask)
    ask.set_defaults(func=cmd_ask)

    mc = sub.add_parser(
        "mcp",
        parents=[common],
        help="serve the films tool (or your own, --tool) to MCP clients over stdio or HTTP",
    )
    mc.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve over MCP's streamable HTTP transport at http://HOST:PORT/mcp instead of "
        "stdio (HOST defaults to 127.0.0.1, loopback; PORT 0 picks a free port); stops on "
        "SIGINT or SIGTERM",
    )
    mc.add_argument("--table", help="the table searched (default films; required with --tool)")
    mc.add_argument(
        "--tool",
        metavar="MODULE:FACTORY",
        help="serve factory(store) -> hoprag.tools.SearchTool from this module (imported by "
        "module path; the current directory is searched too) instead of the films tool",
    )
    mc.add_argument("--embedding", help="override the table's embedding (minilm, hash[:DIM])")
    add_access_filter_argument(mc)
    mc.set_defaults(func=cmd_mcp, ann_overquery=1)

    from hoprag.cli.eval import add_eval_parser
    from hoprag.cli.link import add_link_parser

    add_link_parser(sub, common)
    add_eval_parser(sub, common)
    return p
