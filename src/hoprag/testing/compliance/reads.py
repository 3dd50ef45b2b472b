"""Reads with only the required methods: vector search (order, `k`, scores, contents), reads by
id, adjacency (one edge and many), traversals over the store, the prepared query and the
same `InvalidInputError` for the same bad input from every store."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hoprag.documents import Document
from hoprag.edges import IdEdge, MetadataEdge
from hoprag.engine.traversal import atraverse
from hoprag.errors import InvalidInputError
from hoprag.filters import compile_filter
from hoprag.stores.base import PreparedQuery, Store
from hoprag.strategies import Eager, Mmr
from hoprag.testing.compliance.support import (
    TOL,
    Contract,
    _cos,
    _ids,
    _query,
    _ranked,
    _scores,
    writes,
)
from hoprag.testing.data import (
    COMPLIANCE_DIM,
    compliance_documents,
)
from hoprag.validation import MAX_K


class ReadCompliance(Contract):
    """Vector search, reads by id, adjacency, traversals, the prepared query, bad input."""

    # -- search -----------------------------------------------------------------------------

    @pytest.mark.parametrize("k", [1, 3, 12, 50])
    async def test_search_order_and_k(self, store: Store, docs: list[Document], k: int) -> None:
        q = _query()
        hits = await store.asearch(q, k=k)
        assert _ids(hits) == _ranked(docs, q)[:k]
        by_id = {d.id: d for d in docs}
        for h in hits:
            assert h.score == pytest.approx(_cos(by_id[h.document.id], q), abs=TOL)
            assert h.score is not None and -1.0 - 1e-6 <= h.score <= 1.0 + 1e-6
        assert _scores(hits) == sorted(_scores(hits), reverse=True)

    async def test_search_returns_content_metadata_and_embedding(
        self, store: Store, docs: list[Document]
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

    async def test_search_without_embeddings(self, store: Store) -> None:
        hits = await store.asearch(_query(), k=3, include_embeddings=False)
        assert len(hits) == 3
        assert all(isinstance(h.score, float) for h in hits)

    async def test_search_k_zero(self, store: Store) -> None:
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
    async def test_search_filter(
        self, store: Store, flt: dict[str, Any], expected: set[str]
    ) -> None:
        q = _query()
        hits = await store.asearch(q, k=12, filter=flt)
        assert set(_ids(hits)) == expected
        assert _scores(hits) == sorted(_scores(hits), reverse=True)

    # -- get --------------------------------------------------------------------------------

    async def test_get_order_and_missing(self, store: Store) -> None:
        hits = await store.aget(["d5", "nope", "d0", "d3"])
        assert _ids(hits) == ["d5", "d0", "d3"]
        assert all(h.score is None for h in hits)

    async def test_get_with_filter_and_scores(self, store: Store, docs: list[Document]) -> None:
        q = _query()
        hits = await store.aget(["d0", "d2", "d1", "d4"], filter={"type": "mammal"}, embedding=q)
        assert _ids(hits) == ["d0", "d1"]
        by_id = {d.id: d for d in docs}
        for h in hits:
            assert h.score == pytest.approx(_cos(by_id[h.document.id], q), abs=TOL)

    async def test_get_empty(self, store: Store) -> None:
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
        self, store: Store, docs: list[Document], edge: MetadataEdge, expected: set[str]
    ) -> None:
        q = _query()
        hits = await store.aadjacent(edge, q, k=12)
        assert set(_ids(hits)) == expected
        by_id = {d.id: d for d in docs}
        assert _ids(hits) == _ranked([by_id[i] for i in expected], q)
        for h in hits:
            assert h.score == pytest.approx(_cos(by_id[h.document.id], q), abs=TOL)

    async def test_adjacent_k_keeps_the_most_similar(
        self, store: Store, docs: list[Document]
    ) -> None:
        q = _query(5)
        edge = MetadataEdge("type", "mammal")
        hits = await store.aadjacent(edge, q, k=2)
        members = [d for d in docs if d.metadata["type"] == "mammal"]
        assert _ids(hits) == _ranked(members, q)[:2]

    async def test_adjacent_with_filter(self, store: Store) -> None:
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

    async def test_id_edges_resolve_with_get(self, store: Store) -> None:
        edges = [IdEdge("d7"), IdEdge("d2"), IdEdge("missing")]
        hits = await store.aget([e.id for e in edges], embedding=_query())
        assert _ids(hits) == ["d7", "d2"]

    async def test_traversal_over_the_store(self, store: Store) -> None:
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

    @writes
    async def test_traversal_keeps_true_and_one_apart(self, store: Store) -> None:
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

    @pytest.mark.parametrize("mode", ["strategy", "wide", "on", 2])
    async def test_speculation_changes_no_result_of_a_traversal(
        self, store: Store, mode: Any
    ) -> None:
        # Reads asked ahead share a burst with other reads: each must be answered as alone.
        kw: dict[str, Any] = {
            "query_embedding": _query(),
            "store": store,
            "edges": [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")],
        }
        for strategy in (
            Eager(select_k=12, start_k=2, adjacent_k=2, max_depth=3),
            Mmr(select_k=6, start_k=2, adjacent_k=3, max_depth=2),
        ):
            off = await atraverse(None, strategy=strategy, speculation="off", **kw)
            got = await atraverse(None, strategy=strategy, speculation=mode, **kw)
            assert [(n.id, n.depth, n.path, n.similarity_score) for n in got] == [
                (n.id, n.depth, n.path, n.similarity_score) for n in off
            ]
            assert got.stats.rounds <= off.stats.rounds
            assert got.stats.speculation.issued <= got.stats.speculation.budget

    async def test_round_trip_is_unknown_or_a_duration(self, store: Store) -> None:
        rtt = await (await store.aprepare(_query())).around_trip()
        assert rtt is None or (isinstance(rtt, float) and 0 <= rtt < 60)

    async def test_adjacent_many_answers_each_edge_in_order(
        self, store: Store, docs: list[Document]
    ) -> None:
        q = _query()
        edges = [
            MetadataEdge("keywords", "claws"),
            MetadataEdge("type", "nothing"),
            MetadataEdge("loc.city", "Oslo"),
            MetadataEdge("n", 1),
            MetadataEdge("keywords", "claws"),
        ]
        many = await store.aadjacent_many(edges, q, k=2, filter={"type": "mammal"})
        one_by_one = [await store.aadjacent(e, q, k=2, filter={"type": "mammal"}) for e in edges]
        assert [_ids(h) for h in many] == [_ids(h) for h in one_by_one]
        assert [set(_ids(h)) for h in many] == [{"d0"}, set(), {"d1", "d11"}, {"d0", "d11"}, {"d0"}]
        assert await store.aadjacent_many([], q, k=3) == []
        assert await store.aadjacent_many(edges[:2], q, k=0) == [[], []]

    @pytest.mark.parametrize(
        ("flt", "expected"),
        [
            ({"keywords": ["fur", "claws"]}, {"d0"}),  # a list value matches as a whole
            ({"keywords": "claws", "loc.city": "Oslo"}, {"d6"}),
            ({"loc.zip": 2}, {"d11"}),
            ({"cites": "missing"}, {"d7"}),
        ],
    )
    async def test_filter_on_list_and_nested_fields(
        self, store: Store, flt: dict[str, Any], expected: set[str]
    ) -> None:
        q = _query()
        assert set(_ids(await store.asearch(q, k=12, filter=flt))) == expected
        got = await store.aget([f"d{i}" for i in range(12)], filter=flt)
        assert set(_ids(got)) == expected
        adj = await store.aadjacent(MetadataEdge("type", "mammal"), q, k=12, filter=flt)
        assert set(_ids(adj)) == {i for i in expected if i in {"d0", "d1", "d8", "d11"}}

    # -- the prepared query ------------------------------------------------------------------

    async def test_prepared_query_serves_every_call_of_a_run(self, store: Store) -> None:
        q = _query()
        flt = {"type": "mammal"}
        prepared = await store.aprepare(q, flt, include_embeddings=False, max_concurrency=3)
        assert isinstance(prepared, PreparedQuery)
        assert np.allclose(np.asarray(prepared.embedding, dtype=float), q)
        assert prepared.filter == compile_filter(flt)
        assert prepared.include_embeddings is False
        assert prepared.limiter.total_tokens == 3
        edge = MetadataEdge("keywords", "fur")
        for _ in range(2):  # the same object answers again, as it does for every hop
            assert _ids(await prepared.asearch(k=12)) == _ids(
                await store.asearch(q, k=12, filter=flt)
            )
            adjacent = _ids(await prepared.aadjacent(edge, k=12))
            assert adjacent == _ids(await store.aadjacent(edge, q, k=12, filter=flt))
            assert set(adjacent) == {"d0", "d1", "d8"}
            (many,) = await prepared.aadjacent_many([edge], k=12)
            assert _ids(many) == _ids(await prepared.aadjacent(edge, k=12))
            got = await prepared.aget(["d1", "d2", "d0"])
            assert _ids(got) == ["d1", "d0"]
        hits = await prepared.asearch(k=3)
        assert all(h.document.embedding is None for h in hits)
        assert prepared.limiter.borrowed_tokens == 0  # every slot was given back

    async def test_prepared_query_without_embedding_reads_unscored(self, store: Store) -> None:
        prepared = await store.aprepare(None, {"type": "bird"})
        assert prepared.embedding is None
        hits = await prepared.aget(["d3", "d0", "d2"])
        assert _ids(hits) == ["d3", "d2"]
        assert all(h.score is None for h in hits)
        with pytest.raises(InvalidInputError):
            await prepared.asearch(k=3)

    # -- bad input: the same error from every store --------------------------------------------

    @pytest.mark.parametrize(
        ("kwargs", "argument"),
        [
            ({"embedding": [float("nan")] * COMPLIANCE_DIM}, "embedding"),
            ({"embedding": [0.0] * COMPLIANCE_DIM}, "embedding"),
            ({"embedding": [1.0] * (COMPLIANCE_DIM + 1)}, "dimension"),
            ({"embedding": "not a vector"}, "embedding"),
            ({"filter": ["type", "bird"]}, "filter"),
            ({"filter": {"type": {"$regex": "b.*"}}}, "filter"),
            ({"filter": {"title": {"$gt": "abc"}}}, "filter"),
            ({"filter": {"loc": {"city": "Oslo"}}}, "filter"),
            ({"filter": {"": "x"}}, "filter field"),
            ({"filter": {"a..b": "x"}}, "filter field"),
            ({"filter": {"n": float("nan")}}, "filter"),
            ({"filter": {"type": object()}}, "filter"),
            ({"max_concurrency": 0}, "max_concurrency"),
        ],
    )
    async def test_bad_query_input_is_invalid_input(
        self, store: Store, kwargs: dict[str, Any], argument: str
    ) -> None:
        args: dict[str, Any] = {"embedding": _query(), "filter": None, **kwargs}
        embedding, flt = args.pop("embedding"), args.pop("filter")
        with pytest.raises(InvalidInputError, match=argument):
            await store.aprepare(embedding, flt, **args)
        if not args:  # the one-call conveniences check the same way
            with pytest.raises(InvalidInputError, match=argument):
                await store.asearch(embedding, k=3, filter=flt)

    @pytest.mark.parametrize("k", [-1, 2.5, "3", True, None, MAX_K + 1])
    async def test_bad_k_is_invalid_input(self, store: Store, k: Any) -> None:
        prepared = await store.aprepare(_query())
        with pytest.raises(InvalidInputError, match="k must be"):
            await prepared.asearch(k=k)
        with pytest.raises(InvalidInputError, match="k must be"):
            await prepared.aadjacent(MetadataEdge("type", "bird"), k=k)
        with pytest.raises(InvalidInputError, match="k must be"):
            await prepared.aadjacent_many([MetadataEdge("type", "bird")], k=k)
        with pytest.raises(InvalidInputError, match="k must be"):
            await prepared.astart(k=k, adjacent_k=3)

    @pytest.mark.parametrize("adjacent_k", [-1, 2.5, "3", True, None, MAX_K + 1])
    async def test_bad_adjacent_k_of_a_start_search_is_invalid_input(
        self, store: Store, adjacent_k: Any
    ) -> None:
        """`astart` checks `adjacent_k` as the traversal does, on every store, whether or
        not the store reads ahead for it (issue #30)."""
        prepared = await store.aprepare(_query())
        with pytest.raises(InvalidInputError, match=r"adjacent_k must be an int 0\.\.1000"):
            await prepared.astart(k=3, adjacent_k=adjacent_k)
        assert len(await prepared.astart(k=3, adjacent_k=0)) == 3

    async def test_a_vector_search_of_up_to_max_k_rows_is_answered(self, store: Store) -> None:
        """Every store answers `k` up to `MAX_K` (1000) and refuses beyond it with the same
        error (issue #28, 12: MemoryStore answered 1001, which Cassandra refuses)."""
        prepared = await store.aprepare(_query())
        assert len(await prepared.asearch(k=MAX_K)) == len(compliance_documents())
        edge = MetadataEdge("type", "bird")
        assert (await prepared.aadjacent(edge, k=MAX_K)) != []
        with pytest.raises(InvalidInputError, match=f"0..{MAX_K}"):
            await prepared.asearch(k=MAX_K + 1)

    async def test_bad_ids_and_edges_are_invalid_input(self, store: Store) -> None:
        prepared = await store.aprepare(_query())
        for ids in ("d0", ["d0", ""], ["d0", 3], None):
            with pytest.raises(InvalidInputError, match="id"):
                await prepared.aget(ids)  # type: ignore[arg-type]
        for edge in (IdEdge("d0"), ("type", "bird"), "type"):
            with pytest.raises(InvalidInputError, match="edge"):
                await prepared.aadjacent(edge, k=3)  # type: ignore[arg-type]
            with pytest.raises(InvalidInputError, match="edge"):
                await prepared.aadjacent_many([edge], k=3)  # type: ignore[list-item]

    @writes
    async def test_bad_documents_are_invalid_input_and_write_nothing(self, store: Store) -> None:
        good = Document("ok", "fine", {"type": "x"}, [0.5] * COMPLIANCE_DIM)
        bad_batches: list[Any] = [
            good,  # a single Document, not an iterable of them
            "text",
            [good, {"id": "x"}],
            [good, Document("bad", "x", {"when": object()}, [0.5] * COMPLIANCE_DIM)],
            [good, Document("bad", "x", {"n": float("inf")}, [0.5] * COMPLIANCE_DIM)],
            [good, Document("bad", "wrong dim", {}, [1.0] * (COMPLIANCE_DIM + 1))],
            [good, Document("bad", "zero", {}, [0.0] * COMPLIANCE_DIM)],
        ]
        for batch in bad_batches:
            with pytest.raises(InvalidInputError):
                await store.aadd(batch)
        assert await store.aget(["ok", "bad"]) == []
