"""Complete reads of a CassandraStore for scopes (`PreparedQuery.amatching` / `afiltered`).

A scope needs every document an edge leads to, not the top k: each edge becomes one paged SAI
equality read, `SELECT ... WHERE <condition> [AND <filter's conditions>] LIMIT ?` (hoprag
tables: `tokens CONTAINS ?`; cassio tables: `metadata_s[?] = ?`), every value a bound
parameter. The driver pages the rows (the session's fetch size, 5000 by default) and the
executor's `Request.rows` follows every page up to the LIMIT. A hop's reads go out as one
burst within the run's limiter. Scores, when the query has a vector, come from the decoded
vector (`include_embeddings`) or from Cassandra's `similarity_cosine`, as for vector searches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hoprag.stores.cassandra.layouts import Clause, Layout


def match_query(
    layout: Layout, clauses: Sequence[str], include_embeddings: bool, scored: bool
) -> str:
    """`SELECT <columns> FROM <table> WHERE clause AND ... LIMIT ?` (at least one clause).
    Bound values: ([query vector for the score], *the clauses' values, limit)."""
    if not clauses:
        raise ValueError("a complete read needs at least one condition")
    cols = layout.base_columns()
    if include_embeddings:
        cols.append(layout.vector_col)
    elif scored:
        cols.append(f"similarity_cosine({layout.vector_col}, ?)")
    where = " AND ".join(clauses)
    return f"SELECT {', '.join(cols)} FROM {layout.fq} WHERE {where} LIMIT ?"


def match_params(head: Sequence[Any], clauses: Sequence[Clause], limit: int) -> list[Any]:
    """The bound values of `match_query`: `head` (the score's vector, or nothing), the
    clauses' values, then the limit."""
    params = list(head)
    for _, values in clauses:
        params.extend(values)
    params.append(limit)
    return params
