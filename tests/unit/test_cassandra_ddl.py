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
