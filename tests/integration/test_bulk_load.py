"""The resumable bulk load from Python (`hoprag.stores.cassandra.bulk`), on the node: a load
interrupted mid-way and run again writes each document exactly once (the second run sends
only what the first did not record), a completed load writes nothing, a catalogue entry
that outlived its table (dropped and made again) is not trusted, another source or
`restart=True` starts from the first document, and a table loaded with another embedding is
refused before anything is written. The mirror (`bulk.amirror`) makes the table hold exactly
an edited source, writing only what changed, also after an interrupted load. (`hoprag load`,
a command over both, is tested the same way in test_cli_cassandra.py.)"""

from __future__ import annotations

import json
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


# --- the mirror (`hoprag load --sync` for Python) ---------------------------------------------


def _edited() -> list[Document]:
    """DOCS without d01, with d02's content and d03's metadata changed, and a new d99."""
    docs = [d for d in DOCS if d.id != "d01"]
    docs[1] = Document("d02", "document number 2, revised", {"n": 2})
    docs[2] = Document("d03", "document number 3", {"n": 3, "tag": "new"})
    return [*docs, Document("d99", "document number 99", {"n": 99})]


def _table(session: Any, keyspace: str, table: str) -> dict[str, tuple[str, str]]:
    rows = session.execute(f"SELECT id, content, metadata FROM {keyspace}.{table}")
    return {r.id: (r.content, r.metadata) for r in rows}


async def test_a_mirror_makes_the_table_hold_exactly_an_edited_source(
    cassandra_session: Any, keyspace: str
) -> None:
    store = _store(cassandra_session, keyspace, "mirrored")
    await bulk.aload(store, iter(DOCS), source="v1", embedding_name="hash:16")
    edited = _edited()
    phases: list[str] = []
    with record_statements() as log:
        result = await bulk.amirror(
            store, iter(edited), source="v2", embedding_name="hash:16", batch=10,
            progress=lambda phase, _n: phases.append(phase),
        )  # fmt: skip
    assert result.mirror is not None
    assert result.mirror.summary() == "1 added, 2 updated, 47 unchanged, 1 deleted"
    assert (result.written, result.skipped, result.added) == (50, 47, 3)
    assert sorted(_inserts(log, "mirrored")) == ["d02", "d03", "d99"]
    assert sorted(set(phases)) == ["compare", "delete", "read"]
    held = _table(cassandra_session, keyspace, "mirrored")
    assert {i: (c, json.loads(m)) for i, (c, m) in held.items()} == {
        d.id: (d.content, d.metadata) for d in edited
    }
    entry = LoadCatalog(cassandra_session, keyspace).get("mirrored")
    assert entry is not None and (entry.source, entry.written, entry.complete) == ("v2", 50, True)

    with record_statements() as log:
        again = bulk.mirror(store, iter(edited), source="v2", embedding_name="hash:16")
    assert (
        again.mirror is not None
        and again.mirror.summary() == "0 added, 0 updated, 50 unchanged, 0 deleted"
    )
    assert _inserts(log, "mirrored") == []


async def test_a_mirror_after_an_interrupted_load_writes_only_what_is_missing(
    cassandra_session: Any, keyspace: str
) -> None:
    store = _store(cassandra_session, keyspace, "halfway")
    with pytest.raises(Interrupted):
        await bulk.aload(store, _until(25), source="a", embedding_name="hash:16", batch=10)
    with record_statements() as log:
        result = await bulk.amirror(store, iter(DOCS), source="a", embedding_name="hash:16")
    assert result.mirror is not None
    assert result.mirror.summary() == "30 added, 0 updated, 20 unchanged, 0 deleted"
    assert _inserts(log, "halfway") == [d.id for d in DOCS[20:]]
    assert sorted(_table(cassandra_session, keyspace, "halfway")) == [d.id for d in DOCS]


async def test_a_mirror_into_a_table_holding_another_embedding_is_refused_before_writing(
    cassandra_session: Any, keyspace: str
) -> None:
    store = _store(cassandra_session, keyspace, "other")
    await bulk.aload(store, iter(DOCS[:5]), source="five", embedding_name="hash:16")
    with record_statements() as log, pytest.raises(InvalidInputError) as caught:
        await bulk.amirror(store, iter(DOCS[:2]), source="two", embedding_name="minilm")
    assert caught.value.argument == "embedding_name"
    assert not [text for text, _ in log if text.startswith(("INSERT INTO", "DELETE"))]
    assert len(_table(cassandra_session, keyspace, "other")) == 5

    # Dropped and made again, the table holds nothing of the old embedding: the mirror loads.
    cassandra_session.execute(f"DROP TABLE {keyspace}.other", timeout=120)
    remade = CassandraStore(HashEmbedding(8), keyspace=keyspace, table="other",
                            session=cassandra_session)  # fmt: skip
    result = await bulk.amirror(remade, iter(DOCS[:2]), source="two", embedding_name="hash:8")
    assert (
        result.mirror is not None
        and result.mirror.summary() == "2 added, 0 updated, 0 unchanged, 0 deleted"
    )
    entry = LoadCatalog(cassandra_session, keyspace).get("other")
    assert entry is not None and (entry.embedding, entry.dimension) == ("hash:8", 8)
