"""An edge on a field no document holds is reported, not silently followed to nothing: the
traversal's stats name the fields its edge specs name that none of the documents it read
holds (a typo, `id` for `$id`), and `explain()` says so with the fields they do hold."""

from __future__ import annotations

import pytest

from hoprag import Document, Eager, atraverse
from hoprag.edges import unheld_fields
from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore

DOCS = [
    Document("a", "alpha", {"refs": ["b"], "kw": ["k1"], "info": {"year": 1}}),
    Document("b", "beta", {"kw": ["k1"]}),
    Document("c", "gamma", {"kw": ["k2"]}),
]


def test_unheld_fields_names_each_missing_field_once_in_order_and_never_the_id() -> None:
    specs = [("refs", "id"), ("kw", "kw"), ("$id", "cites"), ("info.year", "info.year"),
             ("cites", "$id")]  # fmt: skip
    assert unheld_fields(specs, {"refs", "kw", "info"}) == ["id", "cites"]
    assert unheld_fields(specs, {"refs", "kw", "info", "id", "cites"}) == []


async def _run(edges: list[tuple[str, str]]) -> object:
    store = MemoryStore(embedding=HashEmbedding(16))
    await store.aadd(DOCS)
    return await atraverse("alpha", store=store, edges=edges,
                           strategy=Eager(select_k=10, start_k=1, max_depth=2))  # fmt: skip


async def test_a_typo_and_id_for_dollar_id_are_named_with_the_fields_that_exist() -> None:
    res = await _run([("refs", "id"), ("kw", "kw"), ("kws", "kws")])
    stats = res.stats  # type: ignore[attr-defined]
    assert stats.unheld_fields == ("id", "kws")
    assert stats.documents_read == 2 and stats.held_fields == ("info", "kw", "refs")  # a, b
    first = stats.explain().splitlines()[0]
    assert "'id', 'kws'" in first and "'$id'" in first and "info, kw, refs" in first


@pytest.mark.parametrize(
    "edges", [[("refs", "$id"), ("kw", "kw")], [("info.year", "info.year")], [("$id", "refs")]]
)
async def test_edges_on_held_fields_report_nothing(edges: list[tuple[str, str]]) -> None:
    res = await _run(edges)
    assert res.stats.unheld_fields == ()  # type: ignore[attr-defined]
    assert "held by none" not in res.stats.explain()  # type: ignore[attr-defined]


async def test_a_run_that_read_no_document_names_no_field() -> None:
    store = MemoryStore(embedding=HashEmbedding(16))
    res = await atraverse("alpha", store=store, edges=[("nope", "nope")], strategy=Eager())
    assert res.stats.unheld_fields == () and res.stats.documents_read == 0
