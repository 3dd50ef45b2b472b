"""The films test subset and its expected `aresolve` counts, both from SQL over the
package's own movies.db (not from hoprag), shared by the MemoryStore and Cassandra tests."""

from __future__ import annotations

import re
import sqlite3

from hoprag import Document, datasets
from hoprag.datasets.films import movies_db_path

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
