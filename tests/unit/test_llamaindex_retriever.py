"""hoprag.integrations.llamaindex.GraphRetriever on MemoryStore: LlamaIndex nodes carrying the
traversal's ids, depths, paths and scores, per-call options through `with_options`, and errors
that name the option."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import importlib
import io
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from hoprag import Eager, Mmr, Node, Scored, Strategy, atraverse
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.integrations.langchain import GraphRetriever as LangChainRetriever
from hoprag.integrations.llamaindex import GraphRetriever
from hoprag.stores import MemoryStore
from shared_data import graph_documents

EDGES = [("keywords", "keywords"), ("cites", "$id")]
README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(scope="module")
def store() -> MemoryStore:
    s = MemoryStore(embedding=HashEmbedding(16))
    s.add(graph_documents(120, 16, seed=3))
    return s


def _expected(store: MemoryStore, query: str, strategy: Strategy, **options: Any) -> list[Node]:
    return anyio.run(
        lambda: atraverse(query, store=store, edges=EDGES, strategy=strategy, **options)
    )


def _assert_same_as_traversal(got: list[NodeWithScore], want: list[Node]) -> None:
    """Same ids in the same order, and each node's text, metadata, depth, path and scores."""
    assert [n.node.node_id for n in got] == [n.id for n in want]
    for g, w in zip(got, want, strict=True):
        assert isinstance(g.node, TextNode)
        assert g.node.text == w.content
        assert g.score == w.similarity_score
        assert g.node.metadata == {**w.metadata, **w.extra_metadata}
        assert g.node.metadata["_depth"] == w.depth
        assert g.node.metadata["_path"] == list(w.path.nodes)


def test_retrieve_returns_the_traversals_nodes_with_depth_path_and_scores(
    store: MemoryStore,
) -> None:
    strategy = Mmr(select_k=6, start_k=2, adjacent_k=5, max_depth=2)
    got = GraphRetriever(store=store, edges=EDGES, strategy=strategy).retrieve("content 42")
    want = _expected(store, "content 42", strategy)
    _assert_same_as_traversal(got, want)
    assert len(got) == 6
    assert all(isinstance(n.node.metadata["_mmr_score"], float) for n in got)
    assert max(n.node.metadata["_depth"] for n in got) >= 1


async def test_aretrieve_returns_the_same_nodes_as_atraverse(store: MemoryStore) -> None:
    strategy = Eager(select_k=8, start_k=2, adjacent_k=4, max_depth=2)
    got = await GraphRetriever(store=store, edges=EDGES, strategy=strategy).aretrieve("content 7")
    want = await atraverse("content 7", store=store, edges=EDGES, strategy=strategy)
    _assert_same_as_traversal(got, want)
    assert any(n.node.metadata["_depth"] >= 1 for n in got)


async def test_sync_retrieve_works_inside_a_running_event_loop(store: MemoryStore) -> None:
    """`retrieve` from async code (a notebook, an async app) runs on hoprag's sync bridge."""
    strategy = Scored(scorer=lambda n: -n.depth, select_k=5, start_k=2, max_depth=2)
    retriever = GraphRetriever(store=store, edges=EDGES, strategy=strategy)
    got = retriever.retrieve(QueryBundle("content 9"))
    want = await atraverse("content 9", store=store, edges=EDGES, strategy=strategy)
    _assert_same_as_traversal(got, want)
    assert [n.node.metadata["_score"] for n in got] == [w.extra_metadata["_score"] for w in want]


def test_the_langchain_and_llamaindex_retrievers_return_the_same_documents(
    store: MemoryStore,
) -> None:
    options: dict[str, Any] = {"store": store, "edges": EDGES, "strategy": Eager(), "k": 7}
    lc = LangChainRetriever(**options).invoke("content 5", filter={"type": "b"})
    li = GraphRetriever(**options).with_options(filter={"type": "b"}).retrieve("content 5")
    assert [n.node.node_id for n in li] == [d.id for d in lc]
    assert [n.node.metadata for n in li] == [d.metadata for d in lc]


def test_with_options_overrides_the_configured_options_in_a_copy(store: MemoryStore) -> None:
    configured = Eager(select_k=8, start_k=2, adjacent_k=4, max_depth=2)
    retriever = GraphRetriever(store=store, edges=EDGES, strategy=configured, k=5)
    assert len(retriever.retrieve("content 3")) == 5
    assert len(retriever.with_options(k=2).retrieve("content 3")) == 2
    # A call's own strategy keeps its select_k unless k is given too.
    assert len(retriever.with_options(strategy=Eager(select_k=4)).retrieve("content 3")) == 4
    assert len(retriever.with_options(strategy=Eager(select_k=4), k=1).retrieve("x")) == 1

    filtered = retriever.with_options(filter={"type": "a"}, k=6).retrieve("content 1")
    assert filtered and {n.node.metadata["type"] for n in filtered} == {"a"}

    rooted = retriever.with_options(initial_root_ids=["doc99"]).retrieve("content 11")
    assert {"id": "doc99", "depth": 0} in [
        {"id": n.node.node_id, "depth": n.node.metadata["_depth"]} for n in rooted
    ]
    # The retriever the copies came from is unchanged.
    assert retriever.options.k == 5 and retriever.options.strategy == configured
    assert retriever.options.filter is None and retriever.options.edges == EDGES


def test_with_options_edges_change_which_documents_are_reached(store: MemoryStore) -> None:
    strategy = Eager(select_k=20, start_k=2, adjacent_k=6, max_depth=2)
    retriever = GraphRetriever(store=store, edges=EDGES, strategy=strategy)
    cites = retriever.with_options(edges=[("cites", "$id")]).retrieve("content 11")
    want = anyio.run(
        lambda: atraverse("content 11", store=store, edges=[("cites", "$id")], strategy=strategy)
    )
    _assert_same_as_traversal(cites, want)
    both = retriever.retrieve("content 11")
    assert [n.node.node_id for n in cites] != [n.node.node_id for n in both]


def test_hoprags_keys_stay_out_of_the_text_for_the_llm(store: MemoryStore) -> None:
    (first, *_) = GraphRetriever(store=store, edges=EDGES, k=3).retrieve("content 2")
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        text = first.node.get_content(metadata_mode=mode)
        assert "keywords: " in text and first.node.get_content() in text
        assert "_path" not in text and "_depth" not in text and "_similarity_score" not in text
    assert "_path" in first.node.metadata


def _bad_options() -> list[tuple[dict[str, Any], str, str]]:
    """(options, the argument the error must name, text the message must hold)."""
    return [
        ({"store": object()}, "store", "store must be a hoprag Store"),
        ({"edges": [("keywords",)]}, "edges", "edges:"),
        ({"strategy": "eager"}, "strategy", "strategy must be a hoprag Strategy"),
        ({"k": 0}, "k", "k must be an int >= 1 (documents to return), got 0"),
        ({"k": 2.5}, "k", "got 2.5"),
        ({"k": True}, "k", "got True"),
        ({"top_k": 3}, "top_k", "unknown GraphRetriever option(s): top_k; allowed"),
    ]


@pytest.mark.parametrize(("bad", "argument", "message"), _bad_options())
def test_bad_constructor_options_are_an_error_naming_the_argument(
    store: MemoryStore, bad: dict[str, Any], argument: str, message: str
) -> None:
    options: dict[str, Any] = {"store": store, "edges": EDGES, **bad}
    with pytest.raises(InvalidInputError) as info:
        GraphRetriever(**options)
    assert info.value.argument == argument
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(("bad", "argument", "message"), _bad_options()[1:])
def test_bad_per_call_options_are_an_error_naming_the_argument(
    store: MemoryStore, bad: dict[str, Any], argument: str, message: str
) -> None:
    retriever = GraphRetriever(store=store, edges=EDGES)
    with pytest.raises(InvalidInputError) as info:
        retriever.with_options(**bad)
    assert info.value.argument == argument
    assert message.replace("GraphRetriever", "GraphRetriever.with_options") in str(info.value)


def test_with_options_does_not_take_the_store(store: MemoryStore) -> None:
    with pytest.raises(InvalidInputError, match="allowed per call: edges, filter") as info:
        GraphRetriever(store=store, edges=EDGES).with_options(store=store)
    assert info.value.argument == "store"


def test_unknown_constructor_options_are_listed_with_the_allowed_ones(store: MemoryStore) -> None:
    with pytest.raises(InvalidInputError, match="top_k, weird") as info:
        GraphRetriever(store=store, edges=EDGES, top_k=3, weird=1)
    assert "callback_manager" in str(info.value) and "strategy" in str(info.value)


def test_without_llama_index_the_import_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "llama_index.core.retrievers", None)
    monkeypatch.delitem(sys.modules, "hoprag.integrations.llamaindex")
    with pytest.raises(ImportError, match=re.escape("install hoprag's llamaindex extra")):
        importlib.import_module("hoprag.integrations.llamaindex")
    monkeypatch.undo()
    assert (
        importlib.import_module("hoprag.integrations.llamaindex").GraphRetriever is GraphRetriever
    )


def _readme_block() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (block,) = [b for b in blocks if "hoprag.integrations.llamaindex" in b]
    return block


def test_the_readme_llamaindex_example_runs_as_shown() -> None:
    code = compile(_readme_block(), "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = eval(code, {})  # the README's own code
        if result is not None:
            asyncio.run(result)
    lines = out.getvalue().splitlines()
    assert lines, "the example printed nothing"
    assert lines[0].startswith("lisp 0 ")
    assert any(" 1 " in line for line in lines)  # a node reached through an edge
