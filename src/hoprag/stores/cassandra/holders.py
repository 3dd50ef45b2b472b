"""Holder counts of a CassandraStore table (`holder_counts=True`, `aholders`): per metadata
value, how many documents hold it, exact, kept by every write, read by key.

What is counted is what a metadata edge or an equality filter reads: every token of a row's
`tokens` set (`tokens.py`: each scalar value of every field, lists exploded, plus the whole
list and every nested dict), so the holders of `MetadataEdge(field, value)` are the rows that
`tokens CONTAINS token(field, value)` finds. Declared fields' list markers are not counted.

* `hoprag_holders`, a counter table of the keyspace: one partition per (table key, token) with
  its `holders`. The table key is `<table>#<the table's id>` (`system_schema.tables.id`, new
  whenever a table is created), so a table dropped and made again under its name starts from
  no counts. The empty token counts the table's documents; its row also marks a table whose
  counts are kept (written with +0 when the table is empty).
* The ledger of changing documents is the lexical index's (`pending.py`,
  `hoprag_lexicon_pending`), in a partition of its own named by the table key: before a write
  or delete changes a row's tokens it records the tokens the counters count the document in;
  after the rows it moves each counter by the difference and deletes the record. A write or
  delete stopped anywhere and run again starts from the record, so it counts the document
  once. What no record can repair: a counter update that failed or timed out (Cassandra may
  have applied it; counters are not idempotent, so it is not retried), and a stop between the
  counter updates and the ledger write after them. The counts of the values involved then
  stay off by that batch's documents (writing them again does not repair it); `recount`
  (`CassandraStore.arecount_holders`), run while nothing else writes the table, sets every
  counter to a recount of the rows.

A read is one burst of single-partition reads, one per distinct token: one round."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from hoprag.edges import MetadataEdge
from hoprag.errors import InvalidInputError
from hoprag.stores.cassandra import lexicon
from hoprag.stores.cassandra import tokens as tok
from hoprag.stores.cassandra.counting import refuse_rows_written_without
from hoprag.stores.cassandra.guards import GET_CHUNK
from hoprag.stores.cassandra.pages import PageReader
from hoprag.stores.cassandra.pending import Ledger

if TYPE_CHECKING:
    from hoprag.stores.cassandra.parts import TableParts

HOLDERS_TABLE = "hoprag_holders"
ALL = ""
"""The token every document holds: its counter is the table's number of documents."""
READ_CONCURRENCY = 64
"""Counter reads one `aholders` call has in flight at most."""
COUNTED = 1
"""The ledger's `counted` of a holder record (its terms are the counted tokens)."""
COUNTER_BATCH = 10
"""Counter updates per counter batch: each is a partition of its own, and Cassandra warns of
an unlogged batch over 10 partitions (`unlogged_batch_across_partitions_warn_threshold`)."""


def table_statement(keyspace: str) -> str:
    """CREATE of the keyspace's counter table (a partition per table key and token)."""
    return (
        f"CREATE TABLE IF NOT EXISTS {keyspace}.{HOLDERS_TABLE} (table_key text, value_token text, "
        "holders counter, PRIMARY KEY ((table_key, value_token)))"
    )


def keyspace_statements(keyspace: str) -> list[str]:
    """The keyspace's tables that holder counts need, when missing: the counters and the
    ledger (shared with the lexical index)."""
    return [table_statement(keyspace), lexicon.pending_table_statement(keyspace)]


def counted_tokens(tokens: Iterable[str] | None) -> set[str]:
    """The tokens of a row's `tokens` set that are counted (a declared field's list marker,
    the only token without '=' and '#', is not), plus `ALL`."""
    return {t for t in tokens or () if "=" in t or "#" in t} | {ALL}


def target_tokens(metadata: Mapping[str, Any]) -> frozenset[str]:
    """The tokens a document with `metadata` is to be counted in."""
    return frozenset(counted_tokens(tok.metadata_tokens(metadata)))


# -- set-up ----------------------------------------------------------------------------------


def _first(rows: Any) -> Any:
    """The first row of a result (None when empty)."""
    return next(iter(rows), None)


def _table_key(session: Any, keyspace: str, table: str) -> str | None:
    """`<table>#<id>`, or None when there is no such table."""
    row = _first(
        session.execute(
            "SELECT id FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
            (keyspace, table),
        )
    )
    return None if row is None else f"{table}#{row[0]}"


def _counter_table_exists(session: Any, keyspace: str) -> bool:
    """Whether the keyspace has the counter table (asked of `system_schema`)."""
    rows = session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
        (keyspace, HOLDERS_TABLE),
    )
    return _first(rows) is not None


def _marked(session: Any, keyspace: str, key: str) -> bool:
    """Whether the counter table holds the table's `ALL` row."""
    rows = session.execute(
        f"SELECT holders FROM {keyspace}.{HOLDERS_TABLE} WHERE table_key = %s AND value_token = %s",
        (key, ALL),
    )
    return _first(rows) is not None


def open_holder_counts(session: Any, layout: Any, *, wanted: bool) -> str | None:
    """The table key when the table keeps holder counts, else None: a table marked as keeping
    them is counted whatever the store asked; with `wanted` an unmarked table gets them when
    empty and is refused otherwise (its rows would be counted nowhere). Blocking."""
    from hoprag.stores.cassandra.schema import execute_ddl_all

    exists = _counter_table_exists(session, layout.keyspace)
    if not (exists or wanted):
        return None
    key = _table_key(session, layout.keyspace, layout.table)
    if key is None:
        return None
    if exists and _marked(session, layout.keyspace, key):
        return key
    if not wanted:
        return None
    refuse_rows_written_without(session, layout.fq, feature="holder counts",
                                unseen_by="no count would include",
                                option="holder_counts")  # fmt: skip
    execute_ddl_all(session, keyspace_statements(layout.keyspace))
    session.execute(
        f"UPDATE {layout.keyspace}.{HOLDERS_TABLE} SET holders = holders + 0 "
        "WHERE table_key = %s AND value_token = %s",
        (key, ALL),
    )
    return key


def counts_of(parts: TableParts) -> HolderCounts | None:
    """The holder counts of the set-up table `parts`, None when it keeps none."""
    key = parts.layout.holders
    return None if key is None else HolderCounts(parts, key)


async def aread_counts(parts: TableParts, edges: Sequence[MetadataEdge]) -> list[int | None]:
    """Each edge's holders from the set-up table `parts`'s counts; None for every edge of a
    table that keeps none."""
    holders = counts_of(parts)
    if holders is None or not edges:
        return [None] * len(edges)
    return [*await holders.read(edges)]


async def arecount_table(parts: TableParts, window: int) -> int:
    """Recount the set-up table `parts`'s holders from its rows (`HolderCounts.recount`);
    InvalidInputError naming `holder_counts` when the table keeps no counts."""
    holders = counts_of(parts)
    if holders is None:
        raise InvalidInputError(
            f"{parts.layout.fq} keeps no holder counts to recount: make the table with "
            "holder_counts=True",
            argument="holder_counts",
            value=False,
            allowed="a table made with holder_counts=True",
        )
    return await holders.recount(window)


@dataclass(frozen=True, slots=True)
class HeldChange:
    """One document's change of counted tokens: those the counters count it in now
    (`counted`) and those it is to be counted in (`target`, empty for a delete)."""

    id: str
    counted: frozenset[str]
    target: frozenset[str]


class HolderCounts:
    """The counters and ledger records of the table `parts` with table key `key` (see the
    module docstring); every value is a bound parameter."""

    def __init__(self, parts: TableParts, key: str) -> None:
        self.parts = parts
        self.key = key
        self.fq = f"{parts.keyspace}.{HOLDERS_TABLE}"
        self.ledger = Ledger(parts, partition=key)

    async def changes(self, targets: Mapping[str, frozenset[str]], window: int) -> list[HeldChange]:
        """The change of each id of `targets`, from the ledger's record of it, else from its
        stored row (nothing counted without either)."""
        ids = list(targets)
        recorded = await self.ledger.read(ids, window)
        stored = await self._stored([i for i in ids if i not in recorded], window)
        out: list[HeldChange] = []
        for doc_id, target in targets.items():
            held = recorded[doc_id][0] if doc_id in recorded else stored.get(doc_id, set())
            out.append(HeldChange(doc_id, frozenset(held), target))
        return out

    async def record(self, changes: Sequence[HeldChange], window: int, *, settled: bool) -> None:
        """Record what the counters count each document in: its `counted` tokens, or with
        `settled` its target's."""
        await self.ledger.put(
            {c.id: (set(c.target if settled else c.counted), COUNTED) for c in changes}, window
        )

    async def forget(self, changes: Sequence[HeldChange], window: int) -> None:
        """Delete the records of `changes`."""
        await self.ledger.forget([c.id for c in changes], window)

    async def settle(self, changes: Sequence[HeldChange], window: int) -> None:
        """Move each counter by the changes' net difference (counters untouched by it are not
        written)."""
        deltas: Counter[str] = Counter()
        for c in changes:
            deltas.update(c.target - c.counted)
            deltas.subtract(c.counted - c.target)
        await self._apply({t: n for t, n in deltas.items() if n}, window)

    async def _apply(self, deltas: Mapping[str, int], window: int) -> None:
        """Add each delta to its token's counter: counter batches of `COUNTER_BATCH` updates,
        `window` batches in flight, none retried (`Executor.write_groups`)."""
        text = f"UPDATE {self.fq} SET holders = holders + ? WHERE table_key = ? AND value_token = ?"
        rows = [(delta, self.key, token) for token, delta in sorted(deltas.items())]
        groups = [rows[i : i + COUNTER_BATCH] for i in range(0, len(rows), COUNTER_BATCH)]
        await self.parts.executor.write_groups(text, groups, window=window, counters=True)

    async def _stored(self, ids: Sequence[str], window: int) -> dict[str, set[str]]:
        """The counted tokens of the stored rows of `ids` that exist."""
        if not ids:
            return {}
        text = f"SELECT id, tokens FROM {self.parts.layout.fq} WHERE id IN ?"
        calls = [(text, [list(ids[i : i + GET_CHUNK])]) for i in range(0, len(ids), GET_CHUNK)]
        pages = await self.parts.executor.burst(
            calls, "holder tokens", anyio.CapacityLimiter(window)
        )
        return {r[0]: counted_tokens(r[1]) for rows in pages for r in rows}

    # -- reads -------------------------------------------------------------------------------

    async def read(self, edges: Sequence[MetadataEdge]) -> list[int]:
        """Each edge's holders, one single-partition read per distinct token, in one burst."""
        keys = [tok.token(e.incoming_field, e.value) for e in edges]
        found = await self.read_tokens(keys)
        return [found[k] for k in keys]

    async def read_tokens(self, tokens: Iterable[str]) -> dict[str, int]:
        """The holders of each token (`ALL`: the table's documents), one single-partition read
        per distinct token, in one burst."""
        distinct = sorted(set(tokens))
        text = f"SELECT holders FROM {self.fq} WHERE table_key = ? AND value_token = ?"
        calls = [(text, [self.key, t]) for t in distinct]
        pages = await self.parts.executor.burst(
            calls, "holder counts", anyio.CapacityLimiter(READ_CONCURRENCY)
        )
        return {t: int(rows[0][0]) if rows else 0 for t, rows in zip(distinct, pages, strict=True)}

    # -- repair ------------------------------------------------------------------------------

    async def recount(self, window: int) -> int:
        """Set every counter of the table to a recount of its rows and clear its ledger
        records; how many counters changed. Reads the table and the keyspace's counter table
        page by page; right only while nothing else writes the table."""
        want = await self._recounted()
        have = await self._counters()
        deltas = {t: want.get(t, 0) - have.get(t, 0) for t in want.keys() | have.keys()}
        changed = {t: n for t, n in deltas.items() if n}
        await self._apply(changed, window)
        await self.ledger.clear()
        return len(changed)

    async def _recounted(self) -> Counter[str]:
        """Each counted token's holders among the table's rows."""
        parts = self.parts
        reader = PageReader(parts.session, parts.executor, parts.layout.fq, "tokens")
        counts: Counter[str] = Counter()
        while (page := await reader.next_page()) is not None:
            for (tokens,) in page:
                counts.update(counted_tokens(tokens))
        return counts

    async def _counters(self) -> dict[str, int]:
        """The table's counters as they are (the keyspace's counter table read page by page,
        the other tables' rows skipped)."""
        parts = self.parts
        reader = PageReader(
            parts.session, parts.executor, self.fq, "table_key, value_token, holders"
        )
        out: dict[str, int] = {}
        while (page := await reader.next_page()) is not None:
            out |= {t: int(n or 0) for key, t, n in page if key == self.key}
        return out
