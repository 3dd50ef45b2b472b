"""The resumable bulk load: `aload` (and the sync `load`) add documents to a CassandraStore
batch by batch and record, after each batch, how many are written in the keyspace's load
catalogue (`catalog.py`). Run again with the same `source` after an interruption (a crash,
Ctrl-C, a node lost), the load skips what the catalogue says was written and writes the rest,
so every document ends up written and the catalogue says complete; run again after it
completed, it writes nothing. `hoprag load` is a command over it.

A batch that was being written when the load stopped is written again on the next run
(the catalogue counts only whole batches; an upsert of the same document is idempotent). A
table loaded with another embedding is refused (`InvalidInputError` naming `embedding_name`);
`restart=True` loads from the first document whatever the catalogue says. A catalogue entry
whose table holds no row (the table was dropped and made again) is not trusted: the load
starts from the first document.

`amirror` (and the sync `mirror`) is `hoprag load --sync`: the table is made to hold exactly
the documents given (`hoprag.stores.mirror`: what the table lacks is added, what changed is
rewritten, what is unchanged is left alone, what the source has not got is deleted) and the
catalogue records the source as complete. It plans from the table, never from the catalogue's
count, so it is safe after any earlier load, interrupted or not, and after a change of source."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from hoprag.documents import Document
from hoprag.errors import invalid
from hoprag.stores.cassandra.catalog import CatalogEntry, LoadCatalog
from hoprag.stores.cassandra.counting import holds_rows
from hoprag.stores.cassandra.guards import check_consistency
from hoprag.stores.mirror import MirrorableStore, MirrorReport, Phase
from hoprag.stores.mirror import amirror as amirror_store
from hoprag.sync import run_sync
from hoprag.validation import check_int

if TYPE_CHECKING:
    from hoprag.stores.cassandra.config import CassandraConfig

DEFAULT_BATCH = 500
"""Documents per batch (one catalogue write after each)."""


class LoadTarget(MirrorableStore, Protocol):
    """What a load needs of a store (a `CassandraStore` is one): its set-up, options, session,
    keyspace, table and dimension, and adds that report progress."""

    config: CassandraConfig

    @property
    def session(self) -> Any:
        """The driver session (set up)."""
        ...

    @property
    def keyspace(self) -> str:
        """The keyspace."""
        ...

    @property
    def table(self) -> str:
        """The table."""
        ...

    @property
    def dimension(self) -> int | None:
        """The table's embedding dimension (known once set up)."""
        ...

    async def asetup(self) -> None:
        """Connect and set up the table when not done yet."""
        ...

    async def aadd(
        self,
        documents: Iterable[Document],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Insert or replace documents by id, `progress(done, total)` as writes complete."""
        ...


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What a load did: the load's documents in the table in all (`written`), how many an
    earlier run had written and this one skipped (`skipped`), and whether the catalogue
    already said complete, so that nothing was written (`already_complete`). A mirror
    (`amirror`) also has its `mirror` report; its `skipped` are the unchanged documents."""

    written: int
    skipped: int
    already_complete: bool = False
    mirror: MirrorReport | None = None

    @property
    def added(self) -> int:
        """Documents this run wrote."""
        return self.written - self.skipped


def resume_point(
    prior: CatalogEntry | None, *, source: str, embedding_name: str, restart: bool, where: str
) -> int | None:
    """How many documents an earlier run of the same load (same `source`) already wrote (0:
    start afresh), or None when it completed and there is nothing to do. A table loaded with
    another embedding is refused."""
    if prior is None or restart:
        return 0
    check_embedding(prior, embedding_name, where)
    if prior.source != source:
        return 0
    return None if prior.complete else prior.written


def check_embedding(prior: CatalogEntry | None, embedding_name: str, where: str) -> None:
    """InvalidInputError naming `embedding_name` when the table (`where`) was loaded with
    another embedding."""
    if prior is not None and prior.embedding != embedding_name:
        raise invalid(
            "embedding_name",
            embedding_name,
            f"{prior.embedding!r}, the embedding {where} was loaded with",
            hint="load into another table, or restart after dropping it",
        )


def _is_empty(store: LoadTarget) -> bool:
    """Whether the store's table holds no row (`counting.holds_rows`)."""
    return not holds_rows(store.session, store.keyspace, store.table)


def _batches(items: Iterable[Document], size: int) -> Iterator[list[Document]]:
    it = iter(items)
    while batch := list(itertools.islice(it, size)):
        yield batch


def _after(batches: Iterable[list[Document]], skip: int) -> Iterator[tuple[int, list[Document]]]:
    """The batches past the first `skip` documents, each with the count before it."""
    seen = 0
    for batch in batches:
        if seen + len(batch) <= skip:
            seen += len(batch)
            continue
        if seen < skip:
            batch, seen = batch[skip - seen :], skip
        yield seen, batch
        seen += len(batch)


async def aload(
    store: LoadTarget,
    documents: Iterable[Document],
    *,
    source: str,
    embedding_name: str,
    batch: int = DEFAULT_BATCH,
    restart: bool = False,
    catalog_consistency: str | None = None,
    started: Callable[[int], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> LoadResult:
    """Load `documents` (in the same order on every run) into `store` as described above.
    `source` describes what is loaded (a JSON text, say): a run resumes only a load of the
    same source, skipping by position the documents the earlier run wrote, so `source` must
    change whenever the documents do (`hoprag load` puts a digest of its file in it); a
    changed source then loads from the first document, and `amirror` deletes what it no
    longer has. `embedding_name` names the store's embedding in the catalogue ("hash:32",
    "minilm"). `started(skipped)` is called once before the first write, `progress(done)`
    with the documents written in all (skipped ones included) as they go. The arguments are
    checked before anything connects; each batch's documents are checked before any of them
    is written (`aadd`), so a bad document in a later batch stops the load with the batches
    before it written and recorded: fix it and run the same load again to resume.
    `documents` is read once, a batch at a time (a generator will do)."""
    batch = _check_load_args(source, embedding_name, batch, restart, started, progress)
    consistency = check_consistency(catalog_consistency, what="catalog_consistency")
    await store.asetup()  # a table the store refuses records nothing
    catalog = LoadCatalog(store.session, store.keyspace, consistency=consistency)
    prior = await anyio.to_thread.run_sync(catalog.get, store.table)
    where = f"{store.keyspace}.{store.table}"
    skip = resume_point(
        prior, source=source, embedding_name=embedding_name, restart=restart, where=where
    )
    if skip != 0 and await anyio.to_thread.run_sync(_is_empty, store):
        skip = 0  # the catalogue outlived its table
    if skip is None:
        done = prior.written if prior is not None else 0
        return LoadResult(written=done, skipped=done, already_complete=True)

    dimension = int(store.dimension or 0)  # known once the store is set up

    async def record(written: int, complete: bool) -> None:
        entry = CatalogEntry(store.table, source, embedding_name, dimension, written, complete)
        await anyio.to_thread.run_sync(catalog.put, entry)

    await anyio.to_thread.run_sync(catalog.create, store.config.replication_factor)
    await record(skip, False)
    if started is not None:
        started(skip)
    written = skip
    for base, docs in _after(_batches(documents, batch), skip):
        on_rows = None if progress is None else functools.partial(_report, progress, base)
        await store.aadd(docs, progress=on_rows)
        written = base + len(docs)
        await record(written, False)
        if progress is not None:
            progress(written)
    await record(written, True)
    return LoadResult(written=written, skipped=skip)


def _check_load_args(
    source: object,
    embedding_name: object,
    batch: object,
    restart: object,
    started: object,
    progress: object,
) -> int:
    """The checked batch size; InvalidInputError naming a bad argument."""
    if not isinstance(source, str) or not source:
        raise invalid("source", source, "a non-empty description of what is loaded")
    if not isinstance(embedding_name, str) or not embedding_name:
        raise invalid("embedding_name", embedding_name, "a non-empty name of the embedding")
    if not isinstance(restart, bool):
        raise invalid("restart", restart, "True or False")
    for name, fn in (("started", started), ("progress", progress)):
        if fn is not None and not callable(fn):
            raise invalid(name, fn, "a callable taking a count of documents, or None")
    return check_int("batch", batch, minimum=1)


def _report(progress: Callable[[int], None], base: int, done: int, _total: int) -> None:
    progress(base + done)


def load(
    store: LoadTarget,
    documents: Iterable[Document],
    *,
    source: str,
    embedding_name: str,
    batch: int = DEFAULT_BATCH,
    restart: bool = False,
    catalog_consistency: str | None = None,
    started: Callable[[int], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> LoadResult:
    """Sync `aload` (works inside and outside a running event loop)."""
    return run_sync(
        functools.partial(
            aload,
            store,
            documents,
            source=source,
            embedding_name=embedding_name,
            batch=batch,
            restart=restart,
            catalog_consistency=catalog_consistency,
            started=started,
            progress=progress,
        )
    )


async def amirror(
    store: LoadTarget,
    documents: Iterable[Document],
    *,
    source: str,
    embedding_name: str,
    batch: int = DEFAULT_BATCH,
    catalog_consistency: str | None = None,
    progress: Callable[[Phase, int], None] | None = None,
) -> LoadResult:
    """Make the store's table hold exactly `documents` (`hoprag.stores.mirror.amirror`, with
    its `progress(phase, done)`) and record the load of `source` in the catalogue: as
    started (0 written, not complete) before the first write, as complete with every
    document of the source once the mirror is done. A table that holds documents of another
    embedding is refused before anything is written (InvalidInputError naming
    `embedding_name`); an empty one (dropped and made again) is not."""
    batch = _check_load_args(source, embedding_name, batch, False, None, None)
    if progress is not None and not callable(progress):
        raise invalid("progress", progress, "a callable taking (phase, count), or None")
    consistency = check_consistency(catalog_consistency, what="catalog_consistency")
    await store.asetup()
    catalog = LoadCatalog(store.session, store.keyspace, consistency=consistency)
    prior = await anyio.to_thread.run_sync(catalog.get, store.table)
    if prior is not None and not await anyio.to_thread.run_sync(_is_empty, store):
        check_embedding(prior, embedding_name, f"{store.keyspace}.{store.table}")
    await anyio.to_thread.run_sync(catalog.create, store.config.replication_factor)
    dimension = int(store.dimension or 0)

    async def record(written: int, complete: bool) -> None:
        entry = CatalogEntry(store.table, source, embedding_name, dimension, written, complete)
        await anyio.to_thread.run_sync(catalog.put, entry)

    await record(0, False)
    report = await amirror_store(store, documents, batch=batch, progress=progress)
    await record(report.source, True)
    return LoadResult(written=report.source, skipped=report.unchanged, mirror=report)


def mirror(
    store: LoadTarget,
    documents: Iterable[Document],
    *,
    source: str,
    embedding_name: str,
    batch: int = DEFAULT_BATCH,
    catalog_consistency: str | None = None,
    progress: Callable[[Phase, int], None] | None = None,
) -> LoadResult:
    """Sync `amirror` (works inside and outside a running event loop)."""
    return run_sync(
        functools.partial(
            amirror,
            store,
            documents,
            source=source,
            embedding_name=embedding_name,
            batch=batch,
            catalog_consistency=catalog_consistency,
            progress=progress,
        )
    )
