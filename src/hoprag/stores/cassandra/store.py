"""CassandraStore: the Store protocol over Apache Cassandra 5.0 (and Astra DB).

The store ties its rooms together: its options (`config.CassandraConfig`), its table
(`layouts.py` for the row format and statements, `schema.setup_table` for set-up), how
statements run (`executor.Executor`: bursts, retries, the shared in-flight bound, prepared
statements, error translation) and a run's prepared query (`query.CassandraQuery`, made by
`aprepare`). This module holds set-up, `aprepare`, writes and closing.

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
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, Unpack

import anyio
import anyio.to_thread

from hoprag.documents import Document
from hoprag.embeddings.base import aembed_documents, embed_query
from hoprag.errors import HopragError, InvalidInputError, StoreError, invalid
from hoprag.filters import Filter, compile_filter
from hoprag.resolve import (
    MAX_CANDIDATES,
    Candidate,
    Match,
    check_resolve,
    rank,
    too_many,
)
from hoprag.stores.base import DEFAULT_MAX_CONCURRENCY, Store
from hoprag.stores.cassandra import declare, lexicon
from hoprag.stores.cassandra import tokens as tok
from hoprag.stores.cassandra.config import CassandraConfig, CassandraOptions, Mode
from hoprag.stores.cassandra.connection import ConnectionOptions
from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.executor import Executor
from hoprag.stores.cassandra.fields import (
    DeclaredField,
    FieldCatalog,
    FieldSet,
    check_declaration,
    column_for,
    declare_command,
    entity_entries,
    list_marker,
    typed_value,
)
from hoprag.stores.cassandra.layouts import Layout, layout_for
from hoprag.stores.cassandra.query import GET_CHUNK, CassandraQuery
from hoprag.stores.cassandra.schema import (
    execute_ddl_all,
    existing_dimension,
    setup_table,
)
from hoprag.stores.cassandra.session import connect, connect_astra
from hoprag.stores.cassandra.values import ValuesCatalogue
from hoprag.stores.cassandra.vectors import PackedVector
from hoprag.sync import in_running_loop, run_sync
from hoprag.validation import check_documents, check_int, check_vector

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
        if connection is not None and not isinstance(connection, ConnectionOptions):
            raise invalid("connection", connection, "a ConnectionOptions or None")
        if connection is not None and session is not None:
            raise invalid("connection", connection, "None when a session is given")
        self.embedding = embedding
        self.config = _config(config, keyspace, table, options)
        self.layout: Layout = layout_for(self.config)
        self.dimension: int | None = self.config.dimension
        """The embedding dimension (None until set-up when not configured)."""
        self._executor = Executor(self.config, self.layout.fq)
        self._session = session
        self._owns_session = session is None
        self._contact_points = contact_points
        self._connection = connection
        self._ready = False
        self._closed = False
        self._setup_lock = threading.Lock()
        self._values = ValuesCatalogue(self.config.keyspace, self.config.table)
        self._catalogued: set[tuple[str, str]] = set()
        """(field, value) entries this store has written to the values catalogue."""
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
        `MetadataVectorCassandraTable`: `row_id, body_blob, vector, attributes_blob,
        metadata_s`), equivalent to `CassandraStore(..., mode="cassio")`.

        Metadata comes back as LangChain reads it: `attributes_blob` JSON merged with
        `metadata_s`, whose values cassio stored as strings (an int 1 as "1.0", True as
        "true"). Lists shredded by langchain-graph-retriever's `ShreddingTransformer`
        (`field→json` keys with value "§" and a `__shredded_keys` entry) are restored into
        lists, as `ShreddingTransformer.restore_documents` does. Name those fields in
        `list_fields` so that edges and filters on them query the shredded keys
        (`metadata_s['field→"v"'] = '§'`); other fields query `metadata_s[field] = cassio's
        string of the value`. Only metadata cassio indexed (in `metadata_s`) can be queried.
        `aadd` writes rows in the same format, shredding every list."""
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
        """A store on Astra DB, over the session `cassio.init(token=token,
        database_id=database_id, keyspace=keyspace)` makes (`session.connect_astra`). The
        keyspace must already exist (Astra keyspaces are created in its UI or DevOps API); the
        table and its indexes are created when missing. Index readiness is not polled (Astra
        has no `system_views.sai_column_indexes`). The session belongs to cassio and is not
        closed by `close()`."""
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
        return self._session

    @property
    def executor(self) -> Executor:
        """How this store's statements run: the shared in-flight bound, prepared statements."""
        return self._executor

    @property
    def in_flight(self) -> int:
        """Queries of this store in flight now (all event loops and threads)."""
        return self._executor.in_flight

    # --- set-up and closing -----------------------------------------------------------------

    def setup(self) -> None:
        """Connect, create the schema when missing, wait for the indexes (blocking,
        idempotent, thread-safe). Runs automatically; see the module docstring."""
        if self._ready:
            return
        with self._setup_lock:
            if self._ready:
                return
            if self._closed:
                raise StoreError("this CassandraStore is closed")
            try:
                if self._session is None:
                    self._session = connect(self._contact_points, connection=self._connection)
                self._session = self._executor.open(self._session, self._contact_points)
                existed = (
                    existing_dimension(self._session, self.layout, self.config.mode) is not None
                )
                self.layout.lexical = self.config.lexical and not existed
                self.dimension = setup_table(self._session, self.layout, self.config, self._probe)
                if self.config.mode == "hoprag":
                    self.layout.fields = declare.open_fields(
                        self._session,
                        self.layout,
                        self.config.field_kinds,
                        created=not existed,
                        wait=self.config.wait_indexes,
                    )
                    self._open_lexicon()
            except HopragError:
                raise
            except Exception as exc:
                raise translate(exc, f"setting up {self.layout.fq}") from exc
            self._executor.start(self._session)
            self._ready = True

    def _open_lexicon(self) -> None:
        """Whether the table keeps the lexical index: one that has its column is written with
        it whatever this store asked; with `lexical=True` an existing table without it gets it
        when empty and is refused otherwise (`lexicon.refuse_unindexed_rows`). Blocking."""
        session, layout = self._session, self.layout
        column, postings = lexicon.present(session, self.keyspace, self.table)
        if not column and not self.config.lexical:
            layout.lexical = False
            return
        if not (column and postings):  # also finishes a set-up that stopped half-way
            lexicon.refuse_unindexed_rows(session, layout.fq)
            execute_ddl_all(session, lexicon.add_statements(self.keyspace, self.table, column))
        layout.lexical = True

    async def asetup(self) -> None:
        """`setup()` in a worker thread (at once when already set up)."""
        if not self._ready:
            await anyio.to_thread.run_sync(self.setup)

    def _probe(self) -> int:
        """The length of a probe text's embedding: the dimension of a new table."""
        try:
            return len(embed_query(self.embedding, "dimension probe"))
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(
                f"could not embed a probe text to learn the dimension: {exc}", argument="embedding"
            ) from exc

    def close(self) -> None:
        """Shut down the session if this store opened it (a given session is left alone)."""
        self._closed = True
        self._ready = False
        if self._owns_session and self._session is not None:
            self._session.cluster.shutdown()
            self._session = None

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
        filter: Filter | None = None,
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
        await self.asetup()
        # After set-up: a range needs the table's declared fields, which set-up reads.
        self.layout.check_filter(compiled)
        vector = None
        if embedding is not None:
            arr = check_vector(embedding, dimension=self.dimension, what="query embedding")
            vector = PackedVector(arr)
        return CassandraQuery(
            self._executor,
            self.layout,
            vector,
            compiled,
            bool(include_embeddings),
            anyio.CapacityLimiter(limit),
            overquery=self.config.ann_overquery,
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
        window = self.config.max_in_flight
        if concurrency is not None:
            window = check_int("concurrency", concurrency, minimum=1)
        await self.asetup()
        rows = await self._insert_rows(docs)
        await self._catalogue(docs, window)
        lexical = await self._lexicon_changes(docs, window) if self.layout.lexical else None
        await self._executor.write_all(
            self.layout.insert_query(), rows, window=window, progress=progress
        )
        if lexical is not None:  # after the rows: a failed write leaves the index as it was
            await self._write_lexicon(*lexical, window)

    async def _lexicon_changes(
        self, docs: list[Document], window: int
    ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], tuple[int, int]]:
        """The postings to insert and delete and the counters' change when `docs` are
        written: their stored terms and lengths read first (by id, one burst), so that a
        replaced document's old postings go and it counts once."""
        ids = [d.id for d in docs]
        text = lexicon.stored_query(self.layout.fq)
        calls = [(text, [ids[i : i + GET_CHUNK]]) for i in range(0, len(ids), GET_CHUNK)]
        pages = await self._executor.burst(calls, "lexical terms", anyio.CapacityLimiter(window))
        stored = {r[0]: (dict(r[1] or {}), int(r[2] or 0)) for rows in pages for r in rows}
        written = [(d.id, lexicon.terms_of(d.content)) for d in docs]
        return lexicon.changes(self.table, stored, written)

    async def _write_lexicon(
        self,
        inserts: list[tuple[Any, ...]],
        deletes: list[tuple[Any, ...]],
        counted: tuple[int, int],
        window: int,
    ) -> None:
        """Write the postings (a batch per term), take back the stale ones, then update the
        counters."""
        ks, ex = self.keyspace, self._executor
        await ex.write_groups(lexicon.postings_insert(ks), lexicon.by_term(inserts), window=window)
        await ex.write_groups(lexicon.postings_delete(ks), lexicon.by_term(deletes), window=window)
        if any(counted):
            params = [*counted, self.table]
            await self._executor.execute(lexicon.stats_update(ks), params, "lexical statistics")

    async def _catalogue(self, docs: list[Document], window: int) -> None:
        """Before the documents are written: add their entity values to the values catalogue
        (those this store has not written yet) and record typed fields that hold lists."""
        fields = self.layout.fields
        if not fields:
            return
        entries: set[tuple[str, str]] = set()
        for d in docs:
            entries |= self.layout.entity_entries(d.metadata)
        new = entries - self._catalogued
        if new:
            rows = self._values.upsert_rows(new)
            await self._executor.write_all(self._values.upsert_query(), rows, window=window)
            if len(self._catalogued) > 1_000_000:
                self._catalogued.clear()
            self._catalogued |= new
        lists = {f for f in self.layout.list_valued_in(docs) if not fields[f].list_valued}
        if lists:
            catalog = FieldCatalog(self._session, self.keyspace)
            for field in sorted(lists):
                await anyio.to_thread.run_sync(catalog.mark_list_valued, self.table, field)
            self.layout.fields = self.layout.fields.marked_list_valued(lists)

    async def _insert_rows(self, docs: list[Document]) -> list[tuple[Any, ...]]:
        """The INSERT values of each document, embedding those without an embedding."""
        missing = [d for d in docs if d.embedding is None]
        fresh: dict[str, Any] = {}
        if missing:
            try:
                vecs = await aembed_documents(self.embedding, [d.content for d in missing])
            except (TypeError, ValueError) as exc:
                raise invalid("embedding", self.embedding, "a model that embeds texts") from exc
            fresh = {d.id: v for d, v in zip(missing, vecs, strict=True)}
        return [
            self.layout.insert_values(
                d,
                check_vector(
                    fresh[d.id] if d.embedding is None else d.embedding,
                    dimension=self.dimension,
                    what=f"embedding of document {d.id!r}",
                ).tolist(),
            )
            for d in docs
        ]

    async def adocuments(self) -> AsyncIterator[list[Document]]:
        """Every document of the table without its embedding, a page of `BACKFILL_PAGE` at a
        time (a paged read of id, content and metadata, in the table's token order; hoprag
        tables only)."""
        self._hoprag_only("reading the documents page by page")
        await self.asetup()
        reader = _PageReader(self._session, self._executor, self.layout.fq, "id, content, metadata")
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
        window = self.config.max_in_flight
        if concurrency is not None:
            window = check_int("concurrency", concurrency, minimum=1)
        await self.asetup()
        ids = [d.id for d in docs]
        text = f"SELECT id FROM {self.layout.fq} WHERE id IN ?"
        calls = [(text, [ids[i : i + GET_CHUNK]]) for i in range(0, len(ids), GET_CHUNK)]
        pages = await self._executor.burst(calls, "read by id", anyio.CapacityLimiter(window))
        stored = {r[0] for rows in pages for r in rows}
        missing = [i for i in ids if i not in stored]
        if missing:
            raise invalid("documents", missing[:5], f"ids of documents in {self.layout.fq}")
        await self._catalogue(docs, window)
        rows = [self.layout.metadata_values(d) for d in docs]
        await self._executor.write_all(
            self.layout.metadata_query(), rows, window=window, progress=progress
        )

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
        self, text: str, fields: Sequence[str], *, limit: int = 10
    ) -> list[Candidate]:
        """Values of the declared entity `fields` that `text` may mean, best first
        (`hoprag.resolve`): exact matches of the normalised text, then values holding every
        word of it, each with the number of documents carrying it. Two catalogue reads
        (`norm = ?`, `words CONTAINS ? AND ...`), then one `tokens CONTAINS ?` count per
        candidate of the score tiers returned; the text is only ever a bound value.
        InvalidInputError for a field that is not a declared entity field (naming the
        declaration that fixes it), a bad text or a `limit` outside 1..100."""
        request = check_resolve(text, fields, limit)
        await self.asetup()
        for field in request.fields:
            self._entity_field(field)
        cat = self._values
        limiter = anyio.CapacityLimiter(RESOLVE_CONCURRENCY)
        bound = MAX_CANDIDATES + 1
        calls = [
            (cat.exact_query(), [request.norm, bound]),
            (cat.token_query(len(request.words)), [*sorted(request.words), bound]),
        ]
        exact, token = await self._executor.burst(calls, "resolve", limiter)
        if len(exact) > MAX_CANDIDATES or len(token) > MAX_CANDIDATES:
            raise too_many(request, max(len(exact), len(token)))
        matches: list[Match] = []
        for field, value_json, norm, found in [*exact, *token]:
            if field in request.fields:
                m = request.match(field, json.loads(value_json), norm, found or ())
                if m is not None:
                    matches.append(m)

        async def count(tier: list[Match]) -> list[int]:
            text = cat.count_query()
            calls = [(text, [tok.token(m.field, m.value)]) for m in tier]
            pages = await self._executor.burst(calls, "resolve count", limiter)
            return [int(rows[0][0]) if rows else 0 for rows in pages]

        return await rank(request, matches, count)

    def resolve(self, text: str, fields: Sequence[str], *, limit: int = 10) -> list[Candidate]:
        """Sync `aresolve`."""
        return run_sync(functools.partial(self.aresolve, text, fields, limit=limit))

    def _entity_field(self, field: str) -> DeclaredField:
        """The declared entity field `field`, or InvalidInputError naming the fix."""
        decl = self.layout.fields.get(field)
        if decl is None or decl.kind != "entity":
            entities = [f for f, d in self.layout.fields.items() if d.kind == "entity"]
            what = "not declared" if decl is None else f"declared {decl.kind!r}"
            raise InvalidInputError(
                f"aresolve reads the values catalogue of declared entity fields; {field!r} is "
                f"{what} on {self.layout.fq} (its entity fields: {entities}); declare it with "
                f"`{declare_command(self.keyspace, self.table, {field: 'entity'})}` or "
                f"`await store.adeclare_fields({{{field!r}: 'entity'}})`",
                argument="fields",
                value=field,
                allowed=f"declared entity fields: {entities}",
            )
        if not decl.ready:
            raise InvalidInputError(
                f"the declaration of {field!r} on {self.layout.fq} did not complete: run "
                f"`{declare_command(self.keyspace, self.table, {field: 'entity'})}` again",
                argument="fields",
                value=field,
                allowed="entity fields whose declaration completed",
            )
        return decl

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
        may hold documents: record them, `ALTER TABLE ADD` their columns (and create the
        values catalogue), backfill every row from its metadata JSON (a paged read, up to
        `concurrency` writes in flight, default 64; `progress(rows_read)` after each page),
        create the SAI indexes and wait up to `timeout` seconds until they are queryable
        (StoreError otherwise: Cassandra goes on building, and running the declaration again
        waits for it). Fields already declared and complete are left alone; running it again
        after an interruption completes the rest. Returns the table's whole declaration.

        Documents written meanwhile by this store fill the new columns; another process's
        store that opened the table before the declaration does not, so declare while no
        other process writes (or declare again afterwards)."""
        decl, window = _declaration_args(fields, concurrency, timeout)
        await self.asetup()
        catalog, stored, todo = await anyio.to_thread.run_sync(self._declare_plan, decl)
        if todo:
            await anyio.to_thread.run_sync(self._declare_begin, catalog, stored, todo)
            lists = await self._backfill(todo, window, progress)
            await anyio.to_thread.run_sync(self._declare_finish, catalog, todo, lists, timeout)
        return await anyio.to_thread.run_sync(self._declare_reload, catalog)

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
        decl, window = _declaration_args(fields, concurrency, timeout)
        self.setup()
        catalog, stored, todo = self._declare_plan(decl)
        if todo:
            self._declare_begin(catalog, stored, todo)
            lists = run_sync(self._backfill, todo, window, progress)
            self._declare_finish(catalog, todo, lists, timeout)
        return self._declare_reload(catalog)

    def _declare_plan(
        self, decl: dict[str, str]
    ) -> tuple[FieldCatalog, dict[str, DeclaredField], list[DeclaredField]]:
        """The stored declaration and the fields still to declare (conflicts refused)."""
        if self.mode != "hoprag":
            raise invalid("fields", decl, "declared on a mode='hoprag' table")
        catalog = FieldCatalog(self._session, self.keyspace)
        stored = catalog.load(self.table)
        declare.check_conflicts(self.layout, stored, decl, "fields")
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
        declare.begin(self._session, self.layout, catalog, todo)
        self.layout.fields = declare.writable(
            self._session, self.layout, {**stored, **{d.field: d for d in todo}}
        )

    def _declare_finish(
        self, catalog: FieldCatalog, todo: list[DeclaredField], lists: set[str], timeout: float
    ) -> None:
        """Record list-valued fields, index, wait, record `todo` ready."""
        for field in sorted(lists):
            catalog.mark_list_valued(self.table, field)
        declare.finish(self._session, self.layout, catalog, todo, timeout=timeout)

    def _declare_reload(self, catalog: FieldCatalog) -> dict[str, str]:
        """Read the stored declaration back into the layout; its kinds."""
        self.layout.fields = declare.writable(self._session, self.layout, catalog.load(self.table))
        return self.layout.fields.kinds()

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
        update = f"UPDATE {self.layout.fq} SET {sets} WHERE id = ?"
        reader = _PageReader(self._session, self._executor, self.layout.fq)
        lists: set[str] = set()
        seen: set[tuple[str, str]] = set()
        done = 0
        while (page := await reader.next_page()) is not None:
            updates: list[tuple[Any, ...]] = []
            entries: set[tuple[str, str]] = set()
            for doc_id, raw in page:
                metadata = json.loads(raw) if raw else {}
                row = _typed_update(typed, metadata, lists)
                if row is not None:
                    updates.append((*row, doc_id))
                entries |= entity_entries(entity, metadata)
            new = entries - seen
            seen |= new
            if new:
                await self._executor.write_all(
                    self._values.upsert_query(), self._values.upsert_rows(new), window=window
                )
            if updates:
                await self._executor.write_all(update, updates, window=window)
            done += len(page)
            if progress is not None:
                progress(done)
        return lists

    def __repr__(self) -> str:
        return (
            f"CassandraStore(keyspace={self.keyspace!r}, table={self.table!r}, "
            f"mode={self.mode!r}, dimension={self.dimension})"
        )


def _typed_update(
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


RESOLVE_CONCURRENCY = 32
"""Count queries one `aresolve` has in flight at most."""
BACKFILL_PAGE = 500
"""Rows per page of a migration's read of the table."""


def _declaration_args(
    fields: Mapping[str, str], concurrency: int | None, timeout: Any
) -> tuple[dict[str, str], int]:
    """The checked declaration and backfill window of `adeclare_fields`."""
    decl = check_declaration(fields)
    window = 64 if concurrency is None else check_int("concurrency", concurrency, minimum=1)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise invalid("timeout", timeout, "a number of seconds > 0")
    return decl, window


class _PageReader:
    """The pages of `SELECT id, metadata` over a whole table, read one at a time on the event
    loop (`execute_async` with the previous page's paging state), each retried a few times
    after a transient failure."""

    def __init__(
        self, session: Any, executor: Executor, fq: str, columns: str = "id, metadata"
    ) -> None:
        from cassandra.query import SimpleStatement

        self.session = session
        self.executor = executor
        self.fq = fq
        self.stmt = SimpleStatement(f"SELECT {columns} FROM {fq}", fetch_size=BACKFILL_PAGE)
        self.state: Any = None
        self.done = False

    async def next_page(self) -> list[Any] | None:
        """The next page of rows as tuples, or None after the last."""
        import asyncio

        from hoprag.stores.cassandra.executor import is_transient_read_error

        if self.done:
            return None
        delay = 0.25
        for attempt in range(6):
            try:
                rows, self.state = await self._page()
                break
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if attempt == 5 or not is_transient_read_error(exc):
                    raise translate(exc, f"reading {self.fq} page by page") from exc
            await asyncio.sleep(delay)
            delay *= 2
        self.done = self.state is None
        return self.executor.tuples(list(rows))

    async def _page(self) -> tuple[list[Any], Any]:
        """One page and the paging state after it (None: it was the last)."""
        import asyncio

        loop = asyncio.get_running_loop()
        fut: asyncio.Future[list[Any]] = loop.create_future()

        def deliver(rows: Any = None, exc: BaseException | None = None) -> None:
            if fut.done():
                return
            if exc is not None:
                fut.set_exception(exc)
            else:
                fut.set_result(list(rows or ()))

        kwargs: dict[str, Any] = {"paging_state": self.state, "timeout": 60}
        if self.executor.profile is not None:
            kwargs["execution_profile"] = self.executor.profile
        rf = self.session.execute_async(self.stmt, **kwargs)
        rf.add_callbacks(
            lambda rows: loop.call_soon_threadsafe(deliver, rows),
            lambda exc: loop.call_soon_threadsafe(deliver, None, exc),
        )
        try:
            rows = await fut
        except asyncio.CancelledError:
            rf.clear_callbacks()
            raise
        return rows, (rf._paging_state if rf.has_more_pages else None)


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
