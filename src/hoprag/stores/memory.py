"""MemoryStore: an in-process store on numpy, the reference for store semantics.

Embeddings live in one matrix of unit rows, so a search is one matrix-vector product. Metadata
matching uses an inverted index field -> value -> rows, built lazily per field, so an edge or an
equality filter costs the size of its posting list rather than a scan. The rest of the filter
language (`$ne`, ranges, `$exists`, ...) is decided by the shared evaluator
(`hoprag.filters.matches`) on the rows the equalities leave (all rows for a branch without an
equality); a prepared query keeps the rows its filter allows until the next write.

Integrity: `add` stores its own copy of every document (metadata copied and normalized by
`validation.check_documents`, the embedding as a read-only float64 array: 8 bytes a dimension,
where a list of Python floats took about 32) and never changes it afterwards; a
hit hands out a fresh copy of its document when `document` is first read (`MemoryHit`: hits a
traversal drops unread cost no copy), so changing a returned document's metadata or embedding
changes neither the store nor its index. One lock orders writes and reads: a read sees every
document of each `add` that returned before it started, and an index built by a read is built
from, and published for, the documents it saw."""

from __future__ import annotations

import marshal
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import anyio
import numpy as np
from numpy.typing import NDArray

from hoprag.documents import Document
from hoprag.edges import MISSING, MetadataEdge, nested_get, value_key
from hoprag.embeddings.base import aembed_documents, embed_documents
from hoprag.errors import InvalidInputError, invalid
from hoprag.filters import (
    CompiledFilter,
    Condition,
    Filter,
    check_complete_read,
    compile_filter,
    condition_label,
    matches,
    parse_date,
)
from hoprag.lexical import (
    Bm25Index,
    best,
    bm25_among,
    check_lexical_text,
    check_max_holders,
    tokenize,
)
from hoprag.resolve import (
    MAX_CANDIDATES,
    Candidate,
    Match,
    catalogue_entry,
    check_resolve,
    rank_counted,
    too_many,
)
from hoprag.stores.base import (
    DEFAULT_MAX_CONCURRENCY,
    Hit,
    LexicalHit,
    PreparedQuery,
    Store,
    check_delete,
    check_holder_edges,
)
from hoprag.validation import (
    MAX_K,
    check_dimension,
    check_documents,
    check_ids,
    check_int,
    check_k,
    check_vector,
)

_Rows = NDArray[np.int64]
_EMPTY: _Rows = np.empty(0, dtype=np.int64)


def _anything(_: str) -> bool:
    """Every id passes (a lexical search's `keep` without a filter)."""
    return True


def _keys_of(value: Any) -> set[Any]:
    """The keys a stored value matches: itself and, for a list, each element."""
    keys = {value_key(value)}
    if isinstance(value, list | tuple):
        keys.update(value_key(v) for v in value)
    return keys


def _is_date_key(key: Any) -> bool:
    """Whether an index key is a string a date range can compare (an ISO date)."""
    return bool(key[0] == "s" and parse_date(key[1]) is not None)


def _scores(mat: NDArray[np.float32], q: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each row's dot product with `q`, computed row by row (einsum), so that a document's
    score does not depend on which other rows are scored with it (a BLAS matrix product
    rounds differently with the number of rows): a traversal's results then do not depend on
    how its reads are batched (`speculation=`). A query prepared while the store was empty
    (its dimension unknown) whose vector does not match the documents added since is refused
    as `aprepare` would refuse it now."""
    check_dimension(q, mat.shape[1], "query embedding")
    out: NDArray[np.float32] = np.einsum("ij,j->i", mat, q)
    return out


class _Stored:
    """A stored document: never changed once made (an upsert stores a new one). `blob` is its
    metadata marshalled, from which each hit makes its own copy."""

    __slots__ = ("blob", "content", "id", "metadata", "vec")

    def __init__(self, doc: Document, vec: NDArray[np.float64]) -> None:
        self.id = doc.id
        self.content = doc.content
        self.metadata = doc.metadata  # check_documents' own copy: nobody else holds it
        self.blob = marshal.dumps(doc.metadata)
        self.vec = vec


_new_doc = object.__new__


class MemoryHit(Hit):
    """A Hit whose Document is made when first read: a fresh copy of the stored document
    (metadata and embedding included), so changing it changes nothing in the store."""

    __slots__ = ("_doc", "_inc", "_rec")
    _doc: Document | None
    _inc: bool
    _rec: _Stored

    def __init__(self, rec: _Stored, score: float | None, include_embeddings: bool) -> None:
        _set = object.__setattr__
        _set(self, "_rec", rec)
        _set(self, "_inc", include_embeddings)
        _set(self, "_doc", None)
        _set(self, "score", score)

    @property
    def document(self) -> Document:
        """A copy of the stored document, made on first access."""
        doc = self._doc
        if doc is None:
            rec = self._rec
            doc = _new_doc(Document)
            doc.id = rec.id
            doc.content = rec.content
            doc.metadata = marshal.loads(rec.blob)
            doc.embedding = rec.vec.tolist() if self._inc else None
            object.__setattr__(self, "_doc", doc)
        return doc

    @property
    def id(self) -> str:
        """The document's id, without copying the document."""
        return self._rec.id

    def __reduce__(self) -> tuple[Any, ...]:
        return (Hit, (self.document, self.score))  # pickles as the plain Hit it stands for

    def __eq__(self, other: object) -> bool:
        """Equal to any Hit with an equal document and score."""
        if isinstance(other, Hit):
            return (self.document, self.score) == (other.document, other.score)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # like Hit: its Document is mutable

    def __repr__(self) -> str:
        return f"MemoryHit(document={self.document!r}, score={self.score!r})"


class MemoryStore(Store):
    """An in-memory vector store with metadata edges and filters (see `hoprag.stores.Store`).

    `embedding` is a callable `str -> vector` or a LangChain `Embeddings`; it embeds documents
    added without an embedding. All embeddings must share one dimension and be finite and
    non-zero; `add` / `aadd` insert or replace by id and validate everything before writing."""

    def __init__(self, embedding: Any = None) -> None:
        self.embedding = embedding
        self._docs: list[_Stored] = []
        self._rows: dict[str, int] = {}
        self._mat: NDArray[np.float32] = np.empty((0, 0), dtype=np.float32)
        self._n = 0
        self._dim: int | None = None
        self._index: dict[str, dict[Any, _Rows]] = {}
        self._version = 0  # bumped by every write: filtered rows computed before it are stale
        self._values: dict[str, list[tuple[str, str, frozenset[str], int]]] = {}
        self._lexical = Bm25Index()
        """BM25 statistics of every document's content (`MemoryQuery.alexical`)."""
        self._lock = threading.Lock()

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
            raise invalid(
                "MemoryStore(embedding=...)", None, "an embedding model", hint="documents "
                "without an embedding are embedded with it"
            )  # fmt: skip
        return self.embedding

    @staticmethod
    def _check_docs(documents: Iterable[Document]) -> list[Document]:
        return check_documents(documents)

    def _insert(self, docs: list[Document], missing: list[int], vecs: list[list[float]]) -> None:
        if not docs:
            return
        filled = dict(zip(missing, vecs, strict=True))
        rows: list[NDArray[np.float64]] = []
        dim = self._dim
        for i, d in enumerate(docs):
            vec = filled.get(i, d.embedding)
            assert vec is not None
            arr = check_vector(vec, dimension=dim, what=f"embedding of document {d.id!r}")
            dim = len(arr)
            arr.setflags(write=False)  # check_vector's copy, or a CheckedVector's (read-only)
            rows.append(arr)
        # Everything is valid: write, under the lock, so no read sees half of it.
        arr = np.stack(rows)
        arr /= np.linalg.norm(arr, axis=1, keepdims=True)
        stored = [_Stored(d, vec) for d, vec in zip(docs, rows, strict=True)]
        assert dim is not None  # docs is not empty
        with self._lock:
            if self._dim is not None and dim != self._dim:  # a concurrent first add won
                raise InvalidInputError(
                    f"embedding of document {docs[0].id!r} has dimension {dim}, but the store "
                    f"holds vectors of dimension {self._dim}",
                    argument=f"embedding of document {docs[0].id!r}",
                    allowed=f"{self._dim} floats",
                )
            self._write(stored, arr, dim)

    def _write(self, stored: list[_Stored], units: NDArray[np.float64], dim: int) -> None:
        if self._dim is None:
            self._dim = dim
            self._mat = np.empty((max(16, len(stored)), dim), dtype=np.float32)
        for rec, unit in zip(stored, units, strict=True):
            row = self._rows.get(rec.id)
            if row is None:
                row = self._n
                if row >= self._mat.shape[0]:
                    grown = np.empty((max(16, 2 * self._mat.shape[0]), dim), dtype=np.float32)
                    grown[:row] = self._mat[:row]
                    self._mat = grown
                self._mat[row] = unit
                self._rows[rec.id] = row
                self._docs.append(rec)
                self._n += 1
            else:
                self._mat[row] = unit
                self._docs[row] = rec
            self._lexical.add(rec.id, rec.content)
        self._index = {}
        self._version += 1
        self._values = {}

    # -- deleting --------------------------------------------------------------------------

    async def adelete(
        self, ids: Sequence[str] | None = None, *, filter: Filter | CompiledFilter | None = None
    ) -> int:
        """Delete the documents with these `ids` (unknown ones skipped) or passing `filter`,
        and return how many were deleted (see `Store.adelete`)."""
        return self.delete(ids, filter=filter)

    def delete(
        self, ids: Sequence[str] | None = None, *, filter: Filter | CompiledFilter | None = None
    ) -> int:
        """Sync `adelete`: the documents' rows leave the matrix in one write under the lock,
        with their BM25 statistics, so a read sees all of them or none, and the store is then
        the store that never held them (the other rows keep their order)."""
        request = check_delete(ids, filter)
        with self._lock:
            if request.ids is not None:
                rows = [r for i in request.ids if (r := self._rows.get(i)) is not None]
            else:
                assert request.filter is not None
                found = self._filter_rows(request.filter)
                rows = [] if found is None else found.tolist()
            if rows:
                _drop_rows(self, rows)
            return len(rows)

    async def adocuments(self) -> AsyncIterator[list[Document]]:
        """Every document without its embedding, a page of at most 1,000 at a time, in the
        order they were first added (as `CassandraStore.adocuments` pages its table)."""
        with self._lock:
            stored = list(self._docs)
        for start in range(0, len(stored), 1000):
            yield [
                Document(rec.id, rec.content, marshal.loads(rec.blob))
                for rec in stored[start : start + 1000]
            ]

    # -- reading ---------------------------------------------------------------------------

    async def aprepare(
        self,
        embedding: Sequence[float] | None,
        filter: Filter | CompiledFilter | None = None,
        *,
        include_embeddings: bool = True,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> MemoryQuery:
        """Check `embedding` against the store's dimension and compile `filter` (see
        `hoprag.stores.Store.aprepare`)."""
        return self.prepare(
            embedding,
            filter,
            include_embeddings=include_embeddings,
            max_concurrency=max_concurrency,
        )

    def prepare(
        self,
        embedding: Sequence[float] | None,
        filter: Filter | CompiledFilter | None = None,
        *,
        include_embeddings: bool = True,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> MemoryQuery:
        """Sync twin of `aprepare`."""
        compiled = compile_filter(filter)
        with self._lock:
            _check_ranges(self, compiled)
        limit = check_int("max_concurrency", max_concurrency, minimum=1)
        unit: NDArray[np.float32] | None = None
        vec: list[float] | None = None
        if embedding is not None:
            arr = check_vector(embedding, dimension=self._dim, what="query embedding")
            unit = (arr / np.linalg.norm(arr)).astype(np.float32)
            vec = arr.tolist()
        return MemoryQuery(self, vec, unit, compiled, bool(include_embeddings), limit)

    def _field_index(self, field: str) -> dict[Any, _Rows]:
        """The field's index, built on first use after a write (the caller holds the lock)."""
        index = self._index.get(field)
        if index is None:
            lists: dict[Any, list[int]] = {}
            for row, rec in enumerate(self._docs):
                value = nested_get(rec.metadata, field)
                if value is MISSING:
                    continue
                for key in _keys_of(value):
                    lists.setdefault(key, []).append(row)
            index = {key: np.asarray(rows, dtype=np.int64) for key, rows in lists.items()}
            self._index[field] = index
        return index

    def _field_values(self, field: str) -> list[tuple[str, str, frozenset[str], int]]:
        """(value, normalised form, words, documents) of every resolvable string the field
        holds (itself or as a list element), built on first use after a write (the caller
        holds the lock)."""
        values = self._values.get(field)
        if values is None:
            values = []
            for key, rows in self._field_index(field).items():
                if key[0] == "s":
                    entry = catalogue_entry(key[1])
                    if entry is not None:
                        values.append((key[1], entry[0], entry[1], int(rows.size)))
            self._values[field] = values
        return values

    # -- entity resolution -----------------------------------------------------------------

    async def aresolve(
        self,
        text: str,
        fields: Sequence[str],
        *,
        limit: int = 10,
        filter: Filter | CompiledFilter | None = None,
    ) -> list[Candidate]:
        """Values of `fields` (any metadata fields) that `text` may mean, best first, with the
        number of documents carrying each (`hoprag.resolve`; the same ranking as every
        store); with `filter`, of the documents passing it."""
        return self.resolve(text, fields, limit=limit, filter=filter)

    def resolve(
        self,
        text: str,
        fields: Sequence[str],
        *,
        limit: int = 10,
        filter: Filter | CompiledFilter | None = None,
    ) -> list[Candidate]:
        """Sync `aresolve`."""
        request = check_resolve(text, fields, limit)
        compiled = compile_filter(filter)
        matches: list[Match] = []
        counts: dict[tuple[str, str], int] = {}
        with self._lock:
            passing = self._filter_rows(compiled)
            for field in request.fields:
                for value, norm, found, n in self._field_values(field):
                    m = request.match(field, value, norm, found)
                    if m is not None:
                        matches.append(m)
                        counts[(field, value)] = (
                            n if passing is None else self._count_passing(field, value, passing)
                        )
        # The cap counts the values of every document, before the filter, as CassandraStore's
        # catalogue does: it bounds the work, and the same text gets the same answer.
        if len(matches) > MAX_CANDIDATES:
            raise too_many(request, len(matches))
        return rank_counted(request, matches, counts)  # values no passing document carries drop

    async def aholders(self, edges: Sequence[MetadataEdge]) -> list[int | None]:
        """How many documents hold each edge's value (exact: the field index's rows)."""
        return self.holders(edges)

    def holders(self, edges: Sequence[MetadataEdge]) -> list[int | None]:
        """Sync `aholders`."""
        checked = check_holder_edges(edges)
        with self._lock:
            return [int(self._match_rows(e.incoming_field, e.value).size) for e in checked]

    def _count_passing(self, field: str, value: str, passing: _Rows) -> int:
        """How many of the rows `passing` carry string `value` in `field` (the caller holds the
        lock)."""
        rows = self._field_index(field).get(value_key(value), _EMPTY)
        return int(np.intersect1d(rows, passing, assume_unique=True).size)

    def _match_rows(self, field: str, value: Any) -> _Rows:
        return self._field_index(field).get(value_key(value), _EMPTY)

    def _filter_rows(self, compiled: CompiledFilter) -> _Rows | None:
        """The rows (ascending) passing the filter, or None for "all rows" (the caller holds
        the lock). Each branch's equalities are intersected through the index; when the filter
        has other conditions, the shared evaluator decides on the rows that are left."""
        if compiled.matches_all:
            return None
        candidates = self._candidates(compiled)
        if compiled.only_equality or not candidates.size:
            return candidates
        docs = self._docs
        keep = [r for r in candidates.tolist() if matches(compiled, docs[r].metadata)]
        return np.asarray(keep, dtype=np.int64)

    def _candidates(self, compiled: CompiledFilter) -> _Rows:
        """The union of the branches' rows narrowed by their equalities; every row when a
        branch has no equality to narrow it."""
        found: list[_Rows] = []
        for branch in compiled.branches:
            rows = self._equal_rows(branch)
            if rows is None:
                return np.arange(self._n, dtype=np.int64)
            found.append(rows)
        if len(found) == 1:
            return found[0]
        return np.unique(np.concatenate(found)) if found else _EMPTY

    def _equal_rows(self, branch: Sequence[Condition]) -> _Rows | None:
        """The rows meeting every equality of `branch` (through the index), or None when it
        has none."""
        rows: _Rows | None = None
        for c in branch:
            if c.op != "$eq":
                continue
            match = self._field_index(c.field).get(c.key, _EMPTY)
            rows = match if rows is None else np.intersect1d(rows, match, assume_unique=True)
            if not rows.size:
                break
        return rows

    def _hit(self, row: int, score: float | None, include_embeddings: bool) -> Hit:
        return MemoryHit(self._docs[row], score, include_embeddings)

    def _top(self, rows: _Rows | None, q: NDArray[np.float32], k: int, inc: bool) -> list[Hit]:
        if k == 0 or self._n == 0:
            return []
        if rows is None:
            scores = _scores(self._mat[: self._n], q)
            ids = None
        else:
            if not rows.size:
                return []
            scores = _scores(self._mat[rows], q)
            ids = rows
        if k < scores.shape[0]:
            part = np.argpartition(-scores, k - 1)[:k]
            order = part[np.argsort(-scores[part], kind="stable")]
        else:
            order = np.argsort(-scores, kind="stable")
        top_scores = np.clip(scores[order], -1.0, 1.0).tolist()
        top_rows = (order if ids is None else ids[order]).tolist()
        return [self._hit(r, s, inc) for r, s in zip(top_rows, top_scores, strict=True)]

    def _scored(self, rows: list[int], q: NDArray[np.float32] | None, inc: bool) -> list[Hit]:
        scores: list[float | None]
        if q is not None and rows:
            arr = np.asarray(rows, dtype=np.int64)
            scores = np.clip(_scores(self._mat[arr], q), -1.0, 1.0).tolist()
        else:
            scores = [None] * len(rows)
        return [self._hit(r, s, inc) for r, s in zip(rows, scores, strict=True)]

    def search(
        self,
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """Sync `asearch`."""
        return self.prepare(embedding, filter, include_embeddings=include_embeddings).search(k)

    def get(
        self,
        ids: Sequence[str],
        *,
        filter: Filter | None = None,
        embedding: Sequence[float] | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """Sync `aget`."""
        return self.prepare(embedding, filter, include_embeddings=include_embeddings).get(ids)


def _check_ranges(store: MemoryStore, compiled: CompiledFilter) -> None:
    """Refuse a range on a field that holds text and no value the range could compare (a
    number, or for a date range an ISO date string) in the documents the range is tested on:
    it would match nothing, as a range on a text field is refused by CassandraStore. Those
    documents are the ones passing the rest of a branch holding the range (`_range_keys`), so
    through a store view (whose access filter is in every branch) the answer depends on the
    view's documents only, never on other tenants' (the caller holds the lock)."""
    for c in dict.fromkeys(c for c in compiled.conditions if c.is_range):
        what = _uncomparable(c, _range_keys(store, compiled, c))
        if what is None:
            continue
        raise InvalidInputError(
            f"a range on {c.field!r} compares {what}, but {c.field!r} holds text and no "
            f"{what} in the documents the filter's other conditions leave (in this store or "
            "store view): match text with a plain value or $in",
            argument=c.where,
            value=c.value,
            allowed=f"a range on a field that holds {what}",
        )


def _uncomparable(c: Condition, keys: Iterable[Any]) -> str | None:
    """What range `c` compares ("numbers" or "dates") when the index keys `keys` of its field
    hold text and none of that; None when the range may match."""
    keys = set(keys)
    if not any(key[0] == "s" for key in keys):
        return None
    if c.kind == "number" and not any(key[0] == "n" for key in keys):
        return "numbers"
    if c.kind == "date" and not any(_is_date_key(key) for key in keys):
        return "dates"
    return None


def _range_keys(store: MemoryStore, compiled: CompiledFilter, c: Condition) -> set[Any]:
    """The index keys range `c`'s field holds in the documents passing the conditions on other
    fields of a branch holding `c` (every document when such a branch has none)."""
    rest: list[tuple[Condition, ...]] = []
    for branch in compiled.branches:
        if c in branch:
            others = tuple(x for x in branch if x.field != c.field)
            if not others:
                return set(store._field_index(c.field))
            rest.append(others)
    rows = store._filter_rows(CompiledFilter(tuple(dict.fromkeys(rest))))
    assert rows is not None  # every branch holds a condition
    keys: set[Any] = set()
    for r in rows.tolist():
        value = nested_get(store._docs[r].metadata, c.field)
        if value is not MISSING:
            keys |= _keys_of(value)
    return keys


def _drop_rows(store: MemoryStore, rows: list[int]) -> None:
    """Take `rows` out of `store`, compacting its matrix and renumbering the rest in their
    order (the caller holds the store's lock)."""
    keep = np.ones(store._n, dtype=bool)
    keep[rows] = False
    for r in rows:
        store._lexical.remove(store._docs[r].id)
    kept = np.flatnonzero(keep)
    mat = np.empty((max(16, kept.size), store._mat.shape[1]), dtype=np.float32)
    mat[: kept.size] = store._mat[kept]
    store._mat = mat
    store._docs = [store._docs[r] for r in kept.tolist()]
    store._rows = {rec.id: i for i, rec in enumerate(store._docs)}
    store._n = kept.size
    store._index = {}
    store._version += 1
    store._values = {}


class MemoryQuery(PreparedQuery):
    """A MemoryStore's prepared query: the unit query vector and the compiled filter. Each call
    runs to completion without yielding (no I/O), so at most one query is ever in flight. The
    rows the filter allows are computed once and kept until the store is next written."""

    def __init__(
        self,
        store: MemoryStore,
        embedding: list[float] | None,
        unit: NDArray[np.float32] | None,
        compiled: CompiledFilter,
        include_embeddings: bool,
        max_concurrency: int,
    ) -> None:
        self.store = store
        self.embedding = embedding
        self.filter = compiled
        self.include_embeddings = include_embeddings
        self.limiter = anyio.CapacityLimiter(max_concurrency)
        self._unit = unit
        self._allowed: tuple[int, CompiledFilter, _Rows | None] | None = None

    def _allowed_rows(self) -> _Rows | None:
        """The rows passing the filter (None: all), reused until the store is written (the
        caller holds the store's lock)."""
        store, flt = self.store, self.filter
        cached = self._allowed
        if cached is not None and cached[0] == store._version and cached[1] is flt:
            return cached[2]
        rows = store._filter_rows(flt)
        self._allowed = (store._version, flt, rows)
        return rows

    def _need_unit(self, what: str) -> NDArray[np.float32]:
        if self._unit is None:
            raise invalid("embedding", None, f"a query vector for {what}")
        return self._unit

    def search(self, k: int) -> list[Hit]:
        """Sync `asearch`."""
        k = check_k(k, maximum=MAX_K)
        store = self.store
        q = self._need_unit("a vector search")
        with store._lock:
            return store._top(self._allowed_rows(), q, k, self.include_embeddings)

    def get(self, ids: Sequence[str]) -> list[Hit]:
        """Sync `aget`."""
        store = self.store
        wanted = check_ids(ids)
        with store._lock:
            rows = [r for i in wanted if (r := store._rows.get(i)) is not None]
            if rows and not self.filter.matches_all:
                docs, flt = store._docs, self.filter
                rows = [r for r in rows if matches(flt, docs[r].metadata)]
            return store._scored(rows, self._unit, self.include_embeddings)

    def adjacent(self, edge: MetadataEdge, k: int, allowed: _Rows | None) -> list[Hit]:
        """The `k` best documents the edge leads to among `allowed` rows (None: all); the
        caller holds the store's lock."""
        store = self.store
        rows = store._match_rows(edge.incoming_field, edge.value)
        if allowed is not None and rows.size:
            rows = np.intersect1d(rows, allowed, assume_unique=True)
        return store._top(rows, self._need_unit("adjacency"), k, self.include_embeddings)

    async def asearch(self, *, k: int) -> list[Hit]:
        """The `k` documents most similar to the query that pass the filter, best first."""
        return self.search(k)

    async def alexical(
        self,
        text: str,
        *,
        k: int,
        filtered_statistics: bool = False,
        max_holders: int | None = None,
    ) -> Sequence[LexicalHit]:
        """The `k` documents passing the filter that BM25 ranks best for `text`
        (`hoprag.lexical`), best first, equal scores by id; each hit's `score` is its cosine
        similarity to the query vector as in every read, `lexical` its BM25 score, with the
        whole store's statistics or (`filtered_statistics`) those of the passing holders of
        the query's terms (`hoprag.lexical.bm25_among`); terms with more holders than
        `max_holders` in those statistics left out."""
        k = check_k(k)
        text = check_lexical_text(text)
        most = check_max_holders(max_holders)
        store = self.store
        with store._lock:
            allowed = self._allowed_rows()
            keep = None
            if allowed is not None:
                ids = {store._docs[r].id for r in allowed.tolist()}
                keep = ids.__contains__
            if filtered_statistics:
                query = Counter(tokenize(text))
                among = bm25_among(query, store._lexical.postings, keep or _anything, most)
                ranked = best(among, k)
            else:
                ranked = store._lexical.search(text, k, keep=keep, max_holders=most)
            rows = [store._rows[i] for i, _ in ranked]
            hits = store._scored(rows, self._unit, self.include_embeddings)
        return [LexicalHit(h.document, h.score, s) for h, (_, s) in zip(hits, ranked, strict=True)]

    async def aget(self, ids: Sequence[str]) -> list[Hit]:
        """The documents with these ids that exist and pass the filter, in the order of `ids`
        (each once), scored when the query has an embedding."""
        return self.get(ids)

    async def aadjacent(self, edge: MetadataEdge, *, k: int) -> list[Hit]:
        """The `k` best documents whose field `edge.incoming_field` equals (or contains)
        `edge.value` and that pass the filter."""
        return (await self.aadjacent_many([edge], k=k))[0]

    async def aadjacent_many(self, edges: Sequence[MetadataEdge], *, k: int) -> list[list[Hit]]:
        """`aadjacent` for each edge (same order), sharing the filter's rows."""
        k = check_k(k, maximum=MAX_K)
        for e in edges:
            if not isinstance(e, MetadataEdge):
                raise invalid("edge", e, "a MetadataEdge (id edges are read with aget)")
        if not edges or k == 0 or self.store._n == 0:
            return [[] for _ in edges]
        with self.store._lock:
            allowed = self._allowed_rows()
            return [self.adjacent(e, k, allowed) for e in edges]

    # -- complete sets (scopes) -------------------------------------------------------------

    prefers_exact_rank = True
    """A scoped search ranks this store's scope members exactly: with no I/O, reading a whole
    set costs less than a fan-out of vector searches (`hoprag.search`)."""

    def _capped(self, rows: _Rows, limit: int) -> list[Hit]:
        """Hits for `rows` (in row order), at most `limit`; the caller holds the lock."""
        picked = rows[:limit].tolist()
        return self.store._scored(picked, self._unit, self.include_embeddings)

    async def amatching(self, edges: Sequence[MetadataEdge], *, limit: int) -> list[list[Hit]]:
        """Every document each edge leads to that passes the filter, at most `limit` per edge,
        in the order of `edges` (see `PreparedQuery.amatching`)."""
        limit = check_int("limit", limit, minimum=0)
        for e in edges:
            if not isinstance(e, MetadataEdge):
                raise invalid("edge", e, "a MetadataEdge (id edges are read with aget)")
        store = self.store
        if not edges or limit == 0 or store._n == 0:
            return [[] for _ in edges]
        with store._lock:
            allowed = store._filter_rows(self.filter)
            out: list[list[Hit]] = []
            for e in edges:
                rows = store._match_rows(e.incoming_field, e.value)
                if allowed is not None and rows.size:
                    rows = np.intersect1d(rows, allowed, assume_unique=True)
                out.append(self._capped(rows, limit))
            return out

    async def afiltered(self, *, limit: int) -> list[Hit]:
        """Every document that passes the (non-empty) filter, at most `limit` (see
        `PreparedQuery.afiltered`)."""
        limit = check_int("limit", limit, minimum=0)
        check_complete_read(
            self.filter,
            "filter",
            [[condition_label(c) for c in b] for b in self.filter.branches],
        )
        store = self.store
        if limit == 0 or store._n == 0:
            return []
        with store._lock:
            rows = store._filter_rows(self.filter)
            assert rows is not None  # the filter is not empty
            return self._capped(rows, limit)
