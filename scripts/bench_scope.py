#!/usr/bin/env python
"""Scoped search on Cassandra: hoprag's ranking plans against a naive plan and an unscoped search.

    HOPRAG_CASSANDRA=127.0.0.1:9042 python scripts/bench_scope.py \\
        [--quick] [--reps 15] [--k 10] [--json bench-out/scope.json] [--markdown OUT.md] [--fresh]

Data: the films (17,472, `hoprag.datasets.films`) in keyspace `bench_scope`, with MiniLM
embeddings (document vectors from the on-disk cache, `CachedEmbedding`; the first run embeds
them and says how long it took). The table is loaded once: a marker row records a complete
load of the same documents with the same embedding, and a few documents are read back by
primary key; later runs reuse it, `--fresh` drops and reloads it. `--quick`: the first
`--limit` films (default 300) with `HashEmbedding(384)`, two repetitions, for a test.

Cases: scopes whose last hop has 1 value (the films of the director of one film), about 10, 48
(Meryl Streep's directors) and about 100 values (the directors of one actor's films), and two
2-hop scopes (Meryl Streep's directors followed twice; one film's directors and cast followed
twice, about 8,000 films and 1,350 values in the last hop, measured with a fifth of the
repetitions). On a subset (`--limit`) the anchors are chosen from the subset by the same
targets. Each case runs with no filter and with `{"genre": "Drama"}`, for the topic queries
below, and each of:

- `auto`, `exact`, `pushdown`: `hoprag.asearch(..., scope=..., plan=...)`;
- `naive`: written here, not in hoprag: read every member of the scope with its embedding
  through the store's complete reads (`afiltered` / `aget` for the anchors, one `amatching`
  burst per hop), apply the filter here (`hoprag.filters.matches`) and rank by cosine
  similarity in numpy;
- `unscoped`: `hoprag.asearch` with the same filter and no scope (a plain filtered vector
  search over all films).

After a warm-up pass, each (query, plan) runs `--reps` times, the plans interleaved; p50 and
p95 are over every (query, repetition). Checked on every run: every hoprag plan returns the
naive plan's ids in its order (documents tied at the same score may swap or be cut
differently), hoprag's scope size is the naive one, and every 2-hop case answers in at most 3
sequential rounds (`stats.rounds`). A failure prints FAIL and the script exits 1.

Output: a text table (case, filter, last-hop values, scope size, plan, p50, p95, rounds,
queries, naive p50 / plan p50), whether `plan="auto"` took the faster of `exact` and
`pushdown`, `--json` with the machine, the dataset, every figure and the checks, and
`--markdown` with the table for docs/benchmarks.md."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import hashlib
import itertools
import json
import math
import os
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from benchlib import LookupEmbeddings, load_average, machine_info, summary_ms, text_table

from hoprag import Document, Scope, asearch
from hoprag.edges import MetadataEdge
from hoprag.filters import compile_filter, matches
from hoprag.stores.base import Store
from hoprag.stores.cassandra.schema import sstable_count
from hoprag.stores.cassandra.store import CassandraStore

KEYSPACE = "bench_scope"
DIM = 384
QUERIES = ["war", "love story", "crime in the city"]
FILTERS: list[dict[str, Any] | None] = [None, {"genre": "Drama"}]
HOPRAG_PLANS = ("auto", "exact", "pushdown")
PLANS = (*HOPRAG_PLANS, "naive", "unscoped")
MAX_ROUNDS_2HOP = 3
CLOSE = 0.1
"""Plans whose p50 differ by less than this fraction count as equally fast for the verdict on
`plan="auto"`."""
TIE_EPS = 1e-5
"""Scores closer than this count as tied (Cassandra computes in float32, the naive plan in
float64 from the stored float32 vectors)."""

# Anchors on the whole films dataset (chosen with SQL over movies.db; on a subset the script
# falls back to the nearest match by the same target).
ONE_FILM = "tt0075686"  # Annie Hall: one director (Woody Allen, 44 films)
ACTORS = {10: "Leo G. Carroll", 48: "Meryl Streep", 100: "Liam Neeson"}
TWO_HOP_FILM = "tt0061177"  # What's Up, Tiger Lily?: director + cast, 2 hops: ~8,100 films
DIRECTOR = [("director", "director")]
DIRECTOR_CAST = [("director", "director"), ("cast", "cast")]
SUBSET_2HOP_VALUES = 40  # last-hop values of the director + cast case on a subset


# --- cases ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Case:
    """One scope to search in: its name, the `Scope` and its edge specs (for the naive plan)."""

    name: str
    scope: Scope
    specs: tuple[tuple[str, str], ...]
    heavy: bool = False  # fewer repetitions (see `reps_for`)

    @property
    def depth(self) -> int:
        return self.scope.max_depth


def _values(metadata: dict[str, Any], field: str) -> list[Any]:
    value = metadata.get(field)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


class Index:
    """Where each (field, value) occurs in the loaded films: enough to choose anchors and to
    predict scope sizes without the store (the benchmark itself reads the store)."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.meta = {d.id: d.metadata for d in docs}
        self.by: dict[str, dict[Any, set[str]]] = {"director": defaultdict(set)}
        self.by["cast"] = defaultdict(set)
        for d in docs:
            for f, table in self.by.items():
                for v in _values(d.metadata, f):
                    table[v].add(d.id)

    def expand(
        self, anchors: set[str], specs: Sequence[tuple[str, str]], depth: int
    ) -> tuple[int, int]:
        """How many documents the scope holds, and how many values its last hop follows (0
        when the expansion stops before `depth`)."""
        members = set(anchors)
        frontier, followed = set(anchors), set()
        values = 0
        for _ in range(depth):
            edges = {
                (t, v)
                for m in frontier
                for s, t in specs
                for v in _values(self.meta[m], s)
                if (t, v) not in followed
            }
            followed |= edges
            values = len(edges)
            new = {x for t, v in edges for x in self.by[t][v]} - members
            members |= new
            frontier = new
        return len(members), values

    def directors_of_actor(self, actor: str) -> int:
        return len({v for f in self.by["cast"][actor] for v in self.meta[f]["director"]})

    def actor_near(self, target: int, prefer: str) -> str:
        """`prefer` when it is in the data, else the actor (a name with a space) whose films
        have the number of distinct directors nearest to `target` (then more films, name)."""
        if prefer in self.by["cast"]:
            return prefer
        actors = [a for a in self.by["cast"] if " " in a]
        return min(
            actors,
            key=lambda a: (
                abs(self.directors_of_actor(a) - target),
                -len(self.by["cast"][a]),
                a,
            ),
        )

    def two_hop_actor(self, prefer: str) -> str:
        """`prefer` when its films' directors, followed twice, still reach new values at the
        second hop; else the actor whose second hop follows the most values (then name)."""

        def second(a: str) -> int:
            return self.expand(self.by["cast"][a], DIRECTOR, 2)[1]

        if prefer in self.by["cast"] and second(prefer):
            return prefer
        return min((a for a in self.by["cast"] if " " in a), key=lambda a: (-second(a), a))

    def one_director_film(self, prefer: str) -> str:
        """`prefer` when it is in the data, else the single-director film whose director has
        the most films (then the smallest id)."""
        if prefer in self.meta and len(self.meta[prefer]["director"]) == 1:
            return prefer
        films = [i for i, m in self.meta.items() if len(m["director"]) == 1]
        return min(films, key=lambda i: (-len(self.by["director"][self.meta[i]["director"][0]]), i))

    def two_hop_film(self, prefer: str, values: int) -> str:
        """`prefer` when it is in the data, else the film whose 2-hop director + cast scope
        follows the number of values nearest to `values` in its last hop (then the smallest
        id): on a subset, a 2-hop case of a size a quick run can afford."""
        if prefer in self.meta:
            return prefer
        sizes = {i: self.expand({i}, DIRECTOR_CAST, 2)[1] for i in self.meta}
        return min((i for i in sizes if sizes[i]), key=lambda i: (abs(sizes[i] - values), i))


def make_cases(docs: Sequence[Document]) -> list[Case]:
    """The benchmark's scopes for these documents (named anchors on the whole dataset)."""
    ix = Index(docs)
    film = ix.one_director_film(ONE_FILM)
    cases = [
        Case(
            f"1 value: director of {ix.meta[film]['title']}",
            Scope(ids=[film], edges=DIRECTOR, max_depth=1),
            tuple(DIRECTOR),
        )
    ]
    seen: set[str] = set()
    for target, prefer in ACTORS.items():
        actor = ix.actor_near(target, prefer)
        if actor in seen:
            continue
        seen.add(actor)
        cases.append(
            Case(
                f"directors of {actor}'s films",
                Scope(start={"cast": actor}, edges=DIRECTOR, max_depth=1),
                tuple(DIRECTOR),
            )
        )
    streep = ix.two_hop_actor(ACTORS[48])
    cases.append(
        Case(
            f"2 hops: directors of {streep}'s films, twice",
            Scope(start={"cast": streep}, edges=DIRECTOR, max_depth=2),
            tuple(DIRECTOR),
        )
    )
    big = ix.two_hop_film(TWO_HOP_FILM, SUBSET_2HOP_VALUES)
    cases.append(
        Case(
            f"2 hops: director+cast of {ix.meta[big]['title']}, twice",
            Scope(ids=[big], edges=DIRECTOR_CAST, max_depth=2, max_size=10_000),
            tuple(DIRECTOR_CAST),
            heavy=True,
        )
    )
    return cases


def reps_for(case: Case, reps: int) -> int:
    """Repetitions for a case: the heavy 2-hop case (thousands of reads per search) a fifth."""
    return max(2, reps // 5) if case.heavy else reps


# --- the naive plan ---------------------------------------------------------------------------
@dataclasses.dataclass
class NaiveResult:
    """The naive plan's answer: the top ids, every member passing the filter with its score,
    and what it cost."""

    ids: list[str]
    ranked: list[tuple[str, float]]
    scope_size: int
    last_values: int
    rounds: int
    queries: int
    rows: int = 0


async def naive_search(
    store: Store,
    case: Case,
    vector: Sequence[float],
    k: int,
    flt: dict[str, Any] | None,
    max_concurrency: int = 16,
) -> NaiveResult:
    """Read every member of `case`'s scope with its embedding (complete reads, one round per
    hop), keep those passing `flt` and rank them by cosine similarity here."""
    scope = case.scope
    limit = scope.max_size + 1
    read = await store.aprepare(
        None, None, include_embeddings=True, max_concurrency=max_concurrency
    )
    if scope.ids:
        hits = await read.aget(list(scope.ids))
    else:
        start = await store.aprepare(
            None, scope.start, include_embeddings=True, max_concurrency=max_concurrency
        )
        start.limiter = read.limiter
        hits = await start.afiltered(limit=limit)
    rounds, queries, rows = 1, 1, len(hits)
    members: dict[str, Document] = {h.id: h.document for h in hits}
    frontier = list(members)
    followed: set[MetadataEdge] = set()
    last_values = 0
    for _ in range(scope.max_depth):
        edges: dict[MetadataEdge, None] = {}
        for m in sorted(frontier):
            for s, t in case.specs:
                for v in _values(members[m].metadata, s):
                    e = MetadataEdge(t, v)
                    if e not in followed:
                        edges[e] = None
        if not edges:
            break
        followed.update(edges)
        pages = await read.amatching(list(edges), limit=limit)
        rounds += 1
        queries += len(edges)
        last_values = len(edges)
        frontier = []
        for page in pages:
            rows += len(page)
            for h in page:
                if h.id not in members:
                    members[h.id] = h.document
                    frontier.append(h.id)
        if len(members) > scope.max_size:
            raise RuntimeError(f"{case.name}: the naive plan reached {len(members)} documents")
    compiled = compile_filter(flt)
    passing = [d for d in members.values() if matches(compiled, d.metadata)]
    ranked: list[tuple[str, float]] = []
    if passing:
        mat = np.asarray([np.asarray(d.embedding, dtype=np.float64) for d in passing])
        q = np.asarray(vector, dtype=np.float64)
        scores = (mat @ q) / (np.linalg.norm(mat, axis=1) * np.linalg.norm(q))
        ranked = sorted(
            ((d.id, float(s)) for d, s in zip(passing, scores, strict=True)),
            key=lambda p: (-p[1], p[0]),
        )
    return NaiveResult(
        [i for i, _ in ranked[:k]], ranked, len(members), last_values, rounds, queries, rows
    )


def agrees(ids: Sequence[str], naive: NaiveResult, k: int) -> str | None:
    """None when `ids` are the naive top `k` (in order, or differing only among documents
    tied at the same score); else what differs."""
    if list(ids) == naive.ids:
        return None
    score = dict(naive.ranked)
    want = min(k, len(naive.ranked))
    if len(ids) != want:
        return f"{len(ids)} results, the naive plan has {want}"
    if any(i not in score for i in ids):
        return f"ids outside the naive answer: {[i for i in ids if i not in score][:5]}"
    got = [score[i] for i in ids]
    if any(b > a + TIE_EPS for a, b in itertools.pairwise(got)):
        return f"not in score order: {list(ids)} (naive {naive.ids})"
    kth = naive.ranked[want - 1][1]
    needed = {i for i, s in naive.ranked if s > kth + TIE_EPS}
    if not needed <= set(ids):
        return f"missing {sorted(needed - set(ids))[:5]} (naive {naive.ids})"
    return None


# --- data -------------------------------------------------------------------------------------
@dataclasses.dataclass
class Data:
    """The loaded films, the query vectors and how they were embedded."""

    docs: list[Document]
    table: str
    query_vectors: dict[str, list[float]]
    embedding_note: str
    embed_seconds: float | None
    fingerprint: str


def _fingerprint(docs: Sequence[Document], model: str) -> str:
    h = hashlib.sha256(model.encode())
    for d in docs:
        h.update(d.id.encode())
        h.update(hashlib.sha256(d.content.encode()).digest())
    return h.hexdigest()[:16]


def load_data(limit: int | None, embedding: str) -> Data:
    """The films (the first `limit`) with the query vectors; document vectors are computed
    later, only when the table must be loaded (`embed_documents`)."""
    from hoprag.datasets.films import load_films

    docs = list(load_films(limit=limit))
    if embedding == "minilm":
        from hoprag.embeddings.cache import CachedEmbedding
        from hoprag.embeddings.minilm import MODEL_NAME, MiniLMEmbedding

        cached = CachedEmbedding(MiniLMEmbedding())
        qvecs = cached.embed_documents(QUERIES)
        cached.close()
        model, note = MODEL_NAME, "MiniLM-L6-v2 (384-d)"
    else:
        from hoprag.embeddings import HashEmbedding

        qvecs = HashEmbedding(DIM).embed_documents(QUERIES)
        model = f"HashEmbedding({DIM})"
        note = f"{model}: deterministic, non-semantic (feature hashing of words)"
    size = "all" if limit is None else str(limit)
    return Data(
        docs=docs,
        table=f"films_{'minilm' if embedding == 'minilm' else 'hash'}_{size}",
        query_vectors={q: [float(x) for x in v] for q, v in zip(QUERIES, qvecs, strict=True)},
        embedding_note=note,
        embed_seconds=None,
        fingerprint=_fingerprint(docs, model),
    )


def embed_documents(data: Data, embedding: str) -> None:
    """Give every document its vector (MiniLM through the on-disk cache)."""
    t0 = time.perf_counter()
    texts = [d.content for d in data.docs]
    if embedding == "minilm":
        from hoprag.embeddings.cache import CachedEmbedding
        from hoprag.embeddings.minilm import MiniLMEmbedding

        cached = CachedEmbedding(MiniLMEmbedding())
        vecs = cached.embed_documents(texts)
        data.embedding_note += (
            f", document vectors from the on-disk cache ({cached.hits} hits, "
            f"{cached.misses} embedded now)"
        )
        cached.close()
    else:
        from hoprag.embeddings import HashEmbedding

        vecs = HashEmbedding(DIM).embed_documents(texts)
    for d, v in zip(data.docs, vecs, strict=True):
        d.embedding = [float(x) for x in v]
    data.embed_seconds = time.perf_counter() - t0
    print(f"  embedded {len(texts)} films in {data.embed_seconds:.1f} s", flush=True)


def _loaded(session: Any, data: Data) -> bool:
    """Whether a complete load of these documents (same fingerprint) is recorded and the
    table still holds a few of them (probed by primary key)."""
    row = session.execute(
        f"SELECT docs, fingerprint FROM {KEYSPACE}.loads WHERE name = %s", (data.table,)
    ).one()
    if row is None or row[0] != len(data.docs) or row[1] != data.fingerprint:
        return False
    n = len(data.docs)
    try:
        for doc_id in {data.docs[0].id, data.docs[n // 2].id, data.docs[-1].id}:
            q = f"SELECT id FROM {KEYSPACE}.{data.table} WHERE id = %s"
            if session.execute(q, (doc_id,)).one() is None:
                return False
    except Exception:  # the table itself is gone
        return False
    return True


async def prepare_store(
    session: Any, data: Data, embedding: str, fresh: bool
) -> tuple[CassandraStore, dict[str, Any]]:
    """The films table, loaded unless a complete earlier load of the same documents is
    recorded (`fresh`: dropped and loaded again)."""
    info: dict[str, Any] = {"table": f"{KEYSPACE}.{data.table}", "docs": len(data.docs)}
    session.execute(
        f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.loads (name text PRIMARY KEY, docs int, "
        "fingerprint text, load_seconds double)",
        timeout=120,
    )
    reuse = not fresh and _loaded(session, data)
    if fresh:
        session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{data.table}", timeout=120)
        session.execute(f"DELETE FROM {KEYSPACE}.loads WHERE name = %s", (data.table,))
    store = CassandraStore(
        LookupEmbeddings(data.query_vectors),
        keyspace=KEYSPACE,
        table=data.table,
        session=session,
        dimension=DIM,
    )
    await store.asetup()
    if reuse:
        print(f"  reused {KEYSPACE}.{data.table} ({len(data.docs)} films)")
        info["loaded_now"] = False
    else:
        embed_documents(data, embedding)
        info["embed_seconds"] = data.embed_seconds
        t0 = time.perf_counter()
        await store.aadd(data.docs)
        secs = time.perf_counter() - t0
        session.execute(
            f"INSERT INTO {KEYSPACE}.loads (name, docs, fingerprint, load_seconds) "
            "VALUES (%s, %s, %s, %s)",
            (data.table, len(data.docs), data.fingerprint, secs),
        )
        print(f"  loaded {KEYSPACE}.{data.table}: {len(data.docs)} films in {secs:.0f} s")
        info["loaded_now"] = True
        info["load_seconds"] = secs
    info["sstables"] = sstable_count(session, KEYSPACE, data.table)
    return store, info


# --- measuring --------------------------------------------------------------------------------
@dataclasses.dataclass
class Run:
    """One search: its ids, wall time, rounds, queries and (hoprag) the plan that ran."""

    ids: list[str]
    seconds: float
    rounds: int
    queries: int
    plan: str
    rows: int
    scope_size: int | None = None
    last_values: int | None = None


async def run_plan(
    store: CassandraStore,
    case: Case | None,
    plan: str,
    vector: list[float],
    k: int,
    flt: dict[str, Any] | None,
) -> Run:
    """One search of `plan` ("naive", "unscoped" or a hoprag plan) for `case`."""
    t0 = time.perf_counter()
    if plan == "naive":
        assert case is not None
        nv = await naive_search(store, case, vector, k, flt)
        secs = time.perf_counter() - t0
        return Run(
            nv.ids, secs, nv.rounds, nv.queries, "naive", nv.rows, nv.scope_size, nv.last_values
        )
    scope = None if plan == "unscoped" else case.scope if case else None
    res = await asearch(
        None,
        store=store,
        k=k,
        scope=scope,
        filter=flt,
        query_embedding=vector,
        plan="auto" if plan == "unscoped" else plan,
    )
    secs = time.perf_counter() - t0
    st = res.stats
    last = st.hops[-1].edges if scope is not None and st.hops else None
    ids = [n.id for n in res]
    return Run(
        ids, secs, st.rounds, st.total_queries, str(st.plan), st.total_rows, st.scope_size, last
    )


def _flt_name(flt: dict[str, Any] | None) -> str:
    return "-" if flt is None else json.dumps(flt, sort_keys=True)


async def measure(
    store: CassandraStore,
    case: Case,
    flt: dict[str, Any] | None,
    data: Data,
    k: int,
    reps: int,
    failures: list[str],
) -> dict[str, Any]:
    """Every plan on one case and filter: the naive answer per query first (the check), a
    warm-up pass, then `reps` interleaved repetitions of each (query, plan)."""
    vectors = [data.query_vectors[q] for q in QUERIES]
    naive = [await naive_search(store, case, v, k, flt) for v in vectors]
    plans = [p for p in PLANS if p != "unscoped"]
    times: dict[str, list[float]] = {p: [] for p in plans}
    runs: dict[str, list[Run]] = {p: [] for p in plans}
    for v in vectors:  # warm-up
        for p in plans:
            await run_plan(store, case, p, v, k, flt)
    for _ in range(reps):
        for qi, v in enumerate(vectors):
            for p in plans:
                r = await run_plan(store, case, p, v, k, flt)
                times[p].append(r.seconds)
                if len(runs[p]) < len(vectors):
                    runs[p].append(r)
                elif r.ids != runs[p][qi].ids:
                    failures.append(f"{case.name} [{_flt_name(flt)}] {p}: ids change between runs")
    where = f"{case.name} [{_flt_name(flt)}]"
    out: dict[str, Any] = {
        "case": case.name,
        "scope": repr(case.scope),
        "filter": flt,
        "depth": case.depth,
        "last_hop_values": naive[0].last_values,
        "scope_size": naive[0].scope_size,
        "passing_filter": len(naive[0].ranked),
        "reps": reps,
        "plans": {},
    }
    for p in plans:
        checks = []
        for qi, q in enumerate(QUERIES):
            r = runs[p][qi]
            why = agrees(r.ids, naive[qi], k)
            if why is not None:
                checks.append(f"{q!r}: {why}")
            if r.scope_size != naive[qi].scope_size:
                checks.append(f"{q!r}: scope of {r.scope_size}, naive {naive[qi].scope_size}")
            if case.depth == 2 and p != "naive" and r.rounds > MAX_ROUNDS_2HOP:
                checks.append(f"{q!r}: {r.rounds} rounds, more than {MAX_ROUNDS_2HOP}")
        for c in checks:
            failures.append(f"{where} {p}: {c}")
        s = summary_ms(times[p])
        out["plans"][p] = {
            "p50_ms": s["p50"],
            "p95_ms": s["p95"],
            "n": s["n"],
            "rounds": max(r.rounds for r in runs[p]),
            "queries": max(r.queries for r in runs[p]),
            "rows": max(r.rows for r in runs[p]),
            "ran": sorted({r.plan for r in runs[p]}),
            "same_ids": not checks,
            "exact_order": all(runs[p][qi].ids == naive[qi].ids for qi in range(len(QUERIES))),
        }
    ex, pu = out["plans"]["exact"]["p50_ms"], out["plans"]["pushdown"]["p50_ms"]
    chosen = out["plans"]["auto"]["ran"]
    faster = "exact" if ex <= pu else "pushdown"
    out["auto_chose"] = chosen[0] if len(chosen) == 1 else "/".join(chosen)
    out["faster_plan"] = faster
    out["auto_picks_faster"] = out["auto_chose"] == faster
    ratio = pu / ex if ex else math.nan
    close = 1 / (1 + CLOSE) <= ratio <= 1 + CLOSE
    out["auto_verdict"] = "faster" if out["auto_picks_faster"] else "close" if close else "slower"
    out["pushdown_over_exact"] = ratio
    return out


async def measure_unscoped(
    store: CassandraStore, flt: dict[str, Any] | None, data: Data, k: int, reps: int
) -> dict[str, Any]:
    """The filtered vector search without a scope, for the same queries."""
    vectors = [data.query_vectors[q] for q in QUERIES]
    for v in vectors:
        await run_plan(store, None, "unscoped", v, k, flt)
    times, last = [], None
    for _ in range(reps):
        for v in vectors:
            last = await run_plan(store, None, "unscoped", v, k, flt)
            times.append(last.seconds)
    assert last is not None
    s = summary_ms(times)
    return {
        "filter": flt,
        "p50_ms": s["p50"],
        "p95_ms": s["p95"],
        "n": s["n"],
        "rounds": last.rounds,
        "queries": last.queries,
        "rows": last.rows,
    }


def report(cases: list[dict[str, Any]], unscoped: list[dict[str, Any]]) -> str:
    """The side-by-side table, one row per (case, filter, plan)."""
    rows = [
        [
            "case",
            "filter",
            "values",
            "scope",
            "plan",
            "p50 ms",
            "p95 ms",
            "rounds",
            "queries",
            "rows",
            "naive/plan",
            "ids",
        ]
    ]
    for c in cases:
        naive_p50 = c["plans"]["naive"]["p50_ms"]
        for p, f in c["plans"].items():
            label = f"auto->{c['auto_chose']}" if p == "auto" else p
            rows.append(
                [
                    c["case"],
                    _flt_name(c["filter"]),
                    str(c["last_hop_values"]),
                    str(c["scope_size"]),
                    label,
                    f"{f['p50_ms']:.1f}",
                    f"{f['p95_ms']:.1f}",
                    str(f["rounds"]),
                    str(f["queries"]),
                    str(f["rows"]),
                    f"{naive_p50 / f['p50_ms']:.2f}x",
                    "same" if f["same_ids"] else "FAIL",
                ]
            )
    for u in unscoped:
        rows.append(
            [
                "no scope (all films)",
                _flt_name(u["filter"]),
                "-",
                "-",
                "unscoped",
                f"{u['p50_ms']:.1f}",
                f"{u['p95_ms']:.1f}",
                str(u["rounds"]),
                str(u["queries"]),
                str(u["rows"]),
                "-",
                "-",
            ]
        )
    return text_table(rows)


def markdown(cases: list[dict[str, Any]], unscoped: list[dict[str, Any]], films: int) -> str:
    """The same table as Markdown (for docs/benchmarks.md)."""
    lines = [
        "| case | filter | last-hop values | scope | plan | p50 ms | p95 ms | rounds | queries "
        "| rows |",
        "|---|---|--:|--:|---|--:|--:|--:|--:|--:|",
    ]
    for c in cases:
        for p, f in c["plans"].items():
            label = f"auto → {c['auto_chose']}" if p == "auto" else p
            flt = "—" if c["filter"] is None else f"`{_flt_name(c['filter'])}`"
            lines.append(
                f"| {c['case']} | {flt} | {c['last_hop_values']} | {c['scope_size']} | "
                f"{label} | {f['p50_ms']:.1f} | {f['p95_ms']:.1f} | {f['rounds']} | "
                f"{f['queries']} | {f['rows']} |"
            )
    for u in unscoped:
        flt = "—" if u["filter"] is None else f"`{_flt_name(u['filter'])}`"
        lines.append(
            f"| no scope (all films) | {flt} | — | {films:,} | unscoped | {u['p50_ms']:.1f} | "
            f"{u['p95_ms']:.1f} | {u['rounds']} | {u['queries']} | {u['rows']} |"
        )
    return "\n".join(lines)


# --- main -------------------------------------------------------------------------------------
async def amain(args: argparse.Namespace) -> dict[str, Any]:
    from hoprag.stores.cassandra.schema import keyspace_statements, replication_map
    from hoprag.stores.cassandra.session import connect

    session = await asyncio.to_thread(connect, args.contact_points)
    for stmt in keyspace_statements(KEYSPACE, replication_map()):
        session.execute(stmt, timeout=120)
    out: dict[str, Any] = {
        "machine": machine_info(session),
        "load_average_start": load_average(),
        "mode": "quick" if args.quick else "full",
        "reps": args.reps,
        "k": args.k,
        "queries": QUERIES,
    }
    print(f"machine: {out['machine']}\nload average: {out['load_average_start']}")
    embedding = "hash" if args.quick else args.embedding
    data = await asyncio.to_thread(load_data, args.limit, embedding)
    store, info = await prepare_store(session, data, embedding, args.fresh)
    out["dataset"] = {
        **info,
        "embedding": data.embedding_note,
        "fingerprint": data.fingerprint,
    }
    cases = make_cases(data.docs)
    if args.only:
        cases = [c for c in cases if any(s in c.name for s in args.only)]
    data.docs = []  # the store holds them; nothing below needs them
    gc.collect()
    gc.freeze()
    failures: list[str] = []
    results: list[dict[str, Any]] = []
    for case in cases:
        for flt in FILTERS:
            t0 = time.perf_counter()
            r = await measure(store, case, flt, data, args.k, reps_for(case, args.reps), failures)
            results.append(r)
            p = r["plans"]
            print(
                f"  {case.name} [{_flt_name(flt)}]: {r['last_hop_values']} values, scope "
                f"{r['scope_size']}; exact {p['exact']['p50_ms']:.1f}, pushdown "
                f"{p['pushdown']['p50_ms']:.1f}, naive {p['naive']['p50_ms']:.1f} ms; auto "
                f"-> {r['auto_chose']} [{time.perf_counter() - t0:.0f} s]",
                flush=True,
            )
    unscoped = [await measure_unscoped(store, flt, data, args.k, args.reps) for flt in FILTERS]
    out["cases"] = results
    out["unscoped"] = unscoped
    out["failures"] = failures
    out["two_hop_max_rounds"] = max(
        (f["rounds"] for c in results if c["depth"] == 2 for n, f in c["plans"].items()
         if n != "naive"),
        default=None,
    )  # fmt: skip
    out["ok"] = not failures
    out["load_average_end"] = load_average()
    print()
    print(report(results, unscoped))
    print()
    for c in results:
        verdict = {
            "faster": "picks the faster plan",
            "close": "picks the slower plan, within 10%",
            "slower": "picks the SLOWER plan",
        }[c["auto_verdict"]]
        print(
            f"  auto {verdict}: {c['case']} [{_flt_name(c['filter'])}] -> {c['auto_chose']} "
            f"(pushdown/exact p50 {c['pushdown_over_exact']:.2f})"
        )
    for f in failures:
        print(f"FAIL {f}")
    if not failures:
        rounds = out["two_hop_max_rounds"]
        print(
            "  checks: every plan returns the naive ids"
            + (
                f"; 2-hop scopes answer in at most {rounds} rounds (bound {MAX_ROUNDS_2HOP})"
                if rounds is not None
                else ""
            )
        )
    out["markdown"] = markdown(results, unscoped, info["docs"])
    store.close()
    session.cluster.shutdown()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small HashEmbedding run (a test)")
    ap.add_argument("--json", help="write the results as JSON here")
    ap.add_argument("--markdown", help="write the table as Markdown here")
    ap.add_argument("--reps", type=int, default=None, help="repetitions per query (default 15)")
    ap.add_argument("--k", type=int, default=10, help="results per search (default 10)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N films")
    ap.add_argument("--embedding", choices=["minilm", "hash"], default="minilm")
    ap.add_argument("--fresh", action="store_true", help="drop the films table and reload it")
    ap.add_argument("--only", nargs="*", help="run only cases whose name contains one of these")
    ap.add_argument("--contact-points", default=os.environ.get("HOPRAG_CASSANDRA", "127.0.0.1"))
    args = ap.parse_args()
    if args.reps is None:
        args.reps = 2 if args.quick else 15
    if args.quick and args.limit is None:
        args.limit = 300
    if args.reps < 1:
        ap.error(f"--reps must be at least 1, got {args.reps}")
    if not 1 <= args.k <= 1000:
        ap.error(f"--k must be in 1..1000, got {args.k}")
    if args.limit is not None and args.limit < 10:
        ap.error(f"--limit must be at least 10 films, got {args.limit}")
    out = asyncio.run(amain(args))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
        print(f"  json: {args.json}")
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(out["markdown"] + "\n")
        print(f"  markdown: {args.markdown}")
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
