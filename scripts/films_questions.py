"""The five questions of `scripts/demo --films`, each as an agent would ask the films tool
(`hoprag.tools.film_search_tool`) and as SQL over bokeh-sampledata's movies.db, which says which
films answer it. The SQL never uses hoprag: a film's id is rebuilt the way the films loader
builds it (the IMDb id, `film-<ID>` without one, `~<ID>` appended to a repeated one), and the
comma lists (genres, directors, cast, countries) are matched by two small SQL functions,
`has(list, item)` and `shares(list, list)`, that split on commas and strip each part."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILMS = """
WITH rows AS (
    SELECT o.ID AS rid, o.Title AS title, o.Year AS year, o.Genre AS genre,
           o.Director AS director, o."Cast" AS "cast", o.Country AS country, t.Meter AS meter,
           COALESCE(NULLIF(o.imdbID, ''), 'film-' || o.ID) AS base
    FROM omdb AS o LEFT JOIN tomatoes AS t ON t.ID = o.ID
),
films AS (
    SELECT CASE WHEN ROW_NUMBER() OVER (PARTITION BY base ORDER BY rid) = 1 THEN base
                ELSE base || '~' || rid END AS id,
           title, year, genre, director, "cast", country, meter
    FROM rows
)
"""
"""The films as the loader sees them: `id`, `title`, `year`, the comma lists `genre`,
`director`, `cast`, `country`, and `meter` (the Tomatometer, NULL when unknown)."""


@dataclass(frozen=True)
class Question:
    """One question: its `text` (what plain vector search is given), the `arguments` an agent
    passes to the tool, the `reply` the user gives to a follow-up question (the arguments to
    run again with), and the `sql` (with named `:parameters` from `params`) selecting the id
    and year of every film that answers it. `newest`: the question asks for the newest films,
    so a film is correct only when it also is among the newest `limit` by year."""

    key: str
    text: str
    arguments: dict[str, Any]
    sql: str
    params: dict[str, Any]
    reply: dict[str, Any] = field(default_factory=dict)
    newest: bool = False


QUESTIONS = [
    Question(
        "fonda-westerns",
        "What are some well-reviewed westerns by directors who worked with Henry Fonda?",
        {"topic": "western", "worked_with_actor": "Henry Fonda", "genre": "Western",
         "reviews": "positive"},
        """
        SELECT f.id, f.year FROM films AS f
        WHERE has(f.genre, :genre) AND f.meter >= 60
          AND (has(f."cast", :actor) OR EXISTS (
                SELECT 1 FROM films AS h
                WHERE has(h."cast", :actor) AND shares(h.director, f.director)))
        """,
        {"genre": "Western", "actor": "Henry Fonda"},
    ),
    Question(
        "italian-dramas",
        "Which Italian dramas from before 1980 got good reviews?",
        {"topic": "Italian drama", "country": "Italy", "genre": "Drama", "year_to": 1979,
         "reviews": "positive"},
        """
        SELECT id, year FROM films
        WHERE has(country, :country) AND has(genre, :genre) AND year <= :year_to
          AND meter >= 60
        """,
        {"country": "Italy", "genre": "Drama", "year_to": 1979},
    ),
    Question(
        "fonda-comedies",
        "Which comedies with Fonda did the critics like?",
        {"topic": "comedy", "actor": "fonda", "genre": "Comedy", "reviews": "positive"},
        """
        SELECT id, year FROM films
        WHERE has("cast", :actor) AND has(genre, :genre) AND meter >= 60
        """,
        {"actor": "Jane Fonda", "genre": "Comedy"},
        reply={"actor": "Jane Fonda"},
    ),
    Question(
        "scorsese-crime",
        "Crime films directed by Scorsese",
        {"topic": "crime", "director": "scorsese", "genre": "Crime"},
        """
        SELECT id, year FROM films
        WHERE has(director, :director) AND has(genre, :genre)
        """,
        {"director": "Martin Scorsese", "genre": "Crime"},
    ),
    Question(
        "latest-british-war",
        "What are the latest British war films?",
        {"country": "United Kingdom", "genre": "War"},
        """
        SELECT id, year FROM films
        WHERE has(country, :country) AND has(genre, :genre)
        ORDER BY year DESC
        """,
        {"country": "United Kingdom", "genre": "War"},
        newest=True,
    ),
]  # fmt: skip


def _parts(text: str | None) -> set[str]:
    return {p.strip() for p in (text or "").split(",") if p.strip()}


def _has(items: str | None, item: str) -> bool:
    return item in _parts(items)


def _shares(a: str | None, b: str | None) -> bool:
    return bool(_parts(a) & _parts(b))


@dataclass(frozen=True)
class SqlAnswer:
    """The films that answer a question by SQL: `years` (id -> year) of every film meeting
    its conditions and `correct`, the ids a result may hold (all of them, or for a `newest`
    question those from the year of the `limit`-th newest on)."""

    years: Mapping[str, int | None]
    correct: frozenset[str]


def sql_answer(db: Path, question: Question, limit: int) -> SqlAnswer:
    """Run `question.sql` over the movies.db at `db` (read only)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        conn.create_function("has", 2, _has, deterministic=True)
        conn.create_function("shares", 2, _shares, deterministic=True)
        rows = conn.execute(FILMS + question.sql, question.params).fetchall()
    finally:
        conn.close()
    years = {fid: year for fid, year in rows}
    if question.newest and len(rows) > limit:
        cutoff = rows[limit - 1][1]  # rows are newest first
        correct = frozenset(fid for fid, year in rows if year is not None and year >= cutoff)
    else:
        correct = frozenset(years)
    return SqlAnswer(years, correct)
