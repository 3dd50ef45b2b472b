"""How a CassandraStore writes documents (`aadd`): the INSERT values (embedding the documents
that have none, every vector checked), the values catalogue's new entries and the list-valued
fields first, then, on a table with a lexical index or holder counts, the ledger's records of
the change (`pending.py`, `holders.py`), then the rows, then the postings and counters
(`lexicon.py`, `holders.py`) from those records, so that an add stopped anywhere and run again
leaves the index and the counts as the rows say. `aupdate_metadata` keeps holder counts the
same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from hoprag.documents import Document
from hoprag.embeddings.base import aembed_documents
from hoprag.errors import invalid
from hoprag.stores.cassandra import lexicon
from hoprag.stores.cassandra.fields import FieldCatalog
from hoprag.stores.cassandra.guards import GET_CHUNK
from hoprag.stores.cassandra.holders import HeldChange, HolderCounts, counts_of, target_tokens
from hoprag.stores.cassandra.pending import Change, Ledger
from hoprag.validation import check_vector

if TYPE_CHECKING:
    from hoprag.stores.cassandra.parts import TableParts

CATALOGUED_MAX = 1_000_000
"""Values-catalogue entries a writer remembers having written (then it forgets them all)."""


class TableWriter:
    """The write path of one store's table `parts`, recording lexical changes in `ledger` (see
    the module docstring); remembers the values-catalogue entries it wrote
    (`parts.catalogued`), so that each is written once."""

    def __init__(self, parts: TableParts, ledger: Ledger) -> None:
        self.parts = parts
        self.ledger = ledger

    async def add(
        self,
        docs: list[Document],
        window: int,
        progress: Callable[[int, int], None] | None,
        embedding: Any,
    ) -> None:
        """Write checked `docs` with `window` writes in flight, those without an embedding
        embedded by the model `embedding` (`CassandraStore.aadd`)."""
        layout = self.parts.layout
        rows = await self._insert_rows(docs, embedding)
        await self.catalogue(docs, window)
        changes = await self._record_lexicon(docs, window) if layout.lexical else None
        held = await self._record_holders(docs, window)
        await self.parts.executor.write_all(
            layout.insert_query(), rows, window=window, progress=progress
        )
        if changes is not None:  # after the rows, from the ledger's records (`pending.py`)
            await self.ledger.settle(changes, window)
            await self.ledger.forget([c.id for c in changes], window)
        await self._settle_holders(held, window)

    async def update_metadata(
        self,
        docs: list[Document],
        window: int,
        progress: Callable[[int, int], None] | None,
    ) -> None:
        """Replace the metadata of `docs`, every id read first (`aupdate_metadata`)."""
        layout, ex = self.parts.layout, self.parts.executor
        ids = [d.id for d in docs]
        text = f"SELECT id FROM {layout.fq} WHERE id IN ?"
        calls = [(text, [ids[i : i + GET_CHUNK]]) for i in range(0, len(ids), GET_CHUNK)]
        pages = await ex.burst(calls, "read by id", anyio.CapacityLimiter(window))
        stored = {r[0] for rows in pages for r in rows}
        missing = [i for i in ids if i not in stored]
        if missing:
            raise invalid("documents", missing[:5], f"ids of documents in {layout.fq}")
        await self.catalogue(docs, window)
        held = await self._record_holders(docs, window)
        rows = [layout.metadata_values(d) for d in docs]
        await ex.write_all(layout.metadata_query(), rows, window=window, progress=progress)
        await self._settle_holders(held, window)

    async def _record_holders(
        self, docs: list[Document], window: int
    ) -> tuple[HolderCounts, list[HeldChange]] | None:
        """On a table with holder counts, record in the ledger the tokens the counters count
        each of `docs` in, before its row changes (`holders.py`); None on other tables."""
        holders = counts_of(self.parts)
        if holders is None:
            return None
        targets = {d.id: target_tokens(d.metadata) for d in docs}
        changes = await holders.changes(targets, window)
        await holders.record(changes, window, settled=False)
        return holders, changes

    @staticmethod
    async def _settle_holders(
        held: tuple[HolderCounts, list[HeldChange]] | None, window: int
    ) -> None:
        """After the rows: move the holder counters and delete the ledger's records."""
        if held is not None:
            holders, changes = held
            await holders.settle(changes, window)
            await holders.forget(changes, window)

    async def _record_lexicon(self, docs: list[Document], window: int) -> list[Change]:
        """Record in the ledger what writing `docs` changes in the lexical index (the terms
        that may hold their postings, the length the counters count each with), before the
        rows are written (`pending.py`)."""
        ledger = self.ledger
        await ledger.ensure()
        changes = await ledger.changes({d.id: lexicon.terms_of(d.content) for d in docs}, window)
        await ledger.record(changes, window, counted=False)
        return changes

    async def catalogue(self, docs: list[Document], window: int) -> None:
        """Before the documents are written: add their entity values to the values catalogue
        (those this store has not written yet) and record typed fields that hold lists."""
        fields = self.parts.layout.fields
        if not fields:
            return
        entries: set[tuple[str, str]] = set()
        for d in docs:
            entries |= self.parts.layout.entity_entries(d.metadata)
        catalogued = self.parts.catalogued
        new = entries - catalogued
        if new:
            rows = self.parts.values.upsert_rows(new)
            await self.parts.executor.write_all(
                self.parts.values.upsert_query(), rows, window=window
            )
            if len(catalogued) > CATALOGUED_MAX:
                catalogued.clear()
            catalogued |= new
        lists = {f for f in self.parts.layout.list_valued_in(docs) if not fields[f].list_valued}
        if lists:
            catalog = FieldCatalog(self.parts.session, self.parts.keyspace)
            for field in sorted(lists):
                await anyio.to_thread.run_sync(catalog.mark_list_valued, self.parts.table, field)
            self.parts.layout.fields = self.parts.layout.fields.marked_list_valued(lists)

    async def _insert_rows(self, docs: list[Document], embedding: Any) -> list[tuple[Any, ...]]:
        """The INSERT values of each document, those without an embedding embedded by
        `embedding`."""
        missing = [d for d in docs if d.embedding is None]
        fresh: dict[str, Any] = {}
        if missing:
            try:
                vecs = await aembed_documents(embedding, [d.content for d in missing])
            except (TypeError, ValueError) as exc:
                raise invalid("embedding", embedding, "a model that embeds texts") from exc
            fresh = {d.id: v for d, v in zip(missing, vecs, strict=True)}
        return [
            self.parts.layout.insert_values(
                d,
                check_vector(
                    fresh[d.id] if d.embedding is None else d.embedding,
                    dimension=self.parts.dimension,
                    what=f"embedding of document {d.id!r}",
                ).tolist(),
            )
            for d in docs
        ]
