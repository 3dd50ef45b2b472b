"""Checks that only Cassandra needs (the shared ones are in `hoprag.validation`): the ANN
LIMIT bound, the over-query factor and consistency level names. Each raises
`InvalidInputError` naming the argument, the bad value and what is allowed."""

from __future__ import annotations

from typing import Any

from hoprag import validation
from hoprag.errors import invalid

MAX_K = validation.MAX_K
"""Cassandra 5.0 refuses an ANN query with a LIMIT above 1000 (`sai.vector_search.max_top_k`);
every store shares the bound (`hoprag.validation.MAX_K`)."""

GET_CHUNK = 100
"""Ids per `WHERE id IN ?` read."""

MAX_OVERQUERY = 16
"""The largest `ann_overquery` factor."""

CONSISTENCY_LEVELS = ("ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM",
                      "LOCAL_ONE", "ANY")  # fmt: skip


def check_overquery(value: Any, *, what: str = "ann_overquery") -> int:
    """`value` as the over-query factor of vector searches (an int in 1..MAX_OVERQUERY)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_OVERQUERY:
        raise invalid(what, value, f"an int in 1..{MAX_OVERQUERY}")
    return value


def check_consistency(level: Any, *, what: str = "write_consistency") -> str | None:
    """A consistency level name in upper case (None stays None)."""
    if level is None:
        return None
    if isinstance(level, str) and level.upper() in CONSISTENCY_LEVELS:
        return level.upper()
    raise invalid(what, level, f"one of {', '.join(CONSISTENCY_LEVELS)}, or None")


DEFAULT_HUB_HOLDERS = 0
"""`CassandraStore(hub_holders=...)` unless given: 0, no edge plans (`plans.py`). At 1M documents
on this project's node the plans' pool of 1,000 cost more time than the hub searches it
replaced (p50 up 12-160%, node CPU down 2-28%; docs/benchmarks.md, "Edge plans at 10k and
1M"), so plans are opt-in until a hub read that pays is found."""


DEFAULT_READ_HOLDERS = 32
"""`CassandraStore(read_holders=...)` unless given (`plans.py`): on a table that keeps holder
counts, an edge whose value 32 or fewer documents hold reads them all instead of a filtered
vector search. Measured on this project's node (docs/benchmarks.md, "Reading a value's
holders"): reading a value's holders costs less than its filtered search up to about 40
holders at 10k documents, 50 at 100k and 350 at 1M, and with 32 node CPU per traversal was
lower in 26 of 27 cases at 10k, 100k and 1M in one sitting and in 27 of 27 in another."""

MAX_READ_HOLDERS = 10_000
"""The largest `read_holders`: an edge read whole reads every holder's row."""
