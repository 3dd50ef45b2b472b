"""`hoprag query`: a traversal from the command line, as a table, JSON or an HTML page."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from hoprag.cli.common import CliError, clip, make_embedding, open_session, warm_up
from hoprag.cli.options import filter_arg, make_strategy, parse_edges_arg
from hoprag.documents import Node
from hoprag.strategies import Strategy
from hoprag.sync import run_sync
from hoprag.termsafe import safe, safe_json
from hoprag.validation import check_ids

if TYPE_CHECKING:
    from hoprag.recipes import Recipe

# --- query ------------------------------------------------------------------------------------


def _finite(value: Any) -> Any:
    """A float score as JSON allows it (non-finite -> None, rounded); other values as they are."""
    if isinstance(value, float):
        return round(value, 6) if math.isfinite(value) else None
    return value


def node_row(node: Node) -> dict[str, Any]:
    """A JSON-ready summary of a node: id, depth, similarity score, path with the edges
    followed, metadata, and the strategy's scores (`_score`, `_path_score`, ...)."""
    steps = [
        {"via": getattr(e, "describe", lambda e=e: repr(e))(), "to": n}
        for e, n in zip(node.path.edges, node.path.nodes[1:], strict=True)
    ]
    return {
        "id": node.id,
        "depth": node.depth,
        "score": round(float(node.similarity_score), 6),
        "path": list(node.path.nodes),
        "steps": steps,
        "content": node.content,
        "metadata": dict(node.metadata),
        "scores": {k: _finite(v) for k, v in node.extra_metadata.items() if k.endswith("score")},
    }


def format_path(node: Node) -> str:
    """`a --keywords=x--> b --$id=c--> c`: the chain of followed edges."""
    parts = [safe(node.path.nodes[0])]
    for e, n in zip(node.path.edges, node.path.nodes[1:], strict=True):
        label = e.describe() if hasattr(e, "describe") else repr(e)
        parts.append(f"--{safe(label)}--> {safe(n)}")
    return " ".join(parts)


def print_table(nodes: Sequence[Node], out: TextIO = sys.stdout, width: int = 30) -> None:
    """A plain-text table of id, depth, similarity score and path, one line per node: ids and
    paths are terminal-safe (`safe`), so no stored character breaks a row."""
    ids = [safe(n.id) for n in nodes]
    idw = min(max([len(i) for i in ids] + [2]), width)
    out.write(f"{'id':<{idw}}  depth  score   path\n")
    for nid, n in zip(ids, nodes, strict=True):
        nid = nid if len(nid) <= idw else nid[: idw - 1] + "…"
        out.write(f"{nid:<{idw}}  {n.depth:>5}  {n.similarity_score:6.3f}  {format_path(n)}\n")


def _print_row(node: Node) -> None:
    print(f"{safe(node.id)}  {node.depth:>5}  {node.similarity_score:6.3f}  {format_path(node)}",
          flush=True)  # fmt: skip


def open_query_store(args: argparse.Namespace, session: Any, embedding: Any) -> Any:
    """The CassandraStore of --table, with the embedding named by --embedding or, failing
    that, the one the load catalogue recorded for the table."""
    from hoprag.stores.cassandra.catalog import LoadCatalog
    from hoprag.stores.cassandra.store import CassandraStore

    if embedding is None:
        entry = LoadCatalog(session, args.keyspace).get(args.table)
        if entry is None:
            raise CliError(
                f"{args.keyspace}.{args.table} has no hoprag_catalog entry; load it with "
                "`hoprag load` or name its --embedding",
                2,
            )
        embedding = make_embedding(entry.embedding)
    return CassandraStore(
        embedding,
        keyspace=args.keyspace,
        table=args.table,
        session=session,
        create_schema=False,
        ann_overquery=args.ann_overquery,
    )


async def run_traversal(
    args: argparse.Namespace, store: Any, strategy: Strategy, edges: Any, flt: Any
) -> tuple[list[Node], Any]:
    """Stream the traversal, printing each node as admitted with --stream (text output);
    returns the strategy's final list and the run's stats."""
    from hoprag.engine.traversal import astream

    live = args.stream and not args.json
    stream = astream(args.text, store=store, edges=edges, strategy=strategy, filter=flt,
                     initial_root_ids=args.root or (), speculation=args.speculation,
                     query_embedding=getattr(args, "vector", None))  # fmt: skip
    nodes = []
    if live:
        print("id  depth  score  path (as admitted)", flush=True)
    async with stream:
        async for node in stream:
            nodes.append(node)
            if live:
                _print_row(node)
    return strategy.finalize(nodes), stream.stats


def print_query_result(args: argparse.Namespace, nodes: list[Node], stats: Any) -> None:
    """--json: one object (query, nodes, stats, and `ranking` when a recipe ranked the
    traversal's candidates); otherwise the table (unless --stream printed the rows already)
    and, with --explain, the per-hop statistics and what the ranking kept."""
    ranked = getattr(args, "ranked", None)
    if args.json:
        doc = {"query": args.text, "nodes": [node_row(n) for n in nodes],
               "stats": dataclasses.asdict(stats)}  # fmt: skip
        if ranked is not None:
            doc["ranking"] = {"recipe": args.recipe, "candidates": sum(ranked),
                              "searched": ranked[1], "kept": len(nodes)}  # fmt: skip
        sys.stdout.write(safe_json(doc) + "\n")
        return
    if not args.stream:
        print_table(nodes)
    if args.explain:
        print()
        print(stats.explain())
        if ranked is not None:
            print(f"ranking: the best {len(nodes)} of {sum(ranked)} candidates, the "
                  f"traversal's {ranked[0]} and the re-query's {ranked[1]} "
                  f"(--recipe {args.recipe}, hoprag.reranking)")  # fmt: skip


def check_output_options(args: argparse.Namespace) -> None:
    """Refuse the text-output flags with --json, where they would be ignored, and an --html
    file that cannot be written (a directory, or in a directory that does not exist)."""
    if getattr(args, "html", None) is not None:
        check_html_path(args.html)
    if args.json:
        for flag, given in (("--stream", args.stream), ("--explain", args.explain)):
            if given:
                raise CliError(
                    f"{flag} applies to the text output, not --json (the JSON holds the "
                    "result in order and its per-hop stats)",
                    2,
                )


def check_html_path(path: str) -> None:
    """Refuse an --html FILE that is a directory or whose directory does not exist."""
    target = Path(path)
    if target.is_dir():
        raise CliError(f"--html {clip(safe(path))} is a directory; give a file name", 2)
    if not target.parent.is_dir():
        raise CliError(
            f"--html {clip(safe(path))}: the directory {clip(safe(str(target.parent)))} does "
            "not exist",
            2,
        )


def write_query_html(args: argparse.Namespace, nodes: list[Node], stats: Any) -> None:
    """--html FILE: the picture of the traversal (`hoprag.picture`), noted on stderr so that
    stdout keeps the table or the JSON alone."""
    from hoprag.picture import write_html
    from hoprag.stats import TraversalResult

    result = TraversalResult(nodes, stats)
    title = f"hoprag query on {args.keyspace}.{args.table}"
    path = write_html(result, args.html, title=title, query=args.text)
    print(f"wrote {safe(str(path))} ({len(nodes)} nodes)", file=sys.stderr)


def _edges_asked(args: argparse.Namespace) -> list[tuple[str, str]]:
    """--edges, else the edges of --recipe; CliError when neither is given."""
    from hoprag.cli.common import CliError
    from hoprag.recipes import recipe

    if args.edges is not None:
        return parse_edges_arg(args.edges)
    if getattr(args, "recipe", None):
        return list(recipe(args.recipe).edges)
    raise CliError("hoprag query needs --edges FROM:TO,... (or --recipe NAME)", 2)


def _question_roots_asked(args: argparse.Namespace) -> int:
    """--question-roots, else the recipe's; CliError when it is negative."""
    from hoprag.recipes import recipe

    given = args.question_roots
    if given is None:
        return recipe(args.recipe).question_roots if getattr(args, "recipe", None) else 0
    if given < 0:
        raise CliError(f"--question-roots must be 0 or more, got {given}", 2)
    return int(given)


async def add_question_roots(args: argparse.Namespace, store: Any) -> None:
    """With --question-roots N, add to --root the documents (at most N) whose titles the
    question names, found over every title the table holds; said on stderr."""
    from hoprag.recipes import atitles

    if not args.question_roots:
        return
    linker = await atitles(store)
    named = linker.links(args.text)[: args.question_roots]
    given = list(args.root or ())
    args.root = given + [i for i in named if i not in given]
    shown = ", ".join(safe(i) for i in named) if named else "none"
    print(
        f"hoprag: question roots (documents whose titles the question names): {shown}",
        file=sys.stderr,
    )


def ranked_recipe(args: argparse.Namespace) -> Any:
    """The --recipe when it ranks its candidates after the run (`Recipe.ranking`), else None."""
    from hoprag.recipes import recipe

    named = recipe(args.recipe) if getattr(args, "recipe", None) else None
    return named if named is not None and named.ranking is not None else None


async def rank_recipe_pool(
    args: argparse.Namespace,
    ranked: Recipe,
    store: Any,
    nodes: list[Node],
    edges: Any,
    flt: Any,
    k: int,
) -> list[Node]:
    """The recipe's `k` best of the traversal's `nodes` and its re-query's finds
    (`Recipe.arequery`, `Recipe.rank`); the pool's counts kept in `args.ranked`."""
    found = await ranked.arequery(args.text, nodes, store=store, edges=edges, filter=flt,
                                  query_embedding=getattr(args, "vector", None))  # fmt: skip
    args.ranked = (len(nodes), len(found))
    return ranked.rank(args.text, [*nodes, *found], args.root or (), k)


def check_query_args(args: argparse.Namespace) -> tuple[Any, Any, Strategy]:
    """Check every argument of `hoprag query` that needs no node (names, edges, filter,
    roots, strategy and its options, output flags): the edge function, filter and strategy."""
    from hoprag.edges import parse_edges
    from hoprag.engine.speculation import check_speculation
    from hoprag.stores.cassandra.guards import check_overquery
    from hoprag.stores.cassandra.names import check_name

    args.keyspace = check_name(args.keyspace, what="keyspace")
    args.table = check_name(args.table, what="table")
    edges = parse_edges(_edges_asked(args))
    parsed = filter_arg(args.filter)
    flt = None if parsed is None else parsed[1]  # compiled: checked once
    if args.root is not None:
        args.root = check_ids(args.root, what="--root")
    args.question_roots = _question_roots_asked(args)
    strategy = make_strategy(args)
    spec = args.speculation
    args.speculation = check_speculation(
        int(spec) if spec.isascii() and spec.isdigit() else spec, what="--speculation"
    )
    check_overquery(args.ann_overquery, what="--ann-overquery")
    check_output_options(args)
    if args.stream and ranked_recipe(args) is not None:
        raise CliError(
            f"--stream shows documents as the traversal admits them; --recipe {args.recipe} "
            "ranks its candidates after the traversal, so its answer comes at the end",
            2,
        )
    return edges, flt, strategy


FIELD_SAMPLE = 100
"""Documents nearest the question read to confirm that an edge's field is held by none."""


async def check_edge_fields(args: argparse.Namespace, store: Any, stats: Any) -> None:
    """When the traversal's edges name fields none of its documents holds, look at the
    `FIELD_SAMPLE` documents nearest the question too; fields still held by none are an
    error naming them and the fields there are (a warning with --allow-missing-fields)."""
    from hoprag.cli.common import CliError
    from hoprag.edges import describe_unheld
    from hoprag.search import asearch

    if not stats.unheld_fields:
        return
    sample = await asearch(args.text, store=store, k=FIELD_SAMPLE)
    held = set(stats.held_fields).union(*(n.metadata for n in sample))
    unheld = [f for f in stats.unheld_fields if f.split(".", 1)[0] not in held]
    if not unheld:
        return
    where = (
        f"the {stats.documents_read} documents the traversal read and the {len(sample)} "
        "nearest the question"
    )
    said = describe_unheld(unheld, held, where)
    if not args.allow_missing_fields:
        raise CliError(f"--edges: {said}; fix --edges, or pass --allow-missing-fields", 2)
    print(f"hoprag: warning: --edges: {said}", file=sys.stderr)


def cmd_query(args: argparse.Namespace) -> int:
    """`hoprag query`: check every argument, connect, load the embedding model (saying so on
    stderr), traverse, print."""
    from hoprag.embeddings.base import aembed_query_vector

    edges, flt, strategy = check_query_args(args)  # before connecting
    embedding = make_embedding(args.embedding) if args.embedding else None
    session = open_session(args)
    try:
        store = open_query_store(args, session, embedding)
        warm_up(store.embedding)  # the model's load, announced, outside the traversal's time
        run_sync(add_question_roots, args, store)
        ranked = ranked_recipe(args)
        k = strategy.select_k
        if ranked is not None:  # the traversal admits the ranking's whole pool
            strategy = dataclasses.replace(strategy, select_k=ranked.pool_size(k))
            # embedded once for the traversal and the re-query
            args.vector = run_sync(aembed_query_vector, store.embedding, args.text)
        nodes, stats = run_sync(run_traversal, args, store, strategy, edges, flt)
        if ranked is not None:
            nodes = run_sync(rank_recipe_pool, args, ranked, store, nodes, edges, flt, k)
        run_sync(check_edge_fields, args, store, stats)
        print_query_result(args, nodes, stats)
        if args.html is not None:
            write_query_html(args, nodes, stats)
        return 0
    finally:
        session.cluster.shutdown()
