"""Telemetry never changes an answer (issue #50, defect 14): with a span processor that raises
on every span and a meter provider that cannot make meters, traversals, searches and tool
calls on MemoryStore answer as without telemetry, and each failure is logged once."""

from __future__ import annotations

import logging

import pytest

from failing_telemetry import failing_telemetry
from hoprag import Eager, Scope, asearch, atraverse, telemetry
from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore
from hoprag.testing import COMPLIANCE_DIM, compliance_documents

EDGES = [("keywords", "keywords"), ("cites", "$id")]


async def _answers(store: MemoryStore) -> tuple[list[tuple[str, int]], list[str]]:
    q = HashEmbedding(COMPLIANCE_DIM)("fur and wings")
    strategy = Eager(select_k=8, start_k=2, adjacent_k=8, max_depth=2)
    nodes = await atraverse("", store=store, edges=EDGES, strategy=strategy, query_embedding=q)
    scope = Scope(start={"type": "mammal"}, edges=[("cites", "$id")], max_depth=1)
    found = await asearch(None, store=store, k=5, scope=scope, query_embedding=q)
    return [(n.id, n.depth) for n in nodes], [n.id for n in found]


@pytest.mark.parametrize(
    ("spans", "meters", "said"),
    [
        (True, False, "span processor broke on start"),
        (False, True, "meter provider broke"),
        (True, True, "span processor broke on start"),
    ],
)
async def test_a_failing_span_processor_or_meter_provider_changes_no_answer(
    caplog: pytest.LogCaptureFixture, spans: bool, meters: bool, said: str
) -> None:
    store = MemoryStore(HashEmbedding(COMPLIANCE_DIM))
    await store.aadd(compliance_documents())
    plain = await _answers(store)
    telemetry._reported.clear()  # "once" is per process: start this test's count afresh
    with (
        caplog.at_level(logging.WARNING, logger="hoprag.telemetry"),
        failing_telemetry(spans=spans, meters=meters),
    ):
        first = await _answers(store)
        second = await _answers(store)
    assert first == plain and second == plain
    logged = [r.getMessage() for r in caplog.records if r.name == "hoprag.telemetry"]
    assert any(said in m for m in logged), logged
    assert len(logged) == len(set(logged))  # each failure once, however many retrievals


async def test_a_failing_provider_leaves_a_traversals_own_error_as_it_was() -> None:
    store = MemoryStore(HashEmbedding(COMPLIANCE_DIM))
    await store.aadd(compliance_documents())
    strategy = Eager(select_k=8, start_k=2, adjacent_k=8, max_depth=2)
    with failing_telemetry(), pytest.raises(ValueError, match="edge"):
        await atraverse("x", store=store, edges=[("a", "b", "c")], strategy=strategy)  # type: ignore[list-item]
