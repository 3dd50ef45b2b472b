"""The schema in schema/ on a real Cassandra 5.0 node: ANN search with a token filter, list
values matched by CONTAINS, primary-key reads, and index readiness."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hoprag.stores.cassandra.schema import (
    apply_schema,
    index_names,
    sstable_count,
    table_statements,
)
from hoprag.stores.cassandra.tokens import metadata_tokens, token

LAUNCHER = Path(__file__).resolve().parents[2] / "scripts" / "cassandra"

DOCS = {
    "cat": ([1.0, 0.1, 0.0, 0.0], {"type": "mammal", "tags": ["pet", "indoor"], "legs": 4}),
    "dog": ([0.9, 0.3, 0.0, 0.1], {"type": "mammal", "tags": ["pet", "outdoor"], "legs": 4.0}),
    "eagle": ([0.7, 0.0, 0.7, 0.0], {"type": "bird", "tags": ["wild"], "legs": 2}),
    "shark": ([0.0, 0.0, 0.2, 1.0], {"type": "fish", "tags": ["wild", "ocean"], "n": {"k": "x"}}),
}


@pytest.fixture
def loaded(cassandra_session: Any, keyspace: str) -> str:
    apply_schema(cassandra_session, keyspace, "docs", 4, create_keyspace=False)
    insert = cassandra_session.prepare(
        f"INSERT INTO {keyspace}.docs (id, content, embedding, metadata, tokens) "
        "VALUES (?, ?, ?, ?, ?)"
    )
    for doc_id, (vec, md) in DOCS.items():
        cassandra_session.execute(
            insert, (doc_id, f"about {doc_id}", vec, json.dumps(md), metadata_tokens(md))
        )
    return keyspace


def _ann(session: Any, ks: str, vec: list[float], *clauses: str, k: int = 10) -> list[Any]:
    where = " AND ".join("tokens CONTAINS ?" for _ in clauses)
    cql = (
        f"SELECT id, similarity_cosine(embedding, ?) AS s FROM {ks}.docs "
        f"{'WHERE ' + where if where else ''} ORDER BY embedding ANN OF ? LIMIT ?"
    )
    return list(session.execute(session.prepare(cql), (vec, *clauses, vec, k)))


def test_schema_creates_a_queryable_vector_and_token_index(
    cassandra_session: Any, loaded: str
) -> None:
    rows = cassandra_session.execute(
        "SELECT index_name, is_queryable FROM system_views.sai_column_indexes "
        "WHERE keyspace_name = %s",
        (loaded,),
    )
    assert {r.index_name for r in rows if r.is_queryable} == set(index_names("docs"))


def test_applying_the_schema_twice_is_harmless(cassandra_session: Any, loaded: str) -> None:
    apply_schema(cassandra_session, loaded, "docs", 4, create_keyspace=False)
    count = cassandra_session.execute(f"SELECT count(*) FROM {loaded}.docs").one()[0]
    assert count == len(DOCS)


def test_ann_search_orders_by_cosine_similarity(cassandra_session: Any, loaded: str) -> None:
    q = [1.0, 0.0, 0.0, 0.0]
    rows = _ann(cassandra_session, loaded, q)
    mat = np.array([DOCS[r.id][0] for r in rows])
    cos = mat @ np.array(q) / np.linalg.norm(mat, axis=1)
    assert [r.id for r in rows] == ["cat", "dog", "eagle", "shark"]
    # similarity_cosine is (1 + cos) / 2
    assert np.allclose([2 * r.s - 1 for r in rows], cos, atol=1e-6)


def test_ann_search_with_a_metadata_token_filter(cassandra_session: Any, loaded: str) -> None:
    rows = _ann(cassandra_session, loaded, [0.5, 1.0, 0.0, 0.0], token("type", "mammal"))
    assert [r.id for r in rows] == ["dog", "cat"]


def test_list_values_match_by_contains(cassandra_session: Any, loaded: str) -> None:
    rows = _ann(cassandra_session, loaded, [0.0, 0.0, 0.0, 1.0], token("tags", "wild"))
    assert [r.id for r in rows] == ["shark", "eagle"]
    both = _ann(
        cassandra_session, loaded, [1.0, 0, 0, 0], token("tags", "pet"), token("tags", "outdoor")
    )
    assert [r.id for r in both] == ["dog"]


def test_numbers_match_whether_stored_as_int_or_float(cassandra_session: Any, loaded: str) -> None:
    rows = _ann(cassandra_session, loaded, [1.0, 0, 0, 0], token("legs", 4))
    assert {r.id for r in rows} == {"cat", "dog"}


def test_nested_fields_match_by_dotted_name(cassandra_session: Any, loaded: str) -> None:
    rows = _ann(cassandra_session, loaded, [1.0, 0, 0, 0], token("n.k", "x"))
    assert [r.id for r in rows] == ["shark"]


def test_primary_key_read_round_trips_metadata_types(cassandra_session: Any, loaded: str) -> None:
    stmt = cassandra_session.prepare(f"SELECT id, metadata FROM {loaded}.docs WHERE id = ?")
    row = cassandra_session.execute(stmt, ("dog",)).one()
    assert json.loads(row.metadata) == DOCS["dog"][1]
    assert isinstance(json.loads(row.metadata)["legs"], float)
    assert cassandra_session.execute(stmt, ("no-such-id",)).one() is None


def test_dimension_is_a_schema_parameter(cassandra_session: Any, keyspace: str) -> None:
    apply_schema(cassandra_session, keyspace, "wide", 384, create_keyspace=False)
    col = cassandra_session.cluster.metadata.keyspaces[keyspace].tables["wide"].columns["embedding"]
    assert col.cql_type == "vector<float, 384>"
    assert "vector<float, 384>" in table_statements(keyspace, "wide", 384)[0]


@pytest.mark.parametrize(
    ("vector", "k", "server_error", "hoprag_error", "says"),
    [
        ([1.0, 0.0, 0.0, 0.0], 1001, "InvalidRequest", "InvalidInputError", "at most 1000"),
        # Cassandra 5.0.8 reports a zero vector as a replica failure, not an InvalidRequest.
        ([0.0, 0.0, 0.0, 0.0], 3, "ReadFailure", "StoreError", "zero or NaN vector"),
    ],
    ids=["limit-above-1000", "zero-vector"],
)
def test_server_errors_become_clear_hoprag_errors(
    cassandra_session: Any,
    loaded: str,
    vector: list[float],
    k: int,
    server_error: str,
    hoprag_error: str,
    says: str,
) -> None:
    import hoprag.errors
    from hoprag.stores.cassandra.errors import translate

    stmt = cassandra_session.prepare(
        f"SELECT id FROM {loaded}.docs ORDER BY embedding ANN OF ? LIMIT ?"
    )
    with pytest.raises(Exception) as info:
        cassandra_session.execute(stmt, (vector, k))
    assert type(info.value).__name__ == server_error
    err = translate(info.value, "vector search")
    assert isinstance(err, getattr(hoprag.errors, hoprag_error))
    assert says in str(err) and "vector search" in str(err)


def _launcher(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(LAUNCHER), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
        timeout=300,
    )


def _nodetool(*args: str) -> subprocess.CompletedProcess[str]:
    return _launcher("nodetool", *args)


def test_compaction_merges_sai_segments_and_search_still_answers(
    cassandra_session: Any, loaded: str
) -> None:
    """`scripts/cassandra nodetool` drives the local node; `sstable_count` sees each flush
    as one more SSTable with its own SAI segments, and a major compaction merges them into one
    that answers the same ANN search."""
    first = _nodetool("flush", loaded, "docs")
    if first.returncode == 3:
        pytest.skip(f"the node is not one scripts/cassandra started: {first.stderr.strip()}")
    assert first.returncode == 0, first.stderr
    assert sstable_count(cassandra_session, loaded, "docs") == 1
    insert = cassandra_session.prepare(
        f"INSERT INTO {loaded}.docs (id, content, embedding, metadata, tokens) "
        "VALUES (?, ?, ?, ?, ?)"
    )
    for doc_id, vec in (("crow", [0.6, 0.1, 0.6, 0.0]), ("trout", [0.0, 0.1, 0.3, 0.9])):
        cassandra_session.execute(insert, (doc_id, doc_id, vec, "{}", set()))
    before = [r.id for r in _ann(cassandra_session, loaded, [0.5, 0.1, 0.5, 0.2])]
    assert _nodetool("flush", loaded, "docs").returncode == 0
    assert sstable_count(cassandra_session, loaded, "docs") == 2
    done = _nodetool("compact", loaded, "docs")
    assert done.returncode == 0, done.stderr
    assert sstable_count(cassandra_session, loaded, "docs") == 1
    after = [r.id for r in _ann(cassandra_session, loaded, [0.5, 0.1, 0.5, 0.2])]
    assert sorted(after) == sorted([*DOCS, "crow", "trout"])
    assert after == before


def test_pids_names_the_jvm_of_the_node_the_session_talks_to(cassandra_session: Any) -> None:
    """`scripts/cassandra pids` gives, per local node, the address the driver sees and the pid
    of a running CassandraDaemon (the bench reads that process's CPU time)."""
    r = _launcher("pids")
    if r.returncode == 3:
        pytest.skip(f"the node is not one scripts/cassandra started: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    pids = dict(line.split() for line in r.stdout.splitlines())
    hosts = {str(h.address) for h in cassandra_session.cluster.metadata.all_hosts()}
    assert hosts <= set(pids)
    for pid in pids.values():
        assert b"CassandraDaemon" in Path(f"/proc/{pid}/cmdline").read_bytes()
