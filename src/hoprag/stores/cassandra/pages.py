"""Paged reads of a whole table (`SELECT ... FROM ks.table`, no WHERE), a page at a time on the
event loop through the one bridge to the driver (`bridge.submit`, `Request.page`), each page
retried after a transient failure as the executor retries a read (`ReadRetries`).
`CassandraStore.adocuments` and a field declaration's backfill read the table this way."""

from __future__ import annotations

from typing import Any

import anyio

from hoprag.stores.cassandra import bridge
from hoprag.stores.cassandra.errors import translate
from hoprag.stores.cassandra.executor import Executor, ReadRetries

PAGE_SIZE = 500
"""Rows per page."""
PAGE_TIMEOUT = 60.0
"""Seconds the driver waits for one page."""


class PageReader:
    """The pages of `SELECT columns FROM fq`, read one at a time (each with the previous
    page's paging state)."""

    def __init__(
        self, session: Any, executor: Executor, fq: str, columns: str = "id, metadata"
    ) -> None:
        from cassandra.query import SimpleStatement

        self.session = session
        self.executor = executor
        self.fq = fq
        self.stmt = SimpleStatement(f"SELECT {columns} FROM {fq}", fetch_size=PAGE_SIZE)
        self.state: Any = None
        self.done = False

    async def next_page(self) -> list[Any] | None:
        """The next page of rows as tuples, or None after the last."""
        if self.done:
            return None
        retries = ReadRetries(ann=False)
        while True:
            try:
                request = bridge.submit(
                    self.session,
                    self.stmt,
                    execution_profile=self.executor.profile,
                    request_timeout=PAGE_TIMEOUT,
                    paging_state=self.state,
                )
                rows, self.state = await request.page()
                break
            except Exception as exc:
                delay = retries.wait_before_next(exc)
                if delay is None:
                    raise translate(exc, f"reading {self.fq} page by page") from exc
            await anyio.sleep(delay)
        self.done = self.state is None
        return self.executor.tuples(rows)
