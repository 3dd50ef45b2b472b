"""The lexical index's ledger of documents being written or deleted
(`hoprag_lexicon_pending`, one partition per table): what makes the postings and counters of a
lexical table converge to its rows after any interruption and a run again of the same write.

Postings and counters cannot be written in one transaction with a row (Cassandra mixes no
counter update with other writes), so each change of a document's text is recorded first: every
term that may have a posting of the document (its stored terms and those about to be written,
and those of any earlier attempt still recorded) and the length the counters count it with (-1:
not counted). An add records, writes the rows, writes the new postings and deletes the rest of
the recorded terms', moves the counters from the recorded length to the new one, and deletes
the record. A write stopped anywhere and written again finds the record and starts from it, so
stale postings go and the counters count the document once (`hoprag load` resumed after an
interruption, an add retried after a failed write). The one step a run again cannot repair is a
stop between the counters' update and the write of the record right after it.

A delete (`deleting.py`) takes the postings and the counters back first, records the document
as not counted, then deletes the row and the record: a delete run again finds the row, or the
record of an add that never completed, and does what is left."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from hoprag.stores.cassandra import lexicon
from hoprag.stores.cassandra.guards import GET_CHUNK

if TYPE_CHECKING:
    from hoprag.stores.cassandra.parts import TableParts

NOT_COUNTED = -1
"""The recorded length of a document the counters do not count."""


@dataclass(frozen=True, slots=True)
class Change:
    """One document's change of text: every term that may have a posting of it (`terms`),
    the length the counters count it with (`counted`, -1: not counted), and what it is to
    hold (`target`: terms with counts, None for a delete)."""

    id: str
    terms: frozenset[str]
    counted: int
    target: dict[str, int] | None

    @property
    def length(self) -> int:
        """The target's length in terms (0 for a delete)."""
        return sum(self.target.values()) if self.target else 0


class Ledger:
    """The ledger's statements for one store's table (names validated by its layout), in the
    table's partition or, for holder counts (`holders.py`), in `partition`."""

    def __init__(self, parts: TableParts, partition: str | None = None) -> None:
        self.parts = parts
        self.partition = parts.table if partition is None else partition
        self.fq = f"{parts.keyspace}.{lexicon.PENDING_TABLE}"
        self._ready = False

    async def ensure(self) -> None:
        """Create the ledger when missing (a keyspace set up before it existed), once."""
        if not self._ready:
            statement = lexicon.pending_table_statement(self.parts.keyspace)
            await anyio.to_thread.run_sync(self.parts.session.execute, statement)
            self._ready = True

    async def read(self, ids: Sequence[str], window: int) -> dict[str, tuple[set[str], int]]:
        """The recorded changes of `ids`: id -> (terms, counted)."""
        text = f"SELECT id, terms, counted FROM {self.fq} WHERE table_name = ? AND id IN ?"
        table = self.partition
        calls = [
            (text, [table, list(ids[i : i + GET_CHUNK])]) for i in range(0, len(ids), GET_CHUNK)
        ]
        pages = await self.parts.executor.burst(
            calls, "lexical ledger", anyio.CapacityLimiter(window)
        )
        return {r[0]: (set(r[1] or ()), int(r[2])) for rows in pages for r in rows}

    async def record(self, changes: Sequence[Change], window: int, *, counted: bool) -> None:
        """Record `changes` (their terms and the target's terms; with `counted`, as counted at
        the target's length, else at their `counted`)."""
        records = {
            c.id: (set(c.terms | set(c.target or ())), _counted(c) if counted else c.counted)
            for c in changes
        }
        await self.put(records, window)

    async def put(self, records: Mapping[str, tuple[set[str], int]], window: int) -> None:
        """Record each id's terms and counted value as given."""
        text = f"INSERT INTO {self.fq} (table_name, id, terms, counted) VALUES (?, ?, ?, ?)"
        rows = [(self.partition, i, terms, n) for i, (terms, n) in records.items()]
        await self.parts.executor.write_groups(text, _groups(rows), window=window)

    async def forget(self, ids: Iterable[str], window: int) -> None:
        """Delete the records of `ids`."""
        text = f"DELETE FROM {self.fq} WHERE table_name = ? AND id = ?"
        rows = [(self.partition, i) for i in ids]
        await self.parts.executor.write_groups(text, _groups(rows), window=window)

    async def clear(self) -> None:
        """Delete every record of the ledger's partition."""
        text = f"DELETE FROM {self.fq} WHERE table_name = ?"
        await self.parts.executor.execute(text, [self.partition], "clearing the ledger")

    async def changes(self, targets: dict[str, dict[str, int] | None], window: int) -> list[Change]:
        """The changes that give each id of `targets` its target terms (None: deleted), from
        the ledger's record of it, else from its stored row."""
        ids = list(targets)
        recorded = await self.read(ids, window)
        stored = await _stored(self.parts, [i for i in ids if i not in recorded], window)
        out: list[Change] = []
        for doc_id, target in targets.items():
            if doc_id in recorded:
                terms, counted = recorded[doc_id]
            elif doc_id in stored:
                held, length = stored[doc_id]
                terms, counted = set(held), length
            else:
                terms, counted = set(), NOT_COUNTED
            out.append(Change(doc_id, frozenset(terms), counted, target))
        return out

    async def settle(self, changes: Sequence[Change], window: int) -> None:
        """Write the targets' postings, delete the other recorded terms' postings, and move
        the counters from each change's counted length to its target's."""
        ex, ks, table = self.parts.executor, self.parts.keyspace, self.parts.table
        inserts: list[tuple[Any, ...]] = []
        deletes: list[tuple[Any, ...]] = []
        documents = length = 0
        for c in changes:
            target = c.target or {}
            inserts += [(table, term, c.id, tf, c.length) for term, tf in target.items()]
            deletes += [(table, term, c.id) for term in c.terms if term not in target]
            documents += (c.target is not None) - (c.counted != NOT_COUNTED)
            length += c.length - max(c.counted, 0)
        await ex.write_groups(lexicon.postings_insert(ks), lexicon.by_term(inserts), window=window)
        await ex.write_groups(lexicon.postings_delete(ks), lexicon.by_term(deletes), window=window)
        if documents or length:
            await ex.execute(
                lexicon.stats_update(ks), [documents, length, table], "lexical statistics"
            )


def _counted(change: Change) -> int:
    """The length the counters count `change`'s document with once settled."""
    return change.length if change.target is not None else NOT_COUNTED


def _groups(rows: list[tuple[Any, ...]]) -> list[list[tuple[Any, ...]]]:
    """Ledger rows in batches of one partition."""
    step = lexicon.BATCH_ROWS
    return [rows[i : i + step] for i in range(0, len(rows), step)]


async def _stored(
    parts: TableParts, ids: Sequence[str], window: int
) -> dict[str, tuple[dict[str, int], int]]:
    """The stored terms and lengths of the rows of `ids` that exist."""
    if not ids:
        return {}
    text = lexicon.stored_query(parts.layout.fq)
    calls = [(text, [list(ids[i : i + GET_CHUNK])]) for i in range(0, len(ids), GET_CHUNK)]
    pages = await parts.executor.burst(calls, "lexical terms", anyio.CapacityLimiter(window))
    return {r[0]: (dict(r[1] or {}), int(r[2] or 0)) for rows in pages for r in rows}
