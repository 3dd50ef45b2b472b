"""Holder counts on CassandraStore (issue #53): an add or delete that failed after its
ledger record and is run again counts each document once; counts follow `aupdate_metadata`;
a table keeps its counts when opened without asking, refuses them when it holds uncounted
rows, and starts over when dropped and made again; a hop's counts are one burst of reads.
(The compliance suite compares the counts with a recount after every kind of write.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from failed_writes import Failed, fail_once
from hoprag import Document, MetadataEdge
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.testing.compliance.holders import recount

pytestmark = pytest.mark.integration

DIM = 8
EDGES = [MetadataEdge("tag", t) for t in ("a", "b", "c")] + [MetadataEdge("kind", "x")]


def _store(session: Any, keyspace: str, table: str, **options: Any) -> CassandraStore:
    return CassandraStore(HashEmbedding(DIM), keyspace=keyspace, table=table, session=session,
                          **options)  # fmt: skip


def _doc(doc_id: str, tags: list[str], **meta: Any) -> Document:
    return Document(doc_id, f"text of {doc_id}", {"tag": tags, **meta})


async def _assert_counted(store: CassandraStore, docs: list[Document]) -> None:
    """The store's counts are a recount of `docs`, and its documents are counted once."""
    held = [d.metadata for d in docs]
    assert await store.aholders(EDGES) == recount(held, EDGES)
    holders = store.layout.holders
    assert holders is not None
    row = store.session.execute(
        f"SELECT holders FROM {store.keyspace}.hoprag_holders WHERE table_key = %s "
        "AND value_token = ''",
        (holders,),
    ).one()
    assert row[0] == len(docs)


@pytest.mark.parametrize(
    ("method", "matching"),
    [
        ("write_groups", "hoprag_holders SET"),  # the rows are written, no counter moved yet
        ("write_all", "INSERT INTO"),  # the ledger records what is counted, no row written
    ],
)
async def test_a_replacement_that_failed_and_is_retried_counts_each_document_once(
    cassandra_session: Any, keyspace: str, method: str, matching: str
) -> None:
    store = _store(cassandra_session, keyspace, "retried", holder_counts=True)
    docs = [_doc("d1", ["a", "b"], kind="x"), _doc("d2", ["b"]), _doc("d3", ["c"])]
    await store.aadd(docs)
    changed = [_doc("d1", ["c"]), _doc("d4", ["a"], kind="x")]
    fail_once(store, method, matching)
    with pytest.raises(Failed):
        await store.aadd(changed, concurrency=1)  # one write at a time: nothing after the failure
    await store.aadd(changed)  # the retry
    await _assert_counted(store, [changed[0], docs[1], docs[2], changed[1]])


async def test_a_failed_add_followed_by_another_write_counts_what_the_rows_hold(
    cassandra_session: Any, keyspace: str
) -> None:
    """The failed add is never retried: the next add of the id starts from the record."""
    store = _store(cassandra_session, keyspace, "moved_on", holder_counts=True)
    await store.aadd([_doc("d1", ["a"]), _doc("d2", ["a", "b"])])
    fail_once(store, "write_groups", "hoprag_holders SET")
    with pytest.raises(Failed):
        await store.aadd([_doc("d1", ["b"])], concurrency=1)
    final = [_doc("d1", ["c"], kind="x"), _doc("d2", ["a", "b"])]
    await store.aadd(final[:1])
    await _assert_counted(store, final)


async def test_a_delete_that_failed_at_the_rows_and_is_retried_takes_each_document_back_once(
    cassandra_session: Any, keyspace: str
) -> None:
    store = _store(cassandra_session, keyspace, "deleted", holder_counts=True)
    docs = [_doc("d1", ["a", "b"]), _doc("d2", ["b"], kind="x"), _doc("d3", ["c"])]
    await store.aadd(docs)
    fail_once(store, "write_all", f"DELETE FROM {keyspace}.deleted")
    with pytest.raises(Failed):
        await store.adelete(["d1", "d2"])
    assert await store.adelete(["d1", "d2"]) == 2  # the rows were still there
    await _assert_counted(store, [docs[2]])


async def test_counts_follow_a_metadata_update(cassandra_session: Any, keyspace: str) -> None:
    store = _store(cassandra_session, keyspace, "updated", holder_counts=True)
    await store.aadd([_doc("d1", ["a"]), _doc("d2", ["a", "b"], kind="x")])
    final = [_doc("d1", ["b", "c"], kind="x"), _doc("d2", [])]
    await store.aupdate_metadata(final)
    await _assert_counted(store, final)


async def test_a_table_with_counts_keeps_them_when_a_store_opens_it_without_asking(
    cassandra_session: Any, keyspace: str
) -> None:
    docs = [_doc("d1", ["a"]), _doc("d2", ["a", "c"])]
    await _store(cassandra_session, keyspace, "kept", holder_counts=True).aadd(docs)
    later = _store(cassandra_session, keyspace, "kept")
    await later.aadd([_doc("d3", ["c"])])
    await later.adelete(["d1"])
    await _assert_counted(later, [docs[1], _doc("d3", ["c"])])


async def test_counts_are_refused_on_a_table_with_uncounted_rows_and_unknown_without_them(
    cassandra_session: Any, keyspace: str
) -> None:
    plain = _store(cassandra_session, keyspace, "plain")
    await plain.aadd([_doc("d1", ["a"])])
    assert await plain.aholders(EDGES) == [None] * len(EDGES)
    with pytest.raises(InvalidInputError, match="without holder counts") as caught:
        await _store(cassandra_session, keyspace, "plain", holder_counts=True).asetup()
    assert caught.value.argument == "holder_counts"
    await plain.adelete(["d1"])  # empty now: it can be given counts
    counted = _store(cassandra_session, keyspace, "plain", holder_counts=True)
    await counted.aadd([_doc("d2", ["b"])])
    await _assert_counted(counted, [_doc("d2", ["b"])])


async def test_a_table_dropped_and_made_again_starts_from_no_counts(
    cassandra_session: Any, keyspace: str
) -> None:
    first = _store(cassandra_session, keyspace, "again", holder_counts=True)
    await first.aadd([_doc("d1", ["a"]), _doc("d2", ["a"])])
    cassandra_session.execute(f"DROP TABLE {keyspace}.again")
    second = _store(cassandra_session, keyspace, "again", holder_counts=True)
    await second.aadd([_doc("d3", ["a"])])
    await _assert_counted(second, [_doc("d3", ["a"])])


async def test_a_hops_counts_are_one_burst_of_key_reads(
    cassandra_session: Any, keyspace: str
) -> None:
    store = _store(cassandra_session, keyspace, "burst", holder_counts=True)
    await store.aadd([_doc("d1", ["a", "b"])])
    ex = store.executor
    real = ex.burst
    bursts: list[list[Any]] = []

    async def counting(calls: Any, *args: Any, **kwargs: Any) -> Any:
        bursts.append(list(calls))
        return await real(calls, *args, **kwargs)

    ex.burst = counting  # type: ignore[method-assign]
    edges = [*EDGES, MetadataEdge("tag", "a")]  # one value twice: read once
    assert await store.aholders(edges) == [1, 1, 0, 0, 1]
    assert len(bursts) == 1 and len(bursts[0]) == 4


async def test_a_recount_repairs_counters_a_failed_update_left_off(
    cassandra_session: Any, keyspace: str
) -> None:
    """Counters off in both directions, one for a value no row holds, and a stale ledger
    record: `arecount_holders` sets them to the rows' counts and drops the record."""
    store = _store(cassandra_session, keyspace, "recount", holder_counts=True)
    other = _store(cassandra_session, keyspace, "neighbour", holder_counts=True)
    docs = [_doc("d1", ["a", "b"], kind="x"), _doc("d2", ["b"])]
    await store.aadd(docs)
    await other.aadd([_doc("n1", ["a"])])
    key = store.layout.holders
    update = (
        f"UPDATE {keyspace}.hoprag_holders SET holders = holders + %s WHERE table_key = %s "
        "AND value_token = %s"
    )
    for delta, token in ((5, 'tag="a"'), (-1, 'tag="b"'), (2, 'tag="zzz"'), (1, "")):
        cassandra_session.execute(update, (delta, key, token))
    cassandra_session.execute(
        f"INSERT INTO {keyspace}.hoprag_lexicon_pending (table_name, id, terms, counted) "
        "VALUES (%s, 'd1', {'tag=\"c\"'}, 1)",
        (key,),
    )
    assert await store.arecount_holders() == 4
    await _assert_counted(store, docs)
    assert await store.aholders([MetadataEdge("tag", "zzz")]) == [0]
    await store.aadd([_doc("d1", ["c"])])  # the stale record is gone: the row decides
    await _assert_counted(store, [_doc("d1", ["c"]), docs[1]])
    await _assert_counted(other, [_doc("n1", ["a"])])  # another table's counters untouched
    assert await store.arecount_holders() == 0
    with pytest.raises(InvalidInputError) as caught:
        await _store(cassandra_session, keyspace, "uncounted").arecount_holders()
    assert caught.value.argument == "holder_counts"


async def test_hoprag_load_holder_counts_keeps_counts_that_delete_and_sync_follow(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    records = [{"id": f"d{i}", "text": f"text {i}", "tag": ["a", "b"][: 1 + i % 2],
                "kind": "x" if i < 3 else "y"} for i in range(6)]  # fmt: skip
    f = tmp_path / "docs.jsonl"

    def hoprag(*args: str) -> None:
        r = subprocess.run([sys.executable, "-m", "hoprag.cli", *args, "--contact-points",
                            cassandra_contact_points, "--keyspace", keyspace],
                           capture_output=True, text=True, check=False, timeout=300)  # fmt: skip
        assert r.returncode == 0, r.stdout + r.stderr

    async def counted(kept: list[dict[str, Any]]) -> None:
        store = _store(cassandra_session, keyspace, "counted")
        got = await store.aholders(EDGES)
        assert store.layout.holders is not None  # opened without asking: counts kept
        held = [{k: v for k, v in r.items() if k not in ("id", "text")} for r in kept]
        assert got == recount(held, EDGES)
        assert got[0] == sum("a" in r["tag"] for r in kept)

    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    hoprag("load", "jsonl", "--path", str(f), "--table", "counted", "--embedding",
           f"hash:{DIM}", "--holder-counts")  # fmt: skip
    await counted(records)
    hoprag("delete", "--table", "counted", "--id", "d1", "--id", "d4")
    await counted([r for r in records if r["id"] not in ("d1", "d4")])
    changed = [{**r, "tag": ["c"]} if r["id"] == "d0" else r for r in records[:4]]
    f.write_text("".join(json.dumps(r) + "\n" for r in changed))
    hoprag("load", "jsonl", "--path", str(f), "--table", "counted", "--embedding",
           f"hash:{DIM}", "--sync")  # fmt: skip
    await counted(changed)
