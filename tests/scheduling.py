"""How the test run is laid out on pytest-xdist workers (see tests/conftest.py, whose hooks
call these): every module is a unit of work, modules that share state are one unit (`GROUPS`),
the Cassandra compliance suite is split (`SPLIT`), the long units come first (`FIRST`), any
listed in `LAST` last."""

from __future__ import annotations

import hashlib
from typing import Any

GROUPS = {
    # the run's one films table (integration/conftest.py's films_demo), loaded by the demo
    "tests/integration/test_demo_films.py": "films",
    "tests/integration/test_tools_cassandra.py": "films",
    "tests/integration/test_mcp.py": "films",
    "tests/integration/test_scopes_cassandra.py": "films",
    # keyspace hoprag_bench and the benchmark's proxy address
    "tests/integration/test_bench_quick.py": "bench",
    "tests/integration/test_bench_rounds.py": "bench",
    # the 3-node clusters, one after the other on one worker, started first: the 3-node module
    # (127.0.0.4-6), then the soak (.31-.33) once that cluster is down
    "tests/integration/test_cluster3.py": "clusters",
    "tests/integration/test_soak.py": "clusters",
}
SPLIT = {"tests/integration/test_cassandra_store_compliance.py": 2}
FIRST = (
    "clusters",
    "films",
    "bench",
)
LAST: tuple[str, ...] = ()
"""Units queued after all the others (none now). The soak was one until 2026-12-03: queued
last it ran alone on the run's tail (187-248 s) while the other worker idled; in the
`clusters` unit it follows the 3-node module on the same worker, so the two clusters never run
at once and the other worker has the rest of the suite to run beside it. (Started first beside
the films load and the 3-node module, load average 46 here, a killed node took 136 s to come
back and 61 of its traversals ran out of read retries.)"""


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to (its module, its group, or a part of a split
    module)."""
    module = nodeid.split("::", 1)[0]
    parts = SPLIT.get(module)
    if parts:
        return f"{module}#{int(hashlib.sha1(nodeid.encode()).hexdigest(), 16) % parts}"
    return GROUPS.get(module, module)


def long_units_first(items: list[Any]) -> None:
    """Put the long units first, in place (every worker collects, and so orders, the same
    way)."""
    rank = {u: i for i, u in enumerate(FIRST)}
    rank |= {u: len(FIRST) + 1 + i for i, u in enumerate(LAST)}
    order = sorted(
        range(len(items)),
        key=lambda i: (rank.get(unit_of(items[i].nodeid).split("#")[0], len(FIRST)), i),
    )
    items[:] = [items[i] for i in order]


def make_scheduler(config: Any, log: Any) -> Any:
    """xdist's scope scheduling with our units as the scopes."""
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def schedule(self) -> None:
            # xdist re-sorts the units by their count of tests unless told not to, which put
            # the 3-node unit (15 tests, 9 minutes) last and left a worker idle at the end.
            self.config.option.loadscopereorder = False
            super().schedule()

    return Units(config, log)
