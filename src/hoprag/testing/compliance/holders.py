"""Holder counts (`aholders`): for each metadata edge, how many documents hold its value,
equal to a recount of the documents the store holds after adds, replacements (a value
changed, a list changed, a value or field removed), deletes by id and by filter, and a seeded
random sequence of them; unknown (None) through a store view; a traversal's results do not
change when counts are read; bad edges are refused."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from hoprag.documents import Document
from hoprag.edges import MISSING, IdEdge, MetadataEdge, nested_get, value_key
from hoprag.engine.traversal import atraverse
from hoprag.errors import InvalidInputError
from hoprag.stores.base import Store
from hoprag.strategies import Eager
from hoprag.testing.compliance.support import Contract, _query, writes
from hoprag.testing.data import COMPLIANCE_DIM, unit_vectors

PROBES = [
    MetadataEdge("type", "mammal"),
    MetadataEdge("type", "rock"),
    MetadataEdge("keywords", "fur"),
    MetadataEdge("keywords", "claws"),
    MetadataEdge("keywords", ["fur", "claws"]),
    MetadataEdge("keywords", []),
    MetadataEdge("cites", "d0"),
    MetadataEdge("cites", "missing"),
    MetadataEdge("n", 1),
    MetadataEdge("n", 1.0),
    MetadataEdge("n", 2.5),
    MetadataEdge("flag", True),
    MetadataEdge("flag", 1),
    MetadataEdge("loc.city", "Oslo"),
    MetadataEdge("loc.zip", 2),
    MetadataEdge("tag", "solo"),
    MetadataEdge("absent", "x"),
]
"""Edges over strings, lists (an element and the whole list), numbers (1 and 1.0 are one
value), bools (True is not 1), nested fields, and values or fields no document holds."""

_WORDS = ["a", "b", "c", "d"]
_IDS = [f"h{i}" for i in range(8)]


def _keys(value: Any) -> set[Any]:
    """The value keys a stored value is held under: itself and, for a list, each element."""
    keys = {value_key(value)}
    if isinstance(value, list):
        keys |= {value_key(v) for v in value}
    return keys


def recount(held: Iterable[Mapping[str, Any]], edges: Iterable[MetadataEdge]) -> list[int]:
    """Each edge's holders among the metadata `held`, counted one document at a time (the
    reference the contract compares a store's counts with)."""
    out = []
    for edge in edges:
        want = value_key(edge.value)
        out.append(
            sum(
                1
                for meta in held
                if (v := nested_get(meta, edge.incoming_field)) is not MISSING and want in _keys(v)
            )
        )
    return out


def _probes_of(held: Iterable[Mapping[str, Any]]) -> list[MetadataEdge]:
    """PROBES and an edge for every value of the random sequence's fields."""
    edges = list(PROBES)
    edges += [MetadataEdge("kw", w) for w in _WORDS]
    edges += [MetadataEdge("t", t) for t in ("x", "y")]
    edges += [MetadataEdge("n", n) for n in (1, 2, True)]
    edges += [MetadataEdge("nest.c", c) for c in ("p", "q")]
    edges += [MetadataEdge("kw", sorted(m["kw"])) for m in held if "kw" in m]
    return edges


def _random_metadata(rng: random.Random) -> dict[str, Any]:
    """Metadata drawn over a small vocabulary, so that values are shared, changed and
    dropped as documents are replaced."""
    meta: dict[str, Any] = {"kw": sorted(rng.sample(_WORDS, rng.randint(0, 3)))}
    if rng.random() < 0.7:
        meta["t"] = rng.choice(["x", "y"])
    if rng.random() < 0.6:
        meta["n"] = rng.choice([1, 1.0, 2, True])
    if rng.random() < 0.5:
        meta["nest"] = {"c": rng.choice(["p", "q"])}
    return meta


async def _random_step(store: Store, rng: random.Random, held: dict[str, Any]) -> None:
    """One random write to `store`, mirrored in `held` (id -> metadata): an add of one to
    three documents (new or replacing), a delete by ids (some unknown) or by a filter."""
    roll = rng.random()
    if roll < 0.6:
        vecs = unit_vectors(len(_IDS), COMPLIANCE_DIM, seed=rng.randint(0, 1000))
        chosen = rng.sample(range(len(_IDS)), rng.randint(1, 3))
        batch = [
            Document(_IDS[i], "random", _random_metadata(rng), [float(x) for x in vecs[i]])
            for i in chosen
        ]
        await store.aadd(batch)
        held |= {d.id: d.metadata for d in batch}
        return
    if roll < 0.85:
        ids = rng.sample([*_IDS, "d5", "d7"], 2)
        gone = [i for i in ids if i in held]
        assert await store.adelete(ids) == len(gone)
    else:
        word = rng.choice(_WORDS)
        gone = [i for i, m in held.items() if word in m.get("kw", [])]
        assert await store.adelete(filter={"kw": word}) == len(gone)
    for i in gone:
        del held[i]


class HolderCompliance(Contract):
    """Holder counts (`aholders`): see the module docstring."""

    async def _assert_counts(self, store: Store, held: Mapping[str, Mapping[str, Any]]) -> None:
        edges = _probes_of(held.values())
        got = await store.aholders(edges)
        want = recount(held.values(), edges)
        wrong = [(e, n, w) for e, n, w in zip(edges, got, want, strict=True) if n != w]
        assert not wrong, f"(edge, store's count, recount): {wrong}"

    async def test_holder_counts_equal_a_recount_of_the_documents(
        self, store: Store, docs: list[Document]
    ) -> None:
        await self._assert_counts(store, {d.id: d.metadata for d in docs})
        assert await store.aholders([]) == []

    @writes
    async def test_holder_counts_follow_adds_replacements_and_deletes(
        self, store: Store, docs: list[Document]
    ) -> None:
        held = {d.id: dict(d.metadata) for d in docs}
        vec = [1.0] + [0.0] * (COMPLIANCE_DIM - 1)
        steps: list[list[Document]] = [
            [Document("x0", "new", {"type": "rock", "keywords": ["fur", "gravel"]}, vec)],
            [Document("d0", "value changed", {**held["d0"], "type": "rock"}, vec)],
            [Document("d1", "list changed", {**held["d1"], "keywords": ["claws", "fur"]}, vec)],
            [Document("d2", "value removed", {"type": "bird"}, vec)],
            [Document("x0", "twice", {"n": 1}, vec), Document("x0", "last", {"n": 1.0}, vec)],
        ]
        for batch in steps:
            await store.aadd(batch)
            for d in batch:
                held[d.id] = dict(d.metadata)
            await self._assert_counts(store, held)
        assert await store.adelete(["d3", "missing", "x0"]) == 2
        del held["d3"], held["x0"]
        await self._assert_counts(store, held)
        clawed = [i for i, m in held.items() if "claws" in m.get("keywords", [])]
        assert sorted(clawed) == ["d0", "d1", "d6"]
        assert await store.adelete(filter={"keywords": "claws"}) == 3
        for doc_id in clawed:
            del held[doc_id]
        await self._assert_counts(store, held)

    @writes
    @pytest.mark.parametrize("seed", [1, 2])
    async def test_holder_counts_equal_a_recount_after_a_random_sequence_of_writes(
        self, store: Store, docs: list[Document], seed: int
    ) -> None:
        """Adds, replacements, deletes by id and by filter drawn at random over a small
        vocabulary, the counts compared with a recount after every step."""
        rng = random.Random(seed)
        held: dict[str, Mapping[str, Any]] = {d.id: d.metadata for d in docs}
        for _ in range(14):
            await _random_step(store, rng, held)
            await self._assert_counts(store, held)

    async def test_holder_counts_through_a_view_are_unknown(self, store: Store) -> None:
        """A view's counts would tell of documents outside it: every edge is unknown."""
        view = store.restricted({"type": "mammal"})
        assert await view.aholders(PROBES[:3]) == [None, None, None]
        assert await view.aholders([]) == []

    async def test_reading_holder_counts_leaves_a_traversals_results_unchanged(
        self, store: Store
    ) -> None:
        """The same traversal before and after the counts of every edge it follows are read."""

        async def run() -> list[tuple[str, int, tuple[str, ...]]]:
            result = await atraverse(
                "", store=store, edges=[("keywords", "keywords"), ("cites", "$id")],
                query_embedding=_query(), strategy=Eager(select_k=12, start_k=2, max_depth=2),
            )  # fmt: skip
            return sorted((n.id, n.depth, n.path.nodes) for n in result)

        before = await run()
        await store.aholders([MetadataEdge("keywords", w) for w in ("fur", "claws", "wings")])
        assert await run() == before

    @pytest.mark.parametrize(
        "edges",
        ["keywords", [("keywords", "fur")], [IdEdge("d0")], {"keywords": "fur"}, None],
    )
    async def test_bad_holder_edges_are_refused_naming_edges(
        self, store: Store, edges: Any
    ) -> None:
        with pytest.raises(InvalidInputError) as info:
            await store.aholders(edges)
        assert info.value.argument == "edges"
