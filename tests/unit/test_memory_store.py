"""MemoryStore specifics beyond the compliance suite: embedding models, input validation, and
integrity (copies in and out, reads and writes on several threads)."""

from __future__ import annotations

import functools
import math
import pickle
import queue
import sys
import threading

import anyio
import pytest

from hoprag import Document, MetadataEdge
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores import Hit, MemoryStore, Store
from hoprag.stores.memory import MemoryHit


class LangChainLike:
    """The LangChain `Embeddings` shape, with a native async method."""

    def __init__(self) -> None:
        self.inner = HashEmbedding(8)
        self.async_calls = 0

    def embed_query(self, text: str) -> list[float]:
        return self.inner(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.inner(t) for t in texts]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        self.async_calls += 1
        return self.embed_documents(texts)


async def test_embedding_models() -> None:
    model = LangChainLike()
    store = MemoryStore(embedding=model)
    await store.aadd([Document("a", "hello world"), Document("b", "other text")])
    assert model.async_calls == 1
    assert isinstance(store, Store)
    plain = MemoryStore(embedding=lambda text: HashEmbedding(8)(text))
    plain.add([Document("a", "hello world")])
    hit = plain.search(HashEmbedding(8)("hello world"), k=1)[0]
    assert hit.score == pytest.approx(1.0, abs=1e-6)
    assert len(plain) == 1 and plain.dim == 8


def test_validation() -> None:
    store = MemoryStore()
    with pytest.raises(InvalidInputError, match="embedding="):
        store.add([Document("a", "needs embedding")])
    store.add([Document("a", "x", {}, [1.0, 0.0])])
    with pytest.raises(
        InvalidInputError, match="dimension 3, but the store holds vectors of dimension 2"
    ):
        store.add([Document("b", "x", {}, [1.0, 0.0, 1.0])])
    with pytest.raises(InvalidInputError, match="finite floats"):
        Document("c", "x", {}, [math.nan, 1.0])
    with pytest.raises(InvalidInputError, match="zero"):
        store.add([Document("c", "x", {}, [0.0, 0.0])])
    with pytest.raises(InvalidInputError, match="k must be"):
        store.search([1.0, 0.0], k=-1)
    with pytest.raises(InvalidInputError, match="dimension"):
        store.search([1.0, 0.0, 0.0], k=1)
    with pytest.raises(InvalidInputError, match="documents"):
        store.add(Document("d", "x", {}, [1.0, 1.0]))  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="ids"):
        store.get("a")
    assert len(store) == 1


def test_many_documents_grow_the_matrix_and_upsert_keeps_one_row() -> None:
    store = MemoryStore(HashEmbedding(8))
    store.add([Document(f"d{i}", f"text {i}", {"i": i}) for i in range(100)])
    store.add([Document("d5", "changed", {"i": -1})])
    assert len(store) == 100
    assert [h.document.id for h in store.get(["d5", "d99"])] == ["d5", "d99"]
    assert store.search(HashEmbedding(8)("changed"), k=1, filter={"i": -1})[0].document.id == "d5"


# -- integrity (issue #17) --------------------------------------------------------------------


def test_a_document_acknowledged_on_one_thread_is_found_by_filters_on_another() -> None:
    """Every document whose `add` returned is seen by the next filtered read on any thread,
    while other threads keep (re)building the filter index concurrently."""
    store = MemoryStore()
    vec = [1.0, 0.0, 0.0, 0.0]
    # Many documents make each index rebuild long enough for adds to land in the middle of one.
    store.add([Document(f"s{i}", "s", {"kind": "old", "n": -1 - i}, vec) for i in range(1000)])
    store.add([Document("seed", "s", {"kind": "fresh", "n": -1}, vec)])
    acked: queue.Queue[str | None] = queue.Queue()
    checked: queue.Queue[str] = queue.Queue()
    stop = threading.Event()
    missed: list[str] = []
    errors: list[BaseException] = []

    def churn() -> None:  # filtered reads that rebuild the index after every add
        try:
            while not stop.is_set():
                store.search(vec, k=3, filter={"kind": "fresh"})
                store.get(["seed"], filter={"n": -1})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def check() -> None:  # the other thread: each acknowledged id must be found at once
        while (doc_id := acked.get()) is not None:
            if not store.get([doc_id], filter={"kind": "fresh"}):
                missed.append(doc_id)
            if not store.get([doc_id], filter={"n": int(doc_id[1:])}):
                missed.append(doc_id)
            checked.put(doc_id)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    threads = [threading.Thread(target=churn) for _ in range(3)]
    checker = threading.Thread(target=check)
    try:
        for t in [*threads, checker]:
            t.start()
        for i in range(500):
            store.add([Document(f"d{i}", "x", {"kind": "fresh", "n": i}, vec)])
            acked.put(f"d{i}")
            assert checked.get() == f"d{i}"  # checked before the next add
    finally:
        acked.put(None)
        checker.join()
        stop.set()
        for t in threads:
            t.join()
        sys.setswitchinterval(old)
    assert not errors
    assert missed == []
    assert len(store.search(vec, k=1000, filter={"kind": "fresh"})) == 501


def test_integers_beyond_2_to_53_stay_apart_in_filters_and_edges() -> None:
    store = MemoryStore()
    vec = [1.0, 0.0]
    store.add(
        [Document("a", "", {"pid": 2**60}, vec), Document("b", "", {"pid": [2**60 + 1]}, vec)]
    )
    assert [h.id for h in store.search(vec, k=5, filter={"pid": 2**60})] == ["a"]
    assert [h.id for h in store.search(vec, k=5, filter={"pid": 2**60 + 1})] == ["b"]
    query = store.prepare(vec)
    edge = MetadataEdge("pid", 2**60 + 1)
    (edge_hits,) = anyio.run(functools.partial(query.aadjacent_many, [edge], k=5))
    assert [h.id for h in edge_hits] == ["b"]


def test_returned_hits_copy_the_stored_document_lazily() -> None:
    store = MemoryStore()
    store.add([Document("a", "x", {"tags": ["t"], "loc": {"city": "Oslo"}}, [3.0, 4.0])])
    hit, again = store.get(["a"]) + store.get(["a"])
    assert isinstance(hit, MemoryHit)
    first = hit.document
    assert hit.document is first  # one copy per hit, made on first access
    assert first is not again.document and first.metadata is not again.document.metadata
    assert first.metadata["tags"] is not again.document.metadata["tags"]
    assert first.embedding == [3.0, 4.0] and first.embedding is not again.document.embedding
    first.metadata["tags"].append("u")
    first.metadata["loc"]["city"] = "Rome"
    assert store.get(["a"], filter={"tags": "u"}) == []
    assert store.get(["a"], filter={"loc.city": "Oslo"}) != []
    bare = store.get(["a"], include_embeddings=False)[0]
    assert bare.document.embedding is None and bare == Hit(bare.document, None)
    assert pickle.loads(pickle.dumps(hit)) == hit


def test_the_first_adds_of_two_threads_agree_on_one_dimension() -> None:
    store = MemoryStore()
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def add(dim: int) -> None:
        barrier.wait()
        try:
            store.add([Document(f"d{dim}", "x", {}, [1.0] * dim)])
            outcomes.append("ok")
        except InvalidInputError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=add, args=(d,)) for d in (2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes)[-1] == "ok" and "dimension" in sorted(outcomes)[0]
    assert len(store) == 1 and store.dim in (2, 3)


async def test_lexical_search_follows_upserts_and_reads_no_stale_text() -> None:
    from hoprag.embeddings import HashEmbedding

    store = MemoryStore(HashEmbedding(8))
    await store.aadd([Document("a", "zebra stripes"), Document("b", "plain horse")])
    query = await store.aprepare(HashEmbedding(8)("zebra"))
    assert [h.id for h in await query.alexical("zebra", k=5)] == ["a"]
    await store.aadd([Document("a", "spotted leopard")])
    assert await query.alexical("zebra", k=5) == []
    assert [h.id for h in await query.alexical("leopard horse", k=5)] == ["a", "b"]


def test_a_range_on_text_is_refused_and_a_range_over_text_mixed_with_its_kind_is_answered() -> None:
    emb = HashEmbedding(8)
    store = MemoryStore(embedding=emb)
    assert store.search(emb("x"), k=5, filter={"title": {"$gt": 5}}) == []  # nothing stored
    store.add(
        [
            Document("a", "a", {"title": "Red River", "year": 1948, "when": "2020-06-15"}),
            Document("b", "b", {"title": "Fort Apache", "year": "unknown", "when": "later"}),
        ]
    )
    with pytest.raises(InvalidInputError, match="a range on 'title' compares numbers") as e:
        store.search(emb("x"), k=5, filter={"title": {"$gt": 5}})
    assert e.value.argument == "filter['title']['$gt']"
    with pytest.raises(InvalidInputError, match="compares dates"):
        store.search(emb("x"), k=5, filter={"$or": [{"year": 1}, {"title": {"$lt": "2020-01-01"}}]})
    # A field that holds text beside numbers (or beside ISO dates) answers the range.
    assert [h.id for h in store.search(emb("x"), k=5, filter={"year": {"$gte": 1900}})] == ["a"]
    assert [h.id for h in store.search(emb("x"), k=5, filter={"when": {"$gte": "2020-01-01"}})] == [
        "a"
    ]
