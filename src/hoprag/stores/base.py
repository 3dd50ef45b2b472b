"""The Store protocol: the four async operations a traversal needs from a vector store.

Every score a store returns is the cosine similarity (in [-1, 1]) between the given query
embedding and the document's embedding. `include_embeddings=False` lets a store skip reading and
decoding vectors when the strategy does not need them (Eager, Scored); the hit's
`document.embedding` is then None."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from hoprag.documents import Document
from hoprag.edges import MetadataEdge

Filter = Mapping[str, Any]
"""Equality filter: every (field, value) must hold; on a list field the list must contain the
value. Dotted fields reach into nested dicts."""


@dataclass(frozen=True, slots=True)
class Hit:
    """A document returned by a store with its cosine similarity to the query embedding
    (None when the call was given no embedding)."""

    document: Document
    score: float | None

    @property
    def id(self) -> str:
        """The document's id. A store's own Hit type may give it without decoding the
        document, so the coordinator uses it to merge and drop hits."""
        return self.document.id


@runtime_checkable
class Store(Protocol):
    """What the coordinator needs from a store. All methods are async; a store may also offer
    `aadjacent_many(edges, embedding, *, k, filter, include_embeddings) -> list[list[Hit]]`,
    which the coordinator then uses instead of one `aadjacent` call per edge."""

    embedding: Any
    """The embedding model: a callable `str -> Sequence[float]` or a LangChain `Embeddings`."""

    async def asearch(
        self,
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """The `k` documents most similar to `embedding` that pass `filter`, best first."""
        ...

    async def aget(
        self,
        ids: Sequence[str],
        *,
        filter: Filter | None = None,
        embedding: Sequence[float] | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """The documents with these ids that exist and pass `filter`, in the order of `ids`;
        scored against `embedding` when one is given."""
        ...

    async def aadjacent(
        self,
        edge: MetadataEdge,
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """The `k` documents most similar to `embedding` whose field `edge.incoming_field`
        equals (or, for a list, contains) `edge.value` and that pass `filter`, best first."""
        ...

    async def aadd(self, documents: Iterable[Document]) -> None:
        """Insert or replace documents (by id), embedding those without an embedding."""
        ...
