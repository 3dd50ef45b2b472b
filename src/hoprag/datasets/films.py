"""Films from the PyPI package `bokeh-sampledata` (`bokeh_sampledata/_data/movies.db`, SQLite,
CC0, selected from Wikidata): 17,472 films from 1940 to 2014.

One `Document` per row of the `omdb` table, joined with `tomatoes` on `ID`:

- `id`: the IMDb id (`"tt0078788"`); the rare second row with the same IMDb id gets
  `"~<ID>"` appended;
- `content`: built from the fields: `"<title> (<year>). <genres> film directed by ...,
  written by ..., starring .... Country: .... Language: .... <awards>"` (the database
  has no plot text: its `Consensus` column is empty);
- `metadata`: list fields `director`, `writer`, `cast`, `genre`, `country`, `language`
  (split on commas; empty lists when unknown), and scalars `title`, `year`, `imdb_id`,
  `released`, `runtime`, `rating` (MPAA), `metacritic`, `oscars`, `awards`, `production`,
  `box_office`, `tomato_meter`, `tomato_rating`, `tomato_reviews` (each only when known),
  `source` = "films".

Declared fields (`DECLARED_FIELDS`): year, runtime, metacritic, box_office, tomato_meter and
tomato_rating as numbers, released as a date, cast, director and writer as entities.

Edges: `("director", "director")`, `("writer", "writer")`, `("cast", "cast")`,
`("genre", "genre")`, `("country", "country")`, `("language", "language")`.

The package is located without importing it (its `__init__` needs pandas), so installing it
with `--no-deps` is enough.
"""

from __future__ import annotations

import importlib.util
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hoprag.datasets.errors import DatasetNotInstalledError
from hoprag.documents import Document

INSTALL_HINT = (
    "hoprag's datasets extra (from a clone: pip install '.[datasets]'; README, Install), "
    "or pip install --no-deps bokeh-sampledata"
)

LIST_FIELDS = ("director", "writer", "cast", "genre", "country", "language")

DECLARED_FIELDS: tuple[tuple[str, str], ...] = (
    ("year", "number"),
    ("runtime", "number"),
    ("metacritic", "number"),
    ("box_office", "number"),
    ("tomato_meter", "number"),
    ("tomato_rating", "number"),
    ("released", "date"),
    ("cast", "entity"),
    ("director", "entity"),
    ("writer", "entity"),
)
"""The fields `hoprag load films` declares: numbers for range filters (`movies.db` stores
them as INTEGER or REAL), `released` (every row 'YYYY-MM-DD') as a date, and the people as
entities for `aresolve`. `oscars` and `tomato_reviews` are numeric too but not declared."""

_QUERY = """
SELECT o.ID, o.imdbID, o.Title, o.Year, o.Rating, o.Runtime, o.Genre, o.Released, o.Director,
       o.Writer, o."Cast", o.Metacritic, o.Language, o.Country, o.Awards, o.Oscars,
       t.Production, t.BoxOffice, t.Meter, t.Rating, t.Reviews
FROM omdb AS o LEFT JOIN tomatoes AS t ON t.ID = o.ID
ORDER BY o.ID
"""


def movies_db_path() -> Path:
    """Where the installed `bokeh-sampledata` keeps `movies.db`; raises
    `DatasetNotInstalledError` when the package (or the file) is missing."""
    try:
        spec = importlib.util.find_spec("bokeh_sampledata")
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        candidate = Path(loc) / "_data" / "movies.db"
        if candidate.exists():
            return candidate
    raise DatasetNotInstalledError(
        "films data not found: the PyPI package bokeh-sampledata (movies.db) is not installed; "
        f"install it with: {INSTALL_HINT}"
    )


def _split(value: str | None) -> list[str]:
    if not value:
        return []
    out: list[str] = []
    for part in value.split(","):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    return out


def _join(names: list[str], most: int = 8) -> str:
    shown = ", ".join(names[:most])
    return shown + (" and others" if len(names) > most else "")


def _text(meta: dict[str, Any]) -> str:
    year = f" ({meta['year']})" if meta.get("year") else ""
    genre = f"{_join(meta['genre']).lower()} film" if meta["genre"] else "Film"
    parts = [f"{meta['title']}{year}."]
    film = genre[0].upper() + genre[1:]
    credits = []
    if meta["director"]:
        credits.append(f"directed by {_join(meta['director'])}")
    if meta["writer"]:
        credits.append(f"written by {_join(meta['writer'])}")
    if meta["cast"]:
        credits.append(f"starring {_join(meta['cast'])}")
    parts.append(f"{film} {', '.join(credits)}." if credits else f"{film}.")
    if meta["country"]:
        parts.append(f"Country: {', '.join(meta['country'])}.")
    if meta["language"]:
        parts.append(f"Language: {', '.join(meta['language'])}.")
    if meta.get("awards"):
        parts.append(str(meta["awards"]))
    return " ".join(parts)


def load_films(*, limit: int | None = None, path: str | Path | None = None) -> Iterator[Document]:
    """Yield films as Documents in the database's `ID` order, at most `limit` of them.
    `path` is a `movies.db` to read instead of the installed package's. Raises
    `DatasetNotInstalledError` at once when the database is missing."""
    db = Path(path) if path is not None else movies_db_path()
    if not db.exists():
        raise DatasetNotInstalledError(f"films database {db} does not exist")
    return _films(db, limit)


def _films(db: Path, limit: int | None) -> Iterator[Document]:
    if limit is not None and limit <= 0:
        return
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        query = _QUERY + (" LIMIT ?" if limit is not None else "")
        rows = conn.execute(query, (limit,) if limit is not None else ())
        seen: set[str] = set()
        for row in rows:
            (
                rid, imdb, title, year, rating, runtime, genre, released, director, writer,
                cast, metacritic, language, country, awards, oscars,
                production, box_office, meter, tomato_rating, reviews,
            ) = row  # fmt: skip
            doc_id = str(imdb or f"film-{rid}")
            if doc_id in seen:
                doc_id = f"{doc_id}~{rid}"
            seen.add(doc_id)
            meta: dict[str, Any] = {
                "title": title or "",
                "director": _split(director),
                "writer": _split(writer),
                "cast": _split(cast),
                "genre": _split(genre),
                "country": _split(country),
                "language": _split(language),
            }
            optional = {
                "year": year,
                "imdb_id": imdb,
                "released": released,
                "runtime": runtime,
                "rating": rating,
                "metacritic": metacritic,
                "oscars": oscars,
                "awards": awards,
                "production": production,
                "box_office": box_office,
                "tomato_meter": meter,
                "tomato_rating": tomato_rating,
                "tomato_reviews": reviews,
            }
            meta.update({k: v for k, v in optional.items() if v not in (None, "")})
            meta["source"] = "films"
            yield Document(id=doc_id, content=_text(meta), metadata=meta)
    finally:
        conn.close()
