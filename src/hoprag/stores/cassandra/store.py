"""CassandraStore: the Store protocol over Apache Cassandra 5.0 (and Astra DB).

The store ties its rooms together: its options (`config.CassandraConfig`), its table
(`layouts.py` for the row format and statements, `schema.setup_table` for set-up), how
statements run (`executor.Executor`: bursts, retries, the shared in-flight bound, prepared
statements, error translation) and a run's prepared query (`query.CassandraQuery`, made by
`aprepare`), opening and closing (`opening.Opening`), writes (`writing.TableWriter`),
deletes (`deleting.TableDeleter`), declaring fields (`migration.Migration`) and resolving names
(`resolving.py`). This module is
the public surface over them.

Set-up (connecting, creating the keyspace/table/indexes when missing and waiting until the
indexes are queryable) is blocking driver work. A store built outside a running event loop does
it in `__init__` (errors surface at once); one built inside a running loop defers it to its
first async call, which runs it in a worker thread, so the loop is never blocked. `setup()` /
`await asetup()` force it.

Bulk load (`aadd`/`add`): validate everything, embed missing embeddings in one batch, then
prepared INSERTs with up to `max_in_flight` in flight.

Modes: `mode="hoprag"` (default) uses hoprag's table (cql/documents.cql); `mode="cassio"` reads
and writes tables that LangChain's `Cassandra` vector store (cassio's
`MetadataVectorCassandraTable`) wrote, see `from_langchain_table`. `from_astra` connects
through `cassio.init(token=..., database_id=...)`."""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, Unpack

import anyio
import anyio.to_thread

from hoprag.documents import Document
from hoprag.errors import invalid
from hoprag.filters import CompiledFilter, Filter, compile_filter
from hoprag.resolve import (
    Candidate,
    check_resolve,
)
from hoprag.stores.base import DEFAULT_MAX_CONCURRENCY, Store, check_delete
from hoprag.stores.cassandra.config import CassandraConfig, CassandraOptions, Mode
from hoprag.stores.cassandra.connection import ConnectionOptions
from hoprag.stores.cassandra.deleting import TableDeleter
from hoprag.stores.cassandra.executor import Executor
from hoprag.stores.cassandra.fields import (
    FieldSet,
)
from hoprag.stores.cassandra.layouts import Layout, layout_for
from hoprag.stores.cassandra.migration import Migration, check_declaration_args
from hoprag.stores.cassandra.opening import Opening, check_connection
from hoprag.stores.cassandra.pages import PageReader
from hoprag.stores.cassandra.pending import Ledger
from hoprag.stores.cassandra.query import CassandraQuery
from hoprag.stores.cassandra.resolving import resolve_declared
from hoprag.stores.cassandra.session import connect_astra
from hoprag.stores.cassandra.values import ValuesCatalogue
from hoprag.stores.cassandra.writing import TableWriter
from hoprag.sync import in_running_loop, run_sync
from hoprag.validation import check_documents, check_int

__all__ = ["CassandraConfig", "CassandraQuery", "CassandraStore"]


class CassandraStore(Store):
    """A hoprag Store over a Cassandra 5.0 / Astra table (see the module docstring).

    `embedding` (a callable `str -> vector` or a LangChain `Embeddings`) embeds documents added
    without an embedding and probes the dimension of a new table. The options are a
    `CassandraConfig`: pass `config=`, or `keyspace=`, `table=` and any other of its fields as
    keyword arguments. `session` is a driver Session to use (not closed by `close()`); without
    one a session is opened to `contact_points` (default `HOPRAG_CASSANDRA`, then 127.0.0.1)
    with `connection`'s credentials and TLS (a `ConnectionOptions`; default: from the
    environment, see `session.connect`) and closed by `close()`."""

    def __init__(
        self,
        embedding: Any,
        *,
        keyspace: str | None = None,
        table: str | None = None,
        session: Any = None,
        contact_points: str | Sequence[str] | None = None,
        connection: ConnectionOptions | None = None,
        config: CassandraConfig | None = None,
        **options: Unpack[CassandraOptions],
    ) -> None:
        check_connection(connection, session)
        self.embedding = embedding
        self.config = _config(config, keyspace, table, options)
        self.layout: Layout = layout_for(self.config)
        self.dimension: int | None = self.config.dimension
        """The embedding dimension (None until set-up when not configured)."""
        self._executor = Executor(self.config, self.layout.fq)
        self._opening = Opening(
            self.config,
            self.layout,
            self._executor,
            session=session,
            contact_points=contact_points,
            connection=connection,
        )
        self._values = ValuesCatalogue(self.config.keyspace, self.config.table)
        self._writer = TableWriter(self)
        self._deleter = TableDeleter(self)
        self.ledger = Ledger(self)
        """The lexical index's ledger of changing documents (`pending.py`)."""
        if not in_running_loop():
            self.setup()

    @classmethod
    def from_langchain_table(
        cls,
        embedding: Any,
        *,
        keyspace: str,
        table: str,
        list_fields: Iterable[str] = (),
        **kwargs: Any,
    ) -> CassandraStore:
        """A store over a table written by LangChain's `Cassandra` vector store (cassio's
        `MetadataVectorCassandraTable`), equivalent to `CassandraStore(..., mode="cassio")`;
        how its rows read and write is `layouts.CassioLayout`. Name the fields that
        langchain-graph-retriever's `ShreddingTransformer` shredded in `list_fields`, so that
        edges and filters on them query the shredded keys. Only metadata cassio indexed (in
        `metadata_s`) can be queried."""
        return cls(
            embedding,
            keyspace=keyspace,
            table=table,
            mode="cassio",
            list_fields=list_fields,
            **kwargs,
        )

    @classmethod
    def from_astra(
        cls,
        embedding: Any,
        *,
        token: str,
        database_id: str,
        keyspace: str,
        table: str,
        mode: Mode = "hoprag",
        **kwargs: Any,
    ) -> CassandraStore:
        """A store on Astra DB, over the session `cassio.init` makes (`session.connect_astra`,
        which says what it needs). The keyspace must exist; the table and its indexes are
        created when missing, and their readiness is not polled (Astra has no
        `system_views.sai_column_indexes`). The session is cassio's: `close()` leaves it."""
        session = connect_astra(token, database_id, keyspace)
        kwargs.setdefault("create_keyspace", False)
        kwargs.setdefault("wait_indexes", False)
        return cls(embedding, keyspace=keyspace, table=table, session=session, mode=mode, **kwargs)

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
        return self._opening.session

    @property
    def executor(self) -> Executor:
        """How this store's statements run: the shared in-flight bound, prepared statements."""
        return self._executor

    @property
    def values_catalogue(self) -> ValuesCatalogue:
        """The statements of the table's values catalogue (declared entity fields' values)."""
        return self._values

    @property
    def in_flight(self) -> int:
        """Queries of this store in flight now (all event loops and threads)."""
        return self._executor.in_flight

    # --- set-up and closing -----------------------------------------------------------------

    def setup(self) -> None:
        """Connect, create the schema when missing, wait for the indexes (blocking,
        idempotent, thread-safe: `opening.Opening`). Runs automatically; see the module
        docstring."""
        if not self._opening.ready:
            dimension = self._opening.setup(self.embedding)
            if dimension is not None:
                self.dimension = dimension

    async def asetup(self) -> None:
        """`setup()` in a worker thread (at once when already set up)."""
        if not self._opening.ready:
            await anyio.to_thread.run_sync(self.setup)

    def close(self) -> None:
        """Shut down the session if this store opened it (a given session is left alone)."""
        self._opening.close()

    async def aclose(self) -> None:
        """`close()` in a worker thread (cluster shutdown blocks)."""
        await anyio.to_thread.run_sync(self.close)

    def __enter__(self) -> CassandraStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> CassandraStore:
        await self.asetup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- reading ----------------------------------------------------------------------------

    async def aprepare(
        self,
        embedding: Sequence[float] | None,
        filter: Filter | CompiledFilter | None = None,
        *,
        include_embeddings: bool = True,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> CassandraQuery:
        """A run's `CassandraQuery`: `filter` compiled (and refused when it holds what the table
        cannot answer exactly: ranges, or anything but equality on a cassio table) and
        `embedding` checked against the table's dimension (set-up runs first if needed) and
        packed, once for the whole run.
        Its queries hold slots of a `max_concurrency` limiter (and of `max_in_flight`)."""
        compiled = compile_filter(filter)
        limit = check_int("max_concurrency", max_concurrency, minimum=1)
        await self.asetup()  # first: a range needs the declared fields, which set-up reads
        return CassandraQuery.checked(
            self._executor,
            self.layout,
            embedding,
            compiled,
            dimension=self.dimension,
            include_embeddings=bool(include_embeddings),
            max_concurrency=limit,
            overquery=self.config.ann_overquery,
            pool=self.config.candidate_pool,
        )

    # --- writing ----------------------------------------------------------------------------

    async def aadd(
        self,
        documents: Iterable[Document],
        *,
        progress: Callable[[int, int], None] | None = None,
        concurrency: int | None = None,
    ) -> None:
        """Insert or replace documents by id (an upsert: re-adding an id replaces its row,
        metadata tokens included). Documents without an embedding are embedded in one batch.
        Everything is validated (ids, content, JSON metadata, embeddings: dimension, NaN,
        zero) before the first write, so a rejected batch writes nothing. Up to `concurrency`
        (default `max_in_flight`) INSERTs are in flight; `progress(done, total)` is called as
        they complete. If a write fails mid-way the rows already written stay (re-running the
        same add is safe: upserts are idempotent)."""
        docs = check_documents(documents)
        window = self._window(concurrency)
        await self.asetup()
        await self._writer.add(docs, window, progress)

    async def adocuments(self) -> AsyncIterator[list[Document]]:
        """Every document of the table without its embedding, a page of `pages.PAGE_SIZE` at a
        time (a paged read of id, content and metadata, in the table's token order; hoprag
        tables only)."""
        self._hoprag_only("reading the documents page by page")
        await self.asetup()
        reader = PageReader(self.session, self._executor, self.layout.fq, "id, content, metadata")
        while (page := await reader.next_page()) is not None:
            yield [Document(i, c or "", json.loads(m) if m else {}) for i, c, m in page]

    async def aupdate_metadata(
        self,
        documents: Iterable[Document],
        *,
        progress: Callable[[int, int], None] | None = None,
        concurrency: int | None = None,
    ) -> None:
        """Replace the metadata of documents already in the table, keeping their content,
        embedding and lexical terms: the tokens, declared typed columns and values catalogue
        follow the new metadata (hoprag tables only). Every id is read first; when one is not
        in the table nothing is written (InvalidInputError naming it)."""
        self._hoprag_only("updating metadata")
        docs = check_documents(documents)
        window = self._window(concurrency)
        await self.asetup()
        await self._writer.update_metadata(docs, window, progress)

    async def adelete(
        self,
        ids: Sequence[str] | None = None,
        *,
        filter: Filter | CompiledFilter | None = None,
        concurrency: int | None = None,
    ) -> int:
        """Delete the documents with these `ids` (unknown ones skipped), or every document
        passing `filter`, and return how many were deleted (`Store.adelete`). Their rows go
        with their declared typed columns and tokens, and their lexical postings, counters
        and values-catalogue entries with them (`deleting.TableDeleter`: a delete interrupted
        and run again completes). Up to `concurrency` (default `max_in_flight`) writes are in
        flight."""
        request = check_delete(ids, filter)
        window = self._window(concurrency)
        await self.asetup()
        if request.ids is not None:
            return await self._deleter.delete_ids(request.ids, window)
        assert request.filter is not None
        return await self._deleter.delete_matching(request.filter, window)

    def delete(
        self,
        ids: Sequence[str] | None = None,
        *,
        filter: Filter | CompiledFilter | None = None,
        concurrency: int | None = None,
    ) -> int:
        """Sync `adelete` (works inside and outside a running event loop)."""
        call = functools.partial(self.adelete, ids, filter=filter, concurrency=concurrency)
        return run_sync(call)

    def forget_catalogued(self, entries: Iterable[tuple[str, str]]) -> None:
        """Let the writer forget that it wrote these values-catalogue entries (a delete
        removed them), so that its next add of one writes it again."""
        self._writer.catalogued.difference_update(entries)

    def _window(self, concurrency: int | None) -> int:
        """Writes in flight: `concurrency`, or `max_in_flight`."""
        if concurrency is None:
            return self.config.max_in_flight
        return check_int("concurrency", concurrency, minimum=1)

    def _hoprag_only(self, what: str) -> None:
        if self.config.mode != "hoprag":
            raise invalid("mode", self.config.mode, f"'hoprag' for {what}")

    def add(
        self,
        documents: Iterable[Document],
        *,
        progress: Callable[[int, int], None] | None = None,
        concurrency: int | None = None,
    ) -> None:
        """Sync `aadd` (works inside and outside a running event loop)."""
        docs = check_documents(documents)
        run_sync(functools.partial(self.aadd, docs, progress=progress, concurrency=concurrency))

    # --- entity resolution ------------------------------------------------------------------

    async def aresolve(
        self,
        text: str,
        fields: Sequence[str],
        *,
        limit: int = 10,
        filter: Filter | CompiledFilter | None = None,
    ) -> list[Candidate]:
        """Values of the declared entity `fields` that `text` may mean, best first, each with
        the number of documents carrying it (passing `filter` too, when given; the reads are
        `resolving.resolve_declared`'s). InvalidInputError for a field that is not a declared
        entity field (naming the declaration that fixes it), a bad text or a `limit` outside
        1..100."""
        request = check_resolve(text, fields, limit)
        compiled = compile_filter(filter)
        await self.asetup()
        return await resolve_declared(self, request, compiled)

    def resolve(
        self,
        text: str,
        fields: Sequence[str],
        *,
        limit: int = 10,
        filter: Filter | CompiledFilter | None = None,
    ) -> list[Candidate]:
        """Sync `aresolve`."""
        call = functools.partial(self.aresolve, text, fields, limit=limit, filter=filter)
        return run_sync(call)

    # --- declaring fields on an existing table ----------------------------------------------

    async def adeclare_fields(
        self,
        fields: Mapping[str, str],
        *,
        progress: Callable[[int], None] | None = None,
        concurrency: int | None = None,
        timeout: float = 300.0,  # noqa: ASYNC109 - the index wait's bound, not the call's
    ) -> dict[str, str]:
        """Declare `fields` (name -> 'number', 'date' or 'entity') on this store's table, which
        may hold documents (`migration.Migration`: columns, a paged backfill with up to
        `concurrency` writes in flight, default 64, `progress(rows_read)` after each page, then
        the indexes, waited for up to `timeout` seconds, StoreError beyond). Fields already
        declared and complete are left alone; running it again after an interruption completes
        the rest. Returns the table's whole declaration. Declare while no other process writes
        (its store, opened before, does not fill the new columns)."""
        decl, window = check_declaration_args(fields, concurrency, timeout)
        await self.asetup()
        return await Migration(self, decl, window, timeout).arun(progress)

    def declare_fields(
        self,
        fields: Mapping[str, str],
        *,
        progress: Callable[[int], None] | None = None,
        concurrency: int | None = None,
        timeout: float = 300.0,
    ) -> dict[str, str]:
        """Sync `adeclare_fields`. The schema steps run in the calling thread (so an
        interruption, Ctrl-C in `hoprag fields declare`, stops them there and then), the
        backfill's reads and writes in an event loop."""
        decl, window = check_declaration_args(fields, concurrency, timeout)
        self.setup()
        return Migration(self, decl, window, timeout).run(progress)

    def __repr__(self) -> str:
        return (
            f"CassandraStore(keyspace={self.keyspace!r}, table={self.table!r}, "
            f"mode={self.mode!r}, dimension={self.dimension})"
        )


def _config(
    config: CassandraConfig | None,
    keyspace: str | None,
    table: str | None,
    options: CassandraOptions,
) -> CassandraConfig:
    """`config`, or the config of the keyword options (one or the other)."""
    if config is None:
        return CassandraConfig(keyspace=keyspace, table=table, **options)
    if not isinstance(config, CassandraConfig):
        raise invalid("config", config, "a CassandraConfig or None")
    if keyspace is not None or table is not None or options:
        given = [name for name, v in (("keyspace", keyspace), ("table", table)) if v is not None]
        given += list(options)
        raise invalid("config", config, f"given alone, not with {', '.join(given)}")
    return config
