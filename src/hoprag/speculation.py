"""Moved to `hoprag.engine.speculation` (the traversal engine's package); this module re-exports its
public names for one release."""

from hoprag.engine.speculation import (
    DEFAULT_BUDGET,
    MODES,
    SLOW_LINK_MODE,
    SLOW_LINK_SECONDS,
    NodeMaker,
    Plan,
    Speculation,
    check_speculation,
    plan_for,
)

__all__ = [
    "DEFAULT_BUDGET",
    "MODES",
    "SLOW_LINK_MODE",
    "SLOW_LINK_SECONDS",
    "NodeMaker",
    "Plan",
    "Speculation",
    "check_speculation",
    "plan_for",
]
