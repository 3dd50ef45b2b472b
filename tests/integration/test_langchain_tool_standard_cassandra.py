"""`SearchTool.as_langchain()` against LangChain's standard integration tool tests
(`langchain-tests`' ToolsIntegrationTests) on a real Cassandra 5.0 node: the films tool over the
run's one films table (integration/conftest.py's `films_keyspace`, all 17,472 films, loaded
once per run), invoked sync and async, with and without a `ToolCall`. No standard test is
overridden; the unit suite and the same integration suite over a MemoryStore are in
tests/unit/test_langchain_tool_standard.py."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests

from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.tools import film_search_tool

pytestmark = pytest.mark.integration

EXAMPLE = {"topic": "comedy", "actor": "John Cleese", "reviews": "positive", "limit": 3}
"""A call the films table answers with results: John Cleese is an exact cast name there."""


@pytest.fixture(scope="module")
def films_store(cassandra_session: Any, films_keyspace: str) -> CassandraStore:
    """The run's films table (32-d hash vectors, declared fields), read only."""
    return CassandraStore(
        HashEmbedding(32),
        keyspace=films_keyspace,
        table="films",
        session=cassandra_session,
        create_schema=False,
    )


class TestTheFilmsLangChainToolPassesLangChainsStandardIntegrationToolTestsOnCassandra(
    ToolsIntegrationTests
):
    @pytest.fixture(autouse=True)
    def _on_the_films_table(self, films_store: CassandraStore) -> None:
        """Give `tool_constructor` the table (the suite builds its `tool` from properties,
        which cannot ask for fixtures)."""
        self.films_store = films_store

    @property
    def tool_constructor(self) -> BaseTool:
        return film_search_tool(self.films_store).as_langchain()

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return dict(EXAMPLE)


async def test_the_standard_example_call_returns_films_from_the_table(
    films_store: CassandraStore,
) -> None:
    """The suite only checks that the example runs and returns a string; this checks it is the
    films answer on the node (resolution and search ran, not a follow-up)."""
    tool = film_search_tool(films_store)
    answer = await tool.arun(**EXAMPLE)
    assert not answer.is_follow_up and len(answer.nodes) == 3
    assert all("John Cleese" in n.metadata["cast"] for n in answer.nodes)
    assert all(n.metadata["tomato_meter"] >= 60 for n in answer.nodes)
    assert await tool.as_langchain().ainvoke(EXAMPLE) == answer.text
