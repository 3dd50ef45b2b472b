"""MemoryStore: an in-process store on numpy, the reference for store semantics.

Embeddings live in one matrix of unit rows, so a search is one matrix-vector product. Metadata
matching uses an inverted index field -> value -> rows, built lazily per field, so an edge or a
filter costs the size of its posting list rather than a scan."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hoprag.documents import Document
from hoprag.edges import MISSING, MetadataEdge, nested_get, value_key
from hoprag.embeddings.base import aembed_documents, check_vector, embed_documents
from hoprag.stores.base import Filter, Hit

_Rows = NDArray[np.int64]
_EMPTY: _Rows = np.empty(0, dtype=np.int64)


def _keys_of(value: Any) -> set[Any]:
    """The keys a stored value matches: itself and, for a list, each element."""
    keys = {value_key(value)}
    if isinstance(value, list | tuple):
        keys.update(value_key(v) for v in value)
    return keys


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")
    return k


class MemoryStore:
    """An in-memory vector store with metadata edges and filters (see `hoprag.stores.Store`).

    `embedding` is a callable `str -> vector` or a LangChain `Embeddings`; it embeds documents
    added without an embedding. All embeddings must share one dimension and be finite and
    non-zero; `add` / `aadd` insert or replace by id and validate everything before writing."""

    def __init__(self, embedding: Any = None) -> None:
        self.embedding = embedding
        self._docs: list[Document] = []
        self._bare: list[Document | None] = []
        self._rows: dict[str, int] = {}
        self._mat: NDArray[np.float32] = np.empty((0, 0), dtype=np.float32)
        self._n = 0
        self._dim: int | None = None
        self._index: dict[str, dict[Any, _Rows]] = {}
        self._last_query: tuple[Sequence[float], NDArray[np.float32]] | None = None

    def __len__(self) -> int:
        return self._n

    @property
    def dim(self) -> int | None:
        """The embedding dimension, once a document has been added."""
        return self._dim

    # -- writing ---------------------------------------------------------------------------

    def add(self, documents: Iterable[Document]) -> None:
        """Insert or replace `documents` by id, embedding those without an embedding."""
        docs = self._check_docs(documents)
        missing = [i for i, d in enumerate(docs) if d.embedding is None]
        vecs: list[list[float]] = []
        if missing:
            vecs = embed_documents(self._need_embedding(), [docs[i].content for i in missing])
        self._insert(docs, missing, vecs)

    async def aadd(self, documents: Iterable[Document]) -> None:
        """Async `add`; the embedding model runs in a worker thread unless it is async."""
        docs = self._check_docs(documents)
        missing = [i for i, d in enumerate(docs) if d.embedding is None]
        vecs: list[list[float]] = []
        if missing:
            vecs = await aembed_documents(
                self._need_embedding(), [docs[i].content for i in missing]
            )
        self._insert(docs, missing, vecs)

    def _need_embedding(self) -> Any:
        if self.embedding is None:
            raise ValueError("documents without an embedding need MemoryStore(embedding=...)")
        return self.embedding

    @staticmethod
    def _check_docs(documents: Iterable[Document]) -> list[Document]:
        if isinstance(documents, Document):
            raise TypeError("add takes an iterable of Documents; wrap a single one in a list")
        docs = list(documents)
        for d in docs:
            if not isinstance(d, Document):
                raise TypeError(f"expected hoprag Document, got {type(d).__name__}")
        return docs

    def _insert(self, docs: list[Document], missing: list[int], vecs: list[list[float]]) -> None:
        if not docs:
            return
        filled = dict(zip(missing, vecs, strict=True))
        rows: list[list[float]] = []
        dim = self._dim
        for i, d in enumerate(docs):
            vec = filled.get(i, d.embedding)
            assert vec is not None
            vec = check_vector(vec, what=f"embedding of document {d.id!r}", dim=dim)
            dim = len(vec)
            rows.append(vec)
        # Everything is valid: write.
        arr = np.asarray(rows, dtype=np.float64)
        arr /= np.linalg.norm(arr, axis=1, keepdims=True)
        if self._dim is None:
            self._dim = dim
            self._mat = np.empty((max(16, len(docs)), dim), dtype=np.float32)
        for d, vec, unit in zip(docs, rows, arr, strict=True):
            stored = Document(d.id, d.content, dict(d.metadata), vec)
            row = self._rows.get(d.id)
            if row is None:
                row = self._n
                if row >= self._mat.shape[0]:
                    grown = np.empty((max(16, 2 * self._mat.shape[0]), dim), dtype=np.float32)
                    grown[:row] = self._mat[:row]
                    self._mat = grown
                self._rows[d.id] = row
                self._docs.append(stored)
                self._bare.append(None)
                self._n += 1
            else:
                self._docs[row] = stored
                self._bare[row] = None
            self._mat[row] = unit
        self._index.clear()

    # -- reading ---------------------------------------------------------------------------

    def _field_index(self, field: str) -> dict[Any, _Rows]:
        index = self._index.get(field)
        if index is None:
            lists: dict[Any, list[int]] = {}
            for row, doc in enumerate(self._docs):
                value = nested_get(doc.metadata, field)
                if value is MISSING:
                    continue
                for key in _keys_of(value):
                    lists.setdefault(key, []).append(row)
            index = {key: np.asarray(rows, dtype=np.int64) for key, rows in lists.items()}
            self._index[field] = index
        return index

    def _match_rows(self, field: str, value: Any) -> _Rows:
        return self._field_index(field).get(value_key(value), _EMPTY)

    def _filter_rows(self, filter: Filter | None) -> _Rows | None:
        """Rows passing `filter`, or None for "all rows"."""
        if not filter:
            return None
        rows: _Rows | None = None
        for field, value in filter.items():
            match = self._match_rows(field, value)
            rows = match if rows is None else np.intersect1d(rows, match, assume_unique=True)
            if not rows.size:
                break
        return rows

    def _query(self, embedding: Sequence[float]) -> NDArray[np.float32]:
        # A traversal passes the same query object to every call: validate and normalise once.
        cached = self._last_query
        if cached is not None and cached[0] is embedding:
            return cached[1]
        q = np.asarray(check_vector(embedding, what="query embedding", dim=self._dim), np.float64)
        unit = (q / np.linalg.norm(q)).astype(np.float32)
        self._last_query = (embedding, unit)
        return unit

    def _hit(self, row: int, score: float | None, include_embeddings: bool) -> Hit:
        if include_embeddings:
            return Hit(self._docs[row], score)
        bare = self._bare[row]
        if bare is None:
            d = self._docs[row]
            bare = self._bare[row] = Document(d.id, d.content, d.metadata)
        return Hit(bare, score)

    def _top(self, rows: _Rows | None, q: NDArray[np.float32], k: int, inc: bool) -> list[Hit]:
        if k == 0 or self._n == 0:
            return []
        if rows is None:
            scores = self._mat[: self._n] @ q
            ids = None
        else:
            if not rows.size:
                return []
            scores = self._mat[rows] @ q
            ids = rows
        if k < scores.shape[0]:
            part = np.argpartition(-scores, k - 1)[:k]
            order = part[np.argsort(-scores[part], kind="stable")]
        else:
            order = np.argsort(-scores, kind="stable")
        top_scores = np.clip(scores[order], -1.0, 1.0).tolist()
        top_rows = (order if ids is None else ids[order]).tolist()
        return [self._hit(r, s, inc) for r, s in zip(top_rows, top_scores, strict=True)]

    async def asearch(
        self,
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """The `k` documents most similar to `embedding` that pass `filter`, best first."""
        return self.search(embedding, k=k, filter=filter, include_embeddings=include_embeddings)

    def search(
        self,
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """Sync twin of `asearch`."""
        _check_k(k)
        if self._n == 0:
            return []
        return self._top(self._filter_rows(filter), self._query(embedding), k, include_embeddings)

    async def aget(
        self,
        ids: Sequence[str],
        *,
        filter: Filter | None = None,
        embedding: Sequence[float] | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """The documents with these ids that exist and pass `filter`, in the order of `ids`
        (each once), scored against `embedding` when one is given."""
        return self.get(
            ids, filter=filter, embedding=embedding, include_embeddings=include_embeddings
        )

    def get(
        self,
        ids: Sequence[str],
        *,
        filter: Filter | None = None,
        embedding: Sequence[float] | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """Sync twin of `aget`."""
        if isinstance(ids, str):
            raise TypeError("ids must be a sequence of ids, not a single string")
        rows = [r for i in dict.fromkeys(ids) if (r := self._rows.get(i)) is not None]
        if filter and rows:
            allowed = self._filter_rows(filter)
            assert allowed is not None
            keep = set(allowed.tolist())
            rows = [r for r in rows if r in keep]
        if not rows:
            return []
        scores: list[float | None]
        if embedding is not None:
            arr = np.asarray(rows, dtype=np.int64)
            scores = np.clip(self._mat[arr] @ self._query(embedding), -1.0, 1.0).tolist()
        else:
            scores = [None] * len(rows)
        return [self._hit(r, s, include_embeddings) for r, s in zip(rows, scores, strict=True)]

    def _edge_rows(self, edge: MetadataEdge, allowed: _Rows | None) -> _Rows:
        if not isinstance(edge, MetadataEdge):
            raise TypeError(f"aadjacent takes a MetadataEdge, got {edge!r}")
        rows = self._match_rows(edge.incoming_field, edge.value)
        if allowed is not None and rows.size:
            rows = np.intersect1d(rows, allowed, assume_unique=True)
        return rows

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
        _check_k(k)
        if self._n == 0:
            return []
        rows = self._edge_rows(edge, self._filter_rows(filter))
        return self._top(rows, self._query(embedding), k, include_embeddings)

    async def aadjacent_many(
        self,
        edges: Sequence[MetadataEdge],
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[list[Hit]]:
        """`aadjacent` for each edge (same order), sharing the query and filter work."""
        _check_k(k)
        if self._n == 0:
            return [[] for _ in edges]
        q = self._query(embedding)
        allowed = self._filter_rows(filter)
        return [self._top(self._edge_rows(e, allowed), q, k, include_embeddings) for e in edges]
