"""Traversal strategies: pure selection logic over discovered nodes, no I/O.

Each strategy is immutable configuration; `start_run` returns the per-call `RunState`.
A new strategy (e.g. the path-search `Beam`, a later issue) subclasses `Strategy` and
`RunState` in its own module here and is exported below."""

from hoprag.strategies.base import DEFAULT_SELECT_K, RunState, Strategy, Tracker
from hoprag.strategies.eager import Eager
from hoprag.strategies.mmr import Mmr
from hoprag.strategies.scored import Scored

__all__ = ["DEFAULT_SELECT_K", "Eager", "Mmr", "RunState", "Scored", "Strategy", "Tracker"]
