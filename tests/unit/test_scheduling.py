"""The test run's own xdist scheduler (tests/scheduling.py): modules and groups are units, and the
units start in the suite's order, long ones first, whatever their count of tests."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import scheduling


class _Node:
    """A stand-in for an xdist worker controller: records the test indexes it is sent."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent += indexes

    def send_runtest_all(self) -> None:  # pragma: no cover - not used by scope scheduling
        raise AssertionError("scope scheduling sends units, not everything")

    def shutdown(self) -> None:
        self.shutting_down = True


def _scheduler(workers: int) -> Any:
    option = SimpleNamespace(tx=[f"{workers}*popen"], loadscopereorder=True, maxschedchunk=None)
    get = lambda name: getattr(option, name, None)  # noqa: E731
    config = SimpleNamespace(option=option, getvalue=get, getoption=get)
    return scheduling.make_scheduler(config, None)


def test_units_start_in_the_suites_order_not_by_their_count_of_tests() -> None:
    collected = [
        "tests/integration/test_soak.py::test_b",
        *(f"tests/unit/test_many.py::test_{i}" for i in range(40)),
        *(f"tests/unit/test_more.py::test_{i}" for i in range(30)),
        "tests/integration/test_cluster3.py::test_a",
        "tests/integration/test_cluster3.py::test_c",
    ]
    items: list[Any] = [SimpleNamespace(nodeid=n) for n in collected]
    scheduling.long_units_first(items)  # the long units first, the soak last
    collection = [item.nodeid for item in items]
    assert collection[-1] == "tests/integration/test_soak.py::test_b"
    sched = _scheduler(2)
    nodes = [_Node("gw0"), _Node("gw1")]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    sched.schedule()
    # The 3-node module (two tests) goes to the first worker, whole, although the unit modules
    # have twenty times as many tests; the other worker starts on the first of those; the
    # soak is sent to no one yet.
    gw0 = [collection[i].split("::")[0] for i in nodes[0].sent]
    assert gw0[:2] == ["tests/integration/test_cluster3.py"] * 2
    assert collection[nodes[1].sent[0]].startswith("tests/unit/test_many.py")
    sent = {collection[i] for node in nodes for i in node.sent}
    assert "tests/integration/test_soak.py::test_b" not in sent


def test_modules_of_a_group_are_one_unit_and_a_split_module_is_parts() -> None:
    assert scheduling.unit_of("tests/integration/test_tools_cassandra.py::t") == "films"
    assert (
        scheduling.unit_of("tests/integration/test_soak.py::t") == "tests/integration/test_soak.py"
    )
    assert scheduling.unit_of("tests/integration/test_mcp.py::t") == "films"
    parts = {
        scheduling.unit_of(f"tests/integration/test_cassandra_store_compliance.py::T::t{i}")
        for i in range(50)
    }
    assert len(parts) == 2


def test_every_module_reading_the_films_table_is_in_the_films_unit() -> None:
    """A module that takes the run's films table (`films_keyspace` / `films_demo`) but runs
    in a unit of its own would load the 17,472 films again on another worker."""
    from pathlib import Path

    integration = Path(__file__).resolve().parents[1] / "integration"
    readers = {
        f"tests/integration/{p.name}"
        for p in integration.glob("test_*.py")
        if "films_keyspace" in p.read_text() or "films_demo" in p.read_text()
    }
    assert readers, "no module reads the films table: the check found nothing to check"
    outside = sorted(m for m in readers if scheduling.GROUPS.get(m) != "films")
    assert outside == []
