"""Traversal strategies: pure selection logic over discovered nodes, no I/O.

Each strategy is immutable configuration; `start_run` returns the per-call `RunState`.
A new strategy subclasses `Strategy` and `RunState` in its own module here (as the path
search `Beam` does, with its signals in `signals`) and is exported below."""

from hoprag.strategies.base import DEFAULT_SELECT_K, RunState, Strategy, Tracker
from hoprag.strategies.beam import Beam, Prune
from hoprag.strategies.by_name import (
    MISSING_SCORE,
    STRATEGIES,
    field_scorer,
    similarity_scorer,
    strategy_by_name,
)
from hoprag.strategies.eager import Eager
from hoprag.strategies.mmr import Mmr
from hoprag.strategies.scored import Scored
from hoprag.strategies.signals import Importance, Recency, Signal, SignalContext, StartBoost

__all__ = [
    "DEFAULT_SELECT_K",
    "MISSING_SCORE",
    "STRATEGIES",
    "Beam",
    "Eager",
    "Importance",
    "Mmr",
    "Prune",
    "Recency",
    "RunState",
    "Scored",
    "Signal",
    "SignalContext",
    "StartBoost",
    "Strategy",
    "Tracker",
    "field_scorer",
    "similarity_scorer",
    "strategy_by_name",
]
