"""CassandraStore: the Store protocol over Apache Cassandra 5.0 (and Astra DB).

The store ties its rooms together: its options (`config.CassandraConfig`), its table
(`layouts.py` for the row format and statements, `schema.setup_table` for set-up), how
statements run (`executor.Executor`: bursts, retries, the shared in-flight bound, prepared
statements, error translation) and a run's prepared query (`query.CassandraQuery`, made by
`aprepare`), opening and closing (`opening.Opening`), writes (`writing.TableWriter`),
deletes (`deleting.TableDeleter`), holder counts (`holders.py`), declaring fields
(`migration.Migration`) and resolving names (`resolving.py`). These helpers take the store's
`parts.TableParts` (options, layout, executor, values catalogue, opening, dimension), never
the store. This module is the public surface over them.

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
through `cassio.init(token=..., database_id=...)` or a secure-connect bundle and a token, and
holds the store to Astra DB's rules (`astra.py`)."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, Unpack

import anyio.to_thread

from hoprag.documents import Document
from hoprag.edges import MetadataEdge
from hoprag.errors import invalid
from hoprag.filters import CompiledFilter, Filter, compile_filter
from hoprag.resolve import Candidate, check_resolve
from hoprag.stores.base import DEFAULT_MAX_CONCURRENCY, Store, check_delete, check_holder_edges
from hoprag.stores.cassandra.astra import astra_session, close_on_error
from hoprag.stores.cassandra.config import CassandraConfig, CassandraOptions, Mode
from hoprag.stores.cassandra.connection import ConnectionOptions
from hoprag.stores.cassandra.deleting import TableDeleter
from hoprag.stores.cassandra.holders import aread_counts, arecount_table
from hoprag.stores.cassandra.layouts import Layout
from hoprag.stores.cassandra.migration import Migration, check_declaration_args
from hoprag.stores.cassandra.opening import check_connection
from hoprag.stores.cassandra.pages import PageReader
from hoprag.stores.cassandra.parts import TableFacts, TableParts
from hoprag.stores.cassandra.pending import Ledger
from hoprag.stores.cassandra.query import CassandraQuery
from hoprag.stores.cassandra.resolving import resolve_declared
from hoprag.stores.cassandra.writing import TableWriter
from hoprag.sync import in_running_loop, run_sync
from hoprag.validation import check_documents, check_int

__all__ = ["CassandraConfig", "CassandraQuery", "CassandraStore"]


class CassandraStore(TableFacts, Store):
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
        self._parts = TableParts.build(
            self.config, session=session, contact_points=contact_points, connection=connection
        )
        self.layout: Layout = self._parts.layout
        self.ledger = Ledger(self._parts)
        """The lexical index's ledger of changing documents (`pending.py`)."""
        self._writer = TableWriter(self._parts, self.ledger)
        self._deleter = TableDeleter(self._parts, self.ledger)
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
        """`CassandraStore(..., mode="cassio")`: a store over a table LangChain's `Cassandra`
        vector store wrote (`layouts.CassioLayout`). `list_fields` names the fields that
        langchain-graph-retriever's `ShreddingTransformer` shredded, so that edges and filters
        on them query the shredded keys; only metadata cassio indexed can be queried."""
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
        keyspace: str,
        table: str,
        database_id: str | None = None,
        secure_connect_bundle: str | os.PathLike[str] | None = None,
        mode: Mode = "hoprag",
        **kwargs: Any,
    ) -> CassandraStore:
        """A store on Astra DB in Astra mode (`astra=True`: writes at LOCAL_QUORUM, the schema
        checked against Astra's table and index limits before anything is created;
        `astra.py`). With `database_id` the session is the one `cassio.init` makes
        (`session.connect_astra`; cassio's: `close()` leaves it); with `secure_connect_bundle`
        (a bundle zip) it is the driver's cloud connection with `token`
        (`session.connect_bundle`; the store's: `close()` shuts it down). One of the two is
        needed. The keyspace must exist; the table and its indexes are created when missing,
        and their readiness is not polled (Astra has no `system_views.sai_column_indexes`)
        unless `wait_indexes=True`."""
        session, owned = astra_session(token, keyspace, database_id, secure_connect_bundle)
        for option, value in (("create_keyspace", False), ("wait_indexes", False), ("astra", True)):
            kwargs.setdefault(option, value)
        with close_on_error(session if owned else None):
            store = cls(embedding, keyspace=keyspace, table=table, session=session, mode=mode,
                        **kwargs)  # fmt: skip
        store._parts.opening.owns_session = owned
        return store

    def setup(self) -> None:
        """Connect, create the schema when missing, wait for the indexes (blocking,
        idempotent, thread-safe; runs automatically, see the module docstring)."""
        self._parts.setup(self.embedding)

    async def asetup(self) -> None:
        """`setup()` in a worker thread (at once when already set up)."""
        await self._parts.asetup(self.embedding)

    def close(self) -> None:
        """Shut down the session if this store opened it (a given session is left alone)."""
        self._parts.opening.close()

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

    async def aprepare(
        self,
        embedding: Sequence[float] | None,
        filter: Filter | CompiledFilter | None = None,
        *,
        include_embeddings: bool = True,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> CassandraQuery:
        """A run's `CassandraQuery` (`TableParts.query`, after set-up): `filter` compiled and
        `embedding` checked once; its queries hold slots of a `max_concurrency` limiter (and
        of `max_in_flight`)."""
        compiled = compile_filter(filter)
        limit = check_int("max_concurrency", max_concurrency, minimum=1)
        await self.asetup()  # first: a range needs the declared fields, which set-up reads
        return self._parts.query(
            embedding, compiled, include_embeddings=bool(include_embeddings), max_concurrency=limit
        )

    async def aadd(
        self,
        documents: Iterable[Document],
        *,
        progress: Callable[[int, int], None] | None = None,
        concurrency: int | None = None,
    ) -> None:
        """Upsert documents by id (`writing.TableWriter`), those without an embedding embedded
        in one batch; all are checked before the first write, so a rejected batch writes
        nothing. Up to `concurrency` (default `max_in_flight`) INSERTs are in flight,
        `progress(done, total)` called as they complete; an add run again after a failure is
        safe."""
        docs = check_documents(documents)
        window = self._parts.window(concurrency)
        await self.asetup()
        await self._writer.add(docs, window, progress, self.embedding)

    async def adocuments(self) -> AsyncIterator[list[Document]]:
        """Every document without its embedding, a page of `pages.PAGE_SIZE` at a time, in the
        table's token order (hoprag tables only)."""
        self._parts.hoprag_only("reading the documents page by page")
        await self.asetup()
        reader = PageReader(self.session, self.executor, self.layout.fq, "id, content, metadata")
        while (page := await reader.next_page()) is not None:
            yield [Document(i, c or "", json.loads(m) if m else {}) for i, c, m in page]

    async def aupdate_metadata(
        self,
        documents: Iterable[Document],
        *,
        progress: Callable[[int, int], None] | None = None,
        concurrency: int | None = None,
    ) -> None:
        """Replace the metadata of documents in the table, keeping content, embedding and
        lexical terms (hoprag tables only); an id not in the table is refused (InvalidInputError
        naming it) before anything is written."""
        self._parts.hoprag_only("updating metadata")
        docs = check_documents(documents)
        window = self._parts.window(concurrency)
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
        passing `filter`, with all derived from them (`deleting.TableDeleter`); how many were
        deleted. Up to `concurrency` (default `max_in_flight`) writes are in flight."""
        request = check_delete(ids, filter)
        window = self._parts.window(concurrency)
        await self.asetup()
        if request.ids is not None:
            return await self._deleter.delete_ids(request.ids, window)
        assert request.filter is not None
        return await self._deleter.delete_matching(request.filter, window)

    async def aholders(self, edges: Sequence[MetadataEdge]) -> list[int | None]:
        """How many documents hold each edge's value, exact (`holders.py`: one round of key
        reads); None for each edge of a table made without `holder_counts=True`."""
        checked = check_holder_edges(edges)
        await self.asetup()
        return await aread_counts(self._parts, checked)

    async def arecount_holders(self, *, concurrency: int | None = None) -> int:
        """Recount the table's holders from its rows (`holders.arecount_table`: the repair of
        a failed counter update; nothing else may write meanwhile); counters changed."""
        window = self._parts.window(concurrency)
        await self.asetup()
        return await arecount_table(self._parts, window)

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

    async def aresolve(
        self,
        text: str,
        fields: Sequence[str],
        *,
        limit: int = 10,
        filter: Filter | CompiledFilter | None = None,
    ) -> list[Candidate]:
        """Values of the declared entity `fields` that `text` may mean, best first, with the
        count of documents carrying each (and passing `filter`): `resolving.resolve_declared`.
        InvalidInputError for an undeclared field, a bad text or a `limit` outside 1..100."""
        request = check_resolve(text, fields, limit)
        compiled = compile_filter(filter)
        await self.asetup()
        return await resolve_declared(self._parts, request, compiled)

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

    async def adeclare_fields(
        self,
        fields: Mapping[str, str],
        *,
        progress: Callable[[int], None] | None = None,
        concurrency: int | None = None,
        timeout: float = 300.0,  # noqa: ASYNC109 - the index wait's bound, not the call's
    ) -> dict[str, str]:
        """Declare `fields` (name -> 'number', 'date' or 'entity') on the table, which may hold
        documents (`migration.Migration`: backfill with `concurrency` writes in flight, default
        64, `progress(rows_read)` per page; indexes waited for up to `timeout` s). Run again, it
        completes an interrupted declaration; returns the table's whole declaration."""
        decl, window = check_declaration_args(fields, concurrency, timeout)
        await self.asetup()
        return await Migration(self._parts, decl, window, timeout).arun(progress)

    def declare_fields(
        self,
        fields: Mapping[str, str],
        *,
        progress: Callable[[int], None] | None = None,
        concurrency: int | None = None,
        timeout: float = 300.0,
    ) -> dict[str, str]:
        """Sync `adeclare_fields`: the schema steps run in the calling thread (so Ctrl-C stops
        them there and then), the backfill in an event loop."""
        decl, window = check_declaration_args(fields, concurrency, timeout)
        self.setup()
        return Migration(self._parts, decl, window, timeout).run(progress)

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
