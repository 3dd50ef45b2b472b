"""hoprag.integrations.langchain.GraphRetriever: a LangChain retriever whose documents carry
depth, score and path."""

from __future__ import annotations

import dataclasses

import anyio
import pytest
from langchain_core.documents import Document as LCDocument

from hoprag import Eager, Mmr, Scored, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.integrations.langchain import GraphRetriever
from hoprag.stores import MemoryStore
from shared_data import graph_documents

EDGES = [("keywords", "keywords"), ("cites", "$id")]


@pytest.fixture(scope="module")
def store() -> MemoryStore:
    s = MemoryStore(embedding=HashEmbedding(16))
    s.add(graph_documents(120, 16, seed=3))
    return s


def test_invoke_returns_the_traversal_as_langchain_documents(store: MemoryStore) -> None:
    strategy = Eager(select_k=8, start_k=2, adjacent_k=4, max_depth=2)
    retriever = GraphRetriever(store=store, edges=EDGES, strategy=strategy)
    docs = retriever.invoke("content 7")
    nodes = anyio.run(lambda: atraverse("content 7", store=store, edges=EDGES, strategy=strategy))
    assert all(isinstance(d, LCDocument) for d in docs)
    assert [d.id for d in docs] == [n.id for n in nodes]
    for d, n in zip(docs, nodes, strict=True):
        assert d.page_content == n.content
        assert d.metadata["_depth"] == n.depth == len(d.metadata["_path"]) - 1
        assert d.metadata["_path"][-1] == d.id
        assert d.metadata["_similarity_score"] == pytest.approx(n.similarity_score)
        assert d.metadata["keywords"] == n.metadata["keywords"]
    assert max(d.metadata["_depth"] for d in docs) >= 1


async def test_ainvoke_matches_invoke_and_carries_strategy_scores(store: MemoryStore) -> None:
    retriever = GraphRetriever(
        store=store, edges=EDGES, strategy=Mmr(select_k=5, start_k=2, adjacent_k=5, max_depth=2)
    )
    adocs = await retriever.ainvoke("content 42")
    sdocs = retriever.invoke("content 42")
    assert [d.id for d in adocs] == [d.id for d in sdocs]
    assert len(adocs) == 5
    assert all("_mmr_score" in d.metadata for d in adocs)


def test_per_call_options_override_the_configured_ones(store: MemoryStore) -> None:
    retriever = GraphRetriever(store=store, edges=EDGES, strategy=Eager(select_k=3))
    docs = retriever.invoke("content 1", filter={"type": "a"}, strategy=Eager(select_k=6))
    assert 0 < len(docs) <= 6
    assert {d.metadata["type"] for d in docs} == {"a"}


def test_bad_edges_stores_and_strategies_are_rejected_when_the_retriever_is_built(
    store: MemoryStore,
) -> None:
    with pytest.raises(InvalidInputError, match="edge"):
        GraphRetriever(store=store, edges=[("keywords",)])
    with pytest.raises(InvalidInputError, match="hoprag Store"):
        GraphRetriever(store=object(), edges=EDGES)
    with pytest.raises(InvalidInputError, match="strategy must be a hoprag Strategy"):
        GraphRetriever(store=store, edges=EDGES, strategy="eager")


def test_unknown_invoke_options_are_an_error_naming_them_and_the_allowed_ones(
    store: MemoryStore,
) -> None:
    retriever = GraphRetriever(store=store, edges=EDGES)
    with pytest.raises(InvalidInputError, match="top_k") as info:
        retriever.invoke("content 1", top_k=3)
    assert "edges, filter, initial_root_ids, k, strategy" in str(info.value)


def test_unknown_constructor_options_are_an_error_naming_them(store: MemoryStore) -> None:
    with pytest.raises(InvalidInputError, match="top_k, weird") as info:
        GraphRetriever(store=store, edges=EDGES, top_k=3, weird=1)
    assert "allowed:" in str(info.value) and "strategy" in str(info.value)


def test_k_is_the_strategys_select_k_at_construction(store: MemoryStore) -> None:
    strategy = Scored(scorer=lambda n: -n.depth, start_k=2, adjacent_k=4, max_depth=2)
    docs = GraphRetriever(store=store, edges=EDGES, strategy=strategy, k=3).invoke("content 9")
    want = anyio.run(
        lambda: atraverse(
            "content 9",
            store=store,
            edges=EDGES,
            strategy=dataclasses.replace(strategy, select_k=3),
        )
    )
    assert [d.id for d in docs] == [n.id for n in want]
    assert len(docs) == 3


async def test_a_calls_k_overrides_the_configured_k_and_select_k(store: MemoryStore) -> None:
    retriever = GraphRetriever(store=store, edges=EDGES, strategy=Eager(select_k=8), k=5)
    assert len(await retriever.ainvoke("content 3")) == 5
    assert len(await retriever.ainvoke("content 3", k=2)) == 2
    assert len(retriever.invoke("content 3", k=7)) == 7
    # A call's own strategy keeps its select_k unless the call also gives k.
    assert len(retriever.invoke("content 3", strategy=Eager(select_k=4))) == 4
    assert len(retriever.invoke("content 3", strategy=Eager(select_k=4), k=1)) == 1
    # The configured strategy itself is unchanged.
    assert retriever.strategy.select_k == 8 and retriever.k == 5


@pytest.mark.parametrize("bad", [0, -1, 2.5, "3", True])
def test_k_must_be_a_positive_int(store: MemoryStore, bad: object) -> None:
    with pytest.raises(InvalidInputError, match="k must be an int >= 1"):
        GraphRetriever(store=store, edges=EDGES, k=bad)
    with pytest.raises(InvalidInputError, match="k must be an int >= 1"):
        GraphRetriever(store=store, edges=EDGES).invoke("content 1", k=bad)
