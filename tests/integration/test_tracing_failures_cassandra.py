"""Telemetry never changes an answer on the node either (issue #50, defect 14): a span
processor that raises on every span, the CQL requests' client spans included, and a meter
provider that cannot make meters leave a traversal's answer as it was, with no StoreError."""

from __future__ import annotations

from typing import Any

import pytest

from failing_telemetry import failing_telemetry
from hoprag import Eager, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.testing import COMPLIANCE_DIM, compliance_documents

pytestmark = pytest.mark.integration


async def test_on_the_node_a_failing_telemetry_set_up_changes_no_answer(
    cassandra_session: Any, keyspace: str
) -> None:
    emb = HashEmbedding(COMPLIANCE_DIM)
    store = CassandraStore(emb, keyspace=keyspace, table="traced", session=cassandra_session)
    await store.aadd(compliance_documents())
    strategy = Eager(select_k=8, start_k=2, adjacent_k=8, max_depth=2)
    edges = [("keywords", "keywords"), ("cites", "$id")]
    q = emb("fur and wings")

    async def answer() -> list[tuple[str, int]]:
        nodes = await atraverse("", store=store, edges=edges, strategy=strategy,
                                query_embedding=q)  # fmt: skip
        return [(n.id, n.depth) for n in nodes]

    plain = await answer()
    with failing_telemetry():
        assert await answer() == plain
        await store.aadd(compliance_documents()[:2])  # writes are traced too
        assert await answer() == plain
