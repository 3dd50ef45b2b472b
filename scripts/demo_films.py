"""`scripts/demo --films`: the films in Cassandra 5.0, searched by the agents' tool
(`hoprag.tools.film_search_tool`) with structured arguments, beside plain vector search on the
question's text, both checked against SQL over movies.db (`films_questions.py`).

The films are loaded once into `<keyspace>.films` (MiniLM; `films_hash...` for `--embedding
hash[:DIM]`) with their declared fields (`hoprag.datasets.films.DECLARED_FIELDS`), and the load
is recorded in the keyspace's `hoprag_catalog` as `hoprag load films` records it: a later run
(or `hoprag ask --keyspace <keyspace>`) reuses a complete table, and an interrupted load resumes.
MiniLM vectors come through the on-disk cache (`CachedEmbedding`), so only the first run on a
machine embeds the films."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

from films_questions import QUESTIONS, Question, SqlAnswer, sql_answer

from hoprag import asearch, datasets
from hoprag.cli import Progress, embedding_dimension, make_embedding
from hoprag.datasets.films import DECLARED_FIELDS, movies_db_path
from hoprag.documents import Node
from hoprag.errors import HopragError
from hoprag.stores.cassandra.catalog import CatalogEntry, LoadCatalog
from hoprag.stores.cassandra.session import connect
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.tools import Statement, ToolAnswer, film_search_tool

SOURCE = json.dumps({"dataset": "films", "limit": None, "path": None}, sort_keys=True)
"""The catalogue's description of a whole-dataset load, as `hoprag load films` writes it."""
BATCH = 512
CQL_SHOWN = 2
WIDTH = 46


def table_for(spec: str) -> str:
    """The demo's table for an embedding spec: `films` for MiniLM, `films_hash_64` for hash."""
    if spec == "minilm":
        return "films"
    name, _, dim = spec.partition(":")
    return f"films_{re.sub(r'[^a-z0-9]', '_', name)}_{dim or 64}"


async def films_store(session: Any, keyspace: str, table: str, spec: str) -> CassandraStore:
    """The films table, loaded (or the rest of an interrupted load) unless the catalogue
    records a complete load of all the films with this embedding."""
    embedding = make_embedding(spec)
    dimension = embedding_dimension(embedding)
    catalog = LoadCatalog(session, keyspace)
    await asyncio.to_thread(catalog.create)
    prior = await asyncio.to_thread(catalog.get, table)
    if prior is not None and prior.embedding != spec:
        raise HopragError(
            f"{keyspace}.{table} was loaded with embedding {prior.embedding!r}, not {spec!r}; "
            "give another --table or --keyspace"
        )
    store = CassandraStore(
        embedding, keyspace=keyspace, table=table, session=session, dimension=dimension,
        fields=dict(DECLARED_FIELDS),
    )  # fmt: skip
    await store.asetup()
    declared = ", ".join(f"{f}={k}" for f, k in DECLARED_FIELDS)
    if prior is not None and prior.source == SOURCE and prior.complete:
        print(f"reusing {keyspace}.{table}: {prior.written} films, a complete load recorded "
              f"in {catalog.name}; declared fields: {declared}")  # fmt: skip
        return store
    docs = list(datasets.load("films"))
    skip = prior.written if prior is not None and prior.source == SOURCE else 0
    print(f"loading {len(docs)} films into {keyspace}.{table} ({spec}); declared fields: "
          f"{declared}" + (f"; resuming after {skip}" if skip else ""))  # fmt: skip

    def record(written: int, complete: bool) -> None:
        catalog.put(CatalogEntry(table, SOURCE, spec, dimension, written, complete))

    progress = Progress(len(docs), label="load films")
    progress.resume_from(skip)
    t0 = time.perf_counter()
    for start in range(skip, len(docs), BATCH):
        batch = docs[start : start + BATCH]

        def show(done: int, _total: int, base: int = start) -> None:
            progress.update(base + done)

        await store.aadd(batch, progress=show)
        await asyncio.to_thread(record, start + len(batch), False)
    progress.close()
    await asyncio.to_thread(record, len(docs), True)
    hits = getattr(embedding, "hits", None)
    cached = "" if hits is None else f" ({hits} vectors from the cache, {embedding.misses} new)"
    print(f"{len(docs) - skip} films embedded and written in {time.perf_counter() - t0:.1f}s"
          f"{cached}")  # fmt: skip
    return store


# --- printing ---------------------------------------------------------------------------------


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _call(arguments: dict[str, Any]) -> str:
    given = ", ".join(f"{k}={v!r}" for k, v in arguments.items() if v is not None)
    return f"film_search({given})"


def _short(value: Any) -> Any:
    """A bound value for the screen: a query vector as `<384 floats>`."""
    if isinstance(value, list) and len(value) > 8 and all(isinstance(x, float) for x in value):
        return f"<{len(value)} floats>"
    return [_short(v) for v in value] if isinstance(value, list) else value


def print_statements(statements: list[Statement]) -> None:
    """The tool-level statements with their parameters; of the CQL each sent, the count and
    the first few (text and bound values, abbreviated)."""
    print("  statements:")
    i = 0
    while i < len(statements):
        s = statements[i]
        if s.operation != "cql":
            given = s.parameters if isinstance(s.parameters, dict) else {}
            params = {k: v for k, v in given.items() if v is not None}
            print(f"    {s.operation:<7} {json.dumps(params, ensure_ascii=False, default=str)}")
            i += 1
            continue
        cql = []
        while i < len(statements) and statements[i].operation == "cql":
            cql.append(statements[i])
            i += 1
        print(f"    cql     {len(cql)} statement{'s' if len(cql) != 1 else ''}, e.g.")
        shown: dict[str, Statement] = {}
        for c in cql:  # the first of each distinct text
            shown.setdefault(" ".join(c.text.split()), c)
        for text, c in list(shown.items())[:CQL_SHOWN]:
            print(f"              {_clip(text, 100)}")
            print(f"              bound: {_clip(repr(_short(c.parameters)), 92)}")


def _label(node: Node | None, answer: SqlAnswer) -> str:
    if node is None:
        return ""
    year = node.metadata.get("year")
    mark = "+" if node.id in answer.correct else "-"
    return f"{mark} " + _clip(f"{node.metadata.get('title') or node.id} ({year})", WIDTH - 2)


def print_side_by_side(tool: list[Node], plain: list[Node], answer: SqlAnswer) -> None:
    """The tool's results beside plain vector search's, each marked + (correct by SQL) or -."""
    print(f"  {'the tool (+ correct by SQL)':<{WIDTH}}   plain vector search on the question")
    for i in range(max(len(tool), len(plain))):
        left = _label(tool[i] if i < len(tool) else None, answer)
        right = _label(plain[i] if i < len(plain) else None, answer)
        print(f"  {left:<{WIDTH}}   {right}")


def _resolved(answer: ToolAnswer) -> str:
    parts = []
    for name, c in answer.resolved.items():
        how = "exact" if c.score >= 1.0 else f"the only candidate, score {c.score:.2f}"
        parts.append(f"{name} {answer.arguments[name]!r} -> {c.field} = {c.value!r} "
                     f"({how}, {c.documents} films)")  # fmt: skip
    return "; ".join(parts) or "no entity"


# --- the questions ----------------------------------------------------------------------------


async def ask(n: int, q: Question, store: CassandraStore, db: Path) -> dict[str, Any]:
    """Run one question through the tool (answering its follow-up with `q.reply`) and plain
    vector search, print both, and return the figures."""
    tool = film_search_tool(store)
    print(f"\nQ{n}. {q.text}")
    print(f"  tool call: {_call(q.arguments)}")
    answer = await tool.arun(**q.arguments)
    follow_up: dict[str, Any] | None = None
    if answer.follow_up is not None:
        fu = answer.follow_up
        follow_up = fu.to_dict()
        print(f"  follow-up for {fu.parameter} {fu.text!r}: {fu.question}")
        print_statements(answer.statements)
        values = [c.value for c in fu.candidates]
        if not q.reply or any(v not in values for v in q.reply.values()):
            raise HopragError(f"Q{n}: the reply {q.reply} is not among the candidates {values}")
        arguments = {**q.arguments, **q.reply}
        print(f"  the user answers {', '.join(map(repr, q.reply.values()))}; "
              f"tool call: {_call(arguments)}")  # fmt: skip
        answer = await tool.arun(**arguments)
        if answer.follow_up is not None:
            raise HopragError(f"Q{n}: the reply still needs a follow-up: {answer.text}")
    print(f"  resolved: {_resolved(answer)}")
    print_statements(answer.statements)
    assert answer.stats is not None
    size = answer.stats.scope_size
    print(f"  scope: {'none (filters only)' if size is None else f'{size} films'}; plan "
          f"{answer.stats.plan}, {answer.stats.total_queries} queries")  # fmt: skip
    k = int(answer.arguments["limit"])
    plain = list(await asearch(q.text, store=store, k=k))
    sql = sql_answer(db, q, k)
    print_side_by_side(answer.nodes, plain, sql)
    tool_ok = sum(1 for n_ in answer.nodes if n_.id in sql.correct)
    plain_ok = sum(1 for n_ in plain if n_.id in sql.correct)
    what = f"{len(sql.years)} films answer it" + (
        f"; the newest {k} are from {min(sql.years[i] or 0 for i in sql.correct)} on"
        if q.newest and sql.correct
        else ""
    )
    print(f"  correct by SQL ({what}): the tool {tool_ok}/{len(answer.nodes)}, "
          f"plain vector search {plain_ok}/{len(plain)}")  # fmt: skip
    return {
        "question": q.text,
        "key": q.key,
        "arguments": answer.to_dict()["arguments"],
        "follow_up": follow_up,
        "resolved": answer.to_dict()["resolved"],
        "scope_size": size,
        "statements": {
            "tool": [s.to_dict() for s in answer.statements if s.operation != "cql"],
            "cql": sum(1 for s in answer.statements if s.operation == "cql"),
        },
        "sql_answers": len(sql.years),
        "tool_results": [{"id": x.id, "correct": x.id in sql.correct} for x in answer.nodes],
        "plain_results": [{"id": x.id, "correct": x.id in sql.correct} for x in plain],
        "tool_correct": tool_ok,
        "plain_correct": plain_ok,
    }


def print_summary(rows: list[dict[str, Any]]) -> None:
    print("\ncorrect results by SQL over movies.db (the tool | plain vector search, same k):")
    for i, r in enumerate(rows, 1):
        t, p = len(r["tool_results"]), len(r["plain_results"])
        print(f"  Q{i} {_clip(r['question'], 60):<60} {r['tool_correct']:>2}/{t:<2} | "
              f"{r['plain_correct']:>2}/{p:<2}  ({r['sql_answers']} in SQL)")  # fmt: skip


async def run(args: argparse.Namespace) -> None:
    """The films demo: load or reuse the table, ask the five questions, print the summary and
    write `--json` when asked."""
    table = args.table or table_for(args.embedding)
    db = movies_db_path()
    session = connect()
    try:
        store = await films_store(session, args.keyspace, table, args.embedding)
        # Warm up (statement preparation, connections) before the questions.
        await asearch("warm up", store=store, k=1)
        rows = [await ask(i, q, store, db) for i, q in enumerate(QUESTIONS, 1)]
    finally:
        session.cluster.shutdown()
    print_summary(rows)
    print(f"\nask your own: hoprag ask --keyspace {args.keyspace} --table {table} "
          "--actor 'Henry Fonda' --topic western --explain")  # fmt: skip
    if args.json:
        doc = {"keyspace": args.keyspace, "table": table, "embedding": args.embedding,
               "questions": rows}  # fmt: skip
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        await asyncio.to_thread(Path(args.json).write_text, text)
