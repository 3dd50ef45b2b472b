"""`StoreCompliance`: what every hoprag Store must do, written once, run against every store.

Subclass it in a test module and provide a `store_factory` fixture (see `hoprag.testing`).
Every factory call must return a store holding only the given documents (the twelve of
`compliance_documents()`). Scores are compared with a tolerance: float32 storage and
approximate indexes are fine on twelve documents. Needs pytest and pytest-asyncio."""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
import pytest
import pytest_asyncio

from hoprag.documents import Document
from hoprag.edges import MISSING, IdEdge, MetadataEdge, MetadataEdgeFunction, nested_get, value_key
from hoprag.embeddings.hash import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.filters import MAX_BRANCHES, compile_filter, matches
from hoprag.lexical import Bm25Index
from hoprag.resolve import Candidate
from hoprag.scopes import Scope, ScopeTooLargeError
from hoprag.search import asearch
from hoprag.stores.base import Hit, PreparedQuery, Store
from hoprag.strategies import Eager, Mmr
from hoprag.testing.data import (
    COMPLIANCE_DIM,
    RESOLVE_FIELDS,
    compliance_documents,
    resolve_documents,
    unit_vectors,
)
from hoprag.traversal import atraverse
from hoprag.validation import MAX_INT, MIN_INT

StoreFactory = Callable[..., Awaitable[Store]]
"""`await factory(embedding, documents)`: a fresh store holding exactly `documents`. A factory
that also takes a `fields` keyword gets `fields=RESOLVE_FIELDS` from the `aresolve` tests: a
store that needs declared fields declares them (`{field: "entity", ...}`). Factories without
it are called as before.

A factory may also have a `shared` attribute, called the same way: a store over `documents`
that it may have loaded for an earlier test and reuses (a store whose set-up is costly, such
as a Cassandra table with its indexes, then loads the suite's documents once). The suite asks
for it only in tests that do not write (those not marked `@writes`), and turns the shared
store's write methods into failures for the test's duration, so that a test that writes
without being marked fails instead of changing what later tests read."""

WRITE_METHODS = ("aadd", "adelete", "adeclare_fields")
"""The store methods that change what a store holds: refused on a shared store."""

_Test = TypeVar("_Test", bound=Callable[..., Any])


def writes(test: _Test) -> _Test:
    """Mark a suite test that writes to its store: it always gets a fresh store from the
    factory, never a shared one."""
    test.compliance_writes = True  # type: ignore[attr-defined]
    return test


def _writes(request: pytest.FixtureRequest) -> bool:
    return bool(getattr(request.function, "compliance_writes", False))


def _refuse_writes(store: Any, test: str) -> bool:
    """Make `store`'s write methods raise AssertionError naming `test`; False when the store
    does not allow it (its instance attributes cannot be set)."""
    for name in WRITE_METHODS:
        if not callable(getattr(store, name, None)):
            continue

        async def refuse(*args: Any, _name: str = name, **kwargs: Any) -> None:
            raise AssertionError(
                f"{test} called {_name} on a store shared between tests; mark the test "
                "@writes (hoprag.testing.compliance) so that it gets a store of its own"
            )

        try:
            setattr(store, name, refuse)
        except (AttributeError, TypeError):
            return False
    return True


async def _store_for(
    request: pytest.FixtureRequest, factory: StoreFactory, *args: Any, **kwargs: Any
) -> Any:
    """The factory's shared store for a test that does not write (when the factory shares
    stores and the store lets its writes be refused), else a fresh one."""
    shared = getattr(factory, "shared", None)
    if shared is not None and not _writes(request):
        store = await shared(*args, **kwargs)
        if _refuse_writes(store, request.node.name):
            return store
    return await factory(*args, **kwargs)


def _takes_fields(factory: Callable[..., Any]) -> bool:
    """Whether the factory accepts a `fields` keyword (or any keyword)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.kind is inspect.Parameter.VAR_KEYWORD
        or (p.name == "fields" and p.kind is not inspect.Parameter.POSITIONAL_ONLY)
        for p in params
    )


TOL = 1e-3


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


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


def _scores(hits: list[Hit]) -> list[float]:
    out = [h.score for h in hits]
    assert all(s is not None for s in out), "a search with an embedding scores every hit"
    return [s for s in out if s is not None]


def _values(doc: Document, field: str) -> list[Any]:
    """The values of a field of a compliance document (list elements exploded)."""
    if field == "$id":
        return [doc.id]
    value = nested_get(doc.metadata, field)
    if value is MISSING or value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _reference_scope(
    docs: list[Document], anchors: set[str], specs: list[tuple[str, str]], max_depth: int
) -> dict[str, int]:
    """Each document within `max_depth` hops of `anchors` with its smallest hop count, by a
    plain breadth-first search over every pair of documents (the expected answer)."""
    by_id = {d.id: d for d in docs}
    depth = {a: 0 for a in anchors if a in by_id}
    frontier = set(depth)
    for d in range(1, max_depth + 1):
        reached: set[str] = set()
        for src in frontier:
            for source, target in specs:
                out = {value_key(v) for v in _values(by_id[src], source)}
                for doc in docs:
                    if doc.id not in depth and out & {value_key(v) for v in _values(doc, target)}:
                        reached.add(doc.id)
        for r in reached:
            depth[r] = d
        frontier = reached
    return depth


_SCOPE_CASES: dict[str, tuple[dict[str, Any], list[tuple[str, str]], int]] = {
    "start-depth0": ({"start": {"type": "bird"}}, [], 0),
    "start-depth1": ({"start": {"type": "bird"}}, [("keywords", "keywords")], 1),
    "start-depth2": ({"start": {"type": "bird"}}, [("keywords", "keywords")], 2),
    "ids-depth0": ({"ids": ["d3", "d0", "missing"]}, [], 0),
    "ids-cites-out-depth2": ({"ids": ["d3"]}, [("cites", "$id")], 2),
    "ids-cited-by-depth2": ({"ids": ["d0"]}, [("$id", "cites")], 2),
    "ids-both-ways-depth1": ({"ids": ["d10"]}, [("cites", "$id"), ("$id", "cites")], 1),
    "nested-field-depth1": ({"start": {"type": "fish"}}, [("loc.city", "loc.city")], 1),
    "list-filter-start-depth1": ({"start": {"keywords": "claws"}}, [("type", "type")], 1),
}


def _scope(case: str, **kw: Any) -> Scope:
    anchors, specs, depth = _SCOPE_CASES[case]
    return Scope(**anchors, edges=specs, max_depth=depth, **kw)


def _expected_scope(docs: list[Document], case: str) -> dict[str, int]:
    anchors, specs, depth = _SCOPE_CASES[case]
    if "ids" in anchors:
        start = set(anchors["ids"])
    else:
        ((field, value),) = anchors["start"].items()
        start = {d.id for d in docs if value_key(value) in map(value_key, _values(d, field))}
    return _reference_scope(docs, start, specs, depth)


class StoreCompliance:
    """Behaviour shared by all stores. Subclasses provide the `store_factory` fixture, and may
    list documented deviations in `deviations` (test name -> reason; such a test must fail)."""

    deviations: ClassVar[dict[str, str]] = {}

    @pytest.fixture(autouse=True)
    def _deviation(self, request: pytest.FixtureRequest) -> None:
        reason = self.deviations.get(request.node.originalname)
        if reason is not None:
            request.applymarker(pytest.mark.xfail(reason=reason, strict=True))

    @pytest.fixture
    def docs(self) -> list[Document]:
        return compliance_documents()

    @pytest_asyncio.fixture
    async def store(
        self, request: pytest.FixtureRequest, store_factory: StoreFactory, docs: list[Document]
    ) -> AsyncIterator[Any]:
        yield await _store_for(request, store_factory, HashEmbedding(COMPLIANCE_DIM), docs)

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

    # -- lexical search (alexical) ----------------------------------------------------------

    @pytest.mark.parametrize(
        ("text", "flt"),
        [
            ("mammal fish", None),
            ("document about bird", {"type": {"$in": ["bird", "insect"]}}),
            ("Document 3 ABOUT birds, bird!", None),
            ("the of and", None),  # only function words: no term, no hit
        ],
    )
    async def test_lexical_search_ranks_as_bm25_over_the_same_tokens_within_the_filter(
        self, store: Store, docs: list[Document], text: str, flt: dict[str, Any] | None
    ) -> None:
        reference = Bm25Index()
        for d in docs:
            reference.add(d.id, d.content)
        passing = {d.id for d in docs if matches(compile_filter(flt), d.metadata)}
        want = reference.search(text, 10, keep=passing.__contains__)
        q = _query()
        prepared = await store.aprepare(q, flt)
        hits = await prepared.alexical(text, k=10)
        assert [h.id for h in hits] == [i for i, _ in want]
        assert [h.lexical for h in hits] == pytest.approx([s for _, s in want], rel=1e-9)
        by_id = {d.id: d for d in docs}
        for h in hits:
            assert h.score == pytest.approx(_cos(by_id[h.id], q), abs=TOL)
        assert len(await prepared.alexical(text, k=2)) == min(2, len(want))

    @writes
    async def test_lexical_search_follows_replaced_and_added_documents(
        self, store: Store, docs: list[Document]
    ) -> None:
        """A document added again with other text and new documents (one id twice in one
        add: the last counts) change the terms, the lengths and the document count BM25
        reads: the ranking is that of an index of the documents as they now are."""
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd([Document("d1", "bird bird feather song", {"type": "bird"}, vec)])
        await store.aadd(
            [
                Document("x1", "mammal draft", {"type": "new"}, vec),
                Document("x2", "fish fin gill", {"type": "new"}, vec),
                Document("x1", "a fish and a mammal with fur", {"type": "new"}, vec),
            ]
        )
        now = {d.id: d.content for d in docs}
        now |= {"d1": "bird bird feather song", "x2": "fish fin gill"}
        now["x1"] = "a fish and a mammal with fur"
        reference = Bm25Index()
        for doc_id, content in now.items():
            reference.add(doc_id, content)
        prepared = await store.aprepare(_query())
        for text in ("mammal fish", "bird song", "draft"):
            want = reference.search(text, 10)
            hits = await prepared.alexical(text, k=10)
            assert [h.id for h in hits] == [i for i, _ in want], text
            assert [h.lexical for h in hits] == pytest.approx([s for _, s in want], rel=1e-9)

    async def test_a_traversal_starts_from_the_lexical_matches_and_counts_the_search(
        self, store: Store
    ) -> None:
        strategy = Eager(select_k=10, start_k=0, lexical_k=2, adjacent_k=10, max_depth=1)
        result = await atraverse("insect legs", store=store, edges=[("cites", "$id")],
                                 strategy=strategy, query_embedding=_query())  # fmt: skip
        starts = [n for n in result if n.depth == 0]
        assert [n.id for n in starts] == ["d10", "d9"]  # the insects, equal scores, by id
        assert all(n.extra_metadata["_lexical_score"] > 0 for n in starts)
        assert {n.id for n in result if n.depth == 1} == {"d8"}  # d10 cites d9 and d8
        assert result.stats.hops[0].queries["lexical"] == 1
        assert "lexical=1" in result.stats.explain()
        with pytest.raises(InvalidInputError, match="query text"):
            await atraverse(None, store=store, edges=[], strategy=strategy,
                            query_embedding=_query())  # fmt: skip

    # -- entity resolution (aresolve) -------------------------------------------------------

    @pytest_asyncio.fixture
    async def names(
        self, request: pytest.FixtureRequest, store_factory: StoreFactory
    ) -> AsyncIterator[Any]:
        emb, docs = HashEmbedding(COMPLIANCE_DIM), resolve_documents()
        fields = {"fields": dict(RESOLVE_FIELDS)} if _takes_fields(store_factory) else {}
        yield await _store_for(request, store_factory, emb, docs, **fields)

    async def test_resolve_ranks_exact_then_token_matches_with_document_counts(
        self, names: Store
    ) -> None:
        got = await names.aresolve("fonda", ["cast"])
        assert [(c.field, c.value, c.documents, round(c.score, 4)) for c in got] == [
            ("cast", "Fonda", 1, 1.0),
            ("cast", "Henry Fonda", 2, 0.5),
            ("cast", "Jane Fonda", 2, 0.5),
            ("cast", "Bridget Fonda", 1, 0.5),
            ("cast", "JÁNE FONDA", 1, 0.5),
            ("cast", "Peter Fonda", 1, 0.5),
            ("cast", "Jane Fonda-Smith", 1, 0.3333),
        ]
        assert all(isinstance(c, Candidate) for c in got)

    async def test_resolve_ignores_case_accents_and_spaces_across_fields(
        self, names: Store
    ) -> None:
        got = await names.aresolve("  jane   FÖNDA ", ["cast", "director"])
        assert [(c.field, c.value, c.documents, round(c.score, 4)) for c in got] == [
            ("cast", "Jane Fonda", 2, 1.0),
            ("director", "Jane Fonda", 1, 1.0),
            ("cast", "JÁNE FONDA", 1, 1.0),
            ("cast", "Jane Fonda-Smith", 1, 0.6667),
        ]
        lumet = await names.aresolve("sidney lumet", ["director"])
        assert [(c.value, c.documents, c.score) for c in lumet] == [
            ("Sidney  Lumet", 1, 1.0),
            ("Sidney Lumet", 1, 1.0),
        ]

    async def test_resolve_limit_keeps_the_best(self, names: Store) -> None:
        got = await names.aresolve("fonda", ["cast"], limit=2)
        assert [c.value for c in got] == ["Fonda", "Henry Fonda"]

    async def test_resolve_reaches_nested_fields_and_skips_non_strings(self, names: Store) -> None:
        got = await names.aresolve("jane", ["crew.lead"])
        assert [(c.field, c.value, c.documents) for c in got] == [("crew.lead", "Jane Fonda", 1)]
        # r7 holds 1, True, None and a nested list in cast: none of them is a resolvable name.
        assert await names.aresolve("1", ["cast"]) == []
        assert await names.aresolve("true", ["cast"]) == []

    @writes
    async def test_resolve_leaves_out_values_no_document_carries_any_more(
        self, names: Store
    ) -> None:
        replaced = next(d for d in resolve_documents() if d.id == "r5")
        replaced.metadata = {"cast": ["Nobody Else"], "director": "Nobody"}
        await names.aadd([replaced])
        got = await names.aresolve("fonda", ["cast"])
        assert "Fonda" not in [c.value for c in got]
        assert [(c.value, c.documents) for c in await names.aresolve("nobody else", ["cast"])] == [
            ("Nobody Else", 1)
        ]

    @pytest.mark.parametrize(
        "text",
        ["' OR 1=1 --", "%s", "x'); DROP TABLE docs; --", "SELECT * FROM docs", 'a\\\' ; "b"'],
    )
    async def test_resolve_text_that_looks_like_cql_matches_nothing(
        self, names: Store, text: str
    ) -> None:
        assert await names.aresolve(text, ["cast", "director"]) == []
        # the store still answers (nothing was executed as query text)
        assert [c.value for c in await names.aresolve("peter", ["cast"])] == ["Peter Fonda"]

    async def test_resolve_finds_values_that_look_like_cql_as_plain_values(
        self, names: Store
    ) -> None:
        got = await names.aresolve("o'brien; drop table x; --", ["cast"])
        assert [(c.value, c.documents, c.score) for c in got] == [
            ("O'Brien; DROP TABLE x; --", 1, 1.0)
        ]

    @pytest.mark.parametrize(
        ("text", "fields", "limit", "argument"),
        [
            ("", ["cast"], 10, "text"),
            ("   ", ["cast"], 10, "text"),
            ("!!! --", ["cast"], 10, "text"),
            (5, ["cast"], 10, "text"),
            ("x" * 201, ["cast"], 10, "text"),
            ("\ud800", ["cast"], 10, "text"),
            ("fonda", "cast", 10, "fields"),
            ("fonda", [], 10, "fields"),
            ("fonda", ["$id"], 10, "a resolve field"),
            ("fonda", ["cast"], 0, "limit"),
            ("fonda", ["cast"], 101, "limit"),
            ("fonda", ["cast"], True, "limit"),
        ],
    )
    async def test_bad_resolve_input_is_invalid_input(
        self, names: Store, text: Any, fields: Any, limit: Any, argument: str
    ) -> None:
        with pytest.raises(InvalidInputError) as err:
            await names.aresolve(text, fields, limit=limit)
        assert err.value.argument == argument
