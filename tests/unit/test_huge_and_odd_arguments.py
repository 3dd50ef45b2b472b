"""Arguments of any size or shape get `InvalidInputError` naming them, never a raw
`TypeError` or `OverflowError`, and limits are the same whatever the store (issue #28,
defects 12 and 14)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hoprag import Beam, Eager, InvalidInputError, Mmr, Scope, Scored, traverse
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores import MemoryStore
from hoprag.validation import MAX_K

HUGE = 10**400  # float() of it overflows


def _traverse(**kwargs: Any) -> Any:
    store = MemoryStore(HashEmbedding(8))
    return traverse("x", store=store, edges=[("a", "a")], strategy=Eager(), **kwargs)


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda: Scope(ids=5, edges=[("a", "a")]), "Scope ids"),
        (lambda: Scope(ids={"a": 1}, edges=[("a", "a")]), "Scope ids"),
        (lambda: Mmr(lambda_mult=HUGE), "lambda_mult"),
        (lambda: Mmr(lambda_mult=float("nan")), "lambda_mult"),
        (lambda: Mmr(min_mmr_score=HUGE), "min_mmr_score"),
        (lambda: _traverse(timeout=HUGE), "timeout"),
        (lambda: _traverse(timeout=float("inf")), "timeout"),
    ],
)
def test_an_argument_beyond_a_float_or_of_the_wrong_shape_is_named(
    make: Callable[[], Any], named: str
) -> None:
    with pytest.raises(InvalidInputError, match=named):
        make()


def test_a_scope_takes_its_ids_from_any_iterable_once() -> None:
    scope = Scope(ids=(i for i in ["b", "a", "b"]), edges=[("a", "a")])
    assert scope.ids == ("b", "a")


@pytest.mark.parametrize("strategy", [Eager, Mmr, Scored, Beam])
@pytest.mark.parametrize("param", ["start_k", "adjacent_k"])
def test_a_search_width_beyond_what_every_store_answers_is_refused_by_the_strategy(
    strategy: Any, param: str
) -> None:
    extra = {"scorer": lambda node: 0.0} if strategy is Scored else {}
    strategy(**{param: MAX_K}, **extra)  # the bound itself is allowed
    with pytest.raises(InvalidInputError, match=f"{param} must be <= {MAX_K}"):
        strategy(**{param: MAX_K + 1}, **extra)
