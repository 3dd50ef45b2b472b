"""LangChain integration: `GraphRetriever`, a `BaseRetriever` that runs a hoprag traversal.

Needs the `langchain` extra (`langchain-core`). Each returned LangChain `Document` carries the
document's own metadata plus hoprag's `_depth`, `_similarity_score`, `_path` and the strategy's
scores, so a chain can show why a document was retrieved. The retriever passes LangChain's
standard retriever tests (`langchain-tests`), `k` included."""

from __future__ import annotations

import dataclasses
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
from hoprag.errors import InvalidInputError
from hoprag.stores.base import Store
from hoprag.strategies import Eager, Strategy
from hoprag.traversal import atraverse, traverse

CALL_OPTIONS = ("edges", "filter", "initial_root_ids", "k", "strategy")
"""The keyword options `invoke`/`ainvoke` accept; each overrides the configured one."""


def node_to_langchain(node: Node) -> LCDocument:
    """A LangChain `Document` for a traversal node: its metadata merged with hoprag's
    `extra_metadata` (`_depth`, `_similarity_score`, `_path`, strategy scores)."""
    return LCDocument(
        id=node.id,
        page_content=node.content,
        metadata={**node.metadata, **node.extra_metadata},
    )


def _check_edges(value: Any) -> Any:
    try:
        parse_edges(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"edges: {exc}") from exc
    return value


def _check_store(value: Any) -> Store:
    if not isinstance(value, Store):
        missing = [m for m in ("aprepare", "aadd") if not hasattr(value, m)]
        raise InvalidInputError(
            f"store must be a hoprag Store (MemoryStore, CassandraStore, ...); "
            f"{type(value).__name__} lacks {', '.join(missing) or 'the Store protocol'}",
            argument="store",
            allowed="a hoprag Store",
        )
    return value


def _check_k(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"k must be an int >= 1 (documents to return), got {value!r}")
    return value


def _check_strategy(value: Any) -> Strategy:
    if not isinstance(value, Strategy):
        raise InvalidInputError(
            f"strategy must be a hoprag Strategy (Eager, Mmr, Scored, Beam), "
            f"got {type(value).__name__}"
        )
    return value


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
        allowed = set(type(self).model_fields)
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise InvalidInputError(
                f"unknown GraphRetriever option(s): {', '.join(unknown)}; "
                f"allowed: {', '.join(sorted(allowed))}"
            )
        for name, check in (
            ("store", _check_store),
            ("edges", _check_edges),
            ("strategy", _check_strategy),
            ("k", _check_k),
        ):
            if name in data:
                check(data[name])
        super().__init__(**data)

    @field_validator("edges")
    @classmethod
    def _validate_edges(cls, value: Any) -> Any:
        return _check_edges(value)  # also for model_validate, which bypasses __init__

    @field_validator("store")
    @classmethod
    def _validate_store(cls, value: Any) -> Store:
        return _check_store(value)

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(kwargs) - set(CALL_OPTIONS))
        if unknown:
            raise InvalidInputError(
                f"unknown GraphRetriever option(s): {', '.join(unknown)}; "
                f"allowed per call: {', '.join(CALL_OPTIONS)}"
            )
        k = _check_k(kwargs.get("k"))
        if "strategy" in kwargs:
            strategy = _check_strategy(kwargs["strategy"])
        else:
            strategy = self.strategy
            k = self.k if k is None else k
        if k is not None:
            strategy = dataclasses.replace(strategy, select_k=k)
        edges = _check_edges(kwargs["edges"]) if "edges" in kwargs else self.edges
        return {
            "store": self.store,
            "edges": edges,
            "strategy": strategy,
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
