"""CassandraStore: the Store protocol over Apache Cassandra 5.0 (and Astra DB).

Queries (all values bound; see `layouts.py` for the exact texts):

* start search: one `SELECT ... ORDER BY embedding ANN OF ? LIMIT ?`, the filter's conditions
  ANDed in as `tokens CONTAINS ?` clauses;
* a metadata edge: the same query with the edge's own condition plus the filter's (a filter on
  the edge's field never replaces the edge's value: both clauses are kept);
  `aadjacent_many` runs all of a hop's edges at once, each as its own query, concurrently
  (all handed to the driver in one go, without a task per query);
* ids (id edges, initial roots): primary-key reads `WHERE id IN ?`, in chunks of 100 ids run
  concurrently. Measured on a one-node 5.0.8 (2 vCPUs, shared) through this module's bridge,
  median of 15 runs: 1 id 3.1 ms (IN) vs 5.3 ms (single-partition read); 10 ids 12 ms vs 32 ms
  (10 concurrent single reads); 50 ids 27 ms vs 110 ms; 200 ids 122 ms vs 255 ms. IN wins at
  every size here, so IN it is. A filter on a primary-key read is checked client-side against
  the stored tokens (Cassandra refuses an indexed-column restriction together with `IN` on the
  partition key), with exactly the semantics of `tokens CONTAINS`.

Scores are plain cosine in [-1, 1]: with `include_embeddings=True` computed in float64 from the
decoded vector; otherwise Cassandra's `similarity_cosine` ((1+cos)/2) mapped back with 2s-1.
The embedding column is read only when `include_embeddings=True`, and decoded with numpy
(`vectors.install`), never with the driver's per-element Python loop.

Concurrency: one `SharedLimiter(max_in_flight)` per store (`limiter.py`) bounds the queries in
flight, shared by every traversal, event loop and thread that uses the store (sync `traverse`
calls from several threads each run their own loop). Driver futures are bridged to
the loop by callbacks (`bridge.py`); statements are prepared in a worker thread and cached.
Measured (same node, 300 docs, 16-d, tokens CONTAINS + ANN LIMIT 10): one edge query ~7-8 ms;
16 edges one after another ~220 ms; the same 16 through `aadjacent_many` ~50-70 ms, all 16 in
flight together. On that 2-vCPU node the server is the limit: raw driver futures without
hoprag take 9.3 ms for one and 66 ms for 16 concurrent. Over a 50 ms round trip (a delay proxy
in front of the same node, tests/integration/test_cassandra_latency.py) one edge query takes
55 ms, 4 at once 60-64 ms and 16 at once 81-85 ms, against 875 ms one after another.

Bulk load (`aadd`/`add`): validate everything, embed missing embeddings in one batch, then
prepared INSERTs with up to `max_in_flight` in flight. `scripts/bench_load.py`, 5000 docs of
384 dims on that node: hoprag 128 docs/s vs LangChain `Cassandra.add_documents` 114 docs/s;
2000 docs: 178 vs 137. Both are bound by the node's SAI vector-index inserts (~200-270/s there
whatever the client concurrency; ~1100-1400/s into the same table without the vector index).

Set-up: connecting, creating the keyspace/table/indexes when missing (then waiting until the
SAI indexes are queryable) and preparing statements are blocking driver calls. A store built
outside a running event loop does all that in `__init__` (errors surface at once); a store
built inside a running loop defers it to its first async call, which runs it in a worker
thread, so the loop is never blocked. `setup()` / `await asetup()` force it.

Modes: `mode="hoprag"` (default) uses hoprag's table (cql/documents.cql). `mode="cassio"`
reads and writes tables that LangChain's `Cassandra` vector store (cassio's
`MetadataVectorCassandraTable`) wrote; see `from_langchain_table`. `from_astra` connects
through `cassio.init(token=..., database_id=...)`.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import deque
from collections.abc import Callable, Collection, Coroutine, Iterable, Sequence
from typing import Any, TypeVar

import anyio.to_thread

from hoprag.documents import Document
from hoprag.edges import MetadataEdge
from hoprag.embeddings.base import aembed_documents, embed_query
from hoprag.errors import HopragError, InvalidInputError, StoreError
from hoprag.stores.base import Filter, Hit
from hoprag.stores.cassandra import bridge, guards, vectors
from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.layouts import (
    CassioLayout,
    HopragLayout,
    Layout,
    cassio_index_names,
    cassio_table_statements,
)
from hoprag.stores.cassandra.limiter import SharedLimiter
from hoprag.stores.cassandra.names import check_name
from hoprag.stores.cassandra.schema import (
    MAX_DIMENSION,
    apply_schema,
    execute_ddl,
    keyspace_statements,
    replication_map,
    wait_queryable,
)

T = TypeVar("T")

MODES = ("hoprag", "cassio")
GET_CHUNK = 100
"""Ids per `IN` read."""
QUERY_VECTOR_CACHE = 64
"""Query vectors whose checked, packed form a store keeps (see `_query_vector`)."""
INSERT_RETRIES = 6
"""Retries of one INSERT that timed out (server `WriteTimeout` or client timeout)."""
INSERT_RETRY_DELAY = 0.25
"""Seconds before the first retry; doubled for each further one."""
READ_RETRIES = 5
"""Retries of a read that failed transiently (timeout, too few replicas, lost connection)."""
READ_RETRY_DELAY = 0.25
"""Seconds before the first read retry; doubled for each further one (7.75 s in all)."""
_VECTOR_TYPE = re.compile(r"vector<\s*float\s*,\s*(\d+)\s*>", re.IGNORECASE)


def _in_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _run_sync(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from sync code, also when the calling thread already runs
    an event loop (then in a helper thread with its own loop)."""
    if not _in_running_loop():
        return asyncio.run(factory())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(factory())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target, name="hoprag-sync", daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _is_transient_read_error(exc: BaseException | None) -> bool:
    """Whether a read failed in a way another try can fix: a replica or the client timed out,
    too few replicas were alive, or a connection broke (a node died or restarted). A replica
    that stopped answering is routed around once the coordinator's failure detector convicts
    it, which takes seconds; reads are idempotent, so retrying them is safe."""
    from cassandra import OperationTimedOut, ReadTimeout, Unavailable
    from cassandra.cluster import NoHostAvailable
    from cassandra.connection import ConnectionException

    return isinstance(
        exc, ReadTimeout | Unavailable | OperationTimedOut | ConnectionException | NoHostAvailable
    )


def _is_timeout(exc: BaseException | None) -> bool:
    """Whether a driver exception is a write timeout (server side or client side)."""
    from cassandra import OperationTimedOut, WriteTimeout

    return isinstance(exc, WriteTimeout | OperationTimedOut)


class CassandraStore:
    """A hoprag Store over a Cassandra 5.0 / Astra table (see the module docstring).

    Args:
        embedding: a callable `str -> vector` or a LangChain `Embeddings`; used to embed
            documents added without an embedding, and to probe the dimension.
        keyspace, table: plain CQL names (letters, digits, underscores).
        session: a driver `Session` to use (not closed by `close()`); else one is opened with
            `contact_points` (default `HOPRAG_CASSANDRA`, then 127.0.0.1) and closed by `close()`.
        dimension: the embedding dimension; default: the existing table's, else the length of
            the embedding of a probe text.
        replication_factor: used only when the keyspace has to be created (SimpleStrategy).
        max_in_flight: most queries this store has in flight at once, one bound shared by
            every traversal, event loop and thread using the store.
        mode: "hoprag" (hoprag's own table) or "cassio" (a LangChain/cassio table).
        list_fields: cassio mode only: metadata fields whose lists were shredded by
            langchain-graph-retriever's `ShreddingTransformer` (graph-retriever's
            `nested_metadata_fields`).
        create_schema: create keyspace/table/indexes when missing (default True).
        request_timeout: per-request timeout in seconds (default: the session's).
        write_consistency: consistency level of writes, e.g. "LOCAL_QUORUM" or "ALL" (default:
            the session's, LOCAL_ONE). Vector searches always run at ONE (Cassandra forces it),
            so with replication a traversal that must survive a node's death reads complete
            data only where every replica got every write: use "ALL" for such loads.
        fast_vectors: install the numpy vector codec and read vector columns of the store's
            own SELECTs as raw bytes (`vectors.py`; identical results). This gives the session
            a protocol handler subclass that changes nothing for other statements.
        ann_overquery: every vector search (start search and metadata edge) asks Cassandra for
            `k * ann_overquery` rows (at most 1000) and keeps the `k` best. 1 (default) asks
            for `k`, as graph-retriever and LangChain do, so both see the same answers. 2 buys
            recall at small k where the index is weakest: on freshly loaded tables (vector
            graphs still in the memtable, built by concurrent inserts) `LIMIT 3` missed the
            exact top 3 in 16-18 of 240 searches, `LIMIT 6` trimmed to 3 in none
            (`scripts/bench_recall.py`, docs/cassandra.md).
    """

    def __init__(
        self,
        embedding: Any,
        *,
        keyspace: str,
        table: str,
        session: Any = None,
        contact_points: str | Sequence[str] | None = None,
        dimension: int | None = None,
        replication_factor: int = 1,
        max_in_flight: int = 128,
        mode: str = "hoprag",
        list_fields: Collection[str] = (),
        create_schema: bool = True,
        create_keyspace: bool = True,
        request_timeout: float | None = None,
        write_consistency: str | None = None,
        fast_vectors: bool = True,
        wait_indexes: bool = True,
        ann_overquery: int = 1,
    ) -> None:
        self.embedding = embedding
        self.keyspace = check_name(keyspace, what="keyspace")
        self.table = check_name(table, what="table")
        if mode not in MODES:
            raise InvalidInputError(f"mode must be one of {MODES}, got {mode!r}")
        if (
            isinstance(max_in_flight, bool)
            or not isinstance(max_in_flight, int)
            or not (1 <= max_in_flight <= 32768)
        ):
            raise InvalidInputError(
                f"max_in_flight must be an int in 1..32768, got {max_in_flight!r}"
            )
        if dimension is not None and (
            isinstance(dimension, bool)
            or not isinstance(dimension, int)
            or not 1 <= dimension <= MAX_DIMENSION
        ):
            raise InvalidInputError(
                f"dimension must be an int in 1..{MAX_DIMENSION}, got {dimension!r}"
            )
        self.ann_overquery = guards.check_overquery(ann_overquery)
        if mode != "cassio" and list_fields:
            raise InvalidInputError("list_fields only applies to mode='cassio'")
        for f in list_fields:
            guards.check_field(f, what="list field")
        self._replication = replication_map(replication_factor)
        self.mode = mode
        self.max_in_flight = max_in_flight
        self.dimension: int | None = dimension
        self.layout: Layout = (
            CassioLayout(self.keyspace, self.table, list_fields)
            if mode == "cassio"
            else HopragLayout(self.keyspace, self.table)
        )
        self._session = session
        self._owns_session = session is None
        self._contact_points = contact_points
        self._create_schema = create_schema
        self._create_keyspace = create_keyspace
        self._request_timeout = request_timeout
        self._write_consistency = guards.check_consistency(write_consistency)
        self._fast_vectors = fast_vectors
        self._wait_indexes = wait_indexes
        self._ready = False
        self._closed = False
        self._setup_lock = threading.Lock()
        self._profile: Any = None
        self._prepared: bridge.PreparedCache | None = None
        self._limiter = SharedLimiter(max_in_flight)
        self._qv_cache: dict[int, tuple[list[float], vectors.PackedVector]] = {}
        if not _in_running_loop():
            self.setup()

    # --- construction helpers ------------------------------------------------------------------
    @classmethod
    def from_langchain_table(
        cls,
        embedding: Any,
        *,
        keyspace: str,
        table: str,
        list_fields: Collection[str] = (),
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
        kwargs.setdefault("create_schema", True)
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
        mode: str = "hoprag",
        **kwargs: Any,
    ) -> CassandraStore:
        """A store on Astra DB. Connects with `cassio.init(token=token,
        database_id=database_id, keyspace=keyspace)` (cassio downloads the secure-connect
        bundle) and uses the session cassio made. The keyspace must already exist (Astra
        keyspaces are created in its UI/DevOps API, not with CQL); the table and its indexes
        are created when missing. Index readiness is not polled (Astra has no
        `system_views.sai_column_indexes`). The session belongs to cassio (its global default)
        and is not closed by `close()`."""
        if not isinstance(token, str) or not token:
            raise InvalidInputError("Astra token must be a non-empty string (AstraCS:...)")
        if not isinstance(database_id, str) or not database_id:
            raise InvalidInputError("Astra database_id must be a non-empty string")
        check_name(keyspace, what="keyspace")
        import cassio
        import cassio.config

        try:
            cassio.init(token=token, database_id=database_id, keyspace=keyspace)
        except Exception as exc:
            raise translate(exc, "connecting to Astra DB with cassio.init") from exc
        session = cassio.config.resolve_session()
        if session is None:
            raise StoreError("cassio.init did not produce a session")
        kwargs.setdefault("create_keyspace", False)
        kwargs.setdefault("wait_indexes", False)
        return cls(embedding, keyspace=keyspace, table=table, session=session, mode=mode, **kwargs)

    # --- set-up ---------------------------------------------------------------------------
    @property
    def session(self) -> Any:
        """The driver session (None until set-up has connected)."""
        return self._session

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
            if self._fast_vectors:
                vectors.install()
            if self._session is None:
                from hoprag.stores.cassandra.session import connect

                self._session = connect(self._contact_points)
            if self._fast_vectors:
                vectors.enable_raw_results(self._session)
            try:
                self._setup_schema()
            except HopragError:
                raise
            except Exception as exc:
                raise translate(exc, f"setting up {self.keyspace}.{self.table}") from exc
            self._profile = self._make_profile()
            self._prepared = bridge.PreparedCache(self._session, self._configure_statement)
            self._ready = True

    async def asetup(self) -> None:
        """`setup()` in a worker thread."""
        if not self._ready:
            await anyio.to_thread.run_sync(self.setup)

    def _existing_dimension(self) -> int | None:
        meta = self._session.cluster.metadata.keyspaces.get(self.keyspace)
        table = meta.tables.get(self.table) if meta is not None else None
        if table is None:
            return None
        col = table.columns.get(self.layout.vector_col)
        if col is None:
            raise InvalidInputError(
                f"table {self.keyspace}.{self.table} exists but has no "
                f"{self.layout.vector_col!r} column: is mode={self.mode!r} right?"
            )
        m = _VECTOR_TYPE.search(col.cql_type)
        if m is None:
            raise InvalidInputError(
                f"column {self.layout.vector_col} of {self.keyspace}.{self.table} is "
                f"{col.cql_type}, not vector<float, n>"
            )
        return int(m.group(1))

    def _setup_schema(self) -> None:
        existing = self._existing_dimension()
        if existing is not None:
            if self.dimension is not None and self.dimension != existing:
                raise InvalidInputError(
                    f"dimension={self.dimension} but table {self.keyspace}.{self.table} "
                    f"stores vectors of dimension {existing}"
                )
            self.dimension = existing
        elif not self._create_schema:
            raise StoreError(
                f"table {self.keyspace}.{self.table} does not exist (create_schema=False)"
            )
        if self.dimension is None:
            try:
                probe = embed_query(self.embedding, "dimension probe")
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(f"could not embed a probe text: {exc}") from exc
            self.dimension = len(probe)
        if not self._create_schema:
            return
        if self.mode == "hoprag":
            apply_schema(
                self._session,
                self.keyspace,
                self.table,
                self.dimension,
                replication=self._replication,
                create_keyspace=self._create_keyspace,
                wait=self._wait_indexes,
            )
        else:
            if self._create_keyspace:
                for stmt in keyspace_statements(self.keyspace, self._replication):
                    execute_ddl(self._session, stmt)
            for stmt in cassio_table_statements(self.keyspace, self.table, self.dimension):
                execute_ddl(self._session, stmt)
            if self._wait_indexes:
                wait_queryable(self._session, self.keyspace, cassio_index_names(self.table))

    def _make_profile(self) -> Any:
        """A clone of the session's default execution profile returning plain tuples, so rows
        decode the same way whatever row factory the caller's session uses."""
        from cassandra.cluster import EXEC_PROFILE_DEFAULT
        from cassandra.query import tuple_factory

        try:
            return self._session.execution_profile_clone_update(
                EXEC_PROFILE_DEFAULT, row_factory=tuple_factory
            )
        except Exception:  # legacy-configured cluster: no profiles; rows are then converted
            return None

    def _configure_statement(self, stmt: Any) -> None:
        from cassandra import ConsistencyLevel

        if self._fast_vectors and stmt.query_string.lstrip().upper().startswith("SELECT"):
            vectors.raw_result_vectors(stmt)
        if "ANN OF" in stmt.query_string:
            # Cassandra runs ANN queries at ONE / LOCAL_ONE anyway and warns otherwise.
            stmt.consistency_level = ConsistencyLevel.LOCAL_ONE
        elif self._write_consistency and stmt.query_string.lstrip().upper().startswith(
            ("INSERT", "UPDATE", "DELETE")
        ):
            stmt.consistency_level = getattr(ConsistencyLevel, self._write_consistency)

    async def _ensure(self) -> None:
        if not self._ready:
            await anyio.to_thread.run_sync(self.setup)

    # --- closing ----------------------------------------------------------------------------
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
        await self._ensure()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- execution ---------------------------------------------------------------------------
    @property
    def in_flight(self) -> int:
        """Queries of this store currently in flight (all event loops and threads)."""
        return self._limiter.in_use

    async def _rows(self, query: str, params: Sequence[Any], operation: str) -> list[Any]:
        assert self._prepared is not None
        try:
            stmt = await self._prepared.get(query)
            async with self._limiter:
                rows = await bridge.submit(
                    self._session,
                    stmt,
                    params,
                    execution_profile=self._profile,
                    request_timeout=self._request_timeout,
                ).rows()
        except (asyncio.CancelledError, HopragError):
            raise
        except Exception as exc:
            raise translate(exc, f"{operation} on {self.layout.fq}") from exc
        return self._tuples(rows)

    def _tuples(self, rows: list[Any]) -> list[Any]:
        """Rows as tuples (a session without hoprag's execution profile may give dicts or
        named tuples)."""
        if self._profile is None and rows and not isinstance(rows[0], tuple):
            return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in rows]
        return rows

    async def _retried(
        self,
        query: str,
        params: Sequence[Any],
        operation: str,
        *,
        retries: int,
        delay: float,
        retry_on: Callable[[BaseException | None], bool],
    ) -> list[Any]:
        """`_rows`, tried again after a failure whose driver cause `retry_on` accepts, up to
        `retries` more times, waiting `delay` seconds and doubling it each time."""
        for attempt in range(retries + 1):
            try:
                return await self._rows(query, params, operation)
            except StoreError as exc:
                if attempt == retries or not retry_on(exc.__cause__):
                    raise
            await asyncio.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    async def _read(self, query: str, params: Sequence[Any], operation: str) -> list[Any]:
        """One read: a burst of one (see `_reads`)."""
        return (await self._reads([(query, params)], operation))[0]

    async def _reads(self, calls: Sequence[tuple[str, Sequence[Any]]], operation: str) -> list[Any]:
        """The rows of every read in `calls` (query text, parameters), in order, with all of
        them in flight at once: each is handed to the driver at once, within the store's
        `max_in_flight` (when it is full, the burst first collects its own oldest answers),
        and no task is spawned per query. A read that fails transiently (see
        `_is_transient_read_error`) is tried again alone, up to `READ_RETRIES` more times with
        a doubling delay, so a traversal survives a node dying mid-stream (reads are
        idempotent); any other failure cancels the rest of the burst."""
        assert self._prepared is not None
        limiter = self._limiter
        stmts = [await self._prepared.get(query) for query, _ in calls]
        out: list[Any] = [None] * len(calls)
        sent: deque[tuple[int, bridge.Request | bridge.Failed]] = deque()

        async def collect() -> None:
            i, request = sent.popleft()
            try:
                rows = await request.rows()
            except (asyncio.CancelledError, HopragError):
                raise
            except Exception as exc:
                if not _is_transient_read_error(exc):
                    raise translate(exc, f"{operation} on {self.layout.fq}") from exc
                rows = None
            finally:
                limiter.release()
            if rows is None:  # the first try failed transiently: the remaining tries, alone
                await asyncio.sleep(READ_RETRY_DELAY)
                query, params = calls[i]
                out[i] = await self._retried(
                    query,
                    params,
                    operation,
                    retries=READ_RETRIES - 1,
                    delay=READ_RETRY_DELAY * 2,
                    retry_on=_is_transient_read_error,
                )
            else:
                out[i] = self._tuples(rows)

        try:
            for i, stmt in enumerate(stmts):
                while not limiter.try_acquire():
                    if sent:
                        await collect()
                    else:
                        await limiter.acquire()
                        break
                request: bridge.Request | bridge.Failed
                try:
                    request = bridge.submit(
                        self._session,
                        stmt,
                        calls[i][1],
                        execution_profile=self._profile,
                        request_timeout=self._request_timeout,
                    )
                except Exception as exc:  # refused at once: collected (and retried) in turn
                    request = bridge.Failed(exc)
                except BaseException:
                    limiter.release()
                    raise
                sent.append((i, request))
            while sent:
                await collect()
        finally:
            for _, request in sent:  # only after a failure or cancellation
                request.cancel()
                limiter.release()
        return out

    def _conditions(
        self, filter: Filter | None, edge: MetadataEdge | None = None
    ) -> list[tuple[Any, ...]]:
        pairs: list[tuple[str, Any]] = []
        if edge is not None:
            if not isinstance(edge, MetadataEdge):
                raise InvalidInputError(f"expected a MetadataEdge, got {edge!r}")
            pairs.append((guards.check_field(edge.incoming_field, what="edge field"), edge.value))
        pairs.extend(guards.check_filter(filter))
        out: list[tuple[Any, ...]] = []
        for field, value in pairs:
            for c in self.layout.conditions(field, value):
                if c not in out:
                    out.append(c)
        return out

    def _query_vector(self, embedding: Any) -> list[float]:
        """The checked query vector as a `PackedVector` (encoded once). A traversal passes the
        same list object to every store call, so the checked, packed form of the last few
        query lists is kept and reused while the list still holds the same values."""
        assert self.dimension is not None
        cacheable = type(embedding) is list
        if cacheable:
            hit = self._qv_cache.get(id(embedding))
            # Same object still holding the same values (compared with the packed copy).
            if hit is not None and hit[0] is embedding and hit[1] == embedding:
                return hit[1]
        qv = vectors.PackedVector(
            guards.check_vector_array(embedding, self.dimension, what="query embedding")
        )
        if cacheable:
            if len(self._qv_cache) >= QUERY_VECTOR_CACHE:
                self._qv_cache.clear()
            self._qv_cache[id(embedding)] = (embedding, qv)
        return qv

    def _ann_call(
        self, qv: list[float], conditions: list[tuple[Any, ...]], k: int, include_embeddings: bool
    ) -> tuple[str, list[Any]]:
        """The query text and parameters of a vector search under `conditions`."""
        query = self.layout.ann_query(len(conditions), include_embeddings)
        params: list[Any] = [] if include_embeddings else [qv]
        for c in conditions:
            params.extend(c)
        params.extend((qv, min(guards.MAX_K, k * self.ann_overquery)))
        return query, params

    def _ann_hits(
        self, rows: list[Any], qv: list[float], k: int, include_embeddings: bool
    ) -> list[Hit]:
        """The `k` best hits of a vector search's rows, best first."""
        hits = self.layout.hits(rows, include_embeddings=include_embeddings, query=qv)
        hits.sort(key=lambda h: h.score if h.score is not None else float("-inf"), reverse=True)
        return hits[:k]

    async def _ann(
        self,
        qv: list[float],
        conditions: list[tuple[Any, ...]],
        k: int,
        include_embeddings: bool,
        operation: str,
    ) -> list[Hit]:
        query, params = self._ann_call(qv, conditions, k, include_embeddings)
        rows = await self._read(query, params, operation)
        return self._ann_hits(rows, qv, k, include_embeddings)

    # --- the Store protocol ---------------------------------------------------------------------
    async def asearch(
        self,
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """The `k` (0..1000) documents nearest to `embedding` that pass `filter`, best first."""
        k = guards.check_k(k)
        conditions = self._conditions(filter)
        await self._ensure()
        qv = self._query_vector(embedding)
        if k == 0:
            return []
        return await self._ann(qv, conditions, k, include_embeddings, "vector search")

    async def aadjacent(
        self,
        edge: MetadataEdge,
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """The `k` documents nearest to `embedding` whose `edge.incoming_field` equals (or, for
        a list, contains) `edge.value` and that pass `filter`, best first."""
        k = guards.check_k(k)
        conditions = self._conditions(filter, edge)
        await self._ensure()
        qv = self._query_vector(embedding)
        if k == 0:
            return []
        return await self._ann(qv, conditions, k, include_embeddings, "adjacent query")

    async def aadjacent_many(
        self,
        edges: Sequence[MetadataEdge],
        embedding: Sequence[float],
        *,
        k: int,
        filter: Filter | None = None,
        include_embeddings: bool = True,
    ) -> list[list[Hit]]:
        """`aadjacent` for every edge of a hop, all queries in flight at once (bounded by
        `max_in_flight`); results in the order of `edges`. Inputs are checked for every edge
        before any query is sent."""
        k = guards.check_k(k)
        conds = [self._conditions(filter, e) for e in edges]
        if not conds:
            return []
        await self._ensure()
        qv = self._query_vector(embedding)
        if k == 0:
            return [[] for _ in conds]
        calls = [self._ann_call(qv, c, k, include_embeddings) for c in conds]
        pages = await self._reads(calls, "adjacent query")
        return [self._ann_hits(rows, qv, k, include_embeddings) for rows in pages]

    async def aget(
        self,
        ids: Sequence[str],
        *,
        filter: Filter | None = None,
        embedding: Sequence[float] | None = None,
        include_embeddings: bool = True,
    ) -> list[Hit]:
        """The documents with these ids that exist and pass `filter`, in the order of `ids`
        (duplicates once); scored against `embedding` when one is given."""
        id_list = guards.check_ids(ids)
        conditions = self._conditions(filter)
        if not id_list:
            return []
        await self._ensure()
        qv = self._query_vector(embedding) if embedding is not None else None
        with_score = qv is not None and not include_embeddings
        query = self.layout.get_query(include_embeddings, with_score, bool(conditions))
        chunks = [id_list[i : i + GET_CHUNK] for i in range(0, len(id_list), GET_CHUNK)]
        calls = [(query, [qv, chunk] if with_score else [chunk]) for chunk in chunks]
        found: dict[str, Hit] = {}
        for rows in await self._reads(calls, "read by id"):
            if conditions:
                rows = [r for r in rows if self.layout.matches(r, conditions)]
            for hit in self.layout.hits(rows, include_embeddings=include_embeddings, query=qv):
                found[hit.id] = hit
        return [found[i] for i in id_list if i in found]

    # --- writing ------------------------------------------------------------------------------
    async def _prepare_rows(self, documents: Iterable[Document]) -> list[tuple[Any, ...]]:
        docs = guards.check_documents(documents)
        await self._ensure()
        assert self.dimension is not None
        missing = [d for d in docs if d.embedding is None]
        new_vecs: dict[str, Any] = {}
        if missing:
            try:
                vecs = await aembed_documents(self.embedding, [d.content for d in missing])
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(f"embedding the documents failed: {exc}") from exc
            new_vecs = {d.id: v for d, v in zip(missing, vecs, strict=True)}
        rows = []
        for d in docs:
            vec = guards.check_vector(
                d.embedding if d.embedding is not None else new_vecs[d.id],
                self.dimension,
                what=f"embedding of document {d.id!r}",
            )
            rows.append(self.layout.insert_values(d, vec))
        return rows

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
        zero) before the first write, so a rejected batch writes nothing. Writes are prepared
        INSERTs, up to `concurrency` (default `max_in_flight`) in flight. `progress(done,
        total)` is called as writes complete. If a write fails mid-way, the rows already
        written stay (re-running the same add is safe: upserts are idempotent)."""
        rows = await self._prepare_rows(documents)
        total = len(rows)
        if progress is not None:
            progress(0, total)
        if not total:
            return
        window = concurrency or self.max_in_flight
        if not isinstance(window, int) or window < 1:
            raise InvalidInputError(f"concurrency must be a positive int, got {concurrency!r}")
        query = self.layout.insert_query()
        done = 0
        it = iter(rows)

        async def worker() -> None:
            nonlocal done
            for params in it:
                await self._insert(query, params)
                done += 1
                if progress is not None:
                    progress(done, total)

        async with anyio.create_task_group() as tg:
            for _ in range(min(window, total)):
                tg.start_soon(worker)

    async def _insert(self, query: str, params: Sequence[Any]) -> None:
        """One INSERT, retried after a write timeout (an upsert is idempotent, so a retry can
        never duplicate). A node whose SAI vector index is the bottleneck queues writes; with
        many in flight on a busy node some wait past `write_request_timeout` (2 s) and fail
        as `WriteTimeout` although the node is healthy: backing off and retrying lets the load
        finish at the rate the node sustains."""
        await self._retried(
            query,
            params,
            "insert",
            retries=INSERT_RETRIES,
            delay=INSERT_RETRY_DELAY,
            retry_on=_is_timeout,
        )

    def add(
        self,
        documents: Iterable[Document],
        *,
        progress: Callable[[int, int], None] | None = None,
        concurrency: int | None = None,
    ) -> None:
        """Sync `aadd` (works inside and outside a running event loop)."""
        docs = list(documents)
        _run_sync(lambda: self.aadd(docs, progress=progress, concurrency=concurrency))

    async def adelete(self, ids: Sequence[str]) -> None:
        """Delete the documents with these ids (missing ids are ignored)."""
        id_list = guards.check_ids(ids)
        if not id_list:
            return
        await self._ensure()
        query = f"DELETE FROM {self.layout.fq} WHERE {self.layout.id_col} IN ?"
        for i in range(0, len(id_list), GET_CHUNK):
            await self._rows(query, [id_list[i : i + GET_CHUNK]], "delete")

    def __repr__(self) -> str:
        return (
            f"CassandraStore(keyspace={self.keyspace!r}, table={self.table!r}, "
            f"mode={self.mode!r}, dimension={self.dimension})"
        )
