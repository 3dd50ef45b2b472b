#!/usr/bin/env python
"""hoprag vs graph-retriever 0.8.0 on the same Cassandra node, and vs the physical floor.

    HOPRAG_CASSANDRA=127.0.0.1:9042 HF_HUB_OFFLINE=1 python scripts/bench.py \\
        [--quick] [--json bench-out/bench.json] [--chart docs/benchmarks.png] [--reload]

The same documents and embeddings are loaded twice into keyspace `hoprag_bench`: into hoprag's
table (`CassandraStore.aadd`) and into LangChain's `Cassandra` vector store
(`langchain_community.vectorstores.Cassandra.add_documents` after langchain-graph-retriever's
`ShreddingTransformer`, as its `CassandraAdapter` requires). Loaded tables are kept and reused
(a marker row in `hoprag_bench.bench_loads` records a complete load, and a few documents are
read back by primary key); `--reload` loads again.

Data: FOLDOC in full with MiniLM embeddings (cached on disk by `CachedEmbedding`), and a
WordNet sample (`--wordnet N`, default 50,000) with `HashEmbedding(384)`, a deterministic
non-semantic embedding of MiniLM's dimension, for growth with size. `--quick`: a FOLDOC subset
with `HashEmbedding(384)`, fewer queries and cases, a small load test; under five minutes.

Per case (strategy, depth, adjacent_k, 1 or 16 concurrent traversals), for both sides: median
and p95 latency over every (query, repetition) after a warm-up pass, queries issued and rows
read per traversal, whether both select the same ids (every query; where they differ,
graph-retriever is rerun on the same table with its batch-depth bug corrected, and the
difference counts as that bug when it then selects hoprag's ids); for hoprag the time to
the first streamed node (`astream`) against the start search alone (measured in pairs, each
after the same 10 ms pause), and the floor:
(depth + 1) x the median latency of one SAI query of the traversal's shape
(`tokens CONTAINS ? ORDER BY embedding ANN OF ? LIMIT k` on hoprag's table, for the metadata
edges of each query's start documents), measured in the same run. Query embeddings are
precomputed and looked up (free) for both sides. graph-retriever runs with the driver's own
vector codec (as its users run it); hoprag's numpy codec is installed only around hoprag calls.
Around each side's measured batches: this process's CPU time, the local node's JVM CPU time
(`/proc`, for a node `scripts/cassandra` started), the full garbage collections, and how busy
the two together kept the machine's cores. The harness's own objects (datasets, vectors) are
frozen out of the cyclic garbage collector (`gc.freeze`) before anything is measured.

Bulk load: documents/second of `CassandraStore.aadd` vs `Cassandra.add_documents` into fresh
scratch tables (`scripts/bench_load.py`'s runners).

Output: a text report, `--json` (per case `ours_p50_ms`, `peer_p50_ms`, `floor_ms`,
`same_ids`, every hoprag traversal's ids, queries, rows and rounds in `ours_traversals`, ...)
and a `--chart` PNG (matplotlib, installed with the `bench` extra). Two versions' runs over the
same tables compare with `scripts/compare_eval.py --bench`."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
from benchlib import (
    LookupEmbeddings,
    load_average,
    local_node_pids,
    machine_info,
    node_pids_or_say_why_not,
    summary_ms,
    text_table,
)

import hoprag
from hoprag import Document, MetadataEdge
from hoprag.datasets import load
from hoprag.stores.cassandra import vectors
from hoprag.stores.cassandra.schema import sstable_count
from hoprag.stores.cassandra.store import CassandraStore

KEYSPACE = "hoprag_bench"
DIM = 384
MARKS = f"{KEYSPACE}.bench_loads"

FOLDOC_QUERIES = [
    "programming language with lazy evaluation",
    "garbage collection",
    "TCP/IP network protocol",
    "relational database query language",
    "operating system kernel scheduling",
    "lambda calculus",
    "object-oriented programming",
    "compiler optimisation",
    "public key cryptography",
    "virtual memory paging",
    "regular expression",
    "distributed file system",
    "Unix shell",
    "hypertext markup",
    "computer virus",
    "floating point arithmetic",
    "parallel processing",
    "artificial intelligence expert system",
    "graphical user interface",
    "error correcting code",
]
WORDNET_QUERIES = [
    "a domestic animal kept as a pet",
    "a building where people live",
    "a tool for cutting wood",
    "a large body of salt water",
    "a musical instrument with strings",
    "a vehicle with four wheels",
    "a person who teaches at a school",
    "a disease caused by a virus",
    "a unit of measurement of length",
    "a plant that grows in the desert",
    "a container for holding liquids",
    "an officer in the army",
    "a sweet food made from sugar",
    "a piece of furniture to sit on",
    "a bird that cannot fly",
    "a religious ceremony",
    "a metal used for coins",
    "a game played with a ball",
    "a written record of events",
    "a storm with strong winds",
]


# --- data -------------------------------------------------------------------------------------
@dataclasses.dataclass
class Dataset:
    """Documents with their embeddings, the edges to follow and the query set."""

    name: str  # table suffix, e.g. foldoc_all_minilm
    label: str
    docs: list[Document]
    edges: list[tuple[str, str]]
    list_fields: set[str]
    queries: list[str]
    query_vectors: dict[str, list[float]]
    embedding_note: str


def _list_fields(docs: Sequence[Document]) -> set[str]:
    return {k for d in docs for k, v in d.metadata.items() if isinstance(v, list)}


def make_dataset(
    kind: str, limit: int | None, embedding: str, n_queries: int, extra_edges: Sequence = ()
) -> Dataset:
    """Load `kind` (foldoc or wordnet), embed documents and queries with `embedding`
    ("minilm": cached MiniLM; "hash": HashEmbedding(384))."""
    from hoprag.datasets import DATASETS

    docs = list(load(kind, limit=limit))
    queries = (FOLDOC_QUERIES if kind == "foldoc" else WORDNET_QUERIES)[:n_queries]
    t0 = time.perf_counter()
    if embedding == "minilm":
        from hoprag.embeddings.cache import CachedEmbedding
        from hoprag.embeddings.minilm import MiniLMEmbedding

        model = MiniLMEmbedding()
        cached = CachedEmbedding(model)
        vecs = cached.embed_documents([d.content for d in docs])
        qvecs = model.embed_documents(queries)
        note = (
            "MiniLM-L6-v2 (384-d), document vectors from the on-disk cache "
            f"({cached.hits} hits, {cached.misses} embedded now)"
        )
        cached.close()
    else:
        from hoprag.embeddings import HashEmbedding

        model = HashEmbedding(DIM)
        vecs = model.embed_documents([d.content for d in docs])
        qvecs = model.embed_documents(queries)
        note = "HashEmbedding(384): deterministic, non-semantic (feature hashing of words)"
    for d, v in zip(docs, vecs, strict=True):
        d.embedding = [float(x) for x in v]
    print(f"  {kind}: {len(docs)} documents embedded in {time.perf_counter() - t0:.1f} s")
    size = "all" if limit is None else str(limit)
    return Dataset(
        name=f"{kind}_{size}_{embedding}",
        label=f"{kind} ({len(docs):,} docs, {embedding})",
        docs=docs,
        edges=[*DATASETS[kind].edges, *extra_edges],
        list_fields=_list_fields(docs),
        queries=queries,
        query_vectors=dict(zip(queries, qvecs, strict=True)),
        embedding_note=note,
    )


def _fingerprint(ds: Dataset) -> str:
    import hashlib

    h = hashlib.sha256()
    for d in ds.docs:
        h.update(d.id.encode())
        h.update(str(d.embedding[:4] if d.embedding else "").encode())
    return h.hexdigest()[:16]


def _marked(session: Any, table: str, fp: str, n: int, probe_ids: Sequence[str]) -> bool:
    """Whether a complete load of these documents is recorded for `table` and the table still
    holds them (probed by primary key: a marker alone survived a lost table once)."""
    row = session.execute(f"SELECT docs, fingerprint FROM {MARKS} WHERE name = %s", (table,)).one()
    if row is None or row[0] != n or row[1] != fp:
        return False
    key = "row_id" if table.startswith("lc_") else "id"
    try:
        for doc_id in probe_ids:
            q = f"SELECT {key} FROM {KEYSPACE}.{table} WHERE {key} = %s"
            if session.execute(q, (doc_id,)).one() is None:
                return False
    except Exception:  # the table itself is gone
        return False
    return True


def _mark(session: Any, table: str, fp: str, n: int, seconds: float) -> None:
    session.execute(
        f"INSERT INTO {MARKS} (name, docs, fingerprint, load_seconds) VALUES (%s, %s, %s, %s)",
        (table, n, fp, seconds),
    )


def load_langchain(session: Any, table: str, ds: Dataset, batch_size: int = 16) -> None:
    """`Cassandra.add_documents` of the shredded documents (blocking)."""
    from langchain_community.vectorstores import Cassandra
    from langchain_core.documents import Document as LCDocument
    from langchain_graph_retriever.transformers import ShreddingTransformer

    emb = LookupEmbeddings({d.content: d.embedding for d in ds.docs if d.embedding})
    lc = Cassandra(embedding=emb, session=session, keyspace=KEYSPACE, table_name=table)
    shredded = ShreddingTransformer().transform_documents(
        [LCDocument(id=d.id, page_content=d.content, metadata=d.metadata) for d in ds.docs]
    )
    lc.add_documents(list(shredded), batch_size=batch_size)


async def prepare_tables(session: Any, ds: Dataset, reload: bool) -> dict[str, Any]:
    """hoprag's table and LangChain's table for `ds`, loaded unless a marker shows a complete
    earlier load of the same documents; returns the stores and load figures."""
    fp, n = _fingerprint(ds), len(ds.docs)
    probe = [ds.docs[0].id, ds.docs[n // 2].id, ds.docs[-1].id]
    ours_t, lc_t = f"hr_{ds.name}", f"lc_{ds.name}"
    info: dict[str, Any] = {"docs": n}
    ours = CassandraStore(
        LookupEmbeddings(ds.query_vectors),
        keyspace=KEYSPACE,
        table=ours_t,
        session=session,
        dimension=DIM,
    )
    await ours.asetup()
    if reload or not _marked(session, ours_t, fp, n, probe):
        t0 = time.perf_counter()
        await ours.aadd(ds.docs)
        secs = time.perf_counter() - t0
        await anyio.to_thread.run_sync(_mark, session, ours_t, fp, n, secs)
        print(f"  loaded {ours_t}: {n} docs in {secs:.0f} s ({n / secs:.0f} docs/s)")
        info["ours_load_docs_per_s"] = n / secs
    else:
        print(f"  reused {ours_t} ({n} docs)")
    if reload or not _marked(session, lc_t, fp, n, probe):
        vectors.uninstall()
        t0 = time.perf_counter()
        await anyio.to_thread.run_sync(load_langchain, session, lc_t, ds)
        secs = time.perf_counter() - t0
        vectors.install()
        await anyio.to_thread.run_sync(_mark, session, lc_t, fp, n, secs)
        print(f"  loaded {lc_t}: {n} docs in {secs:.0f} s ({n / secs:.0f} docs/s)")
        info["peer_load_docs_per_s"] = n / secs
    else:
        print(f"  reused {lc_t} ({n} docs)")
    info["sstables"] = await anyio.to_thread.run_sync(level_tables, session, [ours_t, lc_t])
    print(f"  SSTables: {info['sstables']['after']}")
    info["ours"] = ours
    info["peer"] = make_adapter(session, lc_t, ds)
    # hoprag over LangChain's own table: the same ANN index as graph-retriever's, for the ids.
    info["ours_on_peer_table"] = CassandraStore.from_langchain_table(
        LookupEmbeddings(ds.query_vectors),
        keyspace=KEYSPACE,
        table=lc_t,
        session=session,
        list_fields=ds.list_fields,
        create_schema=False,
    )
    await info["ours_on_peer_table"].asetup()
    return info


def level_tables(session: Any, tables: list[str]) -> dict[str, Any]:
    """Put both tables of a pair on the same footing: when either is spread over more than one
    SSTable, ask the local node (`scripts/cassandra nodetool compact`) for a major compaction of
    each, which rebuilds its SAI indexes as one segment. Returns the counts before and after;
    a node `scripts/cassandra` did not start (HOPRAG_CASSANDRA elsewhere, Docker) is left as it
    is and reported."""
    before = {t: sstable_count(session, KEYSPACE, t) for t in tables}
    out: dict[str, Any] = {"before": before, "after": before, "compacted": False}
    if all(n <= 1 for n in before.values()):
        return out
    tool = Path(__file__).resolve().parent / "cassandra"
    if not local_node_pids(session):
        print(f"  SSTables {before}: the node is not one scripts/cassandra started; not compacted")
        return out
    try:
        for t in tables:
            if before[t] <= 1:
                continue
            t0 = time.perf_counter()
            print(f"  compacting {t} ({before[t]} SSTables) ...", flush=True)
            done = subprocess.run(
                [sys.executable, str(tool), "nodetool", "compact", KEYSPACE, t],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                why = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
                print(f"  could not compact {t}: {why[0]}")
                return out
            print(f"  compacted {t} in {time.perf_counter() - t0:.0f} s")
        out["compacted"] = True
        return out
    finally:
        out["after"] = {t: sstable_count(session, KEYSPACE, t) for t in tables}


# --- graph-retriever side ---------------------------------------------------------------------
def make_adapter(session: Any, table: str, ds: Dataset) -> Any:
    """langchain-graph-retriever's `CassandraAdapter` over LangChain's table, counting the
    CQL queries it issues (one per search, one per id read) and the rows they return."""
    from langchain_community.vectorstores import Cassandra
    from langchain_graph_retriever.adapters.cassandra import CassandraAdapter
    from langchain_graph_retriever.transformers import ShreddingTransformer

    class CountingCassandraAdapter(CassandraAdapter):
        queries = 0
        rows = 0

        async def _asearch(self, **kwargs: Any) -> Any:
            docs = await super()._asearch(**kwargs)
            self.queries += 1
            self.rows += len(docs)
            return docs

        async def _aget(self, ids: Sequence[str], filter: Any = None, **kwargs: Any) -> Any:
            docs = await super()._aget(ids, filter, **kwargs)
            self.queries += len(ids)
            self.rows += len(docs)
            return docs

    vs = Cassandra(
        embedding=LookupEmbeddings(ds.query_vectors),
        session=session,
        keyspace=KEYSPACE,
        table_name=table,
    )
    return CountingCassandraAdapter(
        vs, shredder=ShreddingTransformer(), nested_metadata_fields=ds.list_fields
    )


# --- cases ------------------------------------------------------------------------------------
def _similarity(node: Any) -> float:
    return float(node.similarity_score)


@dataclasses.dataclass(frozen=True)
class Case:
    """One benchmark case: a strategy with its parameters and how many traversals run at once."""

    name: str
    kind: str  # eager | mmr | scored
    params: dict[str, Any]
    concurrency: int = 1

    @property
    def depth(self) -> int:
        return int(self.params["max_depth"])

    def strategies(self) -> tuple[Any, Any]:
        """(hoprag strategy, graph-retriever strategy) with the same parameters."""
        import graph_retriever.strategies as gr

        if self.kind == "eager":
            return hoprag.Eager(**self.params), gr.Eager(**self.params)
        if self.kind == "mmr":
            return hoprag.Mmr(**self.params), gr.Mmr(**self.params)
        return (
            hoprag.Scored(scorer=_similarity, **self.params),
            gr.Scored(scorer=_similarity, **self.params),
        )


def _eager(d: int, k: int = 10, c: int = 1) -> Case:
    p = {"select_k": 100, "start_k": 4, "adjacent_k": k, "max_depth": d}
    return Case(f"Eager d{d} k{k}" + (f" x{c}" if c > 1 else ""), "eager", p, c)


def _mmr(k: int = 10, c: int = 1) -> Case:
    p = {"select_k": 10, "start_k": 4, "adjacent_k": k, "max_depth": 2, "lambda_mult": 0.5}
    return Case(f"Mmr d2 k{k}" + (f" x{c}" if c > 1 else ""), "mmr", p, c)


def _scored(k: int = 10) -> Case:
    p = {"select_k": 10, "start_k": 4, "adjacent_k": k, "max_depth": 2}
    return Case(f"Scored d2 k{k}", "scored", p)


def cases_for(quick: bool, scale: bool) -> list[Case]:
    """The case list: everything for FOLDOC, Eager/Mmr at depth 2 for the scale set."""
    if scale:
        return [_eager(2), _mmr()]
    if quick:
        return [_eager(1), _eager(2), _mmr(), _scored(), _eager(2, c=16)]
    return [
        _eager(1),
        _eager(2),
        _eager(3),
        _eager(2, 50),
        _mmr(),
        _mmr(50),
        _scored(),
        _eager(2, c=16),
        _mmr(c=16),
    ]


# --- measuring ----------------------------------------------------------------------------------
@dataclasses.dataclass
class Sample:
    """One traversal: wall seconds, time to first node (hoprag only), queries, rows, ids."""

    seconds: float
    ids: list[str]
    queries: int
    rows: int
    first: float | None = None
    first_stats: float | None = None
    hops: int = 0


class CpuMeter:
    """CPU seconds spent by this process (every thread: the event loop, the driver's I/O
    thread, and the delay proxy when there is one) and by the local Cassandra JVMs (from
    /proc/PID/stat) over a span of time. Node CPU is None when the session talks to a node
    `scripts/cassandra` did not start, or when /proc cannot be read."""

    def __init__(self, session: Any) -> None:
        self.pids = node_pids_or_say_why_not(session)
        self.cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def node_seconds(self) -> float | None:
        if not self.pids:
            return None
        total = 0
        try:
            for pid in self.pids:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime + stime, in ticks
        except (OSError, IndexError, ValueError):
            return None
        return total / self._tick

    def read(self) -> tuple[float, float, float | None, int]:
        """(wall s, client CPU s, node CPU s or None, full cyclic-GC collections so far)."""
        return (
            time.perf_counter(),
            time.process_time(),
            self.node_seconds(),
            gc.get_stats()[2]["collections"],
        )


@dataclasses.dataclass
class CpuTotals:
    """CPU seconds (and full garbage collections) summed over measured batches of one side."""

    wall: float = 0.0
    client: float = 0.0
    node: float | None = 0.0
    traversals: int = 0
    full_gcs: int = 0

    def add(
        self,
        before: tuple[float, float, float | None, int],
        after: tuple[float, float, float | None, int],
        n: int,
    ) -> None:
        self.wall += after[0] - before[0]
        self.client += after[1] - before[1]
        self.full_gcs += after[3] - before[3]
        if self.node is not None and before[2] is not None and after[2] is not None:
            self.node += after[2] - before[2]
        else:
            self.node = None
        self.traversals += n

    def per_traversal_ms(self) -> tuple[float, float | None]:
        n = max(self.traversals, 1)
        return self.client / n * 1e3, None if self.node is None else self.node / n * 1e3

    def busy(self, cores: int) -> float | None:
        """Share of the machine's CPU time (all cores) that client and node used over the
        batches: near 1, the side keeps every core busy and only less work would make it
        faster here; well below 1, it mostly waits (round trips, one query at a time)."""
        if self.node is None or self.wall <= 0:
            return None
        return (self.client + self.node) / (self.wall * cores)


async def run_ours(store: CassandraStore, ds: Dataset, case: Case, q: str) -> Sample:
    """One hoprag traversal through `astream` (first node timed as it arrives)."""
    strategy = case.strategies()[0]
    vectors.install()
    t0 = time.perf_counter()
    first = None
    stream = hoprag.astream(
        None,
        store=store,
        edges=ds.edges,
        strategy=strategy,
        query_embedding=ds.query_vectors[q],
    )
    nodes = []
    async for node in stream:
        if first is None:
            first = time.perf_counter() - t0
        nodes.append(node)
    secs = time.perf_counter() - t0
    final = strategy.finalize(nodes)
    st = stream.stats
    rows = st.rows_read  # counted once, when the store returned them
    round_trips = st.rounds  # a scoped start counts every round it waited for
    ids = [n.id for n in final]
    return Sample(secs, ids, st.total_queries, rows, first, st.first_node_seconds, round_trips)


def _gr_queries(adapter: Any) -> tuple[int, int]:
    return adapter.queries, adapter.rows


async def run_peer(adapter: Any, ds: Dataset, case: Case, q: str) -> Sample:
    """One graph-retriever traversal (`graph_retriever.atraverse` over the adapter)."""
    import graph_retriever

    strategy = case.strategies()[1]
    vectors.uninstall()
    q0, r0 = _gr_queries(adapter)
    t0 = time.perf_counter()
    nodes = await graph_retriever.atraverse(q, edges=ds.edges, strategy=strategy, store=adapter)
    secs = time.perf_counter() - t0
    q1, r1 = _gr_queries(adapter)
    return Sample(secs, [n.id for n in nodes], q1 - q0, r1 - r0)


async def timed_batch(
    fn: Callable[[str], Any], queries: Sequence[str], concurrency: int
) -> list[Sample]:
    """Run `fn(q)` for every query, `concurrency` at a time (1: one after another)."""
    if concurrency == 1:
        return [await fn(q) for q in queries]
    out: list[Sample] = []
    for i in range(0, len(queries), concurrency):
        out.extend(await asyncio.gather(*(fn(q) for q in queries[i : i + concurrency])))
    return out


async def edge_samples(
    store: CassandraStore, ds: Dataset, case: Case
) -> dict[str, list[MetadataEdge]]:
    """Per query, up to 8 metadata edges of its start documents (the first hop's queries)."""
    start_k = case.params["start_k"]
    fields = {inc for out, inc in ds.edges if inc != "$id"}
    vectors.install()
    edge_sets: dict[str, list[MetadataEdge]] = {}
    for q in ds.queries:
        hits = await store.asearch(ds.query_vectors[q], k=start_k, include_embeddings=False)
        edges: list[MetadataEdge] = []
        for h in hits:
            for out, inc in ds.edges:
                if inc not in fields:
                    continue
                value = h.document.id if out == "$id" else h.document.metadata.get(out)
                for v in value if isinstance(value, list) else [value]:
                    if v is not None:
                        edges.append(MetadataEdge(inc, v))
        edge_sets[q] = edges[:8]
    return edge_sets


async def single_queries(
    store: CassandraStore,
    ds: Dataset,
    case: Case,
    edge_sets: dict[str, list[MetadataEdge]],
    search: list[float],
    adjacent: list[float],
    burst: list[tuple[float, int]] | None = None,
) -> None:
    """Append the latencies of one start search (`asearch`, k = start_k, its query prepared
    as a new question's is) and of one SAI edge query (`aadjacent`, k = adjacent_k) per
    sampled edge, one at a time, through that run's prepared query (as a traversal's edges
    are), with the strategy's embedding needs, for every query; and (`burst`) the time of all
    those edge queries at once (`aadjacent_many`), which shows what a hop's fan-out costs the
    node."""
    include = case.strategies()[0].needs_embeddings
    k, start_k = case.params["adjacent_k"], case.params["start_k"]
    vectors.install()
    for q in ds.queries:
        qv = list(ds.query_vectors[q])  # fresh, as in a traversal (see `first_node_pairs`)
        t0 = time.perf_counter()
        prepared = await store.aprepare(qv, include_embeddings=include, max_concurrency=128)
        _documents(await prepared.asearch(k=start_k))
        search.append(time.perf_counter() - t0)
        for e in edge_sets[q]:
            t0 = time.perf_counter()
            _documents(await prepared.aadjacent(e, k=k))
            adjacent.append(time.perf_counter() - t0)
        if burst is not None and edge_sets[q]:
            t0 = time.perf_counter()
            got = await prepared.aadjacent_many(edge_sets[q], k=k)
            for hits in got:
                _documents(hits)
            burst.append((time.perf_counter() - t0, len(edge_sets[q])))


def _documents(hits: Sequence[Any]) -> None:
    """Read every hit's document, as a caller of the query would: the store decodes a row
    when its document is first used, and a query's time includes delivering documents."""
    for hit in hits:
        hit.document  # noqa: B018


SETTLE_S = 0.01
NOT_JSON = ("ours", "peer", "meter", "ours_on_peer_table")  # live objects in `tables`
PROXY_HOST = "127.0.0.14"  # --latency-ms: the delay proxy's address (the latency test uses .12)
TESTS_DIR = str(Path(__file__).resolve().parents[1] / "tests")  # where delay_proxy.py lives


async def first_node_pairs(
    store: CassandraStore, ds: Dataset, case: Case, search: list[float], first: list[float]
) -> None:
    """Per query, the start search alone (`asearch`, k = start_k) and hoprag's time to its
    first streamed node, each after the same short pause (`SETTLE_S`), so that both start
    from the same state: a request sent right after a burst of queries was measured ~1 ms
    slower than one sent in a loop of single queries, which would bias the comparison."""
    strategy = case.strategies()[0]
    vectors.install()
    for q in ds.queries:
        # A fresh list, as a new question's embedding is; `store.asearch` prepares it (checks
        # and packs the vector) exactly as a traversal's start does.
        qv = list(ds.query_vectors[q])
        await asyncio.sleep(SETTLE_S)
        t0 = time.perf_counter()
        hits = await store.asearch(
            qv, k=case.params["start_k"], include_embeddings=strategy.needs_embeddings
        )
        _documents(hits)
        search.append(time.perf_counter() - t0)
        await asyncio.sleep(SETTLE_S)
        sample = await run_ours(store, ds, case, q)
        if sample.first is not None:
            first.append(sample.first)


async def measure_case(
    tables: dict[str, Any], ds: Dataset, case: Case, reps: int
) -> dict[str, Any]:
    """Both sides of one case, interleaved per repetition, after a warm-up pass."""
    ours, peer = tables["ours"], tables["peer"]
    qs = ds.queries
    c = case.concurrency
    if c > 1:  # enough traversals to fill the concurrency
        qs = [qs[i % len(qs)] for i in range(max(c, len(qs)))]

    async def o(q: str) -> Sample:
        return await run_ours(ours, ds, case, q)

    async def p(q: str) -> Sample:
        return await run_peer(peer, ds, case, q)

    await timed_batch(o, qs, c)  # warm-up: prepared statements, caches, JIT
    await timed_batch(p, qs, c)
    edge_sets = await edge_samples(ours, ds, case)
    ours_s: list[Sample] = []
    peer_s: list[Sample] = []
    search: list[float] = []
    adjacent: list[float] = []
    burst: list[tuple[float, int]] = []
    pair_search: list[float] = []
    pair_first: list[float] = []
    meter: CpuMeter = tables["meter"]
    cpu = {"ours": CpuTotals(), "peer": CpuTotals()}

    async def batch(side: str) -> list[Sample]:
        before = meter.read()
        got = await timed_batch(o if side == "ours" else p, qs, c)
        cpu[side].add(before, meter.read(), len(got))
        return got

    for rep in range(reps):  # interleaved, so that all three see the same machine load
        first, second = ("ours", "peer") if rep % 2 == 0 else ("peer", "ours")
        a = await batch(first)
        await single_queries(ours, ds, case, edge_sets, search, adjacent, burst)
        await first_node_pairs(ours, ds, case, pair_search, pair_first)
        b = await batch(second)
        ours_s.extend(a if first == "ours" else b)
        peer_s.extend(b if first == "ours" else a)
    ours_client, ours_node = cpu["ours"].per_traversal_ms()
    peer_client, peer_node = cpu["peer"].per_traversal_ms()
    # The ids: hoprag over LangChain's table (the same ANN index graph-retriever queries) vs
    # graph-retriever's first repetition (query i at index i on both sides). Two separately
    # built SAI vector indexes can answer an ANN query differently (approximate search), so
    # hoprag's own table is compared too, for information.
    on_lc = await timed_batch(
        lambda q: run_ours(tables["ours_on_peer_table"], ds, case, q), qs[: len(ds.queries)], 1
    )
    n_q = len(on_lc)
    same = [sorted(on_lc[i].ids) == sorted(peer_s[i].ids) for i in range(n_q)]
    same_order = [on_lc[i].ids == peer_s[i].ids for i in range(n_q)]
    same_own = [sorted(ours_s[i].ids) == sorted(peer_s[i].ids) for i in range(n_q)]
    ou, pe = summary_ms([s.seconds for s in ours_s]), summary_ms([s.seconds for s in peer_s])
    in_batch = summary_ms([s.first for s in ours_s if s.first is not None])
    first, srch = summary_ms(pair_first), summary_ms(pair_search)
    adj = summary_ms(adjacent)
    floor = (case.depth + 1) * adj["p50"]
    diffs = [
        {"query": qs[i], "ours": on_lc[i].ids, "peer": peer_s[i].ids}
        for i in range(n_q)
        if not same[i]
    ]
    explained = [await explain_difference(tables, ds, case, d) for d in diffs]
    return {
        "case": case.name,
        "dataset": ds.label,
        "strategy": case.kind,
        "params": case.params,
        "concurrency": c,
        "traversals": len(ours_s),
        "ours_p50_ms": ou["p50"],
        "ours_p95_ms": ou["p95"],
        "peer_p50_ms": pe["p50"],
        "peer_p95_ms": pe["p95"],
        "speedup": pe["p50"] / ou["p50"],
        "ttfn_p50_ms": first["p50"],
        "ttfn_p95_ms": first["p95"],
        "start_search_p50_ms": srch["p50"],
        "ttfn_ratio": first["p50"] / srch["p50"],
        "ttfn_in_batch_p50_ms": in_batch["p50"],
        "start_search_in_loop_p50_ms": summary_ms(search)["p50"],
        "single_query_p50_ms": adj["p50"],
        "single_query_p95_ms": adj["p95"],
        "burst_p50_ms": summary_ms([b[0] for b in burst])["p50"],
        "burst_queries": statistics.mean(b[1] for b in burst) if burst else 0,
        "ours_hops": statistics.mean(s.hops for s in ours_s),
        "floor_ms": floor,
        "floor_ratio": ou["p50"] / floor,
        "cores": meter.cores,
        "ours_client_cpu_ms": ours_client,
        "ours_node_cpu_ms": ours_node,
        "peer_client_cpu_ms": peer_client,
        "peer_node_cpu_ms": peer_node,
        "ours_full_gcs": cpu["ours"].full_gcs,
        "peer_full_gcs": cpu["peer"].full_gcs,
        "ours_cpu_busy": cpu["ours"].busy(meter.cores),
        "peer_cpu_busy": cpu["peer"].busy(meter.cores),
        "ours_queries": statistics.mean(s.queries for s in ours_s),
        "peer_queries": statistics.mean(s.queries for s in peer_s),
        "ours_rows": statistics.mean(s.rows for s in ours_s),
        "peer_rows": statistics.mean(s.rows for s in peer_s),
        "ours_nodes": statistics.mean(len(s.ids) for s in ours_s),
        "same_ids": all(same),
        "same_ids_count": f"{sum(same)}/{n_q}",
        "same_order": all(same_order),
        "differences_explained": all(explained),
        "explained_count": sum(explained),
        "same_ids_own_table_count": f"{sum(same_own)}/{n_q}",
        "ours_on_peer_table_p50_ms": summary_ms([s.seconds for s in on_lc])["p50"],
        "id_differences": diffs[:3],
        # Every measured traversal of hoprag's own table, in order (repetition by repetition,
        # query by query), for a run of another version: compare_eval.py --bench.
        "ours_traversals": [
            {"query": q, "ids": s.ids, "queries": s.queries, "rows": s.rows, "rounds": s.hops}
            for q, s in zip(qs * reps, ours_s, strict=True)
        ],
    }


async def run_peer_per_node_depth(adapter: Any, ds: Dataset, case: Case, q: str) -> Sample:
    """graph-retriever with its batch-depth bug corrected for this one call: it gives a whole
    batch of newly found nodes the depth of the batch's first node; here each node of a batch
    is converted on its own, so each gets its own depth. Nothing else changes (same table,
    same queries, same strategy code). Patched on the class for the call only; the bench runs
    this with no other traversal in flight."""
    import graph_retriever.traversal as grt

    original = grt._Traversal._contents_to_new_nodes

    def per_node(self: Any, contents: Any, *, depth: int | None = None) -> Any:
        if depth is not None:
            return original(self, contents, depth=depth)
        nodes: list[Any] = []
        for content in contents:
            nodes.extend(original(self, [content]))
        return nodes

    grt._Traversal._contents_to_new_nodes = per_node  # type: ignore[method-assign]
    try:
        return await run_peer(adapter, ds, case, q)
    finally:
        grt._Traversal._contents_to_new_nodes = original  # type: ignore[method-assign]


async def explain_difference(tables: dict[str, Any], ds: Dataset, case: Case, diff: dict) -> bool:
    """Whether a difference in ids is graph-retriever's batch-depth bug (DESIGN §2): rerun
    graph-retriever on the same table with per-node depths; explained when it then selects
    hoprag's ids. Otherwise, for diagnosis, the exact in-memory runs are recorded too."""
    fixed = await run_peer_per_node_depth(tables["peer"], ds, case, diff["query"])
    diff["peer_per_node_depth"] = fixed.ids
    if sorted(fixed.ids) == sorted(diff["ours"]):
        diff["explained_by"] = "graph-retriever batch-depth bug"
        return True
    diff["memory_agrees"] = reference_explains(tables, ds, case, diff)
    return False


def reference_explains(tables: dict[str, Any], ds: Dataset, case: Case, diff: dict) -> bool:
    """Whether a difference in ids is the in-memory references' own: hoprag on MemoryStore
    gives hoprag's Cassandra ids and graph-retriever on its InMemory adapter gives its
    Cassandra ids (exact search on both; so the Cassandra runs are right, and the two differ
    by semantics, e.g. graph-retriever's batch-depth bug that DESIGN §2 lists)."""
    from graph_retriever import Content
    from graph_retriever import traverse as gr_traverse
    from graph_retriever.adapters.in_memory import InMemory

    from hoprag.stores import MemoryStore

    if "memory" not in tables:
        emb = LookupEmbeddings(ds.query_vectors)
        mem = MemoryStore(embedding=emb)
        mem.add(ds.docs)
        contents = [
            Content(id=d.id, content=d.content, embedding=d.embedding or [], metadata=d.metadata)
            for d in ds.docs
        ]
        tables["memory"] = (mem, InMemory(emb, contents))
    mem, gr_mem = tables["memory"]
    ours, peer = case.strategies()
    q = diff["query"]
    mine = [n.id for n in hoprag.traverse(q, store=mem, edges=ds.edges, strategy=ours)]
    theirs = [n.id for n in gr_traverse(q, store=gr_mem, edges=ds.edges, strategy=peer)]
    diff["memory_ours"], diff["memory_peer"] = mine, theirs
    return sorted(mine) == sorted(diff["ours"]) and sorted(theirs) == sorted(diff["peer"])


# --- bulk load ----------------------------------------------------------------------------------
def bulk_load(session: Any, n: int) -> dict[str, Any]:
    """`scripts/bench_load.py`'s side-by-side load into a scratch keyspace (dropped after)."""
    import bench_load

    from hoprag.stores.cassandra.schema import keyspace_statements, replication_map

    rows, table = bench_load.make_docs(n, DIM)
    emb = LookupEmbeddings(table)
    ks = f"bench_load_{uuid.uuid4().hex[:8]}"
    for stmt in keyspace_statements(ks, replication_map()):
        session.execute(stmt, timeout=120)
    try:
        vectors.uninstall()
        lc_s, lc_cpu = bench_load.run_langchain(session, ks, rows, emb, "lc_docs")
        hr_s, hr_cpu = bench_load.run_hoprag(session, ks, rows, emb, DIM)
        assert bench_load.count(session, ks, "lc_docs") == n
        assert bench_load.count(session, ks, "hoprag_docs") == n
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {ks}", timeout=120)
        vectors.install()
    return {
        "docs": n,
        "ours_docs_per_s": n / hr_s,
        "peer_docs_per_s": n / lc_s,
        "ratio": lc_s / hr_s,
        "ours_client_cpu_us_per_doc": hr_cpu / n * 1e6,
        "peer_client_cpu_us_per_doc": lc_cpu / n * 1e6,
    }


# --- report -----------------------------------------------------------------------------------
SPEEDUP_TARGET, FLOOR_TARGET, TTFN_TARGET, LOAD_TARGET = 3.0, 1.3, 1.2, 5.0


def verdicts(results: list[dict[str, Any]], load: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The acceptance checks, each met or MISSED with the measured figure."""
    out = []

    def add(name: str, ok: bool, figure: str) -> None:
        out.append({"target": name, "met": bool(ok), "measured": figure})

    for r in results:
        note = r["same_ids_count"]
        if not r["same_ids"]:
            n_diff = int(r["same_ids_count"].split("/")[1]) - int(r["same_ids_count"].split("/")[0])
            note += (
                f" ({r['explained_count']} of the {n_diff} differences are graph-retriever's "
                "batch-depth bug: with per-node depths it selects hoprag's ids on the same table)"
            )
        add(
            f"same ids: {r['dataset']} / {r['case']}",
            r["same_ids"] or r["differences_explained"],
            note,
        )
    for r in results:
        if r["strategy"] in ("eager", "mmr") and r["params"]["max_depth"] == 2:
            if r["params"]["adjacent_k"] == 10 and r["concurrency"] == 1:
                add(
                    f">= {SPEEDUP_TARGET:g}x graph-retriever: {r['dataset']} / {r['case']}",
                    r["speedup"] >= SPEEDUP_TARGET,
                    f"{r['speedup']:.1f}x",
                )
    for r in results:
        if r["concurrency"] == 1:
            add(
                f"<= {FLOOR_TARGET:g}x floor: {r['dataset']} / {r['case']}",
                r["floor_ratio"] <= FLOOR_TARGET,
                f"{r['floor_ratio']:.2f}x",
            )
            add(
                f"first node <= {TTFN_TARGET:g}x start search: {r['dataset']} / {r['case']}",
                r["ttfn_ratio"] <= TTFN_TARGET,
                f"{r['ttfn_ratio']:.2f}x",
            )
    if load is not None:
        add(
            f"bulk load >= {LOAD_TARGET:g}x LangChain",
            load["ratio"] >= LOAD_TARGET,
            f"{load['ratio']:.2f}x",
        )
    return out


def _cpu(r: dict[str, Any], side: str) -> str:
    """'node+client' CPU ms per traversal of one side ('-+client' without node figures)."""
    node = r.get(f"{side}_node_cpu_ms")
    client = r.get(f"{side}_client_cpu_ms", 0.0)
    return f"{'-' if node is None else f'{node:.0f}'}+{client:.0f}"


def _busy(r: dict[str, Any]) -> str:
    """'hoprag/GR' share of the machine's CPU used during each side's batches."""
    a, b = r.get("ours_cpu_busy"), r.get("peer_cpu_busy")
    return "-" if a is None or b is None else f"{a:.2f}/{b:.2f}"


def report(results: list[dict[str, Any]], load: dict[str, Any] | None) -> str:
    """The side-by-side table as text."""
    rows = [
        (
            "dataset / case",
            "hoprag p50/p95 ms",
            "GR p50/p95 ms",
            "x faster",
            "floor ms",
            "/floor",
            "trips",
            "burst ms",
            "1st node ms",
            "search ms",
            "q hoprag/GR",
            "rows hoprag/GR",
            "cpu ms hoprag/GR",
            "busy",
            "same ids",
            "own table",
        )
    ]
    for r in results:
        rows.append(
            (
                f"{r['dataset'].split(' ')[0]} {r['case']}",
                f"{r['ours_p50_ms']:.1f}/{r['ours_p95_ms']:.1f}",
                f"{r['peer_p50_ms']:.1f}/{r['peer_p95_ms']:.1f}",
                f"{r['speedup']:.1f}",
                f"{r['floor_ms']:.1f}",
                f"{r['floor_ratio']:.2f}",
                f"{r['ours_hops']:.1f}",
                f"{r['burst_p50_ms']:.1f}/{r['burst_queries']:.0f}",
                f"{r['ttfn_p50_ms']:.1f}",
                f"{r['start_search_p50_ms']:.1f}",
                f"{r['ours_queries']:.0f}/{r['peer_queries']:.0f}",
                f"{r['ours_rows']:.0f}/{r['peer_rows']:.0f}",
                f"{_cpu(r, 'ours')}/{_cpu(r, 'peer')}",
                _busy(r),
                r["same_ids_count"] + (f" +{r['explained_count']}" if not r["same_ids"] else ""),
                r["same_ids_own_table_count"],
            )
        )
    text = text_table(rows)
    if load is not None:
        text += (
            f"\n\nbulk load, {load['docs']} docs: hoprag {load['ours_docs_per_s']:.0f} docs/s, "
            f"LangChain {load['peer_docs_per_s']:.0f} docs/s, x{load['ratio']:.2f}"
        )
    return text


def markdown(out: dict[str, Any]) -> str:
    """The results as Markdown tables (for docs/benchmarks.md)."""
    lines = [
        "| dataset | case | hoprag p50 / p95 ms | GR p50 / p95 ms | x faster | floor ms | "
        "/ floor | round trips | 1st node / search ms | queries hoprag / GR | "
        "rows hoprag / GR | CPU ms hoprag / GR | CPU busy hoprag / GR | same ids | own table |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in out["cases"]:
        lines.append(
            f"| {r['dataset'].split(' (')[0]} | {r['case']} | {r['ours_p50_ms']:.0f} / "
            f"{r['ours_p95_ms']:.0f} | {r['peer_p50_ms']:.0f} / {r['peer_p95_ms']:.0f} | "
            f"{r['speedup']:.1f} | {r['floor_ms']:.0f} | {r['floor_ratio']:.2f} | "
            f"{r['ours_hops']:.1f} | {r['ttfn_p50_ms']:.1f} / {r['start_search_p50_ms']:.1f} | "
            f"{r['ours_queries']:.0f} / {r['peer_queries']:.0f} | "
            f"{r['ours_rows']:.0f} / {r['peer_rows']:.0f} | "
            f"{_cpu(r, 'ours')} / {_cpu(r, 'peer')} | {_busy(r)} | {r['same_ids_count']}"
            f"{'' if r['same_ids'] else ' (+' + str(r['explained_count']) + ' GR bug)'} | "
            f"{r['same_ids_own_table_count']} |"
        )
    lines += ["", "| target | result | measured |", "|---|---|---|"]
    for v in out["verdicts"]:
        lines.append(f"| {v['target']} | {'met' if v['met'] else 'MISSED'} | {v['measured']} |")
    return "\n".join(lines)


def chart(results: list[dict[str, Any]], path: Path) -> None:
    """Grouped bars (log scale): hoprag, graph-retriever and the floor per case."""
    try:
        import matplotlib
    except ImportError:
        print("  matplotlib missing: pip install -e '.[bench]' for the chart")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['dataset'].split(' ')[0]}\n{r['case']}" for r in results]
    xs = range(len(results))
    w = 0.27
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(results)), 4.8))
    ax.bar([x - w for x in xs], [r["ours_p50_ms"] for r in results], w, label="hoprag")
    ax.bar(xs, [r["peer_p50_ms"] for r in results], w, label="graph-retriever 0.8.0")
    ax.bar([x + w for x in xs], [r["floor_ms"] for r in results], w, label="floor (d+1) x 1 query")
    ax.set_yscale("log")
    ax.set_ylabel("median latency, ms (log)")
    ax.set_xticks(list(xs), labels, fontsize=7)
    ax.legend()
    ax.set_title("Traversal latency on one Cassandra 5.0 node, same data (median)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"  chart: {path}")


# --- main -------------------------------------------------------------------------------------
async def amain(args: argparse.Namespace) -> dict[str, Any]:
    from hoprag.stores.cassandra.schema import keyspace_statements, replication_map
    from hoprag.stores.cassandra.session import connect

    session = await anyio.to_thread.run_sync(connect, args.contact_points)
    for stmt in keyspace_statements(KEYSPACE, replication_map()):
        session.execute(stmt, timeout=120)
    session.execute(
        f"CREATE TABLE IF NOT EXISTS {MARKS} (name text PRIMARY KEY, docs int, "
        "fingerprint text, load_seconds double)",
        timeout=120,
    )
    out: dict[str, Any] = {
        "machine": machine_info(session),
        "load_average_start": load_average(),
        "mode": "quick" if args.quick else "full",
        "reps": args.reps,
    }
    print(f"machine: {out['machine']}\nload average: {out['load_average_start']}")
    sets: list[tuple[Dataset, bool]] = []
    print("data:")
    if args.quick:
        sets.append((make_dataset("foldoc", args.foldoc or 1000, "hash", args.queries), False))
    else:
        if not args.skip_foldoc:
            sets.append((make_dataset("foldoc", args.foldoc, "minilm", args.queries), False))
        if args.wordnet:
            wn_edges = [("lexname", "lexname")]
            sets.append(
                (make_dataset("wordnet", args.wordnet, "hash", args.queries, wn_edges), True)
            )
    results: list[dict[str, Any]] = []
    out["datasets"] = []
    out["link_latency_ms"] = args.latency_ms
    out["tracing"] = args.tracing
    remote = None
    if args.latency_ms:
        # Both sides then reach the node through a proxy holding every packet `latency_ms`
        # each way (tests/delay_proxy.py), as an application reaches a remote node or Astra.
        # Tables are loaded (or checked) over the direct session first.
        sys.path.insert(0, TESTS_DIR)
        from delay_proxy import DelayProxy, connect_through
        from hoprag.stores.cassandra.session import parse_contact_points

        host, port = parse_contact_points(args.contact_points)[0]
        proxy = DelayProxy((PROXY_HOST, port), (host, port), args.latency_ms / 1000)
        proxy.__enter__()
        remote = await anyio.to_thread.run_sync(connect_through, PROXY_HOST, port)
        print(f"link: {args.latency_ms:g} ms each way through a proxy on {PROXY_HOST}")
    meter = CpuMeter(session)  # the direct session: the proxy's address is not a node
    out["node_cpu_measured"] = bool(meter.pids)
    for ds, scale in sets:
        tables = await prepare_tables(session, ds, args.reload)
        if remote is not None:
            tables = await prepare_tables(remote, ds, False)
        tables["meter"] = meter
        # The bench holds every dataset's documents, vectors included, in this process: half
        # a million tracked objects that no retriever needs at query time. Each full cyclic
        # collection walks them all (0.6 s for FOLDOC alone, measured), pausing whichever
        # side happens to be running. Freezing what setup allocated leaves the collector
        # the objects the traversals themselves allocate, as in an application that has
        # done its setup.
        gc.collect()
        gc.freeze()
        out["datasets"].append(
            {
                "name": ds.label,
                "embedding": ds.embedding_note,
                "edges": ds.edges,
                "queries": len(ds.queries),
                "gc_frozen_objects": gc.get_freeze_count(),
                **{k: v for k, v in tables.items() if k not in NOT_JSON},
            }
        )
        for case in [] if args.load_only else cases_for(args.quick, scale):
            if args.only and not any(
                s == case.name if args.exact else s in case.name for s in args.only
            ):
                continue
            t0 = time.perf_counter()
            r = await measure_case(tables, ds, case, args.reps)
            results.append(r)
            print(
                f"  {ds.name} {case.name}: hoprag {r['ours_p50_ms']:.1f} ms, GR "
                f"{r['peer_p50_ms']:.1f} ms (x{r['speedup']:.1f}), floor {r['floor_ms']:.1f} "
                f"ms (x{r['floor_ratio']:.2f}), 1st node {r['ttfn_p50_ms']:.1f} / search "
                f"{r['start_search_p50_ms']:.1f} ms, same ids {r['same_ids_count']} "
                f"(+{r['explained_count']} GR batch-depth bug) "
                f"[{time.perf_counter() - t0:.0f} s]",
                flush=True,
            )
    load = None
    if args.load_docs:
        print(f"bulk load, {args.load_docs} docs per loader:")
        load = await anyio.to_thread.run_sync(bulk_load, session, args.load_docs)
    out["cases"] = results
    out["bulk_load"] = load
    out["verdicts"] = verdicts(results, load)
    out["load_average_end"] = load_average()
    print()
    print(report(results, load))
    print()
    for v in out["verdicts"]:
        print(f"  {'met   ' if v['met'] else 'MISSED'} {v['target']}: {v['measured']}")
    session.cluster.shutdown()
    if remote is not None:
        remote.cluster.shutdown()
        proxy.__exit__(None, None, None)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small run, under five minutes")
    ap.add_argument("--json", help="write the results as JSON here")
    ap.add_argument("--chart", help="write a PNG chart here")
    ap.add_argument("--markdown", help="write the tables as Markdown here")
    ap.add_argument("--reload", action="store_true", help="load the tables again")
    ap.add_argument("--queries", type=int, default=None, help="queries per dataset (max 20)")
    ap.add_argument("--reps", type=int, default=None, help="measured repetitions per query")
    ap.add_argument("--foldoc", type=int, default=None, help="FOLDOC documents (default all)")
    ap.add_argument("--wordnet", type=int, default=50_000, help="WordNet sample; 0 skips it")
    ap.add_argument("--load-docs", type=int, default=None, help="bulk-load docs; 0 skips it")
    ap.add_argument("--skip-foldoc", action="store_true", help="only the WordNet scale set")
    ap.add_argument("--load-only", action="store_true", help="only load the tables")
    ap.add_argument("--only", nargs="*", help="run only cases whose name contains one of these")
    ap.add_argument("--exact", action="store_true", help="--only names whole case names")
    ap.add_argument("--contact-points", default=os.environ.get("HOPRAG_CASSANDRA", "127.0.0.1"))
    ap.add_argument(
        "--latency-ms",
        type=float,
        default=0.0,
        help="measure through a proxy that adds this many ms each way (a remote node)",
    )
    ap.add_argument(
        "--tracing",
        choices=TRACING_MODES,
        default="default",
        help="hoprag's OpenTelemetry spans: off (hoprag.telemetry disabled), default (as the "
        "environment has it: the API without an SDK is a no-op), sdk (the SDK's providers, "
        "spans and metrics recorded, no exporter)",
    )
    args = ap.parse_args()
    set_tracing(args.tracing)
    if not 0 <= args.latency_ms <= 1000:
        ap.error(f"--latency-ms must be in 0..1000 (ms each way), got {args.latency_ms:g}")
    if args.queries is None:
        args.queries = 6 if args.quick else 20
    if args.reps is None:
        args.reps = 2 if args.quick else 3
    if args.load_docs is None:
        args.load_docs = 400 if args.quick else 3000
    out = asyncio.run(amain(args))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
        print(f"  json: {args.json}")
    if args.markdown:
        Path(args.markdown).write_text(markdown(out) + "\n")
        print(f"  markdown: {args.markdown}")
    if args.chart:
        chart(out["cases"], Path(args.chart))
    return 0


TRACING_MODES = ("off", "default", "sdk")


def set_tracing(mode: str) -> None:
    """Set hoprag's tracing for the run (see `--tracing`)."""
    from hoprag import telemetry

    if mode == "off":
        telemetry.configure(enabled=False)
    elif mode == "sdk":
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.trace import TracerProvider

        telemetry.configure(
            enabled=True, tracer_provider=TracerProvider(), meter_provider=MeterProvider()
        )


if __name__ == "__main__":
    sys.exit(main())
