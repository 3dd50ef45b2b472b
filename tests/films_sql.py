"""Expected answers for scope tests, computed by SQL over bokeh-sampledata's movies.db itself,
never by hoprag: document ids and comma-list fields are rebuilt in SQL the way the films loader
(`hoprag.datasets.films`) builds them (ids: the IMDb id, `film-<ID>` without one, a repeated id
gets `~<ID>`; lists: split on commas, each part stripped of whitespace, empty parts dropped)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

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
