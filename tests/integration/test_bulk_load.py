"""The resumable bulk load from Python (`hoprag.stores.cassandra.bulk`), on the node: a load
interrupted mid-way and run again writes each document exactly once (the second run sends
only what the first did not record), a completed load writes nothing, a catalogue entry
that outlived its table (dropped and made again) is not trusted, another source or
`restart=True` starts from the first document, and a table loaded with another embedding is
refused before anything is written. (`hoprag load`, a command over it, is tested the same way
in test_cli_cassandra.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hoprag import Document
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.recording import record_statements
from hoprag.stores.cassandra import bulk
from hoprag.stores.cassandra.catalog import LoadCatalog
from hoprag.stores.cassandra.store import CassandraStore

DOCS = [
    Document(id=f"d{i:02d}", content=f"document number {i}", metadata={"n": i}) for i in range(50)
]


class Interrupted(Exception):
    pass


def _until(n: int) -> Iterator[Document]:
    """The documents, then an interruption after the `n`th (a crash mid-way through reading
    the source)."""
    for i, d in enumerate(DOCS):
        if i == n:
            raise Interrupted
        yield d


def _store(session: Any, keyspace: str, table: str = "bulk") -> CassandraStore:
    return CassandraStore(HashEmbedding(16), keyspace=keyspace, table=table, session=session)


def _inserts(log: list[tuple[str, Any]], table: str) -> list[str]:
    """The ids of the documents the statements in `log` inserted into `table`."""
    return [p[0] for text, p in log if text.startswith("INSERT INTO") and f".{table} " in text]


async def test_an_interrupted_load_resumes_and_writes_each_document_once(
    cassandra_session: Any, keyspace: str
) -> None:
    store = _store(cassandra_session, keyspace)
    with pytest.raises(Interrupted):
        await bulk.aload(store, _until(25), source="fifty", embedding_name="hash:16", batch=10)
    entry = LoadCatalog(cassandra_session, keyspace).get("bulk")
    assert entry is not None and (entry.written, entry.complete) == (20, False)

    starts: list[int] = []
    seen: list[int] = []
    with record_statements() as log:
        result = await bulk.aload(
            store, iter(DOCS), source="fifty", embedding_name="hash:16", batch=10,
            started=starts.append, progress=seen.append,
        )  # fmt: skip
    assert (result.written, result.skipped, result.added) == (50, 20, 30)
    assert starts == [20]
    assert seen[-1] == 50 and seen == sorted(seen) and min(seen) >= 20
    assert _inserts(log, "bulk") == [d.id for d in DOCS[20:]]  # the rest, each once
    entry = LoadCatalog(cassandra_session, keyspace).get("bulk")
    assert entry is not None and (entry.written, entry.complete) == (50, True)
    got = await (await store.aprepare(None)).aget([d.id for d in DOCS])
    assert [(h.id, h.document.content) for h in got] == [(d.id, d.content) for d in DOCS]

    with record_statements() as log:
        again = await bulk.aload(store, iter(DOCS), source="fifty", embedding_name="hash:16")
    assert again.already_complete and again.added == 0 and again.written == 50
    assert _inserts(log, "bulk") == []


async def test_another_source_or_restart_loads_from_the_first_document(
    cassandra_session: Any, keyspace: str
) -> None:
    store = _store(cassandra_session, keyspace, "fresh")
    with pytest.raises(Interrupted):
        await bulk.aload(store, _until(15), source="a", embedding_name="hash:16", batch=10)
    other = await bulk.aload(store, iter(DOCS[:12]), source="b", embedding_name="hash:16")
    assert (other.written, other.skipped) == (12, 0)
    with record_statements() as log:
        restarted = await bulk.aload(
            store, iter(DOCS[:12]), source="b", embedding_name="hash:16", restart=True
        )
    assert (restarted.written, restarted.skipped, restarted.already_complete) == (12, 0, False)
    assert _inserts(log, "fresh") == [d.id for d in DOCS[:12]]


@pytest.mark.parametrize("interrupted", [False, True], ids=["completed", "interrupted"])
async def test_a_load_whose_table_was_dropped_and_made_again_loads_every_document(
    cassandra_session: Any, keyspace: str, interrupted: bool
) -> None:
    table = f"remade_{int(interrupted)}"
    store = _store(cassandra_session, keyspace, table)
    docs = _until(25) if interrupted else iter(DOCS)
    try:
        await bulk.aload(store, docs, source="r", embedding_name="hash:16", batch=10)
    except Interrupted:
        assert interrupted
    cassandra_session.execute(f"DROP TABLE {keyspace}.{table}", timeout=120)
    again = _store(cassandra_session, keyspace, table)  # makes the table again, empty
    with record_statements() as log:
        result = await bulk.aload(again, iter(DOCS), source="r", embedding_name="hash:16")
    assert (result.written, result.skipped, result.already_complete) == (50, 0, False)
    assert _inserts(log, table) == [d.id for d in DOCS]
    rows = cassandra_session.execute(f"SELECT id FROM {keyspace}.{table}")
    assert sorted(r.id for r in rows) == [d.id for d in DOCS]


def test_the_sync_load_resumes_as_the_async_one_does(cassandra_session: Any, keyspace: str) -> None:
    store = _store(cassandra_session, keyspace, "sync")
    with pytest.raises(Interrupted):
        bulk.load(store, _until(7), source="s", embedding_name="hash:16", batch=3)
    result = bulk.load(store, iter(DOCS[:10]), source="s", embedding_name="hash:16", batch=3)
    assert (result.written, result.skipped) == (10, 6)
    entry = LoadCatalog(cassandra_session, keyspace).get("sync")
    assert entry is not None and (entry.written, entry.complete) == (10, True)
    rows = cassandra_session.execute(f"SELECT id FROM {keyspace}.sync")
    assert sorted(r.id for r in rows) == [d.id for d in DOCS[:10]]


async def test_a_table_loaded_with_another_embedding_is_refused_before_writing(
    cassandra_session: Any, keyspace: str
) -> None:
    store = _store(cassandra_session, keyspace, "named")
    await bulk.aload(store, iter(DOCS[:5]), source="five", embedding_name="hash:16")
    with record_statements() as log, pytest.raises(InvalidInputError) as caught:
        await bulk.aload(store, iter(DOCS), source="five", embedding_name="minilm")
    assert caught.value.argument == "embedding_name"
    assert "'hash:16'" in str(caught.value) and f"{keyspace}.named" in str(caught.value)
    assert _inserts(log, "named") == []


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"batch": 0}, "batch"),
        ({"source": ""}, "source"),
        ({"embedding_name": ""}, "embedding_name"),
        ({"restart": "yes"}, "restart"),
        ({"progress": 5}, "progress"),
        ({"catalog_consistency": "MOST"}, "catalog_consistency"),
    ],
)
async def test_bad_load_arguments_name_the_argument_and_write_nothing(
    cassandra_session: Any, keyspace: str, kwargs: dict[str, Any], argument: str
) -> None:
    store = _store(cassandra_session, keyspace, "bad")
    call = {"source": "s", "embedding_name": "hash:16", **kwargs}
    with pytest.raises(InvalidInputError) as caught:
        await bulk.aload(store, iter(DOCS), **call)
    assert caught.value.argument == argument
    assert LoadCatalog(cassandra_session, keyspace).get("bad") is None
    tables = cassandra_session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", [keyspace]
    )
    assert "bad" not in {r.table_name for r in tables}  # refused before set-up
