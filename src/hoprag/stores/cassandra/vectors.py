"""Fast decoding of `vector<float, n>` columns.

The driver (3.30.1) decodes a vector element by element in Python
(`VectorType.deserialize` -> `FloatType.deserialize` per element), also under its Cython row
parser: `cassandra.deserializers.find_deserializer` has no vector deserializer and falls back to
`GenericDeserializer`, which calls the cqltype's Python `deserialize`; numpy decodes the same
bytes in one call (`np.frombuffer(b, ">f4").tolist()`).

Encoding has the same shape: `VectorType.serialize` packs element by element through
`io.BytesIO`; `np.asarray(v, ">f4").tobytes()` gives the same bytes.

`raw_result_vectors(stmt)` goes further for hoprag's own prepared SELECTs: the driver hands
their float-vector columns over as the raw bytes, and `as_matrix` turns a page of them into one
float64 matrix with a single `np.frombuffer`, without making the driver's lists and turning
them back into arrays (docs/cassandra.md has the figures). Only those statements'
result types change; every other statement, ours or another library's, decodes as before.
The driver decodes a response with the column types the server sends in it, and driver 3.30.1
never asks the server to leave them out (it does not set the skip-metadata flag), so a
statement's own result types alone are never used. `enable_raw_results(session)` therefore
gives the session a protocol handler (`raw_results_handler`) that, for a statement whose
result types `raw_result_vectors` changed, decodes those vector columns with the raw type
when the response's column is the same float vector; every other column and statement keeps
the response's types.

`install()` replaces `VectorType.deserialize` / `serialize` with versions that handle
fixed-size float vectors with numpy and produce exactly what the driver produces (a `list` of
Python floats, each the float32 value widened to a double; the same big-endian bytes), and defer
to the originals for every other subtype. Results are identical, only faster, so other users of
the driver in the process (cassio, LangChain) are unaffected apart from the speed. It is
installed once per process by `CassandraStore` unless `fast_vectors=False`; `uninstall()`
restores the driver's methods.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

_lock = threading.Lock()
_original: Any = None
_original_serialize: Any = None
F32_MAX = float(np.finfo(np.float32).max)
"""The largest finite float32: bigger values cannot be stored in a vector column."""


def _is_float(subtype: Any) -> bool:
    from cassandra.cqltypes import FloatType

    return subtype is FloatType or (isinstance(subtype, type) and issubclass(subtype, FloatType))


def _fast_deserialize(cls: Any, byts: bytes, protocol_version: int) -> Any:
    subtype = cls.subtype
    if _is_float(subtype):
        n = cls.vector_size
        if len(byts) != 4 * n:
            raise ValueError(
                f"Expected vector of type {subtype.typename} and dimension {n} to have "
                f"serialized size {4 * n}; observed serialized size of {len(byts)} instead"
            )
        return np.frombuffer(byts, dtype=">f4").tolist()
    return _original.__func__(cls, byts, protocol_version)


class VectorList(list):  # type: ignore[type-arg]
    """A list of floats (an embedding as the public API gives it) that also holds the same
    values as a float64 numpy row, `array`, so that numeric code (cosines, Mmr) can use the
    array instead of converting the list again. It is a list in every other respect; the
    array is a snapshot of the values when it was made (read-only for decoded rows)."""

    __slots__ = ("array",)

    def __init__(self, values: Any, array: Any) -> None:
        super().__init__(values)
        self.array = array


def as_array(vec: Any) -> Any:
    """`vec` as a float64 numpy array, without converting when it carries one."""
    arr = getattr(vec, "array", None)
    return arr if arr is not None else np.asarray(vec, dtype=np.float64)


class PackedVector(VectorList):
    """A list of floats that carries its serialized form (`packed`: big-endian float32
    bytes, exactly what `VectorType.serialize` produces) and its float64 `array`. With the
    numpy codec installed a bound `PackedVector` is sent without re-encoding, so a query vector
    bound in many statements (every query of a traversal binds the same one, some twice) is
    encoded once. Without the codec it is an ordinary list to the driver."""

    __slots__ = ("packed",)

    def __init__(self, values: Any) -> None:
        arr = np.asarray(values, dtype=np.float64)
        super().__init__(values.tolist() if isinstance(values, np.ndarray) else values, arr)
        self.packed = arr.astype(">f4").tobytes()


_raw_types: dict[Any, Any] = {}


def _raw_deserialize(cls: Any, byts: bytes, protocol_version: int) -> bytes:
    return byts


def _raw_type(cqltype: Any) -> Any:
    """A subclass of the float-vector type `cqltype` whose values decode to their raw bytes."""
    with _lock:
        raw = _raw_types.get(cqltype)
        if raw is None:
            raw = type(
                f"Raw{cqltype.__name__}",
                (cqltype,),
                {"deserialize": classmethod(_raw_deserialize), "hoprag_raw": True},
            )
            _raw_types[cqltype] = raw
        return raw


def _is_raw(cqltype: Any) -> bool:
    return getattr(cqltype, "hoprag_raw", False) is True


def _same_float_vector(cqltype: Any, raw: Any) -> bool:
    from cassandra.cqltypes import VectorType

    vector: Any = cqltype
    return (
        isinstance(vector, type)
        and issubclass(vector, VectorType)
        and _is_float(getattr(vector, "subtype", None))
        and getattr(vector, "vector_size", None) == raw.vector_size
    )


def with_raw_vectors(sent: list[Any], prepared: Sequence[Any]) -> list[Any]:
    """The column metadata `sent` by the server, with the raw type of `prepared` (a statement's
    result metadata after `raw_result_vectors`) for each column that has the same name and is
    the same float vector in both; other columns keep the sent types. Columns that do not
    line up (another column count, a renamed column) leave `sent` as it is."""
    if len(sent) != len(prepared):
        return sent
    out = list(sent)
    for i, (col, mine) in enumerate(zip(sent, prepared, strict=True)):
        if _is_raw(mine[3]) and col[2] == mine[2] and _same_float_vector(col[3], mine[3]):
            out[i] = (*col[:3], mine[3])
    return out


RESULT_OPCODE = 0x08
PLAIN_METADATA_FLAGS = 0x0001
"""Result metadata flags that set nothing but the column metadata (the global table spec at
most: no paging state, no new metadata id, no continuous paging, no metadata left out)."""


class MetadataMemo:
    """The column metadata last decoded for each raw statement (its prepared result metadata,
    `raw_result_vectors`), with the exact bytes the server sent for it. The server sends a
    statement's metadata with every page (driver 3.30.1 never asks it not to), and decoding it
    parses the vector column's type name and builds a new type class each time; the same
    bytes decode to the same columns, so they are decoded once. Only metadata whose flags are
    `PLAIN_METADATA_FLAGS` is remembered, so a hit sets the columns and nothing else."""

    LIMIT = 256
    """Statements remembered at most (a store prepares a few query shapes); then it starts over."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[Any, bytes, list[Any]]] = {}

    def take(self, f: Any, prepared: Any) -> list[Any] | None:
        """The columns decoded earlier from the bytes at `f`'s position, read past them; None
        (and `f` left where it was) when these bytes were not seen for `prepared`."""
        known = self._known.get(id(prepared))
        if known is None or known[0] is not prepared:
            return None
        start = f.tell()
        if f.read(len(known[1])) == known[1]:
            return known[2]
        f.seek(start)
        return None

    def keep(self, f: Any, start: int, prepared: Any, columns: list[Any]) -> None:
        """Remember `columns`, decoded from `f`'s bytes between `start` and its position now
        (where `f` is left), when they are plain (`PLAIN_METADATA_FLAGS`)."""
        end = f.tell()
        f.seek(start)
        sent = f.read(end - start)
        if len(sent) < 4 or int.from_bytes(sent[:4], "big") & ~PLAIN_METADATA_FLAGS:
            return
        if len(self._known) >= self.LIMIT:
            self._known.clear()
        self._known[id(prepared)] = (prepared, sent, columns)


def raw_results_handler(handler: Any) -> Any:
    """A subclass of the driver protocol handler class `handler` whose row results decode the
    columns made raw by `raw_result_vectors` as raw bytes (see `with_raw_vectors`), each raw
    statement's metadata decoded once (`MetadataMemo`). Results of any other statement decode
    exactly as with `handler`."""
    if getattr(handler, "hoprag_raw_results", False):
        return handler
    base = handler.message_types_by_opcode[RESULT_OPCODE]

    class RawVectorResultMessage(base):  # type: ignore[valid-type,misc]
        prepared_raw: Any = None
        column_metadata: Any = None
        memo = MetadataMemo()

        def recv_results_rows(
            self,
            f: Any,
            protocol_version: int,
            user_type_map: Any,
            result_metadata: Any,
            *rest: Any,
        ) -> Any:
            if result_metadata and any(_is_raw(col[3]) for col in result_metadata):
                self.prepared_raw = result_metadata
            return super().recv_results_rows(
                f, protocol_version, user_type_map, result_metadata, *rest
            )

        def recv_results_metadata(self, f: Any, user_type_map: Any) -> None:
            prepared = self.prepared_raw
            if prepared is None:
                super().recv_results_metadata(f, user_type_map)
                return
            known = self.memo.take(f, prepared)
            if known is not None:
                self.column_metadata = known
                return
            start = f.tell()
            super().recv_results_metadata(f, user_type_map)
            if self.column_metadata:
                self.column_metadata = with_raw_vectors(self.column_metadata, prepared)
                self.memo.keep(f, start, prepared, self.column_metadata)

    opcodes = dict(handler.message_types_by_opcode)
    opcodes[RESULT_OPCODE] = RawVectorResultMessage
    return type(
        f"RawVectors{handler.__name__}",
        (handler,),
        {"message_types_by_opcode": opcodes, "hoprag_raw_results": True},
    )


def enable_raw_results(session: Any) -> None:
    """Give `session` the `raw_results_handler` of its protocol handler (idempotent), so that
    the statements passed through `raw_result_vectors` get their vectors as raw bytes. The
    session's other statements decode as before. A session without a driver protocol
    handler is left alone (its vectors then arrive as lists, which `as_matrix` also takes)."""
    with _lock:
        handler = getattr(session, "client_protocol_handler", None)
        opcodes = getattr(handler, "message_types_by_opcode", None)
        if not isinstance(opcodes, dict) or RESULT_OPCODE not in opcodes:
            return
        if not getattr(handler, "hoprag_raw_results", False):
            session.client_protocol_handler = raw_results_handler(handler)


def raw_result_vectors(stmt: Any) -> None:
    """Make the driver return the float-vector columns of prepared statement `stmt`'s results
    as raw big-endian bytes (see `as_matrix`), on a session with `enable_raw_results`. Its
    other columns are unchanged. Should a column no longer be the same float vector (after a
    schema change) it decodes with the server's type again, to a list; `as_matrix` takes
    either."""
    from cassandra.cqltypes import VectorType

    meta = getattr(stmt, "result_metadata", None)
    if not meta:
        return
    cols = []
    for col in meta:
        t: Any = col[3]
        if isinstance(t, type) and issubclass(t, VectorType) and _is_float(cast(Any, t).subtype):
            col = (*col[:3], _raw_type(t))
        cols.append(col)
    stmt.result_metadata = cols


def as_matrix(values: Any) -> Any:
    """One float64 matrix (one row per value) from non-empty vector column values: raw
    big-endian float32 bytes (`raw_result_vectors`) or sequences of floats, in any mix. The
    first value gives the dimension; a value of another size is a ValueError."""
    first = values[0]
    dim = len(first) // 4 if type(first) is bytes else len(first)
    if all(type(v) is bytes for v in values):
        if any(len(v) != 4 * dim for v in values):
            sizes = sorted({len(v) for v in values})
            raise ValueError(f"expected vectors of {4 * dim} bytes, got sizes {sizes}")
        return (
            np.frombuffer(b"".join(values), dtype=">f4")
            .reshape(len(values), dim)
            .astype(np.float64)
        )
    rows = [np.frombuffer(v, dtype=">f4") if type(v) is bytes else as_array(v) for v in values]
    if any(len(r) != dim for r in rows):
        raise ValueError(
            f"expected vectors of {dim} values, got sizes {sorted({len(r) for r in rows})}"
        )
    return np.array(rows, dtype=np.float64).reshape(len(values), dim)


def _fast_serialize(cls: Any, v: Any, protocol_version: int) -> bytes:
    if _is_float(cls.subtype):
        n = cls.vector_size
        if type(v) is PackedVector and len(v) == n:
            packed: bytes = v.packed
            return packed
        if len(v) != n:
            raise ValueError(
                f"Expected sequence of size {n} for vector of type {cls.subtype.typename} and "
                f"dimension {n}, observed sequence of length {len(v)}"
            )
        arr = np.asarray(v, dtype=np.float64)
        finite = arr[np.isfinite(arr)]
        if finite.size and np.abs(finite).max() > F32_MAX:
            raise OverflowError("float too large to pack with f format")
        return arr.astype(">f4").tobytes()
    out: bytes = _original_serialize.__func__(cls, v, protocol_version)
    return out


def install() -> None:
    """Install the numpy codec on `cassandra.cqltypes.VectorType` (idempotent)."""
    global _original, _original_serialize
    from cassandra.cqltypes import VectorType

    with _lock:
        if _original is not None:
            return
        _original = VectorType.__dict__["deserialize"]
        _original_serialize = VectorType.__dict__["serialize"]
        VectorType.deserialize = classmethod(_fast_deserialize)
        VectorType.serialize = classmethod(_fast_serialize)


def uninstall() -> None:
    """Restore the driver's own `VectorType.deserialize`."""
    global _original, _original_serialize
    from cassandra.cqltypes import VectorType

    with _lock:
        if _original is None:
            return
        VectorType.deserialize = _original
        VectorType.serialize = _original_serialize
        _original = _original_serialize = None


def installed() -> bool:
    """Whether the numpy decoder is in place."""
    return _original is not None
