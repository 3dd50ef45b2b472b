"""The candidate pool's decisions (`hoprag.stores.cassandra.pool.Pool`): which edges it can
answer and with which ids. Its reads and the traversal's figures are checked on the node in
tests/integration/test_cassandra_pool.py."""

from __future__ import annotations

from hoprag.stores.cassandra.pool import Pool

CLAUSE = "tokens CONTAINS ?"


def _pool(rows: list[tuple[str, set[str] | None, float]], *, complete: bool = False) -> Pool:
    return Pool.of(rows, complete=complete, clause_text=CLAUSE)


def _edge(*tokens: str) -> list[tuple[str, tuple[str]]]:
    return [(CLAUSE, (t,)) for t in tokens]


ROWS = [
    ("d3", {"a", "b"}, 0.70),
    ("d1", {"a"}, 0.90),
    ("d2", {"b"}, 0.80),
    ("d4", {"a", "b"}, 0.60),
    ("d5", None, 0.95),
]


def test_the_pool_ranks_best_first_and_keeps_an_ids_best_score_once() -> None:
    pool = _pool([*ROWS, ("d4", {"a", "b"}, 0.99)])  # a second branch's row for d4
    assert pool.ids == ["d4", "d5", "d1", "d2", "d3"]


def test_equal_scores_are_ranked_by_id() -> None:
    pool = _pool([("b", {"t"}, 0.5), ("a", {"t"}, 0.5), ("c", {"t"}, 0.5)])
    assert pool.answer(_edge("t"), 3) == ["a", "b", "c"]


def test_an_edge_with_k_holders_in_the_pool_is_answered_with_the_best_k() -> None:
    pool = _pool(ROWS)
    assert pool.answer(_edge("a"), 2) == ["d1", "d3"]
    assert pool.answer(_edge("b"), 3) == ["d2", "d3", "d4"]


def test_an_edge_with_fewer_than_k_holders_is_not_answered_by_a_partial_pool() -> None:
    pool = _pool(ROWS)
    assert pool.answer(_edge("a"), 4) is None
    assert pool.answer(_edge("missing"), 1) is None


def test_a_complete_pool_answers_every_edge_even_with_fewer_holders() -> None:
    pool = _pool(ROWS, complete=True)
    assert pool.answer(_edge("a"), 10) == ["d1", "d3", "d4"]
    assert pool.answer(_edge("missing"), 10) == []


def test_an_edge_of_several_clauses_needs_documents_holding_all_of_them() -> None:
    pool = _pool(ROWS)
    assert pool.answer(_edge("a", "b"), 2) == ["d3", "d4"]
    assert pool.answer(_edge("a", "b"), 3) is None


def test_a_clause_the_tokens_cannot_decide_sends_the_edge_to_the_node() -> None:
    pool = _pool(ROWS, complete=True)
    assert pool.answer([("n_year >= ?", (3,))], 1) is None
    assert pool.answer([], 1) is None
