"""What a store sent, for whoever asks: `record_statements()` opens a per-context log that
every store statement run in that context (and in the tasks it starts) is appended to, as its
query text and bound values, once per statement (a retry is not logged again). Store-neutral:
a store that sends statements (CassandraStore) reports them with `record`; one that sends none
(MemoryStore) leaves the log empty. Agent tools show the log as the queries a run sent."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

Call = tuple[str, Sequence[Any]]
"""A statement: its query text and bound values."""

_RECORDER: contextvars.ContextVar[list[Call] | None] = contextvars.ContextVar(
    "hoprag_statement_recorder", default=None
)


@contextmanager
def record_statements() -> Iterator[list[Call]]:
    """A list that receives `(query text, bound values)` of every statement a store runs in
    this context while the block runs, in the order they are handed to the database. Blocks
    nest: an outer recorder receives the inner block's statements too when the inner ends."""
    parent = _RECORDER.get()
    log: list[Call] = []
    token = _RECORDER.set(log)
    try:
        yield log
    finally:
        _RECORDER.reset(token)
        if parent is not None:
            parent.extend(log)


def record(calls: Sequence[Call]) -> None:
    """Log `calls` to the context's recorder, if one is set (a no-op otherwise)."""
    log = _RECORDER.get()
    if log is not None:
        log.extend((text, tuple(params)) for text, params in calls)
