"""Scopes (`amatching`, `afiltered`) and scoped search: complete reads, scope members, paths
and plans, `order_by`, a traversal that starts inside a scope."""

from __future__ import annotations

from typing import Any

import pytest

from hoprag.documents import Document
from hoprag.edges import IdEdge, MetadataEdge, MetadataEdgeFunction
from hoprag.engine.traversal import atraverse
from hoprag.errors import InvalidInputError
from hoprag.filters import compile_filter, matches
from hoprag.scopes import Scope, ScopeTooLargeError
from hoprag.search import asearch
from hoprag.stores.base import Store
from hoprag.strategies import Eager
from hoprag.testing.compliance.support import (
    _SCOPE_CASES,
    TOL,
    Contract,
    _cos,
    _expected_scope,
    _ids,
    _query,
    _ranked,
    _scope,
)
from hoprag.testing.data import (
    compliance_documents,
)


class ScopeCompliance(Contract):
    """Scopes (`amatching`, `afiltered`) and scoped search: complete reads, scope members, paths"""

    # -- scopes -----------------------------------------------------------------------------

    @pytest.mark.parametrize("include_embeddings", [True, False])
    async def test_amatching_returns_every_match_passing_the_filter(
        self, store: Store, docs: list[Document], include_embeddings: bool
    ) -> None:
        q = _query()
        query = await store.aprepare(q, {"type": "mammal"}, include_embeddings=include_embeddings)
        edges = [
            MetadataEdge("keywords", "fur"),
            MetadataEdge("keywords", "claws"),
            MetadataEdge("loc.city", "Oslo"),
            MetadataEdge("keywords", "nothing"),
        ]
        pages = await query.amatching(edges, limit=13)
        assert [sorted(_ids(p)) for p in pages] == [
            ["d0", "d1", "d8"], ["d0"], ["d1", "d11"], []
        ]  # fmt: skip
        by_id = {d.id: d for d in docs}
        for hit in (h for p in pages for h in p):
            assert hit.score == pytest.approx(_cos(by_id[hit.id], q), abs=TOL)
            assert (hit.document.embedding is not None) == include_embeddings
        (cut,) = await query.amatching([edges[0]], limit=2)
        assert len(cut) == 2 and set(_ids(cut)) <= {"d0", "d1", "d8"}
        assert await query.amatching(edges, limit=0) == [[], [], [], []]
        assert await query.amatching([], limit=5) == []
        with pytest.raises(InvalidInputError):
            await query.amatching([IdEdge("d0")], limit=5)  # type: ignore[list-item]

    @pytest.mark.parametrize(
        "flt",
        [
            {"type": {"$in": ["mammal", "bird"]}},
            {"$or": [{"keywords": "claws"}, {"type": "bird"}]},
            {"type": "mammal", "keywords": {"$ne": "fur"}},
        ],
    )
    async def test_complete_reads_apply_operator_filters(
        self, store: Store, docs: list[Document], flt: dict[str, Any]
    ) -> None:
        compiled = compile_filter(flt)
        passing = {d.id for d in docs if matches(compiled, d.metadata)}
        query = await store.aprepare(None, flt, include_embeddings=False)
        assert sorted(_ids(await query.afiltered(limit=100))) == sorted(passing)
        edge = MetadataEdge("keywords", "fur")
        (page,) = await query.amatching([edge], limit=100)
        has_fur = {d.id for d in docs if "fur" in d.metadata.get("keywords", [])}
        assert sorted(_ids(page)) == sorted(passing & has_fur)

    async def test_afiltered_returns_every_match_and_needs_a_filter(self, store: Store) -> None:
        query = await store.aprepare(None, {"keywords": "claws"}, include_embeddings=False)
        hits = await query.afiltered(limit=13)
        assert sorted(_ids(hits)) == ["d0", "d2", "d6"]
        assert all(h.score is None for h in hits)
        assert len(await query.afiltered(limit=1)) == 1
        unfiltered = await store.aprepare(None, None)
        with pytest.raises(InvalidInputError, match="non-empty filter"):
            await unfiltered.afiltered(limit=13)

    @pytest.mark.parametrize(
        "flt",
        [
            {"type": {"$ne": "bird"}},
            {"keywords": {"$nin": ["claws", "wings"]}},
            {"legs": {"$exists": True}},
            {"$or": [{"type": "bird"}, {"type": {"$ne": "mammal"}}]},
        ],
    )
    async def test_a_read_of_every_match_needs_an_equality_or_range_in_every_branch(
        self, store: Store, flt: dict[str, Any]
    ) -> None:
        """Every store refuses what Cassandra's indexes cannot answer without reading every
        document, with the same error, even where it could scan."""
        says = "an equality or a range in every branch"
        query = await store.aprepare(None, flt, include_embeddings=False)
        with pytest.raises(InvalidInputError, match=says) as direct:
            await query.afiltered(limit=13)
        assert direct.value.argument == "filter"
        with pytest.raises(InvalidInputError, match=says) as ordered:
            await asearch(None, store=store, k=3, filter=flt, order_by="n")
        assert ordered.value.argument == "filter"
        with pytest.raises(InvalidInputError, match=says) as scoped:
            Scope(start=flt, edges=[("keywords", "keywords")], max_depth=1)
        assert scoped.value.argument == "Scope start"
        # With an equality beside it, the same condition is checked after the read.
        both = {"$and": [{"type": "mammal"}, flt]}
        ok = await asearch(None, store=store, k=20, filter=both, order_by="n")
        want = [d.id for d in compliance_documents() if matches(compile_filter(both), d.metadata)]
        assert sorted(n.id for n in ok) == sorted(want)

    @pytest.mark.parametrize("case", list(_SCOPE_CASES))
    async def test_scope_holds_every_document_within_max_depth_ranked_by_similarity(
        self, store: Store, docs: list[Document], case: str
    ) -> None:
        q = _query()
        expected = _expected_scope(docs, case)
        res = await asearch(None, query_embedding=q, store=store, k=100, scope=_scope(case))
        assert {n.id: n.depth for n in res} == expected
        members = [d for d in docs if d.id in expected]
        assert [n.id for n in res] == _ranked(members, q)
        by_id = {d.id: d for d in docs}
        for n in res:
            assert n.similarity_score == pytest.approx(_cos(by_id[n.id], q), abs=TOL)

    @pytest.mark.parametrize("case", list(_SCOPE_CASES))
    async def test_scope_paths_lead_from_an_anchor_along_the_scope_edges(
        self, store: Store, docs: list[Document], case: str
    ) -> None:
        scope = _scope(case)
        expected = _expected_scope(docs, case)
        res = await asearch(None, query_embedding=_query(), store=store, k=100, scope=scope)
        by_id = {d.id: d for d in docs}
        edge_fn = MetadataEdgeFunction(_SCOPE_CASES[case][1])
        for n in res:
            path = n.path
            assert path.nodes[-1] == n.id and path.depth == n.depth
            assert expected[path.nodes[0]] == 0
            for i, edge in enumerate(path.edges):
                assert edge in edge_fn(by_id[path.nodes[i]]).outgoing
                assert edge in edge_fn(by_id[path.nodes[i + 1]]).incoming
                assert expected[path.nodes[i + 1]] == i + 1

    async def test_scope_paths_are_chosen_deterministically(self, store: Store) -> None:
        # d9 (wings) and d0 (claws) are reached from both bird anchors d2 and d3 or only d2;
        # the first anchor in id order and its first edge in edge order is credited.
        res = await asearch(
            None, query_embedding=_query(), store=store, k=100, scope=_scope("start-depth1")
        )
        paths = {n.id: n.path for n in res}
        assert paths["d9"].nodes == ("d2", "d9")
        assert paths["d9"].edges == (MetadataEdge("keywords", "wings"),)
        assert paths["d0"].edges == (MetadataEdge("keywords", "claws"),)
        assert paths["d3"].nodes == ("d3",)

    @pytest.mark.parametrize("plan", ["exact", "pushdown"])
    @pytest.mark.parametrize(
        "flt",
        [
            {"type": "mammal"},
            {"keywords": "scales"},
            {"type": "bird"},
            {"n": 1},
            {"type": {"$in": ["mammal", "bird"]}},
            {"type": {"$ne": "mammal"}},
            {"$or": [{"keywords": "fur"}, {"type": "bird"}]},
        ],
    )
    async def test_scope_with_a_filter_and_large_k_is_exactly_its_members_passing_it(
        self, store: Store, docs: list[Document], plan: str, flt: dict[str, Any]
    ) -> None:
        q = _query()
        expected = _expected_scope(docs, "start-depth2")
        passing = await store.aget(list(expected), filter=flt)
        res = await asearch(
            None, query_embedding=q, store=store, k=50, scope=_scope("start-depth2"),
            filter=flt, plan=plan,
        )  # fmt: skip
        assert [n.id for n in res] == _ranked([h.document for h in passing], q)
        assert {n.id: n.depth for n in res} == {h.id: expected[h.id] for h in passing}
        assert res.stats.plan == plan

    @pytest.mark.parametrize("k", [1, 2, 3, 5])
    async def test_scope_plans_give_identical_results(self, store: Store, k: int) -> None:
        scope = _scope("start-depth2")
        out = {}
        for plan in ("exact", "pushdown"):
            res = await asearch(
                None, query_embedding=_query(), store=store, k=k, scope=scope,
                filter={"keywords": "fur"} if k == 2 else None, plan=plan,
            )  # fmt: skip
            out[plan] = [(n.id, n.depth, n.path) for n in res]
        assert out["exact"] == out["pushdown"]
        assert len(out["exact"]) == (2 if k == 2 else k)

    async def test_scope_beyond_max_size_raises_naming_counts_and_changes_nothing(
        self, store: Store
    ) -> None:
        scope = _scope("start-depth2", max_size=6)  # 2 anchors, 3 at depth 1, 5 at depth 2
        with pytest.raises(ScopeTooLargeError) as info:
            await asearch(None, query_embedding=_query(), store=store, k=3, scope=scope)
        err = info.value
        assert isinstance(err, InvalidInputError)
        assert err.depth == 2 and err.max_size == 6 and err.reached == 10
        assert "depth 0: 2, depth 1: 3, depth 2: 5" in str(err)
        assert "max_size of 6" in str(err) and "smaller max_depth" in str(err)
        small = _scope("start-depth1", max_size=1)
        with pytest.raises(ScopeTooLargeError, match="max_size of 1"):
            await asearch(None, query_embedding=_query(), store=store, k=3, scope=small)
        assert len(await store.asearch(_query(), k=50)) == 12

    async def test_empty_scope_gives_an_empty_result(self, store: Store) -> None:
        for scope in (
            Scope(start={"type": "nothing"}, edges=[("keywords", "keywords")], max_depth=2),
            Scope(ids=["missing"], edges=[("cites", "$id")], max_depth=1),
        ):
            res = await asearch(None, query_embedding=_query(), store=store, scope=scope)
            assert list(res) == [] and res.stats.scope_size == 0

    @pytest.mark.parametrize(
        ("order_by", "expected"),
        [
            ("n", ["d0", "d2", "d1", "d3", "d7", "d9", "d10", "d5", "d6", "d8"]),
            ("-n", ["d9", "d7", "d3", "d1", "d0", "d2", "d10", "d5", "d6", "d8"]),
            ("-loc.zip", ["d8", "d0", "d1", "d10", "d2", "d3", "d5", "d6", "d7", "d9"]),
        ],
    )
    async def test_scope_order_by_without_a_query_puts_missing_fields_last(
        self, store: Store, order_by: str, expected: list[str]
    ) -> None:
        scope = _scope("start-depth2")
        res = await asearch(None, store=store, k=100, scope=scope, order_by=order_by)
        assert [n.id for n in res] == expected
        top = await asearch(None, store=store, k=3, scope=scope, order_by=order_by)
        assert [n.id for n in top] == expected[:3]
        flt = await asearch(
            None, store=store, k=100, scope=scope, order_by=order_by, filter={"type": "mammal"}
        )
        mammals = {"d0", "d1", "d8", "d11"}
        assert [n.id for n in flt] == [i for i in expected if i in mammals]

    async def test_order_by_without_a_scope_orders_the_filter_matches(self, store: Store) -> None:
        res = await asearch(None, store=store, k=10, filter={"type": "mammal"}, order_by="-n")
        assert [n.id for n in res] == ["d1", "d0", "d11", "d8"]

    async def test_search_without_a_scope_is_a_filtered_vector_search(self, store: Store) -> None:
        q = _query()
        res = await asearch(None, query_embedding=q, store=store, k=3, filter={"type": "mammal"})
        hits = await store.asearch(q, k=3, filter={"type": "mammal"})
        assert [n.id for n in res] == _ids(hits)
        assert all(n.depth == 0 and n.path.nodes == (n.id,) for n in res)

    @pytest.mark.parametrize("flt", [None, {"type": "mammal"}])
    async def test_traversal_with_a_scope_starts_inside_it(
        self, store: Store, docs: list[Document], flt: dict[str, Any] | None
    ) -> None:
        q = _query()
        scope = _scope("start-depth1")
        members = set(_expected_scope(docs, "start-depth1"))
        passing = [
            d for d in docs if d.id in members and (flt is None or d.metadata["type"] == "mammal")
        ]
        result = await atraverse(
            None,
            query_embedding=q,
            store=store,
            edges=[("keywords", "keywords")],
            strategy=Eager(select_k=20, start_k=2, adjacent_k=20, max_depth=1),
            filter=flt,
            scope=scope,
        )
        starts = [n.id for n in result if n.depth == 0]
        assert starts == _ranked(passing, q)[:2]
        if flt is not None:
            assert all(n.metadata["type"] == "mammal" for n in result)
        assert result.stats.hops[0].notes["scope_size"] == len(members)

    async def test_bad_scopes_and_search_arguments_are_invalid_input(self, store: Store) -> None:
        bad_scopes: list[dict[str, Any]] = [
            {},
            {"start": {"type": "bird"}, "ids": ["d0"]},
            {"start": {}},
            {"start": "bird"},
            {"ids": "d0"},
            {"ids": ["d0"], "max_depth": -1},
            {"ids": ["d0"], "max_depth": 99, "edges": [("a", "a")]},
            {"ids": ["d0"], "max_size": 0},
            {"ids": ["d0"], "max_size": 10**9},
            {"ids": ["d0"], "max_depth": 1},
            {"ids": ["d0"], "edges": [("a",)]},
            {"start": {"$id": "d0"}, "max_depth": 0},
        ]
        for kw in bad_scopes:
            with pytest.raises(InvalidInputError):
                Scope(**kw)
        scope = _scope("start-depth1")
        q = _query()
        bad_calls: list[dict[str, Any]] = [
            {"query": None},
            {"query": None, "query_embedding": q, "order_by": "n"},
            {"query": None, "order_by": ""},
            {"query": None, "order_by": "-"},
            {"query": None, "order_by": "$id"},
            {"query": None, "query_embedding": q, "k": -1},
            {"query": None, "query_embedding": q, "scope": {"ids": ["d0"]}},
            {"query": None, "query_embedding": q, "plan": "fast"},
            {"query": None, "order_by": "n", "plan": "pushdown"},
        ]
        for kw in bad_calls:
            with pytest.raises(InvalidInputError):
                await asearch(store=store, **{"scope": scope, **kw})
