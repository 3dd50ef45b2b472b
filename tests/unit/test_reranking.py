"""The candidate ranking after a run (`hoprag.reranking`): each feature from a hand-made pool,
the order a weighting gives, bad weights refused, and `Recipe.aretrieve` equal to the
traversal-then-ranking it stands for."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from hoprag import Document, atraverse
from hoprag.documents import Node, Path
from hoprag.edges import IdEdge, MetadataEdge, SearchEdge
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.recipes import MULTIHOP, atitles
from hoprag.reranking import FEATURES, LinearRanking, features
from hoprag.stores import MemoryStore

QUESTION = "label signed Ada Wren founded"  # terms: label, signed, ada, wren, founded


def _node(node_id: str, content: str, path: Path, **scores: float) -> Node:
    """A pool member: `path` reached it; `incoming`/`outgoing` as the recipe's edges give."""
    return Node(
        id=node_id,
        content=content,
        depth=len(path.nodes) - 1,
        similarity_score=scores.pop("sim", 0.5),
        embedding=None,
        metadata={},
        incoming_edges=frozenset({IdEdge(node_id)}),
        outgoing_edges=frozenset(scores.pop("links", ())),
        path=path,
        extra_metadata={f"_{k}": v for k, v in scores.items()},
    )


def _pool() -> list[Node]:
    """Two starts (ada, city) and ada's neighbour (gull) reached by a mention of its id; the
    starts are not linked to each other."""
    ada = _node("ada", "Ada Wren signed with Gull Records.", Path(("ada",)),
                sim=0.7, relevance=0.9, path_score=0.9, links=[IdEdge("gull")])  # fmt: skip
    city = _node("city", "Leeds is a city; Ada lived there.", Path(("city",)),
                 sim=0.4, relevance=0.4, path_score=0.4)  # fmt: skip
    gull = _node("gull", "Gull Records is a label founded by Tom Hale.",
                 Path(("ada",)).extend(IdEdge("gull"), "gull"),
                 sim=0.2, relevance=0.55, path_score=0.55)  # fmt: skip
    return [ada, city, gull]


def test_features_measure_what_each_candidate_adds_to_the_passage_it_is_read_with() -> None:
    ada, city, gull = features(QUESTION, _pool(), roots={"city"})
    # ada holds signed, ada, wren (3 of 5); its reference is the best other start, city, which
    # holds ada: so 2 of 5 are ada's own.
    assert ada["coverage"] == pytest.approx(3 / 5)
    assert ada["residual"] == pytest.approx(2 / 5) and ada["union"] == pytest.approx(3 / 5)
    assert (ada["hop"], ada["root"], ada["parent_relevance"]) == (0.0, 0.0, 0.0)
    # city's reference is ada (the best other start): nothing of city's is new.
    assert city["root"] == 1.0 and city["residual"] == 0.0
    # gull, reached from ada: label, founded (2 of 5), neither in ada's content.
    assert gull["coverage"] == pytest.approx(2 / 5) and gull["residual"] == pytest.approx(2 / 5)
    assert gull["union"] == pytest.approx(1.0)
    assert gull["hop"] == 1.0 and gull["parent_relevance"] == pytest.approx(0.9)
    assert gull["edge:$id"] == 1.0 and gull["hop_union"] == pytest.approx(1.0)
    assert gull["hop_similarity"] == pytest.approx(0.2) and "hop_similarity" not in ada
    assert gull["path_score"] == pytest.approx(0.55)
    assert set(FEATURES) <= set(gull)


def test_a_start_is_linked_only_when_an_edge_joins_it_to_another_start() -> None:
    ada, city, gull = features(QUESTION, _pool())
    assert (ada["linked"], city["linked"], gull["linked"]) == (0.0, 0.0, 1.0)
    pool = _pool()
    pool[1].outgoing_edges = frozenset({IdEdge("ada")})  # city mentions ada
    ada, city, _ = features(QUESTION, pool)
    assert (ada["linked"], city["linked"]) == (1.0, 1.0)


def test_a_metadata_edge_is_a_feature_named_by_the_field_it_leads_to() -> None:
    pool = _pool()
    pool[2].path = Path(("ada",)).extend(MetadataEdge("phrases", "gull records"), "gull")
    row = features(QUESTION, pool)[2]
    assert row["edge:phrases"] == 1.0 and "edge:$id" not in row


def test_a_requery_find_is_a_hop_with_its_search_score_and_edge_feature() -> None:
    ada, city, gull = _pool()
    found = _node("tom", "Tom Hale founded a label.",
                  Path(("ada",)).extend(SearchEdge("founded label tom hale"), "tom"),
                  sim=0.3, search_score=0.8)  # fmt: skip
    rows = features(QUESTION, [ada, city, gull, found])
    assert rows[3]["search_score"] == 0.8 and rows[3]["edge:$search"] == 1.0
    assert rows[3]["hop"] == 1.0 and rows[3]["parent_relevance"] == 0.9
    assert rows[3]["path_score"] == 0.0  # no traversal scored it
    assert all(r["search_score"] == 0.0 and "edge:$search" not in r for r in rows[:3])


def test_a_question_without_terms_and_a_missing_similarity_give_finite_features() -> None:
    pool = _pool()
    pool[0].similarity_score = math.nan
    rows = features("the of and", pool)  # only stopwords
    assert all(math.isfinite(v) for row in rows for v in row.values())
    assert rows[0]["similarity"] == -1.0 and rows[0]["coverage"] == 0.0


def test_the_ranking_orders_by_its_weighted_sum_and_cuts_at_k() -> None:
    bridge_first = LinearRanking({"hop_union": 1.0, "path_score": 0.1})
    ranked = bridge_first.rank(QUESTION, _pool(), k=2)
    assert [n.id for n in ranked] == ["gull", "ada"]
    assert ranked[0].extra_metadata["_rank_score"] == pytest.approx(1.0 + 0.055)
    by_score = LinearRanking({"path_score": 1.0}).rank(QUESTION, _pool())
    assert [n.id for n in by_score] == ["ada", "gull", "city"]
    equal = LinearRanking({"hop": 0.0}).rank(QUESTION, _pool())  # all 0: the order given
    assert [n.id for n in equal] == ["ada", "city", "gull"]


@pytest.mark.parametrize(
    ("weights", "pool", "says"),
    [
        ({"coverag": 1.0}, 40, "'coverag'"),
        ({"edge:": 1.0}, 40, "'edge:'"),
        ({}, 40, "non-empty mapping"),
        ({"coverage": math.inf}, 40, "weights['coverage']"),
        ({"coverage": True}, 40, "weights['coverage']"),
        ({"coverage": 1.0}, 0, "pool"),
        ({"coverage": 1.0}, 1001, "pool"),
    ],
)
def test_bad_weights_or_pool_are_refused_naming_them(weights: Any, pool: int, says: str) -> None:
    with pytest.raises(InvalidInputError, match=says.replace("[", r"\[").replace("]", r"\]")):
        LinearRanking(weights, pool=pool)


def test_the_multihop_recipe_ranks_with_known_features_only() -> None:
    ranking = MULTIHOP.ranking
    assert ranking is not None and ranking.pool >= 5
    names = {name for name, _ in ranking.weights}
    assert names <= {*FEATURES, "edge:$id", "edge:mentions", "edge:phrases", "edge:$search"}
    assert hash(MULTIHOP) == hash(dataclasses.replace(MULTIHOP))


def _docs() -> list[Document]:
    texts = {
        "ada": ("Ada Wren is a singer. She signed with Gull Records.", ["gull"], ["Gull Records"]),
        "gull": ("Gull Records is a label founded by Tom Hale.", [], ["Gull Records"]),
        "leeds": ("Leeds is a city where Ada Wren lived.", ["ada"], []),
        "otter": ("Otters eat fish.", [], []),
        "finch": ("Blue Finch is a label founded by two brothers.", [], []),
    }
    return [
        Document(i, t, {"title": i, "mentions": m, "phrases": p}) for i, (t, m, p) in texts.items()
    ]


async def test_aretrieve_ranks_the_pool_of_the_traversal_and_the_requery() -> None:
    store = MemoryStore(HashEmbedding(16))
    await store.aadd(_docs())
    question = "Who founded the label that signed Ada Wren?"
    got = await MULTIHOP.aretrieve(question, store=store, k=3)
    roots = MULTIHOP.roots(await atitles(store), question)
    pool = await atraverse(question, store=store, edges=list(MULTIHOP.edges),
                           strategy=MULTIHOP.strategy(select_k=MULTIHOP.pool_size(3)),
                           initial_root_ids=roots)  # fmt: skip
    found = await MULTIHOP.arequery(question, pool, store=store, edges=list(MULTIHOP.edges))
    assert MULTIHOP.ranking is not None
    want = MULTIHOP.ranking.rank(question, [*pool, *found], roots, k=3)
    assert [n.id for n in got] == [n.id for n in want] and len(got) == 3
    assert all("_rank_score" in n.extra_metadata for n in got)
    plain = dataclasses.replace(MULTIHOP, ranking=None, requery=None)
    by_path = await plain.aretrieve(question, store=store, k=3)
    first3 = await atraverse(question, store=store, edges=list(MULTIHOP.edges),
                             strategy=MULTIHOP.strategy(select_k=3),
                             initial_root_ids=roots)  # fmt: skip
    assert [n.id for n in by_path] == [n.id for n in first3]


async def test_apool_holds_the_traversal_then_the_requery_finds_with_the_run_stats() -> None:
    store = MemoryStore(HashEmbedding(16))
    await store.aadd(_docs())
    question = "Which city did the singer signed by Gull Records live in?"
    pool = await MULTIHOP.apool(question, store=store, k=2)
    searched = [n for n in pool.nodes if n.path.edges and isinstance(n.path.edges[-1], SearchEdge)]
    plain = await dataclasses.replace(MULTIHOP, requery=None).apool(question, store=store, k=2)
    assert [n.id for n in pool.nodes] == [*(n.id for n in plain.nodes), *(n.id for n in searched)]
    assert pool.k == 2 and pool.roots == plain.roots and pool.stats.rounds == plain.stats.rounds


@pytest.mark.parametrize("k", [0, -1, 1001, "5", True])
async def test_aretrieve_refuses_a_bad_k_naming_it(k: Any) -> None:
    store = MemoryStore(HashEmbedding(16))
    await store.aadd(_docs())
    with pytest.raises(InvalidInputError, match="k"):
        await MULTIHOP.aretrieve("Ada Wren", store=store, k=k)


def test_retrieve_is_aretrieve_from_sync_code() -> None:
    store = MemoryStore(HashEmbedding(16))
    store.add(_docs())
    got = MULTIHOP.retrieve("Who founded the label that signed Ada Wren?", store=store, k=2)
    assert len(got) == 2 and all("_rank_score" in n.extra_metadata for n in got)


async def test_aretrieve_follows_the_edges_given_even_none() -> None:
    store = MemoryStore(HashEmbedding(16))
    await store.aadd(_docs())
    got = await MULTIHOP.aretrieve("Ada Wren", store=store, k=5, edges=[])
    # No edges: the starts, and the documents the re-query found from them.
    assert got and all(n.depth == 0 or isinstance(n.path.edges[-1], SearchEdge) for n in got)
    plain = dataclasses.replace(MULTIHOP, requery=None)
    assert all(n.depth == 0 for n in await plain.aretrieve("Ada Wren", store=store, k=5, edges=[]))
