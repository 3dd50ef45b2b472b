"""`TableParts`: what the helpers of one `CassandraStore` share of it, and nothing more.

The write path (`writing.py`), the delete path (`deleting.py`), the lexical ledger
(`pending.py`), the field migration (`migration.py`) and entity resolution (`resolving.py`)
take these parts rather than the store: its options, its table's layout, its executor, its
values catalogue, its opening (which holds the session and the set-up state), the table's
dimension (known after set-up) and the values-catalogue entries written so far. The store
builds one `TableParts` and delegates to the helpers with it. `TableFacts` is the store's
read-only view of its parts (keyspace, table, session, executor...), which it derives from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from hoprag.errors import invalid
from hoprag.filters import CompiledFilter
from hoprag.stores.base import DEFAULT_MAX_CONCURRENCY
from hoprag.stores.cassandra.config import CassandraConfig
from hoprag.stores.cassandra.connection import ConnectionOptions
from hoprag.stores.cassandra.executor import Executor
from hoprag.stores.cassandra.fields import FieldSet
from hoprag.stores.cassandra.holders import counts_of
from hoprag.stores.cassandra.layouts import Layout, layout_for
from hoprag.stores.cassandra.opening import Opening
from hoprag.stores.cassandra.plans import Planner
from hoprag.stores.cassandra.query import CassandraQuery
from hoprag.stores.cassandra.values import ValuesCatalogue
from hoprag.validation import check_int

__all__ = ["TableFacts", "TableParts"]


@dataclass(eq=False)
class TableParts:
    """The parts of one store's table (see the module docstring). `dimension` is None until
    set-up has read or probed it; `catalogued` holds the values-catalogue entries the store has
    written (a delete that removes entries forgets them, so an add writes them again)."""

    config: CassandraConfig
    layout: Layout
    executor: Executor
    values: ValuesCatalogue
    opening: Opening
    dimension: int | None
    catalogued: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def build(
        cls,
        config: CassandraConfig,
        *,
        session: Any,
        contact_points: str | Sequence[str] | None,
        connection: ConnectionOptions | None,
    ) -> TableParts:
        """The parts of a store with `config` over `session` (or one opened to
        `contact_points` with `connection` at set-up); nothing connects here."""
        layout = layout_for(config)
        executor = Executor(config, layout.fq)
        opening = Opening(
            config,
            layout,
            executor,
            session=session,
            contact_points=contact_points,
            connection=connection,
        )
        values = ValuesCatalogue(config.keyspace, config.table)
        return cls(config, layout, executor, values, opening, config.dimension)

    @property
    def session(self) -> Any:
        """The driver session (None until set-up has connected, when none was given)."""
        return self.opening.session

    @property
    def keyspace(self) -> str:
        """The keyspace (lower case)."""
        return self.config.keyspace

    @property
    def table(self) -> str:
        """The table (lower case)."""
        return self.config.table

    def setup(self, embedding: Any) -> None:
        """Connect, create the schema when missing, wait for the indexes and learn the
        dimension, probing `embedding` for a new table's (blocking, idempotent, thread-safe:
        `opening.Opening`)."""
        if not self.opening.ready:
            dimension = self.opening.setup(embedding)
            if dimension is not None:
                self.dimension = dimension

    async def asetup(self, embedding: Any) -> None:
        """`setup(embedding)` in a worker thread (at once when already set up)."""
        if not self.opening.ready:
            await anyio.to_thread.run_sync(self.setup, embedding)

    def query(
        self,
        embedding: Sequence[float] | None,
        compiled: CompiledFilter,
        *,
        include_embeddings: bool,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> CassandraQuery:
        """A run's `CassandraQuery` on the set-up table (`CassandraQuery.checked`: the filter
        refused when the table cannot answer it exactly, the embedding checked and packed)."""
        return CassandraQuery.checked(
            self.executor,
            self.layout,
            embedding,
            compiled,
            dimension=self.dimension,
            include_embeddings=include_embeddings,
            max_concurrency=max_concurrency,
            overquery=self.config.ann_overquery,
            pool=self.config.candidate_pool,
            planner=self.planner(),
        )

    def planner(self) -> Planner | None:
        """A run's edge planner (`plans.py`): on a table that keeps holder counts, unless the
        config's `hub_holders` and `read_holders` are both 0."""
        counts = counts_of(self)
        hub, few = self.config.hub_holders, self.config.read_holders
        if counts is None or hub == few == 0:
            return None
        return Planner(counts.read_tokens, hub, few)

    def window(self, concurrency: int | None) -> int:
        """Writes in flight: `concurrency` (checked, >= 1), or the config's `max_in_flight`."""
        if concurrency is None:
            return self.config.max_in_flight
        return check_int("concurrency", concurrency, minimum=1)

    def hoprag_only(self, what: str) -> None:
        """InvalidInputError naming `mode` unless the table is a mode='hoprag' table."""
        if self.config.mode != "hoprag":
            raise invalid("mode", self.config.mode, f"'hoprag' for {what}")


class TableFacts:
    """What a store tells of its table, read from its `_parts` (`CassandraStore` derives
    from it): names, mode, declared fields, dimension, session, executor, in-flight count."""

    config: CassandraConfig
    layout: Layout
    _parts: TableParts

    @property
    def dimension(self) -> int | None:
        """The embedding dimension (None until set-up when not configured)."""
        return self._parts.dimension

    @property
    def keyspace(self) -> str:
        """The keyspace (lower case)."""
        return self.config.keyspace

    @property
    def table(self) -> str:
        """The table (lower case)."""
        return self.config.table

    @property
    def mode(self) -> str:
        """ "hoprag" or "cassio" (the table's layout)."""
        return self.config.mode

    @property
    def fields(self) -> FieldSet:
        """The table's declared fields (known after set-up), by name: kind, typed column,
        whether the declaration completed and whether the field ever held a list."""
        return self.layout.fields

    @property
    def session(self) -> Any:
        """The driver session (None until set-up has connected, when none was given)."""
        return self._parts.session

    @property
    def executor(self) -> Executor:
        """How this store's statements run: the shared in-flight bound, prepared statements."""
        return self._parts.executor

    @property
    def values_catalogue(self) -> ValuesCatalogue:
        """The statements of the table's values catalogue (declared entity fields' values)."""
        return self._parts.values

    @property
    def in_flight(self) -> int:
        """Queries of this store in flight now (all event loops and threads)."""
        return self._parts.executor.in_flight
