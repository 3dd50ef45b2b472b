"""`SearchTool.as_langchain()` against LangChain's own standard tool tests (`langchain-tests`'
ToolsUnitTests and ToolsIntegrationTests), run here over a MemoryStore of the first 400 films:
the films tool's name, input schema and an example call that the schema accepts and that runs,
sync and async, with and without a `ToolCall`. No standard test is overridden. The same
integration suite runs on the node's films table in
tests/integration/test_langchain_tool_standard_cassandra.py."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from hoprag.datasets.films import load_films
from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore
from hoprag.tools import film_search_tool

_STORE = MemoryStore(embedding=HashEmbedding(32))
_STORE.add(load_films(limit=400))

EXAMPLE = {"topic": "comedy", "actor": "John Cleese", "reviews": "positive", "limit": 3}
"""A call the first 400 films answer with results: John Cleese is an exact cast name there."""


class _FilmsTool:
    """What both standard suites are given: the films tool over the MemoryStore, and the
    example call."""

    @property
    def tool_constructor(self) -> BaseTool:
        return film_search_tool(_STORE).as_langchain()

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return dict(EXAMPLE)


class TestTheFilmsLangChainToolPassesLangChainsStandardUnitToolTests(_FilmsTool, ToolsUnitTests):
    pass


class TestTheFilmsLangChainToolPassesLangChainsStandardIntegrationToolTestsOnMemory(
    _FilmsTool, ToolsIntegrationTests
):
    pass


async def test_the_standard_example_call_returns_films_not_a_follow_up() -> None:
    """The suites only check that the example runs and returns a string; this checks it is
    the films answer (so the suites exercise resolution and search, not a follow-up)."""
    tool = film_search_tool(_STORE)
    answer = await tool.arun(**EXAMPLE)
    assert not answer.is_follow_up and answer.nodes
    assert all("John Cleese" in n.metadata["cast"] for n in answer.nodes)
    assert await tool.as_langchain().ainvoke(EXAMPLE) == answer.text
