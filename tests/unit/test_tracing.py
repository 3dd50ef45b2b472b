"""OpenTelemetry spans and metrics of retrievals (`hoprag.telemetry`) on a MemoryStore, read back
with the SDK's in-memory exporter: the span tree of a two-hop traversal, of a scoped search and
of a tool call, the query text and documents only when opted in, errors on the spans, nothing
when tracing is off, and nothing emitted and nothing failing without the API installed. The
client spans of CQL requests are checked on the node
(tests/integration/test_tracing_cassandra.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hoprag import Document, Eager, Scope, TraversalTimeoutError, asearch, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore
from hoprag.tools import Entity, Limit, SearchTool, Topic
from tracing_fixtures import collected

ROOT = Path(__file__).resolve().parents[2]
EDGES = [("kw", "kw")]


def _chain() -> MemoryStore:
    """a -kw x- b -kw y- c: from "a", b at depth 1 and c at depth 2."""
    store = MemoryStore(HashEmbedding(16))
    store.add(
        [
            Document("a", "apples", {"kw": ["x"], "who": "Ann"}),
            Document("b", "bananas", {"kw": ["x", "y"], "who": "Bo"}),
            Document("c", "cherries", {"kw": ["y"], "who": "Cy"}),
        ]
    )
    return store


async def test_a_two_hop_traversal_is_one_retrieval_span_with_a_child_span_per_hop() -> None:
    store = _chain()
    strategy = Eager(select_k=5, start_k=1, max_depth=2)
    with collected() as traces:
        result = await atraverse(
            "apples", store=store, edges=EDGES, strategy=strategy, initial_root_ids=["a"]
        )
    assert {n.id: n.depth for n in result} == {"a": 0, "b": 1, "c": 2}
    (retrieval,) = traces.named("retrieval")
    attrs = dict(retrieval.attributes or {})
    assert attrs["gen_ai.operation.name"] == "retrieval"
    assert attrs["hoprag.operation"] == "traversal" and attrs["hoprag.strategy"] == "Eager"
    assert attrs["gen_ai.request.top_k"] == 5 and attrs["hoprag.results"] == 3
    assert attrs["hoprag.rounds"] == result.stats.rounds
    assert attrs["hoprag.queries"] == result.stats.total_queries
    assert "gen_ai.retrieval.query.text" not in attrs  # not opted in
    assert "gen_ai.retrieval.documents" not in attrs
    hops = traces.children(retrieval)
    assert [h.name for h in hops] == [f"hoprag hop {i}" for i in range(len(result.stats.hops))]
    assert len(hops) == 3  # the start, depth 1, depth 2 (which finds nothing new)
    for span, hop in zip(hops, result.stats.hops, strict=True):
        a = dict(span.attributes or {})
        assert a["hoprag.hop.depth"] == hop.depth and a["hoprag.hop.rows"] == hop.rows
        assert a["hoprag.hop.admitted"] == hop.kept and a["hoprag.hop.edges"] == hop.edges
        assert a["hoprag.hop.rounds"] == hop.rounds
        assert not any(k.startswith("hoprag.hop.plans.") for k in a)  # MemoryStore plans none
        assert span.start_time >= retrieval.start_time and span.end_time <= retrieval.end_time
    assert [dict(h.attributes or {})["hoprag.hop.admitted"] for h in hops] == [1, 1, 1]
    metrics = traces.metrics()
    assert sum(p.value for p in metrics["hoprag.retrieval.queries"]) == result.stats.total_queries
    assert sum(p.value for p in metrics["hoprag.retrieval.rounds"]) == result.stats.rounds
    assert sum(p.count for p in metrics["hoprag.retrieval.duration"]) == 1


async def test_the_query_text_and_documents_are_recorded_only_when_opted_in() -> None:
    store = _chain()
    strategy = Eager(select_k=2, start_k=1, max_depth=1)
    with collected(capture_query_text=True, capture_documents=True) as traces:
        result = await atraverse("apples", store=store, edges=EDGES, strategy=strategy)
    (retrieval,) = traces.named("retrieval")
    attrs = dict(retrieval.attributes or {})
    assert attrs["gen_ai.retrieval.query.text"] == "apples"
    documents = json.loads(str(attrs["gen_ai.retrieval.documents"]))
    assert [d["id"] for d in documents] == [n.id for n in result]
    assert [d["score"] for d in documents] == pytest.approx([n.similarity_score for n in result])


async def test_a_scoped_search_is_one_retrieval_span_with_its_rounds_as_children() -> None:
    store = _chain()
    scope = Scope(ids=["a"], edges=[("kw", "kw")], max_depth=2)
    with collected() as traces:
        result = await asearch("cherries", store=store, k=3, scope=scope)
    assert {n.id for n in result} == {"a", "b", "c"}
    (retrieval,) = traces.named("retrieval")
    attrs = dict(retrieval.attributes or {})
    assert attrs["hoprag.operation"] == "search" and attrs["gen_ai.request.top_k"] == 3
    assert attrs["hoprag.plan"] == result.stats.plan and attrs["hoprag.results"] == 3
    hops = traces.children(retrieval)
    assert len(hops) == len(result.stats.hops) >= 2
    assert all(h.name.startswith("hoprag hop ") for h in hops)
    assert traces.spans()[-1] is not None and traces.spans()[-1].name == retrieval.name


async def test_a_tool_call_is_an_execute_tool_span_around_its_search() -> None:
    store = _chain()
    tool = SearchTool(
        "fruit_search", "Find fruit.", store,
        [Topic("What the fruit is like."), Entity("who", ["who"], "A grower."), Limit()],
    )  # fmt: skip
    with collected() as traces:
        answer = await tool.arun(topic="sweet", who="Bo")
    assert [n.id for n in answer.nodes] == ["b"]
    (call,) = traces.named("execute_tool")
    assert dict(call.attributes or {})["gen_ai.tool.name"] == "fruit_search"
    (retrieval,) = traces.named("retrieval")
    assert retrieval.parent is not None and retrieval.parent.span_id == call.context.span_id


async def test_a_failed_traversal_records_its_error_on_the_retrieval_span() -> None:
    class Slow(MemoryStore):
        async def aprepare(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            import anyio

            await anyio.sleep(5)
            return await super().aprepare(*args, **kwargs)

    store = Slow(HashEmbedding(16))
    store.add([Document("a", "apples", {"kw": ["x"]})])
    with collected() as traces, pytest.raises(TraversalTimeoutError):
        await atraverse("apples", store=store, edges=EDGES, strategy=Eager(), timeout=0.05)
    (retrieval,) = traces.named("retrieval")
    assert retrieval.status.status_code.name == "ERROR"
    assert dict(retrieval.attributes or {})["error.type"] == "TraversalTimeoutError"
    assert [e.name for e in retrieval.events] == ["exception"]


async def test_with_tracing_off_nothing_is_emitted() -> None:
    from hoprag import telemetry

    store = _chain()
    with collected() as traces:
        previous = telemetry.configure(enabled=False)
        try:
            result = await atraverse("apples", store=store, edges=EDGES, strategy=Eager())
            await asearch("apples", store=store, k=2)
        finally:
            telemetry.restore(previous)
    assert len(result) == 3 and traces.spans() == []
    assert traces.metrics() == {}


def test_without_the_api_installed_nothing_is_emitted_and_nothing_fails() -> None:
    """In a fresh interpreter where `opentelemetry` cannot be imported: a traversal, a scoped
    search and a tool call give the same answers as here, and hoprag.telemetry stays off."""
    script = textwrap.dedent(
        """
        import sys
        sys.modules["opentelemetry"] = None  # import opentelemetry -> ImportError
        import asyncio, json
        from hoprag import Document, Eager, Scope, asearch, atraverse, telemetry
        from hoprag.embeddings import HashEmbedding
        from hoprag.stores import MemoryStore
        store = MemoryStore(HashEmbedding(16))
        store.add([Document("a", "apples", {"kw": ["x"]}), Document("b", "bananas", {"kw": ["x"]})])
        async def main():
            t = await atraverse("apples", store=store, edges=[("kw", "kw")], strategy=Eager())
            scope = Scope(ids=["a"], edges=[("kw", "kw")])
            s = await asearch("apples", store=store, k=2, scope=scope)
            return [n.id for n in t], [n.id for n in s]
        print(json.dumps([asyncio.run(main()), telemetry._api() is None]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    (traversal, search), api_missing = json.loads(done.stdout)
    assert api_missing is True
    assert traversal == ["a", "b"] and sorted(search) == ["a", "b"]


def test_with_the_api_but_no_tracer_provider_set_no_span_is_made() -> None:
    """The API's own default provider makes only no-op spans; hoprag then makes none at all
    (a fresh interpreter, so no test's provider is set), and makes them once one is set."""
    script = textwrap.dedent(
        """
        import json
        from hoprag import telemetry
        before = telemetry.start_retrieval("search", query="q", top_k=1) is None
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        trace.set_tracer_provider(TracerProvider())
        span = telemetry.start_retrieval("search", query="q", top_k=1)
        print(json.dumps([before, span is not None and span.is_recording()]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, True]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"enabled": "no"}, "enabled"),  # bool("no") would have been True
        ({"capture_query_text": 1}, "capture_query_text"),
        ({"capture_documents": "yes"}, "capture_documents"),
        ({"tracer_provider": object()}, "tracer_provider"),
        ({"meter_provider": "global"}, "meter_provider"),
    ],
)
def test_configure_refuses_what_is_not_a_setting_and_changes_nothing(
    options: dict[str, object], named: str
) -> None:
    from hoprag import telemetry
    from hoprag.errors import InvalidInputError

    before = telemetry.settings()
    with pytest.raises(InvalidInputError) as caught:
        telemetry.configure(**options)  # type: ignore[arg-type]
    assert caught.value.argument == named
    assert telemetry.settings() == before


def test_a_hop_span_counts_the_edges_a_store_planned_by_plan() -> None:
    from hoprag import telemetry
    from hoprag.stats import EdgePlan, HopStats

    class Span:
        def __init__(self) -> None:
            self.attributes: dict[str, object] = {}
            self.ended = False

        def set_attributes(self, values: dict[str, object]) -> None:
            self.attributes = dict(values)

        def end(self) -> None:
            self.ended = True

    hop = HopStats(depth=2, edges=4, rounds=3)
    hop.plans = [EdgePlan("k='a'", "read", 3, 3), EdgePlan("k='b'", "read", 9, 5),
                 EdgePlan("k='c'", "none", 0, 0), EdgePlan("k='d'", "search", 90, 5)]  # fmt: skip
    span = Span()
    telemetry.end_hop(span, hop)
    a = span.attributes
    assert span.ended and a["hoprag.hop.rounds"] == 3 and a["hoprag.hop.edges"] == 4
    assert {k: v for k, v in a.items() if ".plans." in k} == {
        "hoprag.hop.plans.read": 2, "hoprag.hop.plans.none": 1, "hoprag.hop.plans.search": 1,
    }  # fmt: skip
