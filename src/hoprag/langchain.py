"""LangChain integration: `GraphRetriever`, a `BaseRetriever` that runs a hoprag traversal.

Needs the `langchain` extra (`langchain-core`). Each returned LangChain `Document` carries the
document's own metadata plus hoprag's `_depth`, `_similarity_score`, `_path` and the strategy's
scores, so a chain can show why a document was retrieved."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document as LCDocument
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "hoprag.langchain needs langchain-core: pip install 'hoprag[langchain]'"
    ) from exc
from pydantic import ConfigDict, Field, field_validator

from hoprag.documents import Node
from hoprag.edges import parse_edges
from hoprag.strategies import Eager, Strategy
from hoprag.traversal import atraverse, traverse


def node_to_langchain(node: Node) -> LCDocument:
    """A LangChain `Document` for a traversal node: its metadata merged with hoprag's
    `extra_metadata` (`_depth`, `_similarity_score`, `_path`, strategy scores)."""
    return LCDocument(
        id=node.id,
        page_content=node.content,
        metadata={**node.metadata, **node.extra_metadata},
    )


class GraphRetriever(BaseRetriever):
    """Retrieves documents by graph traversal over a hoprag store.

    `store` is any hoprag store (`MemoryStore`, `CassandraStore`, including one over a table
    written by LangChain's `Cassandra` vector store via `CassandraStore.from_langchain_table`);
    `edges` are graph-retriever style specs such as `[("keywords", "keywords"), ("cites",
    "$id")]` or an edge function; `strategy` defaults to `Eager()`. `filter` is ANDed into
    every query. `invoke`/`ainvoke` return LangChain Documents in the strategy's order."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: Any
    edges: Any
    strategy: Strategy = Field(default_factory=Eager)
    filter: dict[str, Any] | None = None
    initial_root_ids: Sequence[str] = ()

    @field_validator("edges")
    @classmethod
    def _check_edges(cls, value: Any) -> Any:
        parse_edges(value)  # raises a clear error for a malformed spec
        return value

    @field_validator("store")
    @classmethod
    def _check_store(cls, value: Any) -> Any:
        missing = [m for m in ("asearch", "aget", "aadjacent") if not hasattr(value, m)]
        if missing:
            raise TypeError(
                f"store must be a hoprag store (MemoryStore, CassandraStore, ...); "
                f"{type(value).__name__} lacks {', '.join(missing)}"
            )
        return value

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        unknown = set(kwargs) - {"strategy", "filter", "initial_root_ids", "edges"}
        if unknown:
            raise TypeError(f"unknown GraphRetriever option(s): {', '.join(sorted(unknown))}")
        return {
            "store": self.store,
            "edges": kwargs.get("edges", self.edges),
            "strategy": kwargs.get("strategy", self.strategy),
            "filter": kwargs.get("filter", self.filter),
            "initial_root_ids": kwargs.get("initial_root_ids", self.initial_root_ids),
        }

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[LCDocument]:
        return [node_to_langchain(n) for n in traverse(query, **self._options(kwargs))]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[LCDocument]:
        nodes = await atraverse(query, **self._options(kwargs))
        return [node_to_langchain(n) for n in nodes]
