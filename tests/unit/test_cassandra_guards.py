"""CassandraStore's input guards and error translation, without a Cassandra node."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from cassandra import (
    InvalidRequest,
    OperationTimedOut,
    ReadFailure,
    ReadTimeout,
    Unavailable,
    WriteFailure,
)
from cassandra.cluster import NoHostAvailable

from hoprag import Document
from hoprag.errors import InvalidInputError, StoreError, StoreUnavailableError
from hoprag.stores.cassandra import guards
from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.names import check_name


@pytest.mark.parametrize("k", [0, 1, 1000, np.int64(7)])
def test_k_in_range(k: Any) -> None:
    assert guards.check_k(k) == int(k)


@pytest.mark.parametrize(
    ("k", "words"),
    [
        (1001, "at most 1000"),
        (-1, "0..1000"),
        (2.0, "integer"),
        (True, "integer"),
        ("3", "integer"),
    ],
)
def test_k_out_of_range(k: Any, words: str) -> None:
    with pytest.raises(InvalidInputError, match=words):
        guards.check_k(k)


def test_vectors() -> None:
    assert guards.check_vector(np.array([1, 2, 3], dtype=np.float32), 3, what="q") == [1, 2, 3]
    for vec, words in [
        ([1.0, 2.0], "dimension 2"),
        ([1.0, math.nan, 0.0], "NaN"),
        ([1.0, math.inf, 0.0], "NaN or infinity"),
        ([0.0, 0.0, 0.0], "zero vector"),
        ([[1.0, 2.0, 3.0]], "one-dimensional"),
        (["a", "b", "c"], "not a sequence of numbers"),
        ("abc", "sequence of 3 floats"),
        (None, "sequence of 3 floats"),
        ([1e39, 0.0, 0.0], "float32"),
    ]:
        with pytest.raises(InvalidInputError, match=words):
            guards.check_vector(vec, 3, what="q")


def test_ids() -> None:
    assert guards.check_ids(["a", "b", "a"]) == ["a", "b"]
    assert guards.check_ids(()) == []
    for ids in ["abc", b"abc", 3, ["a", ""], ["a", None], ["a", 1]]:
        with pytest.raises(InvalidInputError):
            guards.check_ids(ids)


def test_filters() -> None:
    assert guards.check_filter(None) == []
    assert guards.check_filter({"a": 1, "b.c": "x", "d": None, "e": [1, "y"]}) == [
        ("a", 1),
        ("b.c", "x"),
        ("d", None),
        ("e", [1, "y"]),
    ]
    for flt, words in [
        ({"a": {"b": 1}}, "JSON scalar"),
        ({"a": object()}, "JSON scalar"),
        ({"a": [1, [2]]}, "JSON scalar"),
        ({"a": math.nan}, "JSON number"),
        ({"": 1}, "non-empty"),
        ({"a..b": 1}, "empty dotted part"),
        ({"a=b": 1}, "'='"),
        ({1: 1}, "non-empty string"),
        ([("a", 1)], "mapping"),
    ]:
        with pytest.raises(InvalidInputError, match=words):
            guards.check_filter(flt)


def test_documents() -> None:
    a1 = Document("a", "first", {"x": [1, {"y": None}]})
    b = Document("b", "b")
    a2 = Document("a", "second")
    assert guards.check_documents([a1, b, a2]) == [b, a2]  # last duplicate wins
    bad_id = Document("c", "c")
    bad_id.id = 5  # type: ignore[assignment]
    for docs, words in [
        (Document("a", "a"), "single Document"),
        ("abc", "iterable of Document"),
        ([{"id": "a"}], "not a hoprag Document"),
        ([bad_id], "non-empty string"),
        ([Document("a", "a", {"s": {1, 2}})], "JSON-serialisable"),
        ([Document("a", "a", {"f": math.inf})], "JSON cannot hold"),
        ([Document("a", "a", {"d": {2: "x"}})], "non-string key"),
    ]:
        with pytest.raises(InvalidInputError, match=words):
            guards.check_documents(docs)


@pytest.mark.parametrize("name", ["ks; DROP TABLE x", "a b", "1a", "", "a" * 49, "ks.t", None])
def test_names_must_be_plain(name: Any) -> None:
    with pytest.raises(InvalidInputError, match="not a plain name"):
        check_name(name, what="keyspace")


# --- translate ------------------------------------------------------------------------------------


def _server(cls: type[Exception], message: str, **kw: Any) -> Exception:
    return cls(f'Error from server: code=2200 [Invalid query] message="{message}"', **kw)


def test_translate_limit_and_dimension() -> None:
    err = translate(
        _server(
            InvalidRequest,
            "Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than "
            "1000. LIMIT was 1001",
        ),
        "vector search on ks.t",
    )
    assert isinstance(err, InvalidInputError)
    assert "vector search on ks.t" in str(err) and "1000" in str(err)
    err = translate(
        _server(
            InvalidRequest,
            "Invalid vector literal for embedding of type vector<float, 3>; expected 3 "
            "elements, but given 2",
        ),
        "q",
    )
    assert isinstance(err, InvalidInputError) and "dimension" in str(err)
    assert isinstance(translate(_server(InvalidRequest, "other"), "q"), InvalidInputError)


def test_translate_failures_timeouts_and_unavailability() -> None:
    read = ReadFailure("Operation failed - received 0 responses and 1 failures: UNKNOWN")
    write = WriteFailure("Operation failed - received 0 responses and 1 failures: UNKNOWN")
    for exc, kind, words in [
        (read, StoreError, "zero or NaN vector"),
        (write, StoreError, "write failed"),
        (Unavailable("Cannot achieve consistency level QUORUM"), StoreUnavailableError, "replicas"),
        (NoHostAvailable("Unable to connect", {"127.0.0.1": OSError()}), StoreUnavailableError, ""),
        (ReadTimeout("timed out"), StoreError, "in time"),
        (OperationTimedOut("client timeout"), StoreError, "timed out"),
        (RuntimeError("boom"), StoreError, "boom"),
    ]:
        err = translate(exc, "adjacent query on ks.t")
        assert type(err) is kind, (exc, err)
        assert words in str(err) and "adjacent query on ks.t" in str(err)
    assert not isinstance(translate(read, "x"), StoreUnavailableError)
    same = InvalidInputError("already ours")
    assert translate(same, "x") is same


def test_write_consistency_is_checked_by_name() -> None:
    from hoprag.stores.cassandra.guards import check_consistency

    assert check_consistency("local_quorum") == "LOCAL_QUORUM"
    assert check_consistency(None) is None
    with pytest.raises(InvalidInputError, match="write_consistency"):
        check_consistency("MOST")
