"""Opening and closing a CassandraStore: its session (given, or connected here and then owned),
the set-up of its table once per store (keyspace, table, indexes, declared fields, the lexical
index, the executor's prepared statements), guarded by a lock so that concurrent first calls
set up once, and closing. `CassandraStore` holds one `Opening`. In Astra mode
(`CassandraConfig.astra`) the session it opens reads and writes at the config's write
consistency, and the set-up's tables and indexes are counted against Astra's limits before
anything is created (`astra.check_store_budget`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hoprag.embeddings.base import embed_query
from hoprag.errors import HopragError, InvalidInputError, StoreError, invalid
from hoprag.stores.cassandra import astra, declare
from hoprag.stores.cassandra.connection import ConnectionOptions
from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.holders import open_holder_counts
from hoprag.stores.cassandra.schema import existing_dimension, open_lexical_index, setup_table
from hoprag.stores.cassandra.session import connect

if TYPE_CHECKING:
    from hoprag.stores.cassandra.config import CassandraConfig
    from hoprag.stores.cassandra.executor import Executor
    from hoprag.stores.cassandra.layouts import Layout

__all__ = ["Opening", "check_connection", "probe_dimension"]


def probe_dimension(embedding: Any) -> int:
    """The length of a probe text's embedding: the dimension of a new table."""
    try:
        return len(embed_query(embedding, "dimension probe"))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"could not embed a probe text to learn the dimension: {exc}", argument="embedding"
        ) from exc


def check_connection(connection: Any, session: Any) -> None:
    """`connection` is a `ConnectionOptions` or None, and None when a session is given."""
    if connection is not None and not isinstance(connection, ConnectionOptions):
        raise invalid("connection", connection, "a ConnectionOptions or None")
    if connection is not None and session is not None:
        raise invalid("connection", connection, "None when a session is given")


class Opening:
    """A store's session and set-up state. `setup` is blocking, idempotent and thread-safe;
    after `close` it raises `StoreError`."""

    def __init__(
        self,
        config: CassandraConfig,
        layout: Layout,
        executor: Executor,
        *,
        session: Any,
        contact_points: str | Sequence[str] | None,
        connection: ConnectionOptions | None,
    ) -> None:
        self.config = config
        self.layout = layout
        self.executor = executor
        self.session = session
        self.owns_session = session is None
        self.contact_points = contact_points
        self.connection = connection
        self.ready = False
        self.closed = False
        self._lock = threading.Lock()

    def setup(self, embedding: Any) -> int | None:
        """Connect, create the schema when missing, wait for the indexes; the table's
        dimension (`embedding` is probed for a new table's)."""
        with self._lock:
            if self.ready:
                return None
            if self.closed:
                raise StoreError("this CassandraStore is closed")
            try:
                dimension = self._open(embedding)
            except HopragError:
                raise
            except Exception as exc:
                raise translate(exc, f"setting up {self.layout.fq}") from exc
            self.executor.start(self.session)
            self.ready = True
            return dimension

    def _open(self, embedding: Any) -> int:
        config, layout = self.config, self.layout
        if self.session is None:
            level = config.write_consistency if config.astra else None
            self.session = connect(
                self.contact_points, connection=self.connection, consistency=level
            )
        self.session = self.executor.open(self.session, self.contact_points)
        existed = existing_dimension(self.session, layout, config.mode) is not None
        layout.lexical = config.lexical and not existed
        if config.astra and config.create_schema:
            astra.check_store_budget(self.session, layout, config, existed)
        if config.mode == "hoprag":  # before the set-up creates the table
            declare.refuse_foreign_catalogue(self.session, layout, config.field_kinds)
        dimension = setup_table(self.session, layout, config, lambda: probe_dimension(embedding))
        if config.mode == "hoprag":
            layout.fields = declare.open_fields(
                self.session,
                layout,
                config.field_kinds,
                created=not existed,
                wait=config.wait_indexes,
                create=config.create_schema,
            )
            layout.lexical = open_lexical_index(self.session, layout, wanted=config.lexical)
            layout.holders = open_holder_counts(self.session, layout, wanted=config.holder_counts)
        return dimension

    def close(self) -> None:
        """Shut down the session if this store opened it (a given session is left alone)."""
        self.closed = True
        self.ready = False
        if self.owns_session and self.session is not None:
            self.session.cluster.shutdown()
            self.session = None
