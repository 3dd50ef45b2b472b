"""How a CassandraStore deletes documents (`adelete`): everything derived from a document goes
with its row, in an order that a delete interrupted anywhere and run again completes.

For the ids asked for, the stored rows are read first (unknown ids are skipped). On a table
with the lexical index (`lexicon.py`), the documents' postings are deleted, then the counters
take back the documents not yet taken back (the ledger `hoprag_lexicon_deletes` says which were)
and the ledger records them; only then are the rows deleted, and the ledger's entries after
them. While a row exists, a run of the same delete finds it and finishes the work; once it is
gone, nothing of it is left but its ledger entry, which is harmless. The one window that a run
again cannot repair is between the counters' update and the ledger's write of the same
documents (a kill there takes them back twice; a write that failed is not retried there).

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
from hoprag.stores.cassandra import lexicon
from hoprag.stores.cassandra import tokens as tok
from hoprag.stores.cassandra.guards import GET_CHUNK
from hoprag.stores.cassandra.values import value_json

if TYPE_CHECKING:
    from hoprag.stores.cassandra.store import CassandraStore

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
    """The delete path of one store (see the module docstring)."""

    def __init__(self, store: CassandraStore) -> None:
        self.store = store
        self._ledger_ready = False

    async def delete_matching(self, filter: CompiledFilter, window: int) -> int:
        """Delete every document passing `filter`, a chunk of ids at a time."""
        query = await self.store.aprepare(None, filter, include_embeddings=False)
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
        layout, ex = self.store.layout, self.store.executor
        if layout.lexical:
            await self._take_back_lexicon(found, window)
        delete = f"DELETE FROM {layout.fq} WHERE {layout.id_col} = ?"
        await ex.write_all(delete, [(s.id,) for s in found], window=window)
        if layout.lexical:
            ledger = self._ledger_query("DELETE FROM {} WHERE table_name = ? AND id = ?")
            await ex.write_groups(ledger, self._ledger_groups(found), window=window)
        await self._prune_catalogue(found, window)
        return len(found)

    async def _stored(self, ids: Sequence[str], window: int) -> list[_Stored]:
        """The stored rows of `ids` (those that exist), in one burst of reads by id."""
        layout = self.store.layout
        cols = [layout.id_col]
        hoprag = self.store.config.mode == "hoprag"
        if hoprag:
            cols.append("metadata")
        if layout.lexical:
            cols += ["lexicon", "lexicon_length"]
        text = f"SELECT {', '.join(cols)} FROM {layout.fq} WHERE {layout.id_col} IN ?"
        calls = [(text, [list(ids[i : i + GET_CHUNK])]) for i in range(0, len(ids), GET_CHUNK)]
        pages = await self.store.executor.burst(calls, "read by id", anyio.CapacityLimiter(window))
        return [_row(r, hoprag, layout.lexical) for rows in pages for r in rows]

    # -- lexical index ---------------------------------------------------------------------

    def _ledger_query(self, shape: str) -> str:
        return shape.format(f"{self.store.keyspace}.{lexicon.DELETES_TABLE}")

    def _ledger_groups(self, found: Sequence[_Stored]) -> list[list[tuple[Any, ...]]]:
        """(table, id) of each document, in batches of one partition."""
        rows = [(self.store.table, s.id) for s in found]
        step = lexicon.BATCH_ROWS
        return [rows[i : i + step] for i in range(0, len(rows), step)]

    async def _ensure_ledger(self) -> None:
        """Create the ledger when missing (a keyspace set up before it existed), once."""
        if not self._ledger_ready:
            statement = lexicon.deletes_table_statement(self.store.keyspace)
            await anyio.to_thread.run_sync(self.store.session.execute, statement)
            self._ledger_ready = True

    async def _take_back_lexicon(self, found: list[_Stored], window: int) -> None:
        """Delete the documents' postings, then take back from the counters those the ledger
        does not list as taken back, and list them."""
        await self._ensure_ledger()
        store, ex = self.store, self.store.executor
        ks, table = store.keyspace, store.table
        postings = [(table, term, s.id) for s in found for term in s.terms]
        await ex.write_groups(lexicon.postings_delete(ks), lexicon.by_term(postings), window=window)
        read = self._ledger_query("SELECT id FROM {} WHERE table_name = ? AND id IN ?")
        ids = [s.id for s in found]
        calls = [(read, [table, ids[i : i + GET_CHUNK]]) for i in range(0, len(ids), GET_CHUNK)]
        pages = await ex.burst(calls, "delete ledger", anyio.CapacityLimiter(window))
        counted = {r[0] for rows in pages for r in rows}
        pending = [s for s in found if s.id not in counted]
        if not pending:
            return
        length = sum(s.length for s in pending)
        await ex.execute(
            lexicon.stats_update(ks), [-len(pending), -length, table], "lexical statistics"
        )
        record = self._ledger_query("INSERT INTO {} (table_name, id, counted) VALUES (?, ?, true)")
        await ex.write_groups(record, self._ledger_groups(pending), window=window)

    # -- values catalogue ------------------------------------------------------------------

    async def _prune_catalogue(self, found: list[_Stored], window: int) -> None:
        """Delete the catalogue entries of the deleted documents' entity values that no
        document carries any more, and let the writer forget them."""
        layout = self.store.layout
        entries: set[tuple[str, str]] = set()
        for s in found:
            if s.metadata is not None:
                entries |= layout.entity_entries(s.metadata)
        if not entries:
            return
        ordered = sorted(entries)
        catalogue, ex = self.store.values_catalogue, self.store.executor
        calls = [(catalogue.count_query(), [tok.token(f, v)]) for f, v in ordered]
        pages = await ex.burst(calls, "catalogue count", anyio.CapacityLimiter(window))
        unheld = [e for e, rows in zip(ordered, pages, strict=True) if not rows or not rows[0][0]]
        if not unheld:
            return
        delete = f"DELETE FROM {catalogue.fq} WHERE field = ? AND value = ?"
        await ex.write_all(delete, [(f, value_json(v)) for f, v in unheld], window=window)
        self.store.forget_catalogued(unheld)


def _row(row: Sequence[Any], hoprag: bool, lexical: bool) -> _Stored:
    """A stored row read by `TableDeleter._stored`."""
    metadata = (json.loads(row[1]) if row[1] else {}) if hoprag else None
    if not lexical:
        return _Stored(row[0], metadata, {}, 0)
    return _Stored(row[0], metadata, dict(row[2] or {}), int(row[3] or 0))
