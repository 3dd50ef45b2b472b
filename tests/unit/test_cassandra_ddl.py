"""How CassandraStore runs its schema changes, without a Cassandra node: a sequence of DDL
statements goes to the node that ran the first (so a CREATE TABLE finds the keyspace created
just before it, whatever the other nodes have seen yet), unless that node is down; each change
waits for schema agreement beyond the driver's own 10 s."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from hoprag.errors import StoreError
from hoprag.stores.cassandra.schema import execute_ddl, execute_ddl_all


@dataclass
class Node:
    name: str
    is_up: bool = True


@dataclass
class Answer:
    coordinator_host: Node
    is_schema_agreed: bool = True


@dataclass
class Result:
    response_future: Answer


@dataclass
class Control:
    agree_after: int = 0
    waits: int = 0

    def wait_for_schema_agreement(self, wait_time: float) -> bool:
        self.waits += 1
        return self.waits > self.agree_after


@dataclass
class Session:
    """Sends unpinned statements to the nodes in turn, as a round-robin policy would."""

    nodes: list[Node]
    agreed: bool = True
    control: Control = field(default_factory=Control)
    ran: list[tuple[str, str, bool]] = field(default_factory=list)

    @property
    def cluster(self) -> Any:
        return self

    @property
    def control_connection(self) -> Control:
        return self.control

    def execute(self, statement: str, timeout: float, host: Node | None = None) -> Result:
        node = host or self.nodes[len(self.ran) % len(self.nodes)]
        self.ran.append((statement, node.name, host is not None))
        return Result(Answer(node, self.agreed))


def test_a_ddl_sequence_runs_on_the_node_that_ran_its_first_statement() -> None:
    session = Session([Node("a"), Node("b"), Node("c")])
    execute_ddl_all(session, ["CREATE KEYSPACE k", "CREATE TABLE k.t", "CREATE INDEX i"])
    assert [(node, pinned) for _, node, pinned in session.ran] == [
        ("a", False),
        ("a", True),
        ("a", True),
    ]


def test_a_ddl_sequence_whose_first_node_went_down_goes_where_the_driver_sends_it() -> None:
    a = Node("a")

    class Failing(Session):
        def execute(self, statement: str, timeout: float, host: Node | None = None) -> Result:
            result = super().execute(statement, timeout, host)
            a.is_up = False  # node a stops right after it answered
            return result

    session = Failing([a, Node("b")])
    execute_ddl_all(session, ["CREATE KEYSPACE k", "CREATE TABLE k.t", "CREATE INDEX i"])
    assert [(node, pinned) for _, node, pinned in session.ran] == [
        ("a", False),
        ("b", False),
        ("a", False),
    ]


def test_a_schema_change_without_agreement_waits_for_it_and_then_fails_naming_it() -> None:
    session = Session([Node("a")], agreed=False, control=Control(agree_after=2))
    assert execute_ddl(session, "CREATE TABLE k.t (id text PRIMARY KEY)").name == "a"
    assert session.control.waits == 3
    never = Session([Node("a")], agreed=False, control=Control(agree_after=10**9))
    with pytest.raises(StoreError, match=r"did not agree on the schema within 0s after: ALTER"):
        execute_ddl(never, "ALTER TABLE k.t ADD x int", timeout=0.0)


class Listing:
    """A session whose index listing fails the first times as the node's virtual table does
    while another keyspace is dropped, then lists the indexes as queryable."""

    def __init__(self, failures: int, other: str = "t_other") -> None:
        self.failures = failures
        self.other = other
        self.asked = 0

    def execute(self, statement: str, values: tuple[str, ...]) -> list[Any]:
        self.asked += 1
        if self.asked <= self.failures:
            raise RuntimeError(f"Server error: IllegalArgumentException: Unknown keyspace "
                               f"{self.other}")  # fmt: skip

        @dataclass
        class Row:
            index_name: str
            is_queryable: bool = True

        return [Row("t_embedding_idx"), Row("t_tokens_idx")]


def test_waiting_for_indexes_asks_again_when_another_keyspace_changed_under_the_listing() -> None:
    from hoprag.stores.cassandra.schema import wait_queryable

    session = Listing(failures=2)
    wait_queryable(session, "ks", ["t_embedding_idx", "t_tokens_idx"], timeout=10)
    assert session.asked == 3
    own = Listing(failures=1, other="ks")  # the keyspace waited for is gone: an error
    with pytest.raises(RuntimeError, match="Unknown keyspace ks"):
        wait_queryable(own, "ks", ["t_embedding_idx"], timeout=10)
