"""`film_search_tool(store)`: the ready tool for the films dataset (`hoprag load films`), and
the example to copy when declaring a tool for your own data: it uses only the public API.

Its parameters: `topic`; `actor` (resolved against `cast`) and `director` (against
`director`), each an equality filter; `worked_with_actor` (resolved against `cast`), the scope
of the films by the directors who have directed that actor (the actor's own films included);
`genre` (one of `FILM_GENRES`); `country` (as the data names it, e.g. "United States");
`year_from` and `year_to`; `reviews` (positive: Tomatometer at least 60, negative: at most
40); `limit` (default 10, at most 50). Without a topic it lists the newest films first."""

from __future__ import annotations

from hoprag.stores.base import Store
from hoprag.tools.schema import Choice, Entity, Limit, Parameter, Range, Topic, Value
from hoprag.tools.tool import SearchTool

__all__ = ["FILM_GENRES", "FILM_ORDER_FIELD", "film_parameters", "film_search_tool"]

FILM_ORDER_FIELD = "year"
"""What the films tool lists by, newest first, when a call gives no topic."""

FILM_GENRES = (
    "Action", "Adventure", "Animation", "Biography", "Comedy", "Crime", "Documentary", "Drama",
    "Family", "Fantasy", "History", "Horror", "Music", "Musical", "Mystery", "Romance", "Sci-Fi",
    "Sport", "Thriller", "War", "Western",
)  # fmt: skip
"""Every genre of the films (movies.db's `Genre` values; tests/unit/test_tools.py checks it
by SQL)."""

DESCRIPTION = (
    "Search a database of films released from 1940 to 2014 (title, year, genres, director, "
    "writers, cast, countries, languages, awards, Rotten Tomatoes scores). Give names as the "
    "user typed them: the tool resolves them and asks back when a name is ambiguous or unknown. "
    "Results are ranked by the topic; without one, the newest films come first."
)


def film_parameters() -> list[Parameter]:
    """The declarations of `film_search_tool`'s parameters."""
    return [
        Topic(
            "What the films should be about, in a few words; results are ranked by it. Leave it "
            "out to list the newest films matching the other parameters.",
            examples=["western", "war", "romantic comedy"],
        ),
        Entity(
            "actor",
            ["cast"],
            "A person in the cast, as the user named them.",
            examples=["Henry Fonda", "streep"],
        ),
        Entity("director", ["director"], "The director, as the user named them."),
        Entity(
            "worked_with_actor",
            ["cast"],
            "An actor: the search is limited to films by the directors who have directed that "
            "actor (the actor's own films included).",
            scope_edges=[("director", "director")],
            examples=["Meryl Streep"],
        ),
        Choice("genre", {g: {"genre": g} for g in FILM_GENRES}, "One genre of the film."),
        Value(
            "country",
            "country",
            "A production country, named as in the data.",
            examples=["United States", "United Kingdom", "France"],
        ),
        Range("year_from", "year", "gte", "Released in this year or later."),
        Range("year_to", "year", "lte", "Released in this year or earlier."),
        Choice(
            "reviews",
            {
                "positive": {"tomato_meter": {"$gte": 60}},
                "negative": {"tomato_meter": {"$lte": 40}},
            },
            "Critics' reviews: positive (Tomatometer at least 60) or negative (at most 40).",
        ),
        Limit(default=10, maximum=50),
    ]


def film_search_tool(store: Store) -> SearchTool:
    """The films search tool over `store` (a table loaded by `hoprag load films`, or a
    MemoryStore of `hoprag.datasets.films.load_films()`)."""
    return SearchTool(
        "film_search",
        DESCRIPTION,
        store,
        film_parameters(),
        order_field=FILM_ORDER_FIELD,
        noun="films",
        examples=[
            {"topic": "western", "actor": "Henry Fonda", "reviews": "positive"},
            {"topic": "war", "worked_with_actor": "Meryl Streep", "genre": "War"},
            {"director": "almodovar", "year_from": 2000},
        ],
    )
