"""LangChain integration: `GraphRetriever`, a `BaseRetriever` that runs a hoprag traversal.

Needs the `langchain` extra (`langchain-core`). Each returned LangChain `Document` carries the
document's own metadata plus hoprag's `_depth`, `_similarity_score`, `_path` and the strategy's
scores, so a chain can show why a document was retrieved. The retriever passes LangChain's
standard retriever tests (`langchain-tests`), `k` included."""

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
        "hoprag.integrations.langchain needs langchain-core: install hoprag's langchain extra "
        "(from a clone: pip install '.[langchain]'; README, Install)"
    ) from exc
from pydantic import ConfigDict, Field, field_validator

from hoprag.documents import Node
from hoprag.engine.traversal import atraverse, traverse
from hoprag.integrations.retriever_options import (
    CALL_OPTIONS,
    RetrieverOptions,
    check_edges,
    check_k,
    check_option_names,
    check_store,
    check_strategy,
)
from hoprag.stores.base import Store
from hoprag.strategies import Eager, Strategy

__all__ = ["CALL_OPTIONS", "GraphRetriever", "node_to_langchain"]


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
    every query. `invoke`/`ainvoke` return LangChain Documents in the strategy's order.

    `k`, LangChain's number of documents, is the strategy's `select_k`: the traversal admits
    at most `k` documents and stops there, so it returns `k` whenever that many are reachable
    (it does not traverse further and cut). `invoke(query, k=..., strategy=..., filter=...,
    edges=..., initial_root_ids=...)` overrides the configured values for one call; a call's
    own `strategy` keeps its `select_k` unless the call also gives `k`. Any other option, at
    construction or per call, is an `InvalidInputError` that names it."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    store: Store
    edges: Any
    strategy: Strategy = Field(default_factory=Eager)
    filter: dict[str, Any] | None = None
    initial_root_ids: Sequence[str] = ()
    k: int | None = None

    def __init__(self, **data: Any) -> None:
        """Check the options before pydantic sees them, so a bad one is an InvalidInputError
        (pydantic would ignore an unknown one, or wrap the error in its ValidationError)."""
        check_option_names(data, sorted(type(self).model_fields), owner="GraphRetriever")
        for name, check in (
            ("store", check_store),
            ("edges", check_edges),
            ("strategy", check_strategy),
            ("k", check_k),
        ):
            if name in data:
                check(data[name])
        super().__init__(**data)

    @field_validator("edges")
    @classmethod
    def _validate_edges(cls, value: Any) -> Any:
        return check_edges(value)  # also for model_validate, which bypasses __init__

    @field_validator("store")
    @classmethod
    def _validate_store(cls, value: Any) -> Store:
        return check_store(value)

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        configured = RetrieverOptions(
            store=self.store,
            edges=self.edges,
            strategy=self.strategy,
            filter=self.filter,
            initial_root_ids=self.initial_root_ids,
            k=self.k,
        )
        return configured.override(kwargs, owner="GraphRetriever").traversal_arguments()

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[LCDocument]:
        return [node_to_langchain(n) for n in traverse(query, **self._options(kwargs))]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[LCDocument]:
        nodes = await atraverse(query, **self._options(kwargs))
        return [node_to_langchain(n) for n in nodes]
