"""What tests/integration/test_packaging.py runs inside each fresh virtual environment: one
use per extra (`python packaging_uses.py USE`), the smallest real use of what the extra brings,
over a three-document MemoryStore with HashEmbedding. The test copies this file out of the
repo first, so only the installed wheel can be imported; each use checks what it can with
asserts and prints one JSON object for the test to check the rest."""

from __future__ import annotations

import importlib
import importlib.util
import json
import pkgutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from hoprag import Document, Eager, traverse
from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore

QUERY = "apples grow on trees"
"""The text of document `a`: HashEmbedding embeds it exactly as `a`, so `a` is the start."""
EDGES = [("keywords", "keywords")]
DEPTHS = {"a": 0, "b": 1, "c": 2}
"""What the traversal from `a` along shared keywords reaches: a chain a - b - c."""


def _store() -> MemoryStore:
    store = MemoryStore(embedding=HashEmbedding(dim=32))
    store.add(
        [
            Document(id="a", content=QUERY, metadata={"keywords": ["fruit"]}),
            Document(id="b", content="orchards sell cider", metadata={"keywords": ["fruit", "x"]}),
            Document(id="c", content="a cellar of barrels", metadata={"keywords": ["x"]}),
        ]
    )
    return store


def _strategy() -> Eager:
    return Eager(select_k=10, start_k=1, max_depth=2)


def _import_all() -> dict[str, str]:
    """Import every module of the installed hoprag; the messages of those that fail, by name."""
    import hoprag

    failed = {}
    for info in pkgutil.walk_packages(hoprag.__path__, "hoprag."):
        if info.name.endswith("__main__"):
            continue  # `python -m hoprag.cli`: importing it runs the command
        try:
            importlib.import_module(info.name)
        except ImportError as exc:
            failed[info.name] = str(exc)
    return failed


def _minilm_error() -> str:
    """The error `MiniLMEmbedding()` raises without the minilm extra."""
    from hoprag.embeddings import MiniLMEmbedding
    from hoprag.embeddings.minilm import MiniLMNotInstalledError

    try:
        MiniLMEmbedding()
    except MiniLMNotInstalledError as exc:
        return str(exc)
    raise AssertionError("MiniLMEmbedding() worked without the minilm extra")


def base() -> dict[str, Any]:
    """No extras: every module that needs none imports, a traversal runs."""
    import hoprag

    nodes = traverse(QUERY, store=_store(), edges=EDGES, strategy=_strategy())
    return {
        "file": hoprag.__file__,
        "version": hoprag.__version__,
        "depths": {n.id: n.depth for n in nodes},
        "failed_imports": _import_all(),
        "minilm": _minilm_error(),
    }


def langchain() -> dict[str, Any]:
    """`hoprag.integrations.langchain.GraphRetriever`, a LangChain retriever, invoked."""
    from hoprag.integrations.langchain import GraphRetriever

    retriever = GraphRetriever(store=_store(), edges=EDGES, strategy=_strategy(), k=3)
    docs = retriever.invoke(QUERY)
    return {"depths": {d.id: d.metadata["_depth"] for d in docs}}


def llamaindex() -> dict[str, Any]:
    """`hoprag.integrations.llamaindex.GraphRetriever`, a LlamaIndex retriever, asked."""
    from hoprag.integrations.llamaindex import GraphRetriever

    retriever = GraphRetriever(store=_store(), edges=EDGES, strategy=_strategy(), k=3)
    found = retriever.retrieve(QUERY)
    return {"depths": {n.node.id_: n.node.metadata["_depth"] for n in found}}


def _topic_tool() -> Any:
    from hoprag.tools import Limit, SearchTool, Topic

    parameters = [Topic("What the notes are about."), Limit(default=3, maximum=10)]
    return SearchTool(
        "note_search", "Notes ranked by a topic.", _store(), parameters, order_field=None
    )


def mcp_server() -> None:
    """The topic tool served over MCP's stdio transport (started by `mcp`)."""
    from hoprag.tools.mcp import serve_stdio

    serve_stdio(_topic_tool())


def mcp() -> dict[str, Any]:
    """A round trip with the SDK's own client: start `mcp_server` as a process over stdio,
    list its tools, call the one tool."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main() -> dict[str, Any]:
        params = StdioServerParameters(command=sys.executable, args=[__file__, "mcp_server"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            result = await session.call_tool("note_search", {"topic": QUERY})
        content = result.structured_content or {}
        return {
            "tools": [t.name for t in listed.tools],
            "is_error": result.is_error,
            "ids": [r["id"] for r in content.get("results", [])],
        }

    return anyio.run(main)


def otel_api() -> dict[str, Any]:
    """The OpenTelemetry API without an SDK (what the extra installs): a traversal runs and
    hoprag makes no spans, as docs/observability.md says."""
    sdk = importlib.util.find_spec("opentelemetry.sdk")
    from opentelemetry import trace

    nodes = traverse(QUERY, store=_store(), edges=EDGES, strategy=_strategy())
    return {
        "sdk_installed": sdk is not None,
        "provider": type(trace.get_tracer_provider()).__name__,
        "depths": {n.id: n.depth for n in nodes},
    }


def otel_sdk() -> dict[str, Any]:
    """With the SDK the application brings: a traversal's spans, read back in memory."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    traverse(QUERY, store=_store(), edges=EDGES, strategy=_strategy())
    return {"spans": sorted(s.name for s in exporter.get_finished_spans())}


COMPLIANCE_TEST = """\
import pytest
from hoprag.stores import MemoryStore
from hoprag.testing import StoreCompliance

class TestMyStore(StoreCompliance):
    @pytest.fixture
    def store_factory(self):
        async def make(embedding, documents, fields=None):
            store = MemoryStore(embedding=embedding)
            await store.aadd(documents)
            return store
        return make
"""
"""hoprag.testing's own example (its docstring) with MemoryStore as the user's store."""
PYTEST_INI = "[pytest]\nasyncio_mode = auto\n"
"""The configuration hoprag.testing says the suite needs (pytest-asyncio's auto mode)."""


def testing() -> dict[str, Any]:
    """The store compliance suite run by pytest in a project of the user's (the current
    directory) against a MemoryStore."""
    with open("test_my_store.py", "w") as f:
        f.write(COMPLIANCE_TEST)
    with open("pytest.ini", "w") as f:
        f.write(PYTEST_INI)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_store.py"],
        capture_output=True,
        text=True,
    )
    return {"returncode": run.returncode, "tail": run.stdout.strip().splitlines()[-1:]}


def datasets() -> dict[str, Any]:
    """The films dataset read from the installed bokeh-sampledata."""
    from hoprag.datasets import load

    films = list(load("films", limit=3))
    return {"titles": [f.metadata.get("title") for f in films], "ids": [f.id for f in films]}


USES: dict[str, Callable[[], Any]] = {
    f.__name__: f for f in (base, langchain, llamaindex, mcp, otel_api, otel_sdk, testing, datasets)
}

if __name__ == "__main__":
    if sys.argv[1] == "mcp_server":
        mcp_server()
    else:
        print(json.dumps(USES[sys.argv[1]]()))
