"""hoprag.langchain.GraphRetriever: a LangChain retriever whose documents carry depth, score
and path."""

from __future__ import annotations

import anyio
import pytest
from langchain_core.documents import Document as LCDocument

from hoprag import Eager, Mmr, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.langchain import GraphRetriever
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


def test_bad_edges_and_stores_are_rejected_when_the_retriever_is_built(store: MemoryStore) -> None:
    with pytest.raises(Exception, match="edge"):
        GraphRetriever(store=store, edges=[("keywords",)])
    with pytest.raises(Exception, match="hoprag store"):
        GraphRetriever(store=object(), edges=EDGES)


def test_unknown_invoke_options_are_an_error(store: MemoryStore) -> None:
    retriever = GraphRetriever(store=store, edges=EDGES)
    with pytest.raises(TypeError, match="top_k"):
        retriever.invoke("content 1", top_k=3)
