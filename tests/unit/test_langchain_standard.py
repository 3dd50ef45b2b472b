"""hoprag.integrations.langchain.GraphRetriever against LangChain's own standard retriever tests
(`langchain-tests`' RetrieversIntegrationTests, run here over a MemoryStore): `k` at
construction and per call, Documents from invoke and ainvoke, and no standard test overridden."""

from __future__ import annotations

from typing import Any

from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests

from hoprag import Eager
from hoprag.embeddings import HashEmbedding
from hoprag.integrations.langchain import GraphRetriever
from hoprag.stores import MemoryStore
from shared_data import graph_documents

_STORE = MemoryStore(embedding=HashEmbedding(16))
_STORE.add(graph_documents(120, 16, seed=3))


class TestGraphRetrieverPassesLangChainsStandardRetrieverTests(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return GraphRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {
            "store": _STORE,
            "edges": [("keywords", "keywords"), ("cites", "$id")],
            "strategy": Eager(start_k=2, adjacent_k=4, max_depth=2),
        }

    @property
    def retriever_query_example(self) -> str:
        return "content 7"
