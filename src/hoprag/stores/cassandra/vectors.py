"""Fast decoding of `vector<float, n>` columns.

The driver (3.30.1) decodes a vector element by element in Python
(`VectorType.deserialize` -> `FloatType.deserialize` per element), also under its Cython row
parser: `cassandra.deserializers.find_deserializer` has no vector deserializer and falls back to
`GenericDeserializer`, which calls the cqltype's Python `deserialize`. Measured on this machine
the driver decodes a 384-d vector in
~80 µs, `np.frombuffer(b, ">f4").tolist()` in ~3 µs.

Encoding has the same shape: `VectorType.serialize` packs element by element through
`io.BytesIO` (~100 µs per 384-d vector); `np.asarray(v, ">f4").tobytes()` gives the same bytes.

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
from typing import Any

import numpy as np

_lock = threading.Lock()
_original: Any = None
_original_serialize: Any = None
_F32_MAX = float(np.finfo(np.float32).max)


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


class PackedVector(list):  # type: ignore[type-arg]
    """A list of floats that carries its serialized form (`packed`: big-endian float32
    bytes, exactly what `VectorType.serialize` produces). With the numpy codec installed a
    bound `PackedVector` is sent without re-encoding, so a query vector bound in many
    statements (every query of a traversal binds the same one, some twice) is encoded once.
    Without the codec it is an ordinary list to the driver."""

    __slots__ = ("packed",)

    def __init__(self, values: Any) -> None:
        if isinstance(values, np.ndarray):
            super().__init__(values.tolist())
            self.packed = values.astype(">f4").tobytes()
        else:
            super().__init__(values)
            self.packed = np.asarray(self, dtype=np.float64).astype(">f4").tobytes()


def _fast_serialize(cls: Any, v: Any, protocol_version: int) -> bytes:
    if _is_float(cls.subtype):
        n = cls.vector_size
        if type(v) is PackedVector and len(v) == n:
            return v.packed
        if len(v) != n:
            raise ValueError(
                f"Expected sequence of size {n} for vector of type {cls.subtype.typename} and "
                f"dimension {n}, observed sequence of length {len(v)}"
            )
        arr = np.asarray(v, dtype=np.float64)
        finite = arr[np.isfinite(arr)]
        if finite.size and np.abs(finite).max() > _F32_MAX:
            raise OverflowError("float too large to pack with f format")
        return arr.astype(">f4").tobytes()
    return _original_serialize.__func__(cls, v, protocol_version)


def install() -> None:
    """Install the numpy codec on `cassandra.cqltypes.VectorType` (idempotent)."""
    global _original, _original_serialize
    from cassandra.cqltypes import VectorType

    with _lock:
        if _original is not None:
            return
        _original = VectorType.__dict__["deserialize"]
        _original_serialize = VectorType.__dict__["serialize"]
        VectorType.deserialize = classmethod(_fast_deserialize)  # type: ignore[method-assign,assignment]
        VectorType.serialize = classmethod(_fast_serialize)  # type: ignore[method-assign,assignment]


def uninstall() -> None:
    """Restore the driver's own `VectorType.deserialize`."""
    global _original, _original_serialize
    from cassandra.cqltypes import VectorType

    with _lock:
        if _original is None:
            return
        VectorType.deserialize = _original  # type: ignore[method-assign]
        VectorType.serialize = _original_serialize  # type: ignore[method-assign]
        _original = _original_serialize = None


def installed() -> bool:
    """Whether the numpy decoder is in place."""
    return _original is not None
