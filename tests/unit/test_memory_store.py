"""MemoryStore specifics beyond the compliance suite: embedding models and input validation."""

from __future__ import annotations

import math

import pytest

from hoprag import Document
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores import MemoryStore, Store


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
