"""MemoryStore's `aresolve` on films counts what SQL over movies.db counts (the same subset
and expectations as the Cassandra test in tests/integration/test_cassandra_fields.py)."""

from __future__ import annotations

import pytest

from films_sql import fonda_films
from hoprag.documents import Document
from hoprag.embeddings.hash import HashEmbedding
from hoprag.errors import InvalidInputError
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


def test_the_candidate_cap_counts_values_before_the_filter_as_the_catalogue_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A text matching more values than the cap is refused even when a filter (a store view's)
    leaves fewer: CassandraStore's catalogue bounds its reads before any filter, and both
    stores must give the same answer; under the cap, values no passing document carries drop."""
    import hoprag.resolve
    import hoprag.stores.memory

    for module in (hoprag.resolve, hoprag.stores.memory):
        monkeypatch.setattr(module, "MAX_CANDIDATES", 3)
    store = MemoryStore(HashEmbedding(16))
    store.add(
        [
            Document("a", "a", {"tenant": "a", "director": ["Fonda A"]}),
            Document("b", "b", {"tenant": "b", "director": [f"Fonda {i}" for i in range(4)]}),
        ]
    )
    with pytest.raises(InvalidInputError, match="matches more than 3 values"):
        store.resolve("fonda", ["director"], filter={"tenant": "a"})
    got = store.resolve("fonda a", ["director"], filter={"tenant": "a"})
    assert [(c.value, c.documents) for c in got] == [("Fonda A", 1)]
    assert store.resolve("fonda 1", ["director"], filter={"tenant": "a"}) == []
