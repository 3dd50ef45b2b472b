"""The lexical index converges to the rows after any interruption (issue #50, defects 5, 10 and
11): an add that failed after its rows and is retried leaves no posting of the old text, a
`hoprag load --lexical` interrupted and resumed counts every document once, and a term longer
than a Cassandra key is skipped by both stores alike, with nothing half-written."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from cli_load import interrupt_after, start_interruptible
from failed_writes import Failed, fail_once
from hoprag import Document
from hoprag.embeddings import HashEmbedding
from hoprag.lexical import MAX_TERM_BYTES, Bm25Index
from hoprag.stores import MemoryStore
from hoprag.stores.cassandra.store import CassandraStore

pytestmark = pytest.mark.integration

DIM = 16


def _store(session: Any, keyspace: str, table: str) -> CassandraStore:
    return CassandraStore(HashEmbedding(DIM), keyspace=keyspace, table=table, session=session,
                          lexical=True)  # fmt: skip


async def _bm25(store: Any, text: str) -> list[tuple[str, float]]:
    prepared = await store.aprepare(HashEmbedding(DIM)("q"))
    return [(h.id, h.lexical) for h in await prepared.alexical(text, k=20)]


def _reference(texts: dict[str, str], text: str) -> list[tuple[str, Any]]:
    index = Bm25Index()
    for doc_id, content in texts.items():
        index.add(doc_id, content)
    return [(i, pytest.approx(s, rel=1e-9)) for i, s in index.search(text, 20)]


@pytest.mark.parametrize("step", ["postings", "counters"])
async def test_a_replacement_that_failed_after_its_rows_and_is_retried_keeps_no_old_postings(
    cassandra_session: Any, keyspace: str, step: str
) -> None:
    """The row already holds the new text when the postings' or counters' write fails; the
    retried add still takes back every posting of the old text and counts the document once."""
    store = _store(cassandra_session, keyspace, f"retried_{step}")
    texts = {"a": "zebra stripes savanna", "b": "lions of the savanna", "c": "zebra crossing"}
    await store.aadd([Document(i, t) for i, t in texts.items()])
    if step == "postings":
        fail_once(store, "write_groups", "hoprag_postings")
    else:
        fail_once(store, "execute", "hoprag_lexicon SET")
    with pytest.raises(Failed):
        await store.aadd([Document("a", "giraffe necks")])
    texts["a"] = "giraffe necks"
    await store.aadd([Document("a", "giraffe necks")])  # the retry
    assert await _bm25(store, "zebra") == _reference(texts, "zebra")  # "c" alone
    assert await _bm25(store, "giraffe savanna") == _reference(texts, "giraffe savanna")
    stats = cassandra_session.execute(
        f"SELECT documents, length FROM {keyspace}.hoprag_lexicon WHERE table_name = %s",
        (f"retried_{step}",),
    ).one()
    assert (stats[0], stats[1]) == (3, 2 + 2 + 2)  # "of" and "the" are no terms


async def test_an_add_that_failed_then_wrote_other_text_leaves_no_posting_of_either(
    cassandra_session: Any, keyspace: str
) -> None:
    """A failed add of text B after A, then an add of C: no posting of A's or B's terms is
    left, since the ledger kept every term that might have one."""
    store = _store(cassandra_session, keyspace, "three_texts")
    await store.aadd([Document("a", "alpha apple"), Document("z", "zulu apple")])
    fail_once(store, "write_groups", "hoprag_postings")
    with pytest.raises(Failed):
        await store.aadd([Document("a", "bravo banana")])
    await store.aadd([Document("a", "charlie cherry")])
    texts = {"a": "charlie cherry", "z": "zulu apple"}
    for word in ("alpha", "bravo banana", "charlie", "apple"):
        assert await _bm25(store, word) == _reference(texts, word), word


def test_an_interrupted_lexical_load_resumed_counts_every_document_once(
    cassandra_session: Any, cassandra_contact_points: str, keyspace: str, tmp_path: Path
) -> None:
    """SIGINT part-way through `hoprag load --lexical`, then the same command: the counters
    count every document once and BM25 ranks and scores as an index of the file does."""
    path = tmp_path / "notes.jsonl"
    words = ["otter", "heron", "badger", "marten", "plover", "vole", "stoat", "wren"]
    texts = {
        f"n{i}": f"note {i} on the {words[i % 8]} and the {words[(i * 3) % 8]} near water"
        for i in range(1200)
    }
    path.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in texts.items()))
    command = [sys.executable, "-m", "hoprag.cli", "load", "jsonl", "--path", str(path),
               "--table", "notes", "--embedding", f"hash:{DIM}", "--lexical", "--batch", "40",
               "--keyspace", keyspace, "--contact-points", cassandra_contact_points]  # fmt: skip
    code, err = interrupt_after(command, cassandra_session, keyspace, "notes", 400)
    assert code == 130, err
    resumed = start_interruptible(command)
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert "resuming" in err
    stats = cassandra_session.execute(
        f"SELECT documents, length FROM {keyspace}.hoprag_lexicon WHERE table_name = 'notes'"
    ).one()
    reference = Bm25Index()
    for doc_id, content in texts.items():
        reference.add(doc_id, content)
    assert stats[0] == len(texts)
    store = CassandraStore(HashEmbedding(DIM), keyspace=keyspace, table="notes",
                           session=cassandra_session, create_schema=False)  # fmt: skip
    for text in ("otter water", "plover", "note 7 wren"):
        got = anyio.run(_bm25, store, text)
        assert got == _reference(texts, text), text


async def test_a_term_longer_than_any_key_is_skipped_by_both_stores_alike(
    cassandra_session: Any, keyspace: str
) -> None:
    """A word over `MAX_TERM_BYTES` is no term in documents or queries, on both stores: the
    add writes row and postings whole, and searching the word finds nothing on either."""
    long_word = "x" * 70_000
    docs = [Document("a", f"short words {long_word} here"), Document("b", "short other")]
    cassandra = _store(cassandra_session, keyspace, "long_terms")
    await cassandra.aadd(docs)
    memory = MemoryStore(HashEmbedding(DIM))
    await memory.aadd(docs)
    for text in (long_word, "short words", "x" * (MAX_TERM_BYTES + 1)):
        assert await _bm25(cassandra, text) == await _bm25(memory, text)
    assert await _bm25(cassandra, long_word) == []
    assert [i for i, _ in await _bm25(cassandra, "short words")] == ["a", "b"]
    row = cassandra_session.execute(
        f"SELECT lexicon_length FROM {keyspace}.long_terms WHERE id = 'a'"
    ).one()
    assert row[0] == 3  # short, words, here
