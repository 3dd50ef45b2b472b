"""How the test run is laid out on pytest-xdist workers (see tests/conftest.py, whose hooks
call these): every module is a unit of work, modules that share state are one unit (`GROUPS`),
the Cassandra compliance suite is split (`SPLIT`), the long units come first (`FIRST`) and the
soak last (`LAST`)."""

from __future__ import annotations

import hashlib
from typing import Any

GROUPS = {
    # the run's one films table (integration/conftest.py's films_demo), loaded by the demo
    "tests/integration/test_demo_films.py": "films",
    "tests/integration/test_tools_cassandra.py": "films",
    "tests/integration/test_mcp.py": "films",
    "tests/integration/test_scopes_cassandra.py": "films",
    "tests/integration/test_langchain_tool_standard_cassandra.py": "films",
    "tests/integration/test_readme_quickstart.py": "films",
    # keyspace hoprag_bench and the benchmark's proxy address
    "tests/integration/test_bench_quick.py": "bench",
    "tests/integration/test_bench_rounds.py": "bench",
}
SPLIT = {"tests/integration/test_cassandra_store_compliance.py": 2}
FIRST = (
    # the 3-node cluster (one for every test that needs three nodes but the soak's)
    "tests/integration/test_cluster3.py",
    "films",
    "bench",
    # fresh virtual environments for the built wheel, one per extra (about a minute and a half)
    "tests/integration/test_packaging.py",
    # its own node with Astra DB's guardrails, and a bundle behind HAProxy (2-4 minutes)
    "tests/integration/test_astra_rules.py",
)
LAST = ("tests/integration/test_soak.py",)
"""Units queued after all the others. The soak (its own 3-node cluster, 336 traversals in
flight) started beside the films load and the 3-node unit, with a load average of 46 here,
took a killed node 136 s to come back and 61 of its traversals ran out of read retries; queued
last, it starts once the 3-node unit is long done and the other worker is on the run's tail."""


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
