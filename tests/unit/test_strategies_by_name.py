"""Strategies by name (`hoprag.strategies.strategy_by_name`): each name builds its strategy
with the parameters given, a parameter of another strategy is refused naming the strategies
that take it, and `scored` ranks by a field or by the similarity."""

from __future__ import annotations

import pytest

from hoprag.documents import Node, Path
from hoprag.errors import InvalidInputError
from hoprag.strategies import (
    MISSING_SCORE,
    STRATEGIES,
    Beam,
    Eager,
    Mmr,
    Scored,
    similarity_scorer,
    strategy_by_name,
)


def _node(metadata: dict[str, object], similarity: float = 0.5) -> Node:
    return Node(id="n", content="", depth=0, similarity_score=similarity, embedding=None,
                metadata=metadata, incoming_edges=frozenset(), outgoing_edges=frozenset(),
                path=Path(nodes=("n",)))  # fmt: skip


@pytest.mark.parametrize(("name", "kind"), [("eager", Eager), ("mmr", Mmr), ("scored", Scored),
                                            ("beam", Beam)])  # fmt: skip
def test_each_name_builds_its_strategy_with_the_parameters_given(name: str, kind: type) -> None:
    s = strategy_by_name(name, select_k=3, max_depth=1)
    assert type(s) is kind and (s.select_k, s.max_depth) == (3, 1)
    assert STRATEGIES[name] is kind


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(InvalidInputError) as caught:
        strategy_by_name("greedy")
    assert caught.value.argument == "strategy"
    assert all(repr(n) in str(caught.value) for n in STRATEGIES)


@pytest.mark.parametrize(
    ("name", "params", "argument", "owner"),
    [
        ("eager", {"lambda_mult": 0.5}, "lambda_mult", "'mmr'"),
        ("mmr", {"beam_width": 4}, "beam_width", "'beam'"),
        ("beam", {"score_field": "year"}, "score_field", "'scored'"),
    ],
)
def test_a_parameter_of_another_strategy_names_the_strategies_that_take_it(
    name: str, params: dict[str, object], argument: str, owner: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        strategy_by_name(name, **params)  # type: ignore[arg-type]
    assert caught.value.argument == argument
    assert owner in str(caught.value)


def test_a_parameter_no_strategy_takes_lists_the_strategys_own() -> None:
    with pytest.raises(InvalidInputError, match="one of eager's parameters") as caught:
        strategy_by_name("eager", beam_size=3)
    assert caught.value.argument == "beam_size"


def test_a_bad_value_gets_the_strategys_own_error() -> None:
    with pytest.raises(InvalidInputError, match="lambda_mult"):
        strategy_by_name("mmr", lambda_mult=2.0)


def test_scored_ranks_by_the_field_nested_or_not_and_missing_values_last() -> None:
    by_year = strategy_by_name("scored", score_field="info.year")
    assert isinstance(by_year, Scored)
    assert by_year.scorer(_node({"info": {"year": 1999}})) == 1999.0
    assert by_year.scorer(_node({"info": {"year": "1999"}})) == MISSING_SCORE
    assert by_year.scorer(_node({})) == MISSING_SCORE
    plain = strategy_by_name("scored")
    assert isinstance(plain, Scored) and plain.scorer is similarity_scorer
    with pytest.raises(InvalidInputError) as caught:
        strategy_by_name("scored", score_field="a..b")
    assert caught.value.argument == "score_field"
