"""LlamaIndex integration: `GraphRetriever`, a `llama_index.core` retriever that runs a hoprag
traversal.

Needs the `llamaindex` extra (`llama-index-core`). `retrieve` / `aretrieve` return one
`NodeWithScore` per traversal node, in the traversal's order: a `TextNode` whose `id_` is the
document id, whose text is its content and whose metadata is the document's metadata plus
hoprag's `_depth`, `_similarity_score`, `_path` and the strategy's scores, scored by the node's
similarity to the query.

LlamaIndex's `retrieve` takes only the query, so the options of one call are given by
`retriever.with_options(k=3, strategy=..., filter=..., edges=..., initial_root_ids=...)`, which
returns a configured copy (as LlamaIndex's own `RetrieverQueryEngine.with_retriever` does)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "hoprag.integrations.llamaindex needs llama-index-core: install hoprag's llamaindex "
        "extra (from a clone: pip install '.[llamaindex]'; README, Install)"
    ) from exc

from hoprag.documents import Node
from hoprag.engine.traversal import EdgesArg, atraverse, traverse
from hoprag.filters import Filter
from hoprag.integrations.retriever_options import RetrieverOptions, check_option_names
from hoprag.stores.base import Store
from hoprag.strategies import Eager, Strategy

CONSTRUCTOR_OPTIONS = (
    "callback_manager",
    "edges",
    "filter",
    "initial_root_ids",
    "k",
    "store",
    "strategy",
    "verbose",
)
"""The keyword arguments `GraphRetriever` takes."""


def node_to_llamaindex(node: Node) -> NodeWithScore:
    """A LlamaIndex `NodeWithScore` for a traversal node: a `TextNode` with the document's id,
    content and metadata merged with hoprag's `extra_metadata`, scored by `similarity_score`.

    hoprag's own keys are left out of the text LlamaIndex builds for an LLM or an embedding
    model (`excluded_llm_metadata_keys`, `excluded_embed_metadata_keys`): they explain the
    retrieval, they are not part of the document."""
    hoprag_keys = sorted(node.extra_metadata)
    text_node = TextNode(
        id_=node.id,
        text=node.content,
        metadata={**node.metadata, **node.extra_metadata},
        excluded_llm_metadata_keys=hoprag_keys,
        excluded_embed_metadata_keys=hoprag_keys,
    )
    return NodeWithScore(node=text_node, score=float(node.similarity_score))


class GraphRetriever(BaseRetriever):
    """Retrieves nodes by graph traversal over a hoprag store.

    `store` is any hoprag store (`MemoryStore`, `CassandraStore`, a store view); `edges` are
    graph-retriever style specs such as `[("keywords", "keywords"), ("cites", "$id")]` or an
    edge function; `strategy` defaults to `Eager()`; `filter` is ANDed into every query;
    `initial_root_ids` are start documents besides the vector search's. `k`, when given, is
    the strategy's `select_k`: the traversal admits at most `k` documents and stops there.

    The query is embedded by the store's own embedding; a `QueryBundle`'s `embedding` is not
    used, since other LlamaIndex retrievers fill it with their own model's vector.
    `with_options(...)` returns a copy with some options replaced. A bad or unknown option,
    here or there, is an `InvalidInputError` naming it, the value and what is allowed."""

    def __init__(
        self,
        *,
        store: Store,
        edges: EdgesArg,
        strategy: Strategy | None = None,
        filter: Filter | None = None,
        initial_root_ids: Sequence[str] = (),
        k: int | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        **unknown: Any,
    ) -> None:
        """Check the options (see the class docstring) and keep them."""
        check_option_names(unknown, CONSTRUCTOR_OPTIONS, owner="GraphRetriever")
        self._hoprag = RetrieverOptions.checked(
            {
                "store": store,
                "edges": edges,
                "strategy": Eager() if strategy is None else strategy,
                "filter": filter,
                "initial_root_ids": initial_root_ids,
                "k": k,
            },
            owner="GraphRetriever",
        )
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def options(self) -> RetrieverOptions:
        """The traversal options this retriever runs with (read-only)."""
        return self._hoprag

    def with_options(self, **options: Any) -> GraphRetriever:
        """A copy of this retriever with `options` (any of `edges`, `filter`,
        `initial_root_ids`, `k`, `strategy`) in place of the configured ones, checked now; this
        retriever is unchanged. A new `strategy` keeps its own `select_k` unless `k` is given
        too; the copy shares the store and the callback manager."""
        configured = self._hoprag.override(options, owner="GraphRetriever.with_options")
        clone = copy.copy(self)
        clone._hoprag = configured
        return clone

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """The traversal's nodes for the query, run by hoprag's sync bridge."""
        nodes = traverse(query_bundle.query_str, **self._hoprag.traversal_arguments())
        return [node_to_llamaindex(n) for n in nodes]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """The traversal's nodes for the query, awaited on the caller's event loop."""
        nodes = await atraverse(query_bundle.query_str, **self._hoprag.traversal_arguments())
        return [node_to_llamaindex(n) for n in nodes]
