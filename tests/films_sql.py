"""Expected answers for the films tests (scopes, and `aresolve` counts for the films subset
of `fonda_films`), computed by SQL over bokeh-sampledata's movies.db itself,
never by hoprag: document ids and comma-list fields are rebuilt in SQL the way the films loader
(`hoprag.datasets.films`) builds them (ids: the IMDb id, `film-<ID>` without one, a repeated id
gets `~<ID>`; lists: split on commas, each part stripped of whitespace, empty parts dropped)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from hoprag import Document, datasets
from hoprag.datasets.films import movies_db_path

# Rows of (document id, field, item) for the list fields, by a recursive split on commas.
_ITEMS = """
WITH RECURSIVE
films AS (
    SELECT o.ID AS rid, o.Director AS director, o."Cast" AS "cast",
           COALESCE(NULLIF(o.imdbID, ''), 'film-' || o.ID) AS base
    FROM omdb AS o LEFT JOIN tomatoes AS t ON t.ID = o.ID
),
ids AS (
    SELECT rid, director, "cast",
           CASE WHEN ROW_NUMBER() OVER (PARTITION BY base ORDER BY rid) = 1 THEN base
                ELSE base || '~' || rid END AS id
    FROM films
),
split(id, field, item, rest) AS (
    SELECT id, 'director', NULL, COALESCE(director, '') || ',' FROM ids
    UNION ALL
    SELECT id, 'cast', NULL, COALESCE("cast", '') || ',' FROM ids
    UNION ALL
    SELECT id, field,
           trim(substr(rest, 1, instr(rest, ',') - 1), ' ' || char(9, 10, 11, 12, 13)),
           substr(rest, instr(rest, ',') + 1)
    FROM split WHERE rest <> ''
),
items AS (SELECT DISTINCT id, field, item FROM split WHERE item IS NOT NULL AND item <> '')
"""


def films_sharing_a_director_with(db: Path, actor: str) -> tuple[set[str], set[str]]:
    """(the films `actor` is in, the other films with a director of one of them): the anchors
    and depth-1 members of `Scope(start={"cast": actor}, edges=[("director", "director")])`."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        anchors = {
            r[0]
            for r in conn.execute(
                _ITEMS + "SELECT id FROM items WHERE field = 'cast' AND item = ?", (actor,)
            )
        }
        shared = {
            r[0]
            for r in conn.execute(
                _ITEMS
                + """
                SELECT DISTINCT f.id FROM items AS f
                JOIN items AS d ON d.field = 'director' AND d.item = f.item
                JOIN items AS a ON a.id = d.id AND a.field = 'cast' AND a.item = ?
                WHERE f.field = 'director'
                """,
                (actor,),
            )
        }
    finally:
        conn.close()
    return anchors, shared - anchors


def films_by_country_genre_before_with_metacritic(
    db: Path, country: str, genre: str, before: int, metacritic: int
) -> set[str]:
    """The films of `country` and `genre` released before the year `before` with a Metacritic
    score of at least `metacritic`: ids rebuilt as the loader builds them, the range conditions
    in SQL, the comma lists split here (a part stripped of white space)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            """
            WITH films AS (
                SELECT o.ID AS rid, o.Year AS year, o.Metacritic AS metacritic,
                       o.Genre AS genre, o.Country AS country,
                       COALESCE(NULLIF(o.imdbID, ''), 'film-' || o.ID) AS base
                FROM omdb AS o LEFT JOIN tomatoes AS t ON t.ID = o.ID
            ),
            ids AS (
                SELECT CASE WHEN ROW_NUMBER() OVER (PARTITION BY base ORDER BY rid) = 1
                            THEN base ELSE base || '~' || rid END AS id,
                       year, metacritic, genre, country
                FROM films
            )
            SELECT id, genre, country FROM ids WHERE year < ? AND metacritic >= ?
            """,
            (before, metacritic),
        ).fetchall()
    finally:
        conn.close()

    def parts(text: str | None) -> set[str]:
        return {p.strip() for p in (text or "").split(",") if p.strip()}

    return {i for i, g, c in rows if genre in parts(g) and country in parts(c)}


_CHOSEN = (
    "(SELECT ID FROM omdb WHERE \"Cast\" LIKE '%fonda%' UNION "
    "SELECT ID FROM (SELECT ID FROM omdb ORDER BY ID LIMIT 300))"
)


def fonda_films() -> tuple[list[Document], dict[str, int]]:
    """The films to load (every film with a Fonda in its cast, and the first 300 by ID), and
    by SQL the number of those films per cast member whose name has the word 'Fonda'."""
    conn = sqlite3.connect(f"file:{movies_db_path()}?mode=ro", uri=True)
    try:
        order = [r[0] for r in conn.execute(
            "SELECT o.ID FROM omdb AS o LEFT JOIN tomatoes AS t ON t.ID = o.ID ORDER BY o.ID"
        )]  # fmt: skip
        wanted = {r[0] for r in conn.execute(f"SELECT ID FROM omdb WHERE ID IN {_CHOSEN}")}
        names: set[str] = set()
        for (cast,) in conn.execute(f'SELECT "Cast" FROM omdb WHERE ID IN {_CHOSEN}'):
            for name in (cast or "").split(","):
                if re.search(r"\bfonda\b", name, re.IGNORECASE):
                    names.add(name.strip())
        counts = {
            name: conn.execute(
                f"SELECT COUNT(*) FROM omdb WHERE ID IN {_CHOSEN} AND "
                "(',' || REPLACE(\"Cast\", ', ', ',') || ',') LIKE ('%,' || ? || ',%')",
                (name,),
            ).fetchone()[0]
            for name in names
        }
    finally:
        conn.close()
    every = list(datasets.load("films"))  # in movies.db's ID order, as `order`
    assert len(every) == len(order)
    docs = [d for d, row in zip(every, order, strict=True) if row in wanted]
    assert len(docs) == len(wanted)
    assert {"Jane Fonda", "Henry Fonda", "Peter Fonda", "Bridget Fonda"} <= set(counts)
    return docs, counts


def _film_rows(db: Path) -> list[tuple[str, int | None, int | None, str, str, str, str]]:
    """(id, year, Tomatometer, genre, cast, director, country) of every film, ids rebuilt as
    the loader builds them."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(
            """
            WITH films AS (
                SELECT o.ID AS rid, o.Year AS year, t.Meter AS meter, o.Genre AS genre,
                       o."Cast" AS "cast", o.Director AS director, o.Country AS country,
                       COALESCE(NULLIF(o.imdbID, ''), 'film-' || o.ID) AS base
                FROM omdb AS o LEFT JOIN tomatoes AS t ON t.ID = o.ID
            )
            SELECT CASE WHEN ROW_NUMBER() OVER (PARTITION BY base ORDER BY rid) = 1
                        THEN base ELSE base || '~' || rid END,
                   year, meter, COALESCE(genre, ''), COALESCE("cast", ''),
                   COALESCE(director, ''), COALESCE(country, '')
            FROM films
            """
        ).fetchall()
    finally:
        conn.close()


def _parts(text: str) -> set[str]:
    return {p.strip() for p in text.split(",") if p.strip()}


def films_where(
    db: Path,
    *,
    cast: str | None = None,
    director: str | None = None,
    genre: str | None = None,
    country: str | None = None,
    meter_at_least: int | None = None,
    meter_at_most: int | None = None,
    year_from: int | None = None,
    year_to: int | None = None,
) -> dict[str, int | None]:
    """The films (id -> year) with `cast` in the cast, `director` among the directors, `genre`
    among the genres, `country` among the countries, a Tomatometer of at least / at most the
    bounds and a year in the bounds (each condition only when given): the answer of the film
    tool's questions, by SQL over movies.db (comma lists split here, each part stripped)."""
    out: dict[str, int | None] = {}
    for fid, year, meter, genres, casts, directors, countries in _film_rows(db):
        if meter_at_least is not None and (meter is None or meter < meter_at_least):
            continue
        if meter_at_most is not None and (meter is None or meter > meter_at_most):
            continue
        if year_from is not None and (year is None or year < year_from):
            continue
        if year_to is not None and (year is None or year > year_to):
            continue
        lists = ((cast, casts), (director, directors), (genre, genres), (country, countries))
        if all(want is None or want in _parts(have) for want, have in lists):
            out[fid] = year
    return out


def film_genres(db: Path) -> set[str]:
    """Every genre named in movies.db's comma lists."""
    return {g for row in _film_rows(db) for g in _parts(row[3])}
