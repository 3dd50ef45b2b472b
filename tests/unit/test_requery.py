"""The re-query after a traversal (`hoprag.requery`): the text it searches from a start, the
documents it adds to the pool (new ones only, as neighbours of their start, within the run's
filter), its rare-terms cut and its settings refused when bad."""

from __future__ import annotations

from typing import Any

import pytest

from hoprag import Document
from hoprag.documents import Node, Path
from hoprag.edges import SearchEdge, parse_edges
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.requery import Requery, requery_text
from hoprag.stores import MemoryStore
from hoprag.stores.base import hit_node

QUESTION = "Who is the spouse of the performer of Blue Rain?"


def _docs() -> list[Document]:
    texts = {
        "song": ("Blue Rain\nBlue Rain is a song performed by Mara Quist.", "pop"),
        "mara": ("Mara Quist\nMara Quist married the painter Olek Brandt.", "pop"),
        "mara2": ("Mara Quist Tour\nThe tour of Mara Quist sold out.", "pop"),
        "olek": ("Olek Brandt\nOlek Brandt paints rivers.", "art"),
        "rain": ("Rain\nRain is water falling from clouds.", "nature"),
    }
    return [Document(i, t, {"topic": topic, "links": []}) for i, (t, topic) in texts.items()]


async def _starts(store: MemoryStore, *ids_scores: tuple[str, float], flt: Any = None) -> Any:
    """The prepared query of a run (within `flt`) and start nodes of `ids` with those path
    scores (read without the filter, as a caller's roots may be)."""
    vector = store.embedding.embed_query(QUESTION)
    query = await store.aprepare(vector, flt, include_embeddings=False)
    unfiltered = await store.aprepare(vector, include_embeddings=False)
    hits = {h.id: h for h in await unfiltered.aget([i for i, _ in ids_scores])}
    edges = parse_edges([("links", "$id")])
    nodes = []
    for doc_id, score in ids_scores:
        node = hit_node(hits[doc_id], Path((doc_id,)), edges(hits[doc_id].document))
        node.extra_metadata["_path_score"] = score
        nodes.append(node)
    return query, nodes


def test_the_search_text_is_the_questions_unheld_terms_then_the_starts_new_names() -> None:
    content = "Blue Rain\nBlue Rain is a song performed by Mara Quist in Paris."
    # The question's terms the passage lacks (spouse, performer), then the names of its body
    # that the question does not hold all of (Blue Rain is the question's): mara quist, paris.
    assert requery_text(QUESTION, content) == "spouse performer mara quist paris"
    assert requery_text("Blue Rain", content) == "mara quist paris"
    assert requery_text("", "") == ""


async def test_a_requery_adds_the_passage_sharing_the_starts_new_name_as_its_neighbour() -> None:
    store = MemoryStore(HashEmbedding(16))
    await store.aadd(_docs())
    query, starts = await _starts(store, ("song", 0.9))
    found = await Requery(starts=1, per_start=1).arequery(
        QUESTION, starts, query, parse_edges([("links", "$id")])
    )
    assert [n.id for n in found] == ["mara"]
    mara = found[0]
    assert mara.depth == 1 and mara.path.nodes == ("song", "mara")
    assert mara.path.edges == (SearchEdge("spouse performer mara quist"),)
    assert mara.path.edges[0].describe() == "search=spouse performer mara quist"
    assert mara.extra_metadata["_search_score"] == 1.0  # the search's best
    assert "_path_score" not in mara.extra_metadata
    hits = {h.id: h for h in await query.alexical("spouse performer mara quist", k=5)}
    assert mara.similarity_score == pytest.approx(hits["mara"].score)


async def test_a_requery_takes_the_best_starts_and_only_documents_not_in_the_pool() -> None:
    store = MemoryStore(HashEmbedding(16))
    await store.aadd(_docs())
    query, starts = await _starts(store, ("rain", 0.2), ("song", 0.9), ("mara", 0.5))
    found = await Requery(starts=2, per_start=2).arequery(QUESTION, starts, query)
    # From song (best): mara is in the pool, so the next holders of its terms; from mara
    # (second best): the search of its own new names. Rain (third) is not searched from.
    assert all(n.path.nodes[0] in {"song", "mara"} for n in found)
    assert not {n.id for n in found} & {"rain", "song", "mara"}
    assert len({n.id for n in found}) == len(found)
    per_start: dict[str, int] = {}
    for n in found:
        per_start[n.path.nodes[0]] = per_start.get(n.path.nodes[0], 0) + 1
    assert per_start and all(count <= 2 for count in per_start.values())
    scores = [n.extra_metadata["_search_score"] for n in found if n.path.nodes[0] == "song"]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)


async def test_a_requery_searches_within_the_runs_filter() -> None:
    store = MemoryStore(HashEmbedding(16))
    await store.aadd(_docs())
    query, starts = await _starts(store, ("song", 0.9), flt={"topic": {"$ne": "pop"}})
    found = await Requery(starts=1, per_start=3).arequery(QUESTION, starts, query)
    assert all(n.metadata["topic"] != "pop" for n in found)
    assert "mara" not in {n.id for n in found}


async def test_terms_held_by_more_than_max_holders_are_left_out_of_the_search() -> None:
    store = MemoryStore(HashEmbedding(16))
    await store.aadd(_docs())
    query, starts = await _starts(store, ("song", 0.9))
    # "mara" and "quist" are held by 3 documents (song, mara, mara2): with max_holders 2
    # only "spouse" and "performer" count, and no other document holds them.
    assert await Requery(starts=1, max_holders=2).arequery(QUESTION, starts, query) == []
    assert await Requery(starts=1, max_holders=3).arequery(QUESTION, starts, query)


async def test_a_pool_without_starts_or_a_start_without_search_terms_adds_nothing() -> None:
    store = MemoryStore(HashEmbedding(16))
    await store.aadd(_docs())
    query, starts = await _starts(store, ("olek", 0.9))
    # The start holds every term of the question and its names are all the question's.
    assert requery_text("Olek Brandt paints", starts[0].content) == ""
    assert await Requery().arequery("Olek Brandt paints", starts, query) == []
    assert await Requery().arequery(QUESTION, [], query) == []
    hop: Node = starts[0]
    hop.path = Path(("song", "olek"), (SearchEdge("x"),))
    hop.depth = 1
    assert await Requery().arequery(QUESTION, [hop], query) == []  # no start in the pool


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"starts": 0}, "starts"),
        ({"per_start": "2"}, "per_start"),
        ({"max_holders": 0}, "max_holders"),
        ({"max_holders": True}, "max_holders"),
    ],
)
def test_bad_requery_settings_are_refused_naming_them(settings: dict[str, Any], says: str) -> None:
    with pytest.raises(InvalidInputError, match=says):
        Requery(**settings)
