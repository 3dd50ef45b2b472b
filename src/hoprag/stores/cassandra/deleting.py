"""How a CassandraStore deletes documents (`adelete`): everything derived from a document goes
with its row, in an order that a delete interrupted anywhere and run again completes.

For the ids asked for, the stored rows are read first (unknown ids are skipped). On a table
with the lexical index (`lexicon.py`), the documents' postings are deleted and the counters
take them back, from what the ledger `hoprag_lexicon_pending` records of each (`pending.py`)
or else from its row, and the ledger records them as not counted; only then are the rows
deleted, and the ledger's records after them. While a row exists, a run of the same delete
finds it and finishes the work; once it is gone, nothing of it is left but its record, which
says it is not counted. The one window that a run again cannot repair is between the
counters' update and the ledger's write right after it (a kill there takes the documents back
twice; a write that failed is not retried there). Holder counts (`holders.py`) are taken
back the same way, from their own records in the same ledger.

Last, values-catalogue entries (declared entity fields) that no document carries any more
are deleted and forgotten by the writer, so that an add of the value writes them again. A
delete by filter reads the matching ids with the filter pushed down (`afiltered`), a chunk
at a time, and deletes each chunk as above until none is left."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from hoprag.filters import CompiledFilter
from hoprag.stores.cassandra import tokens as tok
from hoprag.stores.cassandra.guards import GET_CHUNK
from hoprag.stores.cassandra.holders import HeldChange, HolderCounts, counts_of
from hoprag.stores.cassandra.pending import Ledger
from hoprag.stores.cassandra.values import value_json

if TYPE_CHECKING:
    from hoprag.stores.cassandra.parts import TableParts

DELETE_CHUNK = 1000
"""Ids a delete by filter reads, and then deletes, at a time."""


@dataclass(frozen=True, slots=True)
class _Stored:
    """What a delete needs of a stored row: its id, metadata (None on a cassio table) and,
    on a table with the lexical index, its terms and length."""

    id: str
    metadata: dict[str, Any] | None
    terms: dict[str, int]
    length: int


class TableDeleter:
    """The delete path of one store's table `parts`, recording lexical changes in `ledger`
    (see the module docstring)."""

    def __init__(self, parts: TableParts, ledger: Ledger) -> None:
        self.parts = parts
        self.ledger = ledger

    async def delete_matching(self, filter: CompiledFilter, window: int) -> int:
        """Delete every document passing `filter` (on the set-up table), a chunk of ids at a
        time."""
        query = self.parts.query(None, filter, include_embeddings=False)
        total = 0
        while hits := await query.afiltered(limit=DELETE_CHUNK):
            deleted = await self.delete_ids([h.id for h in hits], window)
            if not deleted:  # read but gone by now: a concurrent delete took them
                break
            total += deleted
        return total

    async def delete_ids(self, ids: Sequence[str], window: int) -> int:
        """Delete the stored documents among checked `ids`; how many there were."""
        found = await self._stored(ids, window)
        if not found:
            return 0
        layout, ex = self.parts.layout, self.parts.executor
        if layout.lexical:
            await self._take_back_lexicon(found, window)
        held = await self._take_back_holders(found, window)
        delete = f"DELETE FROM {layout.fq} WHERE {layout.id_col} = ?"
        await ex.write_all(delete, [(s.id,) for s in found], window=window)
        if layout.lexical:
            await self.ledger.forget([s.id for s in found], window)
        if held is not None:
            await held[0].forget(held[1], window)
        await self._prune_catalogue(found, window)
        return len(found)

    async def _stored(self, ids: Sequence[str], window: int) -> list[_Stored]:
        """The stored rows of `ids` (those that exist), in one burst of reads by id."""
        layout = self.parts.layout
        cols = [layout.id_col]
        hoprag = self.parts.config.mode == "hoprag"
        if hoprag:
            cols.append("metadata")
        if layout.lexical:
            cols += ["lexicon", "lexicon_length"]
        text = f"SELECT {', '.join(cols)} FROM {layout.fq} WHERE {layout.id_col} IN ?"
        calls = [(text, [list(ids[i : i + GET_CHUNK])]) for i in range(0, len(ids), GET_CHUNK)]
        pages = await self.parts.executor.burst(calls, "read by id", anyio.CapacityLimiter(window))
        return [_row(r, hoprag, layout.lexical) for rows in pages for r in rows]

    # -- lexical index ---------------------------------------------------------------------

    async def _take_back_lexicon(self, found: list[_Stored], window: int) -> None:
        """Delete the documents' postings and take them back from the counters, from the
        ledger's record of each (an add that did not complete) or its row, then record them
        as not counted (`pending.py`)."""
        ledger = self.ledger
        await ledger.ensure()
        changes = await ledger.changes({s.id: None for s in found}, window)
        await ledger.settle(changes, window)
        await ledger.record(changes, window, counted=True)

    # -- holder counts ---------------------------------------------------------------------

    async def _take_back_holders(
        self, found: list[_Stored], window: int
    ) -> tuple[HolderCounts, list[HeldChange]] | None:
        """On a table with holder counts: take the documents back from the counters, from the
        ledger's record of each or its row, then record them as counted nowhere
        (`holders.py`); None on other tables."""
        holders = counts_of(self.parts)
        if holders is None:
            return None
        changes = await holders.changes({s.id: frozenset() for s in found}, window)
        await holders.settle(changes, window)
        await holders.record(changes, window, settled=True)
        return holders, changes

    # -- values catalogue ------------------------------------------------------------------

    async def _prune_catalogue(self, found: list[_Stored], window: int) -> None:
        """Delete the catalogue entries of the deleted documents' entity values that no
        document carries any more, and let the writer forget them."""
        layout = self.parts.layout
        entries: set[tuple[str, str]] = set()
        for s in found:
            if s.metadata is not None:
                entries |= layout.entity_entries(s.metadata)
        if not entries:
            return
        ordered = sorted(entries)
        catalogue, ex = self.parts.values, self.parts.executor
        calls = [(catalogue.count_query(), [tok.token(f, v)]) for f, v in ordered]
        pages = await ex.burst(calls, "catalogue count", anyio.CapacityLimiter(window))
        unheld = [e for e, rows in zip(ordered, pages, strict=True) if not rows or not rows[0][0]]
        if not unheld:
            return
        delete = f"DELETE FROM {catalogue.fq} WHERE field = ? AND value = ?"
        await ex.write_all(delete, [(f, value_json(v)) for f, v in unheld], window=window)
        self.parts.catalogued.difference_update(unheld)


def _row(row: Sequence[Any], hoprag: bool, lexical: bool) -> _Stored:
    """A stored row read by `TableDeleter._stored`."""
    metadata = (json.loads(row[1]) if row[1] else {}) if hoprag else None
    if not lexical:
        return _Stored(row[0], metadata, {}, 0)
    return _Stored(row[0], metadata, dict(row[2] or {}), int(row[3] or 0))
