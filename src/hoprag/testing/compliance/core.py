"""What every store must do with only the required methods (`aprepare`, `aadd` and the
prepared query's `asearch`, `aget`, `aadjacent`, `aadjacent_many`): vector search, reads by id,
adjacency, traversals over the store, the filter language, the metadata type model, bad input
and writes."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from hoprag.documents import Document
from hoprag.edges import IdEdge, MetadataEdge
from hoprag.embeddings.hash import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.filters import MAX_BRANCHES, compile_filter, matches
from hoprag.stores.base import PreparedQuery, Store
from hoprag.strategies import Eager, Mmr
from hoprag.testing.compliance.support import (
    TOL,
    Contract,
    _cos,
    _ids,
    _nested,
    _query,
    _ranked,
    _scores,
    writes,
)
from hoprag.testing.data import (
    COMPLIANCE_DIM,
    compliance_documents,
)
from hoprag.traversal import atraverse
from hoprag.validation import MAX_INT, MIN_INT


class CoreCompliance(Contract):
    """What every store must do with only the required methods (`aprepare`, `aadd` and the"""

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

    # -- the filter language: operators, $in / $or, ranges, dates -----------------------------

    @pytest.mark.parametrize(
        ("flt", "expected"),
        [
            ({"type": {"$eq": "bird"}}, {"d2", "d3"}),
            ({"type": {"$ne": "mammal"}}, {"d2", "d3", "d4", "d5", "d6", "d7", "d9", "d10"}),
            # $ne holds for documents without the field ...
            (
                {"loc.city": {"$ne": "Oslo"}},
                {"d0", "d2", "d3", "d4", "d5", "d7", "d8", "d9", "d10"},
            ),
            # ... and on a list field when no element equals the value.
            (
                {"keywords": {"$ne": "fur"}},
                {"d2", "d3", "d4", "d5", "d6", "d7", "d9", "d10", "d11"},
            ),
            ({"type": {"$in": ["bird", "fish"]}}, {"d2", "d3", "d4", "d5"}),
            ({"keywords": {"$in": ["hooves", "fins"]}}, {"d4", "d5", "d8"}),
            ({"n": {"$in": [1, 3]}}, {"d0", "d2", "d3", "d11"}),
            ({"flag": {"$in": [True]}}, {"d3"}),  # a bool is not a number
            ({"flag": {"$in": [1]}}, {"d5"}),
            ({"type": {"$nin": ["mammal", "bird"]}}, {"d4", "d5", "d6", "d7", "d9", "d10"}),
            (
                {"loc.city": {"$nin": ["Oslo", "Rome"]}},
                {"d0", "d2", "d3", "d4", "d5", "d7", "d9", "d10"},
            ),
            ({"flag": {"$exists": True}}, {"d3", "d5", "d9"}),
            (
                {"flag": {"$exists": False}},
                {"d0", "d1", "d2", "d4", "d6", "d7", "d8", "d10", "d11"},
            ),
            ({"loc.zip": {"$exists": True}}, {"d8", "d11"}),
            (
                {"cites": {"$exists": True}, "keywords": {"$ne": "scales"}},
                {"d0", "d1", "d2", "d3", "d10"},
            ),
            ({"$or": [{"type": "bird"}, {"loc.city": "Oslo"}]}, {"d1", "d2", "d3", "d6", "d11"}),
            (
                {
                    "$or": [{"type": "fish"}, {"flag": {"$exists": True}}],
                    "keywords": {"$ne": "fins"},
                },
                {"d3", "d9"},
            ),
            ({"$and": [{"type": "mammal"}, {"keywords": "fur"}]}, {"d0", "d1", "d8"}),
            (
                {
                    "$or": [
                        {"$and": [{"type": "mammal"}, {"loc.city": "Oslo"}]},
                        {"$or": [{"tag": "solo"}, {"n": 5}]},
                    ]
                },
                {"d1", "d9", "d10", "d11"},
            ),
            ({"type": {"$in": ["mammal", "bird"], "$ne": "bird"}}, {"d0", "d1", "d8", "d11"}),
            ({"type": {"$eq": "mammal", "$ne": "mammal"}}, set()),
            (
                {"keywords": {"$in": ["fur", "wings"]}, "type": {"$in": ["bird", "mammal"]}},
                {"d0", "d1", "d2", "d3", "d8"},
            ),
            (
                {"$or": [{"type": "mammal"}, {"type": "mammal", "keywords": "fur"}]},
                {"d0", "d1", "d8", "d11"},
            ),
            ({"$or": [{"type": "nothing"}, {"keywords": {"$in": ["nothing", "none"]}}]}, set()),
        ],
    )
    async def test_operator_filter_selects_the_same_documents_in_every_call(
        self, store: Store, docs: list[Document], flt: dict[str, Any], expected: set[str]
    ) -> None:
        q = _query()
        hits = await store.asearch(q, k=12, filter=flt)
        by_id = {d.id: d for d in docs}
        assert _ids(hits) == _ranked([by_id[i] for i in expected], q)
        got = await store.aget([f"d{i}" for i in range(12)], filter=flt, embedding=q)
        assert _ids(got) == sorted(expected, key=lambda i: int(i[1:]))
        mammals = {"d0", "d1", "d8", "d11"}
        adj = await store.aadjacent(MetadataEdge("type", "mammal"), q, k=12, filter=flt)
        assert set(_ids(adj)) == expected & mammals
        (many,) = await store.aadjacent_many([MetadataEdge("keywords", "fur")], q, k=12, filter=flt)
        assert set(_ids(many)) == expected & {"d0", "d1", "d8"}

    @pytest.mark.parametrize(
        "flt",
        [
            {"type": {"$nin": ["{top0}", "{top1}"]}},
            {"type": {"$ne": "{top0}"}, "keywords": {"$exists": True}},
            {"$or": [{"type": {"$ne": "{top0}"}}, {"type": "nothing"}]},
        ],
    )
    @pytest.mark.parametrize("k", [1, 3])
    async def test_conditions_checked_after_the_read_still_give_the_k_best(
        self, store: Store, docs: list[Document], flt: dict[str, Any], k: int
    ) -> None:
        # The most similar documents fail the filter: a store that checks $ne / $nin after
        # reading k rows must read further to find the k best that pass.
        q = _query()
        ranked = _ranked(docs, q)
        by_id = {d.id: d for d in docs}
        tops = [by_id[ranked[0]].metadata["type"]]
        tops.append(next(t for i in ranked if (t := by_id[i].metadata["type"]) not in tops))
        filled = json.loads(json.dumps(flt).replace("{top0}", tops[0]).replace("{top1}", tops[1]))
        compiled = compile_filter(filled)
        want = [i for i in ranked if matches(compiled, by_id[i].metadata)][:k]
        assert want and ranked[0] not in want
        assert _ids(await store.asearch(q, k=k, filter=filled)) == want
        prepared = await store.aprepare(q, filled)
        assert _ids(await prepared.asearch(k=k)) == want

    @pytest.mark.parametrize(
        ("flt", "expected"),
        [
            ({"n": {"$gt": 2}}, {"d3", "d4", "d7", "d9"}),
            ({"n": {"$gte": 2}}, {"d1", "d3", "d4", "d7", "d9"}),
            ({"n": {"$lt": 2}}, {"d0", "d2", "d11"}),
            ({"n": {"$lte": 2.5, "$gt": 1}}, {"d1", "d4"}),
            ({"n": {"$gte": 1.0, "$lt": 1.5}}, {"d0", "d2", "d11"}),  # 1 and 1.0 alike
            ({"flag": {"$gte": 0}}, {"d5"}),  # True and False are not numbers
            ({"n": {"$ne": 1, "$lte": 3}}, {"d1", "d3", "d4"}),
            ({"$or": [{"n": {"$gt": 4}}, {"type": "reptile"}]}, {"d6", "d7", "d9"}),
            ({"type": {"$gt": 1}}, set()),  # text values never satisfy a number
            ({"keywords": {"$lt": 10}}, set()),
        ],
    )
    async def test_range_filter_on_numbers(
        self, store: Store, docs: list[Document], flt: dict[str, Any], expected: set[str]
    ) -> None:
        q = _query()
        by_id = {d.id: d for d in docs}
        assert _ids(await store.asearch(q, k=12, filter=flt)) == _ranked(
            [by_id[i] for i in expected], q
        )
        got = await store.aget([f"d{i}" for i in range(12)], filter=flt)
        assert set(_ids(got)) == expected
        adj = await store.aadjacent(MetadataEdge("type", "mammal"), q, k=12, filter=flt)
        assert set(_ids(adj)) == expected & {"d0", "d1", "d8", "d11"}

    @writes
    async def test_range_filter_compares_big_ints_and_floats_exactly(self, store: Store) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd(
            [
                Document("big", "b", {"kind": "x", "pid": 2**60, "pids": [1, 2**60]}, vec),
                Document("big1", "b1", {"kind": "x", "pid": 2**60 + 1, "pids": [2**60 + 1]}, vec),
                Document("max", "m", {"kind": "x", "pid": MAX_INT, "pids": [MIN_INT, 0]}, vec),
                Document("f53", "f", {"kind": "x", "pid": float(2**53), "pids": [0.5]}, vec),
                Document("neg", "n", {"kind": "x", "pid": -1.5}, vec),
            ]
        )
        q = _query()

        async def found(cond: dict[str, Any]) -> set[str]:
            hits = await store.asearch(q, k=20, filter={"kind": "x", **cond})
            got = await store.aget(["big", "big1", "max", "f53", "neg"], filter=cond)
            assert set(_ids(hits)) == set(_ids(got)), cond
            return set(_ids(hits))

        assert await found({"pid": {"$gt": 2**60}}) == {"big1", "max"}
        assert await found({"pid": {"$gte": float(2**60)}}) == {"big", "big1", "max"}
        assert await found({"pid": {"$lt": 2**60 + 1, "$gt": 0}}) == {"big", "f53"}
        assert await found({"pid": {"$gte": MAX_INT}}) == {"max"}
        # float(2**53) is below 2**53 + 1, though a float cannot hold 2**53 + 1.
        assert await found({"pid": {"$gte": 2**53 + 1, "$lt": 2**60}}) == set()
        assert await found({"pid": {"$lt": 2**53 + 1, "$gt": 2**53 - 1}}) == {"f53"}
        assert await found({"pid": {"$lte": -1.5}}) == {"neg"}
        # A list field: the range holds when any element satisfies it.
        assert await found({"pids": {"$gt": 2**60}}) == {"big1"}
        assert await found({"pids": {"$lt": 0}}) == {"max"}
        assert await found({"pids": {"$gt": 0, "$lt": 1}}) == {"f53"}
        assert await found({"pids": {"$gte": 1, "$lte": 1}}) == {"big"}

    @writes
    async def test_range_filter_on_iso_dates(self, store: Store) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        rows: dict[str, dict[str, Any]] = {
            "day": {"on": "1994-07-06", "shown": ["1980-05-01", "2010-01-01"]},
            "utc": {"on": "2001-09-11T08:46:00Z", "shown": ["2001-09-12"]},
            "plus2": {"on": "1975-01-01T12:00:00+02:00"},
            "naive": {"on": "1975-01-01 10:30"},
            "text": {"on": "not a date", "shown": "someday"},
            "number": {"on": 1994},
        }
        await store.aadd([Document(i, i, {"kind": "date", **md}, vec) for i, md in rows.items()])
        q = _query()

        async def found(cond: dict[str, Any]) -> set[str]:
            hits = await store.asearch(q, k=20, filter={"kind": "date", **cond})
            got = await store.aget(list(rows), filter=cond)
            assert set(_ids(hits)) == set(_ids(got)), cond
            return set(_ids(hits))

        assert await found({"on": {"$gte": "1990-01-01"}}) == {"day", "utc"}
        assert await found({"on": {"$gt": "1994-07-06"}}) == {"utc"}  # a date is its midnight
        assert await found({"on": {"$gte": "1994-07-06T00:00:00Z"}}) == {"day", "utc"}
        # 12:00 at +02:00 is 10:00 UTC; a datetime without an offset is UTC.
        assert await found({"on": {"$lt": "1975-01-01T10:15:00Z"}}) == {"plus2"}
        assert await found({"on": {"$lt": "1975-01-01T10:31"}}) == {"plus2", "naive"}
        assert await found({"on": {"$gte": "2001-09-11T10:46:00+02:00"}}) == {"utc"}
        assert await found({"shown": {"$gt": "2005-01-01"}}) == {"day"}
        assert await found({"shown": {"$gte": "2001-09-12", "$lt": "2005-01-01"}}) == {
            "utc",
            "day",  # each bound is met by some element, not necessarily one (as in MongoDB)
        }
        assert await found({"shown": {"$lte": "1980-05-01", "$gt": "2009-12-31"}}) == {"day"}
        assert await found({"shown": {"$lt": "1980-05-01"}}) == set()

    async def test_traversal_with_a_range_filter_admits_only_passing_nodes(
        self, store: Store
    ) -> None:
        await self._traversal_holds_the_filter(
            store, {"n": {"$gte": 2}}, {"d1": 0, "d3": 1, "d9": 2}
        )

    async def test_traversal_with_an_in_filter_admits_only_passing_nodes(
        self, store: Store
    ) -> None:
        flt = {"type": {"$in": ["mammal", "bird", "insect"]}}
        depths = {"d1": 0, "d0": 1, "d8": 1, "d11": 1, "d3": 1, "d2": 2, "d9": 2}
        await self._traversal_holds_the_filter(store, flt, depths)

    async def test_explain_says_how_every_condition_of_the_filter_was_answered(
        self, store: Store
    ) -> None:
        flt = {"type": {"$in": ["mammal", "bird"]}, "keywords": {"$ne": "claws"}}
        result = await atraverse(
            None,
            query_embedding=_query(),
            store=store,
            edges=[("keywords", "keywords")],
            strategy=Eager(select_k=5, start_k=2, adjacent_k=5, max_depth=1),
            filter=flt,
        )
        plan = result.stats.filters["filter"]
        labels = {"type $eq", "keywords $ne"}
        assert set(plan.pushed) | set(plan.after_read) == labels
        assert not set(plan.pushed) & set(plan.after_read)
        assert plan.queries in (1, 2)  # one read, or one query per $in value, merged
        assert f"filter: {plan.describe()}" in result.stats.explain().splitlines()
        unfiltered = await atraverse(
            None,
            query_embedding=_query(),
            store=store,
            edges=[("keywords", "keywords")],
            strategy=Eager(select_k=5, start_k=2, adjacent_k=5, max_depth=1),
        )
        assert not unfiltered.stats.filters["filter"].filtered
        assert "filter:" not in unfiltered.stats.explain()

    @staticmethod
    async def _traversal_holds_the_filter(
        store: Store, flt: dict[str, Any], depths: dict[str, int]
    ) -> None:
        compiled = compile_filter(flt)
        result = await atraverse(
            None,
            query_embedding=_query(),
            store=store,
            edges=[("keywords", "keywords"), ("loc.city", "loc.city"), ("cites", "$id")],
            strategy=Eager(select_k=20, start_k=0, adjacent_k=20, max_depth=2),
            initial_root_ids=["d1"],
            filter=flt,
        )
        assert all(matches(compiled, n.metadata) for n in result)
        assert {n.id: n.depth for n in result} == depths

    @writes
    @pytest.mark.parametrize(
        "value",
        [
            "O'Brien; DROP TABLE docs; --",
            "%s",
            "' OR '1'='1",
            "SELECT * FROM system_schema.tables",
            'quote " and \\ backslash',
        ],
    )
    async def test_filter_values_with_quotes_and_cql_match_only_the_exact_document(
        self, store: Store, value: str
    ) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd(
            [
                Document("exact", "e", {"title": value, "it's; --": value}, vec),
                Document("other", "o", {"title": "plain", "it's; --": "plain"}, vec),
            ]
        )
        q = _query()
        for flt in (
            {"title": value},
            {"title": {"$in": [value, "%s'); DROP TABLE docs; --"]}},
            {"it's; --": {"$eq": value}},
            {"$or": [{"title": value}, {"title": "AND tokens CONTAINS '%s'"}]},
        ):
            assert _ids(await store.asearch(q, k=20, filter=flt)) == ["exact"], flt
            assert _ids(await store.aget(["exact", "other", "d0"], filter=flt)) == ["exact"]
        for flt in (
            {"title": value + " "},
            {"title": {"$in": [value.upper() + "x", "' OR 1=1 --"]}},
            {"title'; --": value},
        ):
            assert await store.asearch(q, k=20, filter=flt) == [], flt
        assert len(await store.asearch(q, k=50)) == 14  # the table is intact

    @pytest.mark.parametrize(
        ("flt", "argument", "phrase"),
        [
            ({"year": {"$regex": "19.*"}}, "filter['year']['$regex']", "$exists"),
            ({"year": {"$foo": 1}}, "filter['year']['$foo']", "one of the operators"),
            ({"title": {"$gt": "abc"}}, "filter['title']['$gt']", "a range on a text field"),
            ({"year": {"$gte": "1990"}}, "filter['year']['$gte']", "a range on a text field"),
            ({"year": {"$lt": True}}, "filter['year']['$lt']", "not a number"),
            ({"year": {"$lte": None}}, "filter['year']['$lte']", "ISO date"),
            ({"year": {"$gt": [1, 2]}}, "filter['year']['$gt']", "ISO date"),
            (
                {"year": {"$gt": 1, "$lt": "2020-01-01"}},
                "filter['year']['$lt']",
                "like the other range bound on 'year'",
            ),
            (
                {"$or": [{"d": {"$gt": "2020-01-01"}}, {"d": {"$lt": 5}}]},
                "filter['$or'][1]['d']['$lt']",
                "an ISO date string, like",
            ),
            ({"type": {"$in": []}}, "filter['type']['$in']", "non-empty list"),
            ({"type": {"$in": "bird"}}, "filter['type']['$in']", "non-empty list"),
            ({"type": {"$nin": [["a"]]}}, "filter['type']['$nin'][0]", "JSON scalar"),
            ({"type": {"$in": [float("nan")]}}, "filter['type']['$in'][0]", "finite"),
            ({"type": {"$exists": 1}}, "filter['type']['$exists']", "true or false"),
            ({"type": {}}, "filter['type']", "at least one operator"),
            ({"type": {"$eq": "x", "city": "y"}}, "filter['type']", "only operators"),
            ({"$or": []}, "filter['$or']", "non-empty list"),
            ({"$and": {"type": "x"}}, "filter['$and']", "non-empty list"),
            ({"$or": ["type"]}, "filter['$or'][0]", "a filter"),
            ({"$nor": [{"type": "x"}]}, "a filter field name", "'$and' / '$or'"),
            ({"$or": [{"$id": "d1"}]}, "a filter field name in filter['$or'][0]", "get(ids)"),
            (
                {"a": {"$in": list(range(9))}, "b": {"$in": list(range(8))}},
                "filter",
                "72 alternatives",
            ),
            ({"$or": [{"a": i} for i in range(65)]}, "filter", "65 alternatives"),
        ],
    )
    async def test_bad_filter_gets_the_same_error_naming_the_place_on_every_store(
        self, store: Store, flt: dict[str, Any], argument: str, phrase: str
    ) -> None:
        with pytest.raises(InvalidInputError) as caught:
            await store.aprepare(_query(), flt)
        assert caught.value.argument == argument
        assert phrase in str(caught.value), str(caught.value)
        with pytest.raises(InvalidInputError) as again:
            await store.asearch(_query(), k=3, filter=flt)
        assert str(again.value) == str(caught.value)

    async def test_filter_language_within_the_bound_of_branches_is_answered(
        self, store: Store
    ) -> None:
        flt = {"type": {"$in": [f"t{i}" for i in range(7)] + ["mammal"]}, "n": {"$in": [1, 2]}}
        assert len(compile_filter(flt).branches) == 16
        assert set(_ids(await store.asearch(_query(), k=12, filter=flt))) == {"d0", "d1", "d11"}
        big = {"$or": [{"tag": f"v{i}"} for i in range(63)] + [{"tag": "solo"}]}
        assert len(compile_filter(big).branches) == MAX_BRANCHES
        assert _ids(await store.asearch(_query(), k=12, filter=big)) == ["d10"]

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

    @pytest.mark.parametrize("k", [-1, 2.5, "3", True, None])
    async def test_bad_k_is_invalid_input(self, store: Store, k: Any) -> None:
        prepared = await store.aprepare(_query())
        with pytest.raises(InvalidInputError, match="k must be"):
            await prepared.asearch(k=k)
        with pytest.raises(InvalidInputError, match="k must be"):
            await prepared.aadjacent(MetadataEdge("type", "bird"), k=k)
        with pytest.raises(InvalidInputError, match="k must be"):
            await prepared.aadjacent_many([MetadataEdge("type", "bird")], k=k)

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

    # -- the metadata type model: the same values kept, compared and refused by every store ----

    @writes
    async def test_ints_beyond_2_to_53_stay_distinct_in_filters_and_edges(
        self, store: Store
    ) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd(
            [
                Document("big", "b", {"pid": 2**60, "pids": [2**60]}, vec),
                Document("big1", "b1", {"pid": 2**60 + 1, "pids": [2**60 + 1]}, vec),
                Document("max", "m", {"pid": MAX_INT, "pids": [MIN_INT]}, vec),
            ]
        )
        q = _query()
        assert _ids(await store.asearch(q, k=20, filter={"pid": 2**60})) == ["big"]
        assert _ids(await store.asearch(q, k=20, filter={"pid": 2**60 + 1})) == ["big1"]
        assert _ids(await store.asearch(q, k=20, filter={"pids": MIN_INT})) == ["max"]
        assert _ids(await store.aadjacent(MetadataEdge("pids", 2**60 + 1), q, k=20)) == ["big1"]
        assert _ids(await store.aadjacent(MetadataEdge("pid", MAX_INT), q, k=20)) == ["max"]
        # A float equal to the int is the same number; one off is not.
        assert _ids(await store.asearch(q, k=20, filter={"pid": float(2**60)})) == ["big"]
        got = {h.document.id: h.document.metadata for h in await store.aget(["big1", "max"])}
        assert got["big1"]["pid"] == 2**60 + 1 and type(got["big1"]["pid"]) is int
        assert got["max"] == {"pid": MAX_INT, "pids": [MIN_INT]}

    @writes
    async def test_numbers_in_lists_compare_by_value(self, store: Store) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd([Document("pairs", "p", {"pair": [[1.0, 2]], "flat": [1.0, 2]}, vec)])
        q = _query()
        assert _ids(await store.asearch(q, k=20, filter={"pair": [1, 2.0]})) == ["pairs"]
        assert _ids(await store.asearch(q, k=20, filter={"flat": [1, 2]})) == ["pairs"]
        assert _ids(await store.aadjacent(MetadataEdge("pair", [1, 2]), q, k=20)) == ["pairs"]
        assert await store.asearch(q, k=20, filter={"flat": [True, 2]}) == []

    @writes
    async def test_metadata_is_normalized_the_same_way_by_every_store(self, store: Store) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        given = {
            "i": np.int64(7),
            "b": np.bool_(True),
            "f": np.float32(0.5),
            "t": ("x", np.int32(2)),
            "s": np.str_("text"),
            "nested": {"u": np.uint8(3), "l": [(1, 2)]},
            "neg0": -0.0,
            "tiny": 5e-324,
        }
        await store.aadd([Document("np", "n", given, vec)])
        (hit,) = await store.aget(["np"])
        md = dict(hit.document.metadata)
        want = {
            "i": 7,
            "b": True,
            "f": 0.5,
            "t": ["x", 2],
            "s": "text",
            "nested": {"u": 3, "l": [[1, 2]]},
            "neg0": -0.0,
            "tiny": 5e-324,
        }
        assert md == want
        assert [type(md[k]) for k in want] == [type(v) for v in want.values()]
        assert type(md["nested"]["u"]) is int and math.copysign(1.0, md["neg0"]) == -1.0
        q = _query()
        for flt in ({"i": 7}, {"b": True}, {"t": 2}, {"nested.u": np.int16(3)}, {"s": "text"}):
            assert _ids(await store.asearch(q, k=20, filter=flt)) == ["np"], flt
        assert await store.asearch(q, k=20, filter={"b": 1}) == []  # a bool is not a number

    @writes
    @pytest.mark.parametrize(
        ("metadata", "field", "shown"),
        [
            ({"tags": {"a", "b"}}, "'tags'", "set"),
            ({"n": float("nan")}, "'n'", "nan"),
            ({"n": float("-inf")}, "'n'", "inf"),
            ({"n": 10**400}, "'n'", "401 digits"),
            ({"n": 2**63}, "'n'", "9223372036854775808"),
            ({"n": [1, -(2**63) - 1]}, "'n[1]'", "-9223372036854775809"),
            ({"s": "bad \ud800 text"}, "'s'", "ud800"),
            ({"a": {"s": ["ok", "\udfff"]}}, "'a.s[1]'", "udfff"),
            ({"a.b": 1}, "'a.b'", "'a.b'"),
            ({"a": {"b.c": 1}}, "'a'", "'b.c'"),
            ({"$id": "B"}, "key of metadata", "'$id'"),
            ({"a=b": 1}, "key of metadata", "'a=b'"),
            ({"": 1}, "key of metadata", "''"),
            ({3: "x"}, "key of metadata", "3"),
            ({"blob": b"bytes"}, "'blob'", "bytes"),
            ({"arr": np.zeros(2)}, "'arr'", "ndarray"),
            ({"when": object()}, "'when'", "object"),
            ({"deep": _nested(40)}, "'deep", "nested at most"),
            ({"k" * 300: 1}, "key of metadata", "256 bytes"),
        ],
    )
    async def test_metadata_outside_the_type_model_is_refused_naming_document_and_field(
        self, store: Store, metadata: dict[Any, Any], field: str, shown: str
    ) -> None:
        good = Document("ok", "fine", {"type": "x"}, [0.5] * COMPLIANCE_DIM)
        bad = Document("bad-doc", "x", {}, [0.5] * COMPLIANCE_DIM)
        bad.metadata = metadata
        with pytest.raises(InvalidInputError) as caught:
            await store.aadd([good, bad])
        message = str(caught.value)
        assert "'bad-doc'" in message and field in message and shown in message, message
        assert caught.value.allowed
        assert await store.aget(["ok", "bad-doc"]) == []

    @writes
    @pytest.mark.parametrize(("doc_id", "content"), [("bad\ud800", "text"), ("bad", "text \udc00")])
    async def test_ids_and_content_with_lone_surrogates_are_refused(
        self, store: Store, doc_id: str, content: str
    ) -> None:
        good = Document("ok", "fine", {}, [0.5] * COMPLIANCE_DIM)
        with pytest.raises(InvalidInputError, match="surrogate"):
            await store.aadd([good, Document(doc_id, content, {}, [0.5] * COMPLIANCE_DIM)])
        assert await store.aget(["ok"]) == []
        with pytest.raises(InvalidInputError, match="surrogate"):
            await store.aget(["d0", "x\ud800"])

    @pytest.mark.parametrize(
        ("flt", "argument"),
        [
            ({"$id": "d1"}, "'\\$id'"),
            ({"loc.$city": "Oslo"}, "loc.\\$city"),
            ({"n": 2**64}, "filter\\['n'\\]"),
            ({"n": [1, 10**400]}, "filter\\['n'\\]"),
            ({"type": "x\ud800"}, "filter\\['type'\\]"),
            ({"keywords": {"fur"}}, "filter\\['keywords'\\]"),
            ({"x" * 300: 1}, "256 bytes"),
        ],
    )
    async def test_filters_outside_the_type_model_are_refused(
        self, store: Store, flt: dict[str, Any], argument: str
    ) -> None:
        with pytest.raises(InvalidInputError, match=argument):
            await store.aprepare(_query(), flt)

    async def test_filter_values_are_normalized_like_metadata(self, store: Store) -> None:
        q = _query()
        assert _ids(await store.asearch(q, k=12, filter={"n": np.int64(2)})) == ["d1"]
        assert set(_ids(await store.asearch(q, k=12, filter={"flag": np.bool_(True)}))) == {"d3"}
        assert _ids(await store.asearch(q, k=12, filter={"n": np.float32(2.5)})) == ["d4"]

    @writes
    @pytest.mark.parametrize(
        "vec",
        [
            [1e-320] * COMPLIANCE_DIM,
            [1e-12] * COMPLIANCE_DIM,
            [1e30] * COMPLIANCE_DIM,
            [3e38] * COMPLIANCE_DIM,
            [1e308] * COMPLIANCE_DIM,
        ],
    )
    async def test_vectors_whose_norm_underflows_or_overflows_are_refused(
        self, store: Store, vec: list[float]
    ) -> None:
        with pytest.raises(InvalidInputError, match="embedding"):
            await store.aadd([Document("tiny", "t", {}, vec)])
        assert await store.aget(["tiny"]) == []
        with pytest.raises(InvalidInputError, match="embedding"):
            await store.aprepare(vec)

    @pytest.mark.parametrize("scale", [1e-8, 1e8])
    async def test_vectors_of_small_and_large_norm_within_bounds_score_right(
        self, store: Store, docs: list[Document], scale: float
    ) -> None:
        q = [scale * x for x in _query()]
        hits = await store.asearch(q, k=3)
        assert _ids(hits) == _ranked(docs, q)[:3]
        by_id = {d.id: d for d in docs}
        for h in hits:
            assert h.score == pytest.approx(_cos(by_id[h.document.id], q), abs=TOL)

    async def test_returned_documents_are_copies(self, store: Store) -> None:
        q = _query()
        (hit,) = await store.aget(["d1"], embedding=q)
        doc = hit.document
        assert doc.embedding is not None
        doc.metadata["type"] = "changed"
        doc.metadata["keywords"].append("scales")
        doc.metadata["loc"]["city"] = "Lima"
        doc.embedding[0] = 123.0
        (again,) = await store.aget(["d1"])
        assert dict(again.document.metadata) == compliance_documents()[1].metadata
        assert again.document.embedding is not None and again.document.embedding[0] != 123.0
        assert "d1" in _ids(await store.asearch(q, k=12, filter={"type": "mammal"}))
        assert "d1" not in _ids(await store.asearch(q, k=12, filter={"keywords": "scales"}))
        assert "d1" in _ids(await store.asearch(q, k=12, filter={"loc.city": "Oslo"}))
        assert await store.asearch(q, k=12, filter={"loc.city": "Lima"}) == []

    @writes
    async def test_added_documents_are_copied_on_the_way_in(self, store: Store) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        mine = Document("mine", "m", {"type": "kept", "tags": ["a"]}, list(vec))
        await store.aadd([mine])
        mine.metadata["type"] = "changed"
        mine.metadata["tags"].append("b")
        assert mine.embedding is not None
        mine.embedding[0] = 5.0
        (hit,) = await store.aget(["mine"])
        assert dict(hit.document.metadata) == {"type": "kept", "tags": ["a"]}
        assert _ids(await store.asearch(_query(), k=20, filter={"type": "kept"})) == ["mine"]
        assert await store.asearch(_query(), k=20, filter={"tags": "b"}) == []
        assert hit.document.embedding is not None and hit.document.embedding[0] == 0.0

    async def test_query_vector_reused_in_place_gives_the_new_querys_results(
        self, store: Store, docs: list[Document]
    ) -> None:
        buffer = np.asarray(_query(1), dtype=np.float64)
        first = _ids(await store.asearch(buffer, k=3))  # type: ignore[arg-type]
        assert first == _ranked(docs, list(buffer))[:3]
        prepared = await store.aprepare(buffer)  # type: ignore[arg-type]
        for seed in (2, 3, 4):
            buffer[:] = _query(seed)  # the same object, new values
            want = _ranked(docs, list(buffer))[:3]
            assert _ids(await store.asearch(buffer, k=3)) == want  # type: ignore[arg-type]
        listed = _query(5)
        assert _ids(await store.asearch(listed, k=3)) == _ranked(docs, listed)[:3]
        listed[:] = _query(6)
        assert _ids(await store.asearch(listed, k=3)) == _ranked(docs, listed)[:3]
        # A prepared query keeps the vector it was prepared with.
        assert _ids(await prepared.asearch(k=3)) == first

    # -- writes -----------------------------------------------------------------------------

    @writes
    async def test_upsert_replaces(self, store: Store) -> None:
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

    @writes
    async def test_add_embeds_documents_without_embedding(self, store: Store) -> None:
        emb = HashEmbedding(COMPLIANCE_DIM)
        await store.aadd([Document("new", "a brand new text", {"type": "new"})])
        q = emb("a brand new text")
        hits = await store.asearch(q, k=1)
        assert _ids(hits) == ["new"]
        assert hits[0].score == pytest.approx(1.0, abs=TOL)
