"""CassandraStore's own input checks (the ANN bound, the over-query factor, consistency names,
CQL names, CassandraConfig) and its error translation, without a Cassandra node. The checks
shared with every store are tested with `hoprag.validation`."""

from __future__ import annotations

import re
from typing import Any

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
from pydantic import ValidationError

from hoprag.errors import InvalidInputError, StoreError, StoreUnavailableError
from hoprag.stores.cassandra import guards
from hoprag.stores.cassandra.config import CassandraConfig
from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.names import check_name


def test_the_over_query_factor_is_an_int_in_1_to_16() -> None:
    assert guards.check_overquery(1) == 1 and guards.check_overquery(16) == 16
    for bad in (0, 17, True, 1.5, "2", None):
        with pytest.raises(
            InvalidInputError, match=re.escape("ann_overquery must be an int in 1..16")
        ):
            guards.check_overquery(bad)


def test_write_consistency_is_checked_by_name() -> None:
    assert guards.check_consistency("local_quorum") == "LOCAL_QUORUM"
    assert guards.check_consistency(None) is None
    for bad in ("MOST", 1, b"ALL"):
        with pytest.raises(InvalidInputError, match="write_consistency must be one of ONE"):
            guards.check_consistency(bad)


# --- CassandraConfig ------------------------------------------------------------------------------


def test_a_config_holds_checked_normalised_options() -> None:
    cfg = CassandraConfig(
        keyspace="KS",
        table="Docs",
        mode="cassio",
        list_fields=["tags", "loc.city"],
        write_consistency="all",
        request_timeout=3,
    )
    assert (cfg.keyspace, cfg.table) == ("ks", "docs")
    assert cfg.list_fields == ("tags", "loc.city")
    assert cfg.write_consistency == "ALL" and cfg.request_timeout == 3.0
    assert (cfg.max_in_flight, cfg.ann_overquery, cfg.dimension) == (128, 1, None)
    assert cfg.candidate_pool == 0  # no pool unless asked
    with pytest.raises(ValidationError):  # frozen: a store's options do not change under it
        cfg.max_in_flight = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("options", "argument", "message"),
    [
        ({"max_in_flight": 0}, "max_in_flight", "max_in_flight must be an int in 1..32768, got 0"),
        ({"max_in_flight": True}, "max_in_flight", "an int in 1..32768, got True"),
        ({"dimension": 8193}, "dimension", "dimension must be an int in 1..8192 or None"),
        ({"dimension": 3.0}, "dimension", "got 3.0"),
        ({"replication_factor": 11}, "replication_factor", "an int in 1..10, got 11"),
        ({"ann_overquery": 17}, "ann_overquery", "ann_overquery must be an int in 1..16, got 17"),
        ({"candidate_pool": 1001}, "candidate_pool", "an int in 0..1000 (0: no pool), got 1001"),
        ({"candidate_pool": -1}, "candidate_pool", "an int in 0..1000 (0: no pool), got -1"),
        ({"candidate_pool": True}, "candidate_pool", "an int in 0..1000 (0: no pool), got True"),
        ({"mode": "lc"}, "mode", "mode must be 'hoprag' or 'cassio', got 'lc'"),
        ({"create_schema": "yes"}, "create_schema", "create_schema must be True or False"),
        ({"request_timeout": 0}, "request_timeout", "a number of seconds > 0, or None, got 0"),
        ({"write_consistency": "MOST"}, "write_consistency", "one of ONE, TWO"),
        ({"list_fields": ["a"]}, "list_fields", "empty unless mode='cassio'"),
        ({"list_fields": "tags", "mode": "cassio"}, "list_fields", "a collection of field"),
        ({"list_fields": ["a=b"], "mode": "cassio"}, "a list_fields entry", "field name"),
        ({"keyspace": "ks; DROP"}, "keyspace", "keyspace 'ks; DROP' is not a plain name"),
        ({"table": None}, "table", "table None is not a plain name"),
        ({"max_inflight": 3}, "max_inflight", "unknown option 'max_inflight'; the options are"),
    ],
)
def test_a_bad_option_is_invalid_input_naming_it(
    options: dict[str, Any], argument: str, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=re.escape(message)) as info:
        CassandraConfig(**{"keyspace": "ks", "table": "t", **options})
    assert info.value.argument == argument
    assert not isinstance(info.value, ValidationError)


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


def test_no_host_available_from_unavailable_answers_says_replicas_not_unreachable() -> None:
    """The driver raises NoHostAvailable when every node it tried answered Unavailable (seen in
    CI: a load at ALL with one of three nodes down); the nodes were reached, so the message is
    Unavailable's, also when the stopped node of the plan refused the connection (seen in a
    later run of the same test). Only connection errors say unreachable."""
    answered = Unavailable(
        'Error from server: code=1000 [Unavailable exception] message="Cannot achieve '
        'consistency level ALL"',
        required_replicas=3,
        alive_replicas=2,
    )
    both = {"127.0.0.4:9042": answered, "127.0.0.5:9042": answered}
    err = translate(NoHostAvailable("Unable to complete the operation", both), "load on ks.t")
    assert type(err) is StoreUnavailableError
    assert "load on ks.t: not enough live replicas for the requested consistency" in str(err)
    assert "Cannot achieve consistency level ALL" in str(err)
    mixed = {"127.0.0.4:9042": answered, "127.0.0.6:9042": OSError("refused")}
    err = translate(NoHostAvailable("Unable to complete the operation", mixed), "load on ks.t")
    assert "not enough live replicas for the requested consistency" in str(err)
    refused = {"127.0.0.4:9042": OSError("refused"), "127.0.0.6:9042": OSError("refused")}
    err = translate(NoHostAvailable("Unable to connect", refused), "load on ks.t")
    assert type(err) is StoreUnavailableError
    assert "no Cassandra node could be reached" in str(err)
