"""Declaring fields on a table that already holds documents: the migration behind
`CassandraStore.adeclare_fields` and `declare_fields`. Its steps, in order: read the stored
declaration and plan the fields still to declare (conflicts refused), record them `adding` and
add their columns (`declare.begin`; the store writes them from then on), backfill every row's
typed columns and the values catalogue from its metadata (a paged read, `pages.py`, and
bounded writes through the store's executor), then index, wait until queryable and record them
`ready` (`declare.finish`). The schema steps are blocking and run in a worker thread (the
async path) or the calling thread (the sync path); the backfill runs on the event loop."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from hoprag.errors import invalid
from hoprag.stores.cassandra import declare
from hoprag.stores.cassandra.fields import (
    DeclaredField,
    FieldCatalog,
    check_declaration,
    column_for,
    entity_entries,
    list_marker,
    typed_value,
)
from hoprag.stores.cassandra.pages import PageReader
from hoprag.sync import run_sync
from hoprag.validation import check_int

if TYPE_CHECKING:
    from hoprag.stores.cassandra.parts import TableParts


def check_declaration_args(
    fields: Mapping[str, str], concurrency: int | None, timeout: Any
) -> tuple[dict[str, str], int]:
    """The checked declaration and backfill window of `adeclare_fields`."""
    decl = check_declaration(fields)
    window = 64 if concurrency is None else check_int("concurrency", concurrency, minimum=1)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise invalid("timeout", timeout, "a number of seconds > 0")
    return decl, window


class Migration:
    """One declaration of `decl` on the set-up table `parts`, with `window` backfill writes in
    flight and `timeout` seconds for the indexes (see the module docstring)."""

    def __init__(
        self, parts: TableParts, decl: dict[str, str], window: int, timeout: float
    ) -> None:
        self.parts = parts
        self.decl = decl
        self.window = window
        self.timeout = timeout

    async def arun(self, progress: Callable[[int], None] | None) -> dict[str, str]:
        """Run the migration with the schema steps in a worker thread; the declaration."""
        catalog, stored, todo = await anyio.to_thread.run_sync(self._declare_plan, self.decl)
        if todo:
            await anyio.to_thread.run_sync(self._declare_begin, catalog, stored, todo)
            lists = await self._backfill(todo, self.window, progress)
            await anyio.to_thread.run_sync(self._declare_finish, catalog, todo, lists, self.timeout)
        return await anyio.to_thread.run_sync(self._declare_reload, catalog)

    def run(self, progress: Callable[[int], None] | None) -> dict[str, str]:
        """Run the migration with the schema steps in this thread (an interruption stops them
        there and then) and the backfill in an event loop; the declaration."""
        catalog, stored, todo = self._declare_plan(self.decl)
        if todo:
            self._declare_begin(catalog, stored, todo)
            lists = run_sync(self._backfill, todo, self.window, progress)
            self._declare_finish(catalog, todo, lists, self.timeout)
        return self._declare_reload(catalog)

    def _declare_plan(
        self, decl: dict[str, str]
    ) -> tuple[FieldCatalog, dict[str, DeclaredField], list[DeclaredField]]:
        """The stored declaration and the fields still to declare (conflicts refused)."""
        if self.parts.config.mode != "hoprag":
            raise invalid("fields", decl, "declared on a mode='hoprag' table")
        catalog = FieldCatalog(self.parts.session, self.parts.keyspace)
        stored = catalog.load(self.parts.table)
        declare.check_conflicts(self.parts.layout, stored, decl, "fields")
        declare.refuse_foreign_catalogue(self.parts.session, self.parts.layout, decl)
        todo = [
            DeclaredField(f, k, column_for(f, k), ready=False)
            for f, k in decl.items()
            if f not in stored or not stored[f].ready
        ]
        return catalog, stored, todo

    def _declare_begin(
        self, catalog: FieldCatalog, stored: dict[str, DeclaredField], todo: list[DeclaredField]
    ) -> None:
        """Record `todo` as adding, add the columns; this store writes them from now on."""
        declare.begin(self.parts.session, self.parts.layout, catalog, todo)
        self.parts.layout.fields = declare.writable(
            self.parts.session, self.parts.layout, {**stored, **{d.field: d for d in todo}}
        )

    def _declare_finish(
        self, catalog: FieldCatalog, todo: list[DeclaredField], lists: set[str], timeout: float
    ) -> None:
        """Record list-valued fields, index, wait, record `todo` ready."""
        for field in sorted(lists):
            catalog.mark_list_valued(self.parts.table, field)
        declare.finish(self.parts.session, self.parts.layout, catalog, todo, timeout=timeout)

    def _declare_reload(self, catalog: FieldCatalog) -> dict[str, str]:
        """Read the stored declaration back into the layout; its kinds."""
        self.parts.layout.fields = declare.writable(
            self.parts.session, self.parts.layout, catalog.load(self.parts.table)
        )
        return self.parts.layout.fields.kinds()

    async def _backfill(
        self,
        todo: list[DeclaredField],
        window: int,
        progress: Callable[[int], None] | None,
    ) -> set[str]:
        """Fill the typed columns and the values catalogue of `todo` from every row's
        metadata; returns the typed fields found holding a list."""
        typed = [d for d in todo if d.column is not None]
        entity = [d for d in todo if d.kind == "entity"]
        sets = ", ".join([f"{d.column} = ?" for d in typed] + ["tokens = tokens + ?"])
        update = f"UPDATE {self.parts.layout.fq} SET {sets} WHERE id = ?"
        reader = PageReader(self.parts.session, self.parts.executor, self.parts.layout.fq)
        lists: set[str] = set()
        seen: set[tuple[str, str]] = set()
        done = 0
        while (page := await reader.next_page()) is not None:
            updates: list[tuple[Any, ...]] = []
            entries: set[tuple[str, str]] = set()
            for doc_id, raw in page:
                metadata = json.loads(raw) if raw else {}
                row = typed_update(typed, metadata, lists)
                if row is not None:
                    updates.append((*row, doc_id))
                entries |= entity_entries(entity, metadata)
            new = entries - seen
            seen |= new
            if new:
                await self.parts.executor.write_all(
                    self.parts.values.upsert_query(),
                    self.parts.values.upsert_rows(new),
                    window=window,
                )
            if updates:
                await self.parts.executor.write_all(update, updates, window=window)
            done += len(page)
            if progress is not None:
                progress(done)
        return lists


def typed_update(
    typed: list[DeclaredField], metadata: Mapping[str, Any], lists: set[str]
) -> tuple[Any, ...] | None:
    """The typed columns' values and the list markers of one row's backfill UPDATE (UNSET
    where nothing is to be written), or None when the row has nothing to write; the typed
    fields found holding a list are added to `lists`."""
    from cassandra.query import UNSET_VALUE

    if not typed:
        return None
    values: list[Any] = []
    markers: set[str] = set()
    for d in typed:
        v, is_list = typed_value(d, metadata)
        if is_list:
            markers.add(list_marker(d.field))
            lists.add(d.field)
        values.append(UNSET_VALUE if v is None else v)
    if not markers and all(v is UNSET_VALUE for v in values):
        return None
    return (*values, markers or UNSET_VALUE)
