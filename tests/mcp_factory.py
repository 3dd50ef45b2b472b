"""Tool factories for `hoprag mcp --tool mcp_factory:...` in tests/integration/test_mcp.py and
tests/unit/test_mcp_cli.py: a user's own SearchTool over the films table, and names that are not
factories."""

from __future__ import annotations

from hoprag.stores.base import Store
from hoprag.tools import Entity, Limit, SearchTool, Topic

NOT_CALLABLE = 3
"""A name `--tool` must refuse: not a callable."""


def actor_tool(store: Store) -> SearchTool:
    """A smaller tool than film_search: a topic, an actor (resolved against `cast`), a limit."""
    return SearchTool(
        "actor_films",
        "Films with an actor, ranked by a topic.",
        store,
        [
            Topic("What the films are about.", examples=["western"]),
            Entity("actor", ["cast"], "A person in the cast, as the user named them."),
            Limit(default=5, maximum=20),
        ],
        noun="films",
    )


def not_a_tool(store: Store) -> str:
    """A factory returning something other than a SearchTool."""
    return f"not a tool for {store!r}"


def topic_tool(store: Store) -> SearchTool:
    """A topic-only tool for any table (tests/integration/test_mcp.py's store-failure test)."""
    return SearchTool(
        "note_search",
        "Notes ranked by a topic.",
        store,
        [Topic("What the notes are about."), Limit(default=3, maximum=10)],
        order_field=None,
        noun="notes",
    )


def noisy_tool(store: Store) -> SearchTool:
    """`actor_tool`, from a factory that prints to stdout (which `hoprag mcp` must keep off the
    protocol channel)."""
    print("hello from the factory")
    return actor_tool(store)
