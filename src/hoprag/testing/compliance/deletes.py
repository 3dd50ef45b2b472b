"""Deletes (`adelete`, `delete`): by ids or by filter, returning the count; afterwards every
read answers as a store that never held the deleted documents would (searches, reads by id,
edges both ways, traversals and their statistics, scopes, lexical scores, name counts); a
view deletes only inside it; traversals running beside a delete all complete; bad arguments
are refused before anything is deleted."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from hoprag.documents import Document
from hoprag.edges import MetadataEdge
from hoprag.embeddings.hash import HashEmbedding
from hoprag.engine.traversal import atraverse
from hoprag.errors import InvalidInputError
from hoprag.scopes import Scope
from hoprag.search import asearch
from hoprag.stores.base import Store
from hoprag.strategies import Eager
from hoprag.testing.compliance.support import (
    Contract,
    StoreFactory,
    _ids,
    _query,
    _takes_fields,
    writes,
)
from hoprag.testing.data import (
    COMPLIANCE_DIM,
    RESOLVE_FIELDS,
    compliance_documents,
    resolve_documents,
)

EDGES = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]
"""Edges over list values and ids in both directions: a deleted document is a target of
each."""

PROBES = [
    MetadataEdge("keywords", "wings"),
    MetadataEdge("keywords", "legs"),
    MetadataEdge("type", "bird"),
    MetadataEdge("cites", "d0"),
    MetadataEdge("cites", "d9"),
    MetadataEdge("cites", "d3"),
]
"""Edges whose targets include the deleted `d3` or `d9`, or that the deleted documents held."""

VICTIMS = ["d3", "d9"]
"""d3 (a bird citing d0, cited by d1) and d9 (an insect cited by d10)."""


def _all_ids() -> list[str]:
    return [d.id for d in compliance_documents()]


async def _fresh(factory: StoreFactory, docs: list[Document], **kwargs: Any) -> Store:
    return await factory(HashEmbedding(COMPLIANCE_DIM), docs, **kwargs)


async def _reads(store: Store) -> dict[str, Any]:
    """What every read path answers on the compliance documents, for comparing two stores."""
    q = _query()
    prepared = await store.aprepare(q)
    hits = await prepared.asearch(k=12)
    # From given roots: an approximate index may answer a small top-k start search with
    # another near neighbour once it has deleted entries (Cassandra 5.0's SAI, docs/cassandra.md);
    # the exact search of every document above covers the start search.
    result = await atraverse(
        "", store=store, edges=EDGES, query_embedding=q, initial_root_ids=("d8", "d4"),
        strategy=Eager(select_k=12, start_k=0, adjacent_k=12, max_depth=3),
    )  # fmt: skip
    scope = Scope(start={"type": "mammal"}, edges=[("cites", "$id")], max_depth=2)
    scoped = await asearch(None, store=store, k=12, scope=scope, query_embedding=q)
    lexical = await prepared.alexical("document about bird insect", k=12)
    return {
        "search": [(h.id, round(h.score or 0.0, 3)) for h in hits],
        "get": [h.id for h in await prepared.aget(_all_ids())],
        "edges": [sorted(_ids(rows)) for rows in await prepared.aadjacent_many(PROBES, k=12)],
        "matching": [sorted(_ids(rows)) for rows in await prepared.amatching(PROBES, limit=50)],
        "traversal": sorted((n.id, n.depth, n.path.nodes) for n in result),
        "hops": [(h.depth, h.rows, h.candidates, h.kept) for h in result.stats.hops],
        "scope": [(n.id, n.depth) for n in scoped],
        "lexical": [(h.id, h.lexical) for h in lexical],
    }


class DeleteCompliance(Contract):
    """Deletes: by ids or by filter, as if the documents had never been held (see the module
    docstring)."""

    @writes
    async def test_delete_by_ids_counts_the_deleted_and_skips_unknown_ids(
        self, store: Store
    ) -> None:
        assert await store.adelete(["d3", "missing", "d3"]) == 1
        assert await store.adelete(["d3"]) == 0  # deleted already: nothing to do
        assert await store.adelete([]) == 0
        assert _ids(await store.aget(_all_ids())) == [i for i in _all_ids() if i != "d3"]

    @writes
    async def test_a_deleted_document_answers_every_read_as_a_store_that_never_held_it(
        self, store: Store, store_factory: StoreFactory, docs: list[Document]
    ) -> None:
        assert await store.adelete(VICTIMS) == 2
        never = await _fresh(store_factory, [d for d in docs if d.id not in VICTIMS])
        got, want = await _reads(store), await _reads(never)
        assert got["lexical"] == [(i, pytest.approx(s, rel=1e-9)) for i, s in want["lexical"]]
        del got["lexical"], want["lexical"]
        assert got == want
        assert not {i for i, *_ in got["traversal"]} & set(VICTIMS)

    @writes
    async def test_deleted_names_are_counted_as_by_a_store_that_never_held_them(
        self, store_factory: StoreFactory
    ) -> None:
        """r0 carries Jane and Henry Fonda and Sidney Lumet; r8 alone carries Robert Bresson,
        so after deleting r8 no store resolves that name."""
        docs = resolve_documents()
        fields = {"fields": dict(RESOLVE_FIELDS)} if _takes_fields(store_factory) else {}
        names = await _fresh(store_factory, docs, **fields)
        assert await names.adelete(["r0", "r8"]) == 2
        never = await _fresh(store_factory, [d for d in docs if d.id not in ("r0", "r8")], **fields)
        for text, fields_ in (
            ("fonda", ["cast"]),
            ("lumet", ["director"]),
            ("bresson", ["director"]),
        ):
            assert await names.aresolve(text, fields_) == await never.aresolve(text, fields_)
        assert await names.aresolve("bresson", ["director"]) == []
        await names.aadd([d for d in docs if d.id == "r8"])  # the value is resolvable again
        assert [c.value for c in await names.aresolve("bresson", ["director"])] == [
            "Robert Bresson"
        ]

    @writes
    @pytest.mark.parametrize(
        ("flt", "gone"),
        [
            ({"type": "mammal"}, {"d0", "d1", "d8", "d11"}),
            ({"keywords": {"$in": ["legs", "hooves"]}}, {"d8", "d9", "d10"}),
            ({"$or": [{"type": "fish"}, {"tag": "solo"}]}, {"d4", "d5", "d10"}),
            ({"n": {"$gte": 3}}, {"d3", "d7", "d9"}),
            ({"type": "nothing"}, set()),
        ],
    )
    async def test_delete_by_filter_deletes_every_matching_document(
        self, store: Store, flt: dict[str, Any], gone: set[str]
    ) -> None:
        assert await store.adelete(filter=flt) == len(gone)
        assert _ids(await store.aget(_all_ids())) == [i for i in _all_ids() if i not in gone]
        assert await store.adelete(filter=flt) == 0

    @writes
    async def test_the_sync_delete_deletes_as_adelete_does(self, store: Store) -> None:
        deleted = await anyio.to_thread.run_sync(lambda: store.delete(["d0", "d1"]))
        assert deleted == 2
        assert _ids(await store.aget(["d0", "d1", "d2"])) == ["d2"]

    @writes
    @pytest.mark.parametrize(
        ("args", "kwargs", "argument"),
        [
            ((), {}, "ids"),
            ((["d0"],), {"filter": {"type": "bird"}}, "filter"),
            (("d0",), {}, "ids"),
            (([5],), {}, "every id in ids"),
            ((), {"filter": {}}, "filter"),
            ((), {"filter": {"type": {"$ne": "bird"}}}, "filter"),
            ((), {"filter": {"type": {"$bogus": 1}}}, "filter['type']['$bogus']"),
        ],
    )
    async def test_bad_delete_arguments_are_refused_before_anything_is_deleted(
        self, store: Store, args: tuple[Any, ...], kwargs: dict[str, Any], argument: str
    ) -> None:
        with pytest.raises(InvalidInputError) as info:
            await store.adelete(*args, **kwargs)
        assert info.value.argument == argument
        assert len(await store.aget(_all_ids())) == 12

    @writes
    async def test_a_view_deletes_only_documents_inside_it(self, store: Store) -> None:
        mammals = store.restricted({"type": "mammal"})
        assert await mammals.adelete(["d0", "d2"]) == 1  # d2 is a bird: outside, skipped
        assert await mammals.adelete(filter={"keywords": "claws"}) == 0  # d2 and d6 are not in
        assert await mammals.adelete(filter={"keywords": "fur"}) == 2  # d1, d8
        left = _ids(await store.aget(_all_ids()))
        assert left == [i for i in _all_ids() if i not in ("d0", "d1", "d8")]
        with pytest.raises(InvalidInputError) as info:
            await mammals.adelete(filter={})
        assert info.value.argument == "filter"

    @writes
    async def test_traversals_beside_a_delete_all_complete_without_deleted_documents(
        self, store: Store
    ) -> None:
        """Sixteen traversals run while documents are deleted one by one: none fails, and
        once the deletes are done a traversal reaches none of them."""
        strategy = Eager(select_k=12, start_k=3, adjacent_k=12, max_depth=3)
        q = _query()
        finished: list[int] = []

        async def traverse() -> None:
            for _ in range(3):
                result = await atraverse(
                    "", store=store, edges=EDGES, strategy=strategy, query_embedding=q
                )
                assert len({n.id for n in result}) == len(result)
            finished.append(1)

        async def delete() -> None:
            for doc_id in ["d1", "d3", "d5", "d7", "d9", "d11"]:
                assert await store.adelete([doc_id]) == 1
                await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as tg:
            for _ in range(16):
                tg.start_soon(traverse)
            tg.start_soon(delete)
        assert len(finished) == 16
        result = await atraverse("", store=store, edges=EDGES, strategy=strategy, query_embedding=q)
        left = {"d0", "d2", "d4", "d6", "d8", "d10"}
        assert {n.id for n in result} <= left
        assert {h.id for h in await store.asearch(q, k=12)} == left
