"""MemoryStore's `aresolve` on films counts what SQL over movies.db counts (the same subset
and expectations as the Cassandra test in tests/integration/test_cassandra_fields.py)."""

from __future__ import annotations

from films_sql import fonda_films
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores import MemoryStore


def test_resolving_fonda_on_films_in_memory_counts_what_sql_counts() -> None:
    docs, counts = fonda_films()
    store = MemoryStore(HashEmbedding(16))
    store.add(docs)
    got = store.resolve("fonda", ["cast", "director"], limit=100)
    assert {c.value: c.documents for c in got if c.field == "cast"} == counts
    best = sorted(counts, key=lambda n: (-counts[n], n))
    two_words = [c.value for c in got if c.field == "cast" and c.score == 0.5]
    assert two_words[:3] == [n for n in best if len(n.split()) == 2][:3]
    jane = store.resolve("JANE fönda", ["cast"], limit=1)
    assert [(c.value, c.documents, c.score) for c in jane] == [
        ("Jane Fonda", counts["Jane Fonda"], 1.0)
    ]
    assert store.resolve("x'); DROP TABLE films; --", ["cast", "director", "writer"]) == []
