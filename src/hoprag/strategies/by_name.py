"""Strategies by name, for callers that take them as text (a command line, a config file, an
agent): `strategy_by_name("mmr", lambda_mult=0.7)`, and the `Scored` scorers a name can ask
for (`field_scorer`: a numeric metadata field; `similarity_scorer`: the query similarity).

A parameter the named strategy does not take is refused, naming the strategies that do,
instead of Python's `TypeError`; a bad value gets the strategy's own `InvalidInputError`."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

from hoprag.documents import Node
from hoprag.edges import MISSING, nested_get
from hoprag.errors import invalid
from hoprag.strategies.base import Strategy
from hoprag.strategies.beam import Beam
from hoprag.strategies.eager import Eager
from hoprag.strategies.mmr import Mmr
from hoprag.strategies.scored import Scored
from hoprag.validation import check_field

STRATEGIES: Mapping[str, type[Strategy]] = {
    "eager": Eager,
    "mmr": Mmr,
    "scored": Scored,
    "beam": Beam,
}
"""The strategies by the names they are given as text."""
MISSING_SCORE = -math.inf
"""What `field_scorer` gives a node without a finite number in its field: below every other."""


def field_scorer(field: str) -> Callable[[Node], float]:
    """A `Scored` scorer: the node's numeric metadata `field` (a dotted name reaches into
    nested objects, as in filters and edges); a node without it, or with a value that is not a
    finite number (booleans included), scores `MISSING_SCORE`, below every node that has one.
    A malformed field name (empty, or with an empty dotted part) is an InvalidInputError."""
    field = check_field(field, what="score_field")

    def score(node: Node) -> float:
        value = nested_get(node.metadata, field)
        if value is MISSING or isinstance(value, bool) or not isinstance(value, int | float):
            return MISSING_SCORE
        return float(value) if math.isfinite(value) else MISSING_SCORE

    return score


def similarity_scorer(node: Node) -> float:
    """The default `Scored` scorer: the node's similarity to the query."""
    return float(node.similarity_score)


def _parameters(kind: type[Strategy]) -> set[str]:
    return {f.name for f in dataclasses.fields(kind) if f.init}


def strategy_by_name(name: str, *, score_field: str | None = None, **params: Any) -> Strategy:
    """The strategy `name` (one of `STRATEGIES`) with `params`. For `scored`, `score_field`
    names the numeric field to rank by (`field_scorer`; the query similarity when None) unless
    a `scorer` is given."""
    kind = STRATEGIES.get(name) if isinstance(name, str) else None
    if kind is None:
        raise invalid("strategy", name, f"one of {', '.join(map(repr, STRATEGIES))}")
    if score_field is not None and kind is not Scored:
        raise invalid("score_field", score_field, "given only with the 'scored' strategy")
    takes = _parameters(kind)
    for key, value in params.items():
        if key not in takes:
            owners = [n for n, k in STRATEGIES.items() if key in _parameters(k)]
            allowed = (
                f"given only with {' or '.join(map(repr, owners))}"
                if owners
                else f"one of {name}'s parameters ({', '.join(sorted(takes))})"
            )
            raise invalid(key, value, allowed)
    if kind is Scored and "scorer" not in params:
        params["scorer"] = similarity_scorer if score_field is None else field_scorer(score_field)
    return kind(**params)
