"""The store compliance suite: what every hoprag Store must do, written once.

Use it by subclassing `StoreCompliance` in a test module and providing a `store_factory`
fixture (in that module, the class, or a conftest):

    @pytest.fixture
    def store_factory() -> StoreFactory:
        async def make(embedding, documents):   # -> a store holding exactly `documents`
            store = MyStore(embedding=embedding, ...)   # fresh, empty collection
            await store.aadd(documents)
            return store
        return make

Every call must return a store holding only the given documents. The documents come from
`shared_data.compliance_documents()`; scores are compared with a tolerance (float32 storage
and approximate indexes are fine on twelve documents)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np
import pytest

from hoprag import Document, Eager, IdEdge, MetadataEdge, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.stores import Hit
from shared_data import COMPLIANCE_DIM, compliance_documents, unit_vectors

StoreFactory = Callable[[Any, list[Document]], Awaitable[Any]]

TOL = 1e-3


def _query(seed: int = 99) -> list[float]:
    return [float(x) for x in unit_vectors(1, COMPLIANCE_DIM, seed=seed)[0]]


def _cos(doc: Document, q: Sequence[float]) -> float:
    a = np.asarray(doc.embedding)
    b = np.asarray(q)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _ranked(docs: list[Document], q: list[float]) -> list[str]:
    return [d.id for d in sorted(docs, key=lambda d: _cos(d, q), reverse=True)]


def _ids(hits: list[Hit]) -> list[str]:
    return [h.document.id for h in hits]


class StoreCompliance:
    """Behaviour shared by all stores. Subclasses provide the `store_factory` fixture."""

    @pytest.fixture
    def docs(self) -> list[Document]:
        return compliance_documents()

    @pytest.fixture
    async def store(self, store_factory: StoreFactory, docs: list[Document]) -> Any:
        return await store_factory(HashEmbedding(COMPLIANCE_DIM), docs)

    # -- search -----------------------------------------------------------------------------

    @pytest.mark.parametrize("k", [1, 3, 12, 50])
    async def test_search_order_and_k(self, store: Any, docs: list[Document], k: int) -> None:
        q = _query()
        hits = await store.asearch(q, k=k)
        assert _ids(hits) == _ranked(docs, q)[:k]
        by_id = {d.id: d for d in docs}
        for h in hits:
            assert h.score == pytest.approx(_cos(by_id[h.document.id], q), abs=TOL)
            assert -1.0 - 1e-6 <= h.score <= 1.0 + 1e-6
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    async def test_search_returns_content_metadata_and_embedding(
        self, store: Any, docs: list[Document]
    ) -> None:
        q = _query()
        hit = (await store.asearch(q, k=1))[0]
        want = next(d for d in docs if d.id == hit.document.id)
        assert hit.document.content == want.content
        assert dict(hit.document.metadata) == want.metadata
        assert hit.document.embedding is not None
        assert np.allclose(
            np.asarray(hit.document.embedding) / np.linalg.norm(hit.document.embedding),
            np.asarray(want.embedding),
            atol=1e-5,
        )

    async def test_search_without_embeddings(self, store: Any) -> None:
        hits = await store.asearch(_query(), k=3, include_embeddings=False)
        assert len(hits) == 3
        assert all(isinstance(h.score, float) for h in hits)

    async def test_search_k_zero(self, store: Any) -> None:
        assert await store.asearch(_query(), k=0) == []

    # -- filters ----------------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("flt", "expected"),
        [
            ({"type": "mammal"}, {"d0", "d1", "d8", "d11"}),
            ({"keywords": "claws"}, {"d0", "d2", "d6"}),
            ({"type": "mammal", "keywords": "fur"}, {"d0", "d1", "d8"}),
            ({"keywords": "wings", "type": "insect"}, {"d9"}),
            ({"loc.city": "Oslo"}, {"d1", "d6", "d11"}),
            ({"loc.city": "Oslo", "type": "mammal"}, {"d1", "d11"}),
            ({"n": 1}, {"d0", "d2", "d11"}),
            ({"n": 1.0}, {"d0", "d2", "d11"}),
            ({"n": 2.5}, {"d4"}),
            ({"flag": True}, {"d3"}),
            ({"flag": 1}, {"d5"}),
            ({"flag": False}, {"d9"}),
            ({"type": "nothing"}, set()),
            ({"keywords": "fur", "type": "bird"}, set()),
        ],
    )
    async def test_search_filter(self, store: Any, flt: dict[str, Any], expected: set[str]) -> None:
        q = _query()
        hits = await store.asearch(q, k=12, filter=flt)
        assert set(_ids(hits)) == expected
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    # -- get --------------------------------------------------------------------------------

    async def test_get_order_and_missing(self, store: Any) -> None:
        hits = await store.aget(["d5", "nope", "d0", "d3"])
        assert _ids(hits) == ["d5", "d0", "d3"]
        assert all(h.score is None for h in hits)

    async def test_get_with_filter_and_scores(self, store: Any, docs: list[Document]) -> None:
        q = _query()
        hits = await store.aget(["d0", "d2", "d1", "d4"], filter={"type": "mammal"}, embedding=q)
        assert _ids(hits) == ["d0", "d1"]
        by_id = {d.id: d for d in docs}
        for h in hits:
            assert h.score == pytest.approx(_cos(by_id[h.document.id], q), abs=TOL)

    async def test_get_empty(self, store: Any) -> None:
        assert await store.aget([]) == []
        assert await store.aget(["nope"]) == []

    # -- adjacency --------------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("edge", "expected"),
        [
            (MetadataEdge("type", "bird"), {"d2", "d3"}),
            (MetadataEdge("keywords", "scales"), {"d5", "d6", "d7"}),
            (MetadataEdge("cites", "d0"), {"d3"}),
            (MetadataEdge("cites", "d8"), {"d10"}),
            (MetadataEdge("loc.city", "Oslo"), {"d1", "d6", "d11"}),
            (MetadataEdge("loc.zip", 1), {"d8"}),
            (MetadataEdge("loc.zip", 2.0), {"d11"}),
            (MetadataEdge("n", 1), {"d0", "d2", "d11"}),
            (MetadataEdge("flag", True), {"d3"}),
            (MetadataEdge("tag", "solo"), {"d10"}),
            (MetadataEdge("keywords", "nothing"), set()),
            (MetadataEdge("absent_field", "x"), set()),
        ],
    )
    async def test_adjacent_metadata_edge(
        self, store: Any, docs: list[Document], edge: MetadataEdge, expected: set[str]
    ) -> None:
        q = _query()
        hits = await store.aadjacent(edge, q, k=12)
        assert set(_ids(hits)) == expected
        by_id = {d.id: d for d in docs}
        assert _ids(hits) == _ranked([by_id[i] for i in expected], q)
        for h in hits:
            assert h.score == pytest.approx(_cos(by_id[h.document.id], q), abs=TOL)

    async def test_adjacent_k_keeps_the_most_similar(
        self, store: Any, docs: list[Document]
    ) -> None:
        q = _query(5)
        edge = MetadataEdge("type", "mammal")
        hits = await store.aadjacent(edge, q, k=2)
        members = [d for d in docs if d.metadata["type"] == "mammal"]
        assert _ids(hits) == _ranked(members, q)[:2]

    async def test_adjacent_with_filter(self, store: Any) -> None:
        q = _query()
        hits = await store.aadjacent(
            MetadataEdge("keywords", "claws"), q, k=12, filter={"type": "bird"}
        )
        assert _ids(hits) == ["d2"]
        # A filter on the edge's own field is ANDed with the edge, never replaces it.
        hits = await store.aadjacent(
            MetadataEdge("keywords", "claws"), q, k=12, filter={"keywords": "fur"}
        )
        assert _ids(hits) == ["d0"]

    async def test_id_edges_resolve_with_get(self, store: Any) -> None:
        edges = [IdEdge("d7"), IdEdge("d2"), IdEdge("missing")]
        hits = await store.aget([e.id for e in edges], embedding=_query())
        assert _ids(hits) == ["d7", "d2"]

    async def test_traversal_over_the_store(self, store: Any) -> None:
        # From d10 (cites d9, d8) along citations both ways and shared keywords.
        result = await atraverse(
            None,
            query_embedding=_query(),
            store=store,
            edges=[("cites", "$id"), ("$id", "cites")],
            strategy=Eager(select_k=20, start_k=0, adjacent_k=20, max_depth=1),
            initial_root_ids=["d10"],
        )
        assert {n.id for n in result} == {"d10", "d9", "d8"}
        assert {n.id: n.depth for n in result}["d9"] == 1

    async def test_traversal_keeps_true_and_one_apart(self, store: Any) -> None:
        # A bool is not a number: the edges v=True and v=1 are two edges, each followed.
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd(
            [
                Document("root", "r", {"probe": [True, 1]}, vec),
                Document("is_true", "t", {"v": True}, vec),
                Document("is_one", "o", {"v": 1.0}, vec),
                Document("is_false", "f", {"v": False}, vec),
            ]
        )
        result = await atraverse(
            None,
            query_embedding=_query(),
            store=store,
            edges=[("probe", "v")],
            strategy=Eager(select_k=20, start_k=0, adjacent_k=20, max_depth=1),
            initial_root_ids=["root"],
        )
        assert {n.id for n in result} == {"root", "is_true", "is_one"}
        via = {n.id: n.path.edges[-1] for n in result if n.id != "root"}
        assert via == {"is_true": MetadataEdge("v", True), "is_one": MetadataEdge("v", 1)}

    # -- writes -----------------------------------------------------------------------------

    async def test_upsert_replaces(self, store: Any) -> None:
        vec = [1.0] + [0.0] * (COMPLIANCE_DIM - 1)
        await store.aadd([Document("d0", "replaced", {"type": "rock", "keywords": ["hard"]}, vec)])
        got = (await store.aget(["d0"]))[0].document
        assert got.content == "replaced"
        assert dict(got.metadata) == {"type": "rock", "keywords": ["hard"]}
        assert "d0" not in _ids(await store.aadjacent(MetadataEdge("keywords", "fur"), vec, k=12))
        assert _ids(await store.aadjacent(MetadataEdge("type", "rock"), vec, k=12)) == ["d0"]
        top = (await store.asearch(vec, k=1))[0]
        assert top.document.id == "d0"
        assert top.score == pytest.approx(1.0, abs=TOL)
        assert len(await store.asearch(vec, k=50)) == 12

    async def test_add_embeds_documents_without_embedding(self, store: Any) -> None:
        emb = HashEmbedding(COMPLIANCE_DIM)
        await store.aadd([Document("new", "a brand new text", {"type": "new"})])
        q = emb("a brand new text")
        hits = await store.asearch(q, k=1)
        assert _ids(hits) == ["new"]
        assert hits[0].score == pytest.approx(1.0, abs=TOL)

    async def test_add_rejects_bad_vectors_without_writing(self, store: Any) -> None:
        good = Document("ok", "fine", {"type": "x"}, [0.5] * COMPLIANCE_DIM)
        for bad in (
            Document("bad", "wrong dim", {}, [1.0] * (COMPLIANCE_DIM + 1)),
            Document("bad", "zero", {}, [0.0] * COMPLIANCE_DIM),
        ):
            with pytest.raises(ValueError):
                await store.aadd([good, bad])
            assert await store.aget(["ok", "bad"]) == []
