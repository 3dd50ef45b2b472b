"""Mirroring a source into a store: after `amirror(store, documents)` the store holds exactly
the source's documents, and only what differs was written or deleted.

The store's documents are read first (`adocuments`, a page at a time) and each is kept as a
digest of its content and metadata (`document_digest`). The source is then read once, a batch
at a time: a document whose id the store lacks is added, one whose digest differs is
rewritten (`aadd`, which embeds only these), one whose digest is equal is left alone. A source
document that carries its own embedding is also compared by vector (the stored one read by id,
both sides at float32, the precision stores keep): a changed vector alone rewrites it. A
document without an embedding is compared by content and metadata only, since its vector
follows from its content. Last, the store's documents that the source did not have are
deleted (`adelete`).

Deletion waits until the whole source has been read: a source that fails part-way (a bad
document, an interruption) deletes nothing, and the documents written before the failure are
the source's own. Running the same mirror again is always safe, since it plans from what the
store holds at that moment. An empty source is refused: mirroring nothing would delete every
document (`adelete` does that when it is meant). Any store with `adocuments`, `aadd`,
`adelete` and `aget` can be mirrored into; MemoryStore and CassandraStore (hoprag tables)
have them. Memory: a digest and an id per stored document, and the ids of the source."""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from hoprag.documents import Document
from hoprag.errors import invalid
from hoprag.stores.base import Hit
from hoprag.sync import run_sync
from hoprag.validation import check_documents, check_int

__all__ = [
    "DEFAULT_BATCH",
    "MirrorPlan",
    "MirrorReport",
    "MirrorableStore",
    "Phase",
    "amirror",
    "document_digest",
    "mirror",
]

DEFAULT_BATCH = 500
"""Source documents compared (and their changes written) per batch."""

Phase = Literal["read", "compare", "delete"]
"""What a mirror is doing when it reports progress: reading the store's documents, comparing
(and writing) the source's, deleting the store's documents the source has not got."""


class MirrorableStore(Protocol):
    """What `amirror` needs of a store."""

    def adocuments(self) -> AsyncIterator[list[Document]]:
        """Every document (embeddings left out), a page at a time."""
        ...

    async def aadd(self, documents: Iterable[Document]) -> None:
        """Insert or replace documents by id."""
        ...

    async def adelete(self, ids: Sequence[str] | None = None) -> int:
        """Delete documents by id; how many were deleted."""
        ...

    async def aget(self, ids: Sequence[str], *, include_embeddings: bool = True) -> list[Hit]:
        """Documents by id, embeddings included."""
        ...


@dataclass(frozen=True, slots=True)
class MirrorReport:
    """What a mirror did: source documents the store lacked (`added`), held with other
    content, metadata or vector (`updated`, rewritten) or held as they are (`unchanged`), and
    the store's documents the source has not got (`deleted`)."""

    added: int
    updated: int
    unchanged: int
    deleted: int

    @property
    def source(self) -> int:
        """Documents in the source (the store holds exactly these afterwards)."""
        return self.added + self.updated + self.unchanged

    @property
    def written(self) -> int:
        """Documents this mirror wrote (added and updated)."""
        return self.added + self.updated

    def summary(self) -> str:
        """`"1 added, 1 updated, 1997 unchanged, 1 deleted"`."""
        return (
            f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, "
            f"{self.deleted} deleted"
        )


def document_digest(document: Document) -> bytes:
    """A 16-byte digest of the document's content and metadata (canonical JSON: keys sorted),
    equal for two documents exactly when both are equal as stored."""
    text = json.dumps(
        [document.content, document.metadata],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
    )
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass(slots=True)
class MirrorPlan:
    """One batch of the source sorted against the store's digests: the documents to write
    (`added`, `updated`), those to compare by vector before deciding (`by_vector`) and how many
    are `unchanged`."""

    added: list[Document]
    updated: list[Document]
    by_vector: list[Document]
    unchanged: int

    @classmethod
    def of(cls, docs: Sequence[Document], held: dict[str, bytes]) -> MirrorPlan:
        """Sort checked `docs` by what `held` (id -> digest of the stored document) says."""
        plan = cls([], [], [], 0)
        for doc in docs:
            digest = held.get(doc.id)
            if digest is None:
                plan.added.append(doc)
            elif digest != document_digest(doc):
                plan.updated.append(doc)
            elif doc.embedding is not None:
                plan.by_vector.append(doc)
            else:
                plan.unchanged += 1
        return plan

    def settle(self, stored: dict[str, Sequence[float] | None]) -> None:
        """Decide the `by_vector` documents by the stored vectors (id -> vector, None when
        the store holds none): a different vector makes a document updated."""
        for doc in self.by_vector:
            if _same_vector(doc.embedding, stored.get(doc.id)):
                self.unchanged += 1
            else:
                self.updated.append(doc)
        self.by_vector = []


def _same_vector(given: Sequence[float] | None, stored: Sequence[float] | None) -> bool:
    """Whether two vectors are equal at float32."""
    if given is None or stored is None or len(given) != len(stored):
        return False
    return bool(np.array_equal(np.asarray(given, np.float32), np.asarray(stored, np.float32)))


class _Mirror:
    """One mirror's state: the store's digests, the source ids seen and the counts."""

    def __init__(self, store: MirrorableStore, progress: Callable[[Phase, int], None]) -> None:
        self.store = store
        self.progress = progress
        self.held: dict[str, bytes] = {}
        self.seen: set[str] = set()
        self.count = 0
        self.added = self.updated = self.unchanged = 0

    async def read(self) -> None:
        """Digest every document the store holds."""
        self.progress("read", 0)
        async for page in self.store.adocuments():
            for doc in page:
                self.held[doc.id] = document_digest(doc)
            self.progress("read", len(self.held))

    async def compare(self, documents: Iterable[Document], batch: int) -> None:
        """Compare the source with the digests a batch at a time, writing what differs."""
        self.progress("compare", 0)
        for chunk in _batches(documents, batch):
            self._check_unique(chunk)
            self.count += len(chunk)
            plan = MirrorPlan.of(check_documents(chunk), self.held)
            if plan.by_vector:
                plan.settle(await self._stored_vectors(plan.by_vector))
            if plan.added or plan.updated:
                await self.store.aadd([*plan.added, *plan.updated])
            self.added += len(plan.added)
            self.updated += len(plan.updated)
            self.unchanged += plan.unchanged
            self.progress("compare", self.count)

    def _check_unique(self, chunk: list[Document]) -> None:
        """Record the chunk's ids; InvalidInputError for an id the source already gave."""
        for n, doc in enumerate(chunk, self.count):
            doc_id = getattr(doc, "id", None)
            if not isinstance(doc_id, str):
                continue  # not a Document: check_documents names it
            if doc_id in self.seen:
                raise invalid(f"documents[{n}].id", doc_id, "an id not given earlier in the source")
            self.seen.add(doc_id)

    async def _stored_vectors(self, docs: list[Document]) -> dict[str, Sequence[float] | None]:
        hits = await self.store.aget([d.id for d in docs], include_embeddings=True)
        return {h.id: h.document.embedding for h in hits}

    async def delete(self, batch: int) -> int:
        """Delete the store's documents the source has not got, `batch` ids per call."""
        stale = [doc_id for doc_id in self.held if doc_id not in self.seen]
        deleted = 0
        if stale:
            self.progress("delete", 0)
        for start in range(0, len(stale), batch):
            deleted += await self.store.adelete(stale[start : start + batch])
            self.progress("delete", deleted)
        return deleted


def _batches(items: Iterable[Document], size: int) -> Iterator[list[Document]]:
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def _ignore(_phase: Phase, _done: int) -> None:
    pass


def _check_args(documents: object, batch: object, progress: object) -> int:
    """The checked batch size; InvalidInputError naming a bad argument."""
    if isinstance(documents, Document | str | bytes | dict) or not isinstance(documents, Iterable):
        raise invalid("documents", documents, "an iterable of Documents")
    if progress is not None and not callable(progress):
        raise invalid("progress", progress, "a callable taking (phase, count), or None")
    return check_int("batch", batch, minimum=1)


async def amirror(
    store: MirrorableStore,
    documents: Iterable[Document],
    *,
    batch: int = DEFAULT_BATCH,
    progress: Callable[[Phase, int], None] | None = None,
) -> MirrorReport:
    """Make `store` hold exactly `documents` (read once, a batch of `batch` at a time; a
    generator will do), writing and deleting only what differs (see the module docstring),
    and say what it did. `progress(phase, done)` is called as the work goes, with 0 when a
    phase begins: "read" with the store's documents read, "compare" with the source's
    documents compared (and written when they differed), "delete" with documents deleted
    (only when there is something to delete). InvalidInputError for a bad argument, an
    id the source gives twice or a source without documents; nothing is deleted then."""
    size = _check_args(documents, batch, progress)
    run = _Mirror(store, progress or _ignore)
    await run.read()
    await run.compare(documents, size)
    if not run.seen:
        raise invalid(
            "documents",
            documents,
            "at least one document",
            hint="mirroring an empty source would delete every document (adelete does that)",
        )
    deleted = await run.delete(size)
    return MirrorReport(run.added, run.updated, run.unchanged, deleted)


def mirror(
    store: MirrorableStore,
    documents: Iterable[Document],
    *,
    batch: int = DEFAULT_BATCH,
    progress: Callable[[Phase, int], None] | None = None,
) -> MirrorReport:
    """Sync `amirror` (works inside and outside a running event loop)."""
    return run_sync(functools.partial(amirror, store, documents, batch=batch, progress=progress))
