"""The compliance suite's documents: small, deterministic, covering every metadata shape a
store must match (scalars, lists, nested dicts, ints vs floats vs bools, citations by id)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from hoprag.documents import Document

COMPLIANCE_DIM = 8
"""The dimension of the compliance documents' embeddings."""


def unit_vectors(n: int, dim: int, seed: int) -> NDArray[np.float64]:
    """`n` random unit vectors (rows), reproducible from `seed`."""
    rng = np.random.default_rng(seed)
    mat = rng.standard_normal((n, dim))
    out: NDArray[np.float64] = mat / np.linalg.norm(mat, axis=1, keepdims=True)
    return out


def compliance_documents(dim: int = COMPLIANCE_DIM) -> list[Document]:
    """Twelve documents `d0`..`d11` with explicit embeddings; see the module docstring."""
    vecs = unit_vectors(12, dim, seed=7)
    meta: list[dict[str, Any]] = [
        {"type": "mammal", "keywords": ["fur", "claws"], "cites": ["d1", "d2"], "n": 1},
        {"type": "mammal", "keywords": ["fur"], "cites": ["d3"], "n": 2, "loc": {"city": "Oslo"}},
        {"type": "bird", "keywords": ["wings", "claws"], "cites": [], "n": 1.0},
        {"type": "bird", "keywords": ["wings"], "cites": ["d0"], "n": 3, "flag": True},
        {"type": "fish", "keywords": ["fins"], "n": 2.5, "loc": {"city": "Paris"}},
        {"type": "fish", "keywords": ["fins", "scales"], "cites": ["d4"], "flag": 1},
        {"type": "reptile", "keywords": ["scales", "claws"], "loc": {"city": "Oslo"}},
        {"type": "reptile", "keywords": ["scales"], "cites": ["d6", "missing"], "n": 4},
        {"type": "mammal", "keywords": ["fur", "hooves"], "loc": {"city": "Rome", "zip": 1}},
        {"type": "insect", "keywords": ["wings", "legs"], "n": 5, "flag": False},
        {"type": "insect", "keywords": ["legs"], "cites": ["d9", "d8"], "tag": "solo"},
        {"type": "mammal", "keywords": [], "n": 1, "loc": {"city": "Oslo", "zip": 2}},
    ]
    return [
        Document(f"d{i}", f"document {i} about {m['type']}", m, [float(x) for x in vecs[i]])
        for i, m in enumerate(meta)
    ]


RESOLVE_FIELDS: dict[str, str] = {
    "cast": "entity",
    "director": "entity",
    "crew.lead": "entity",
    "writer": "entity",
}
"""The fields `resolve_documents()` resolves on: a store factory declares them (stores that
need declared fields, such as CassandraStore)."""


def resolve_documents(dim: int = COMPLIANCE_DIM) -> list[Document]:
    """Ten documents `r0`..`r9` with names to resolve: shared and accented names, a name that
    is a single word, a name with a third word, non-string values, a nested field, values
    that look like CQL, and two writers whose names are each other's words reversed."""
    vecs = unit_vectors(10, dim, seed=11)
    meta: list[dict[str, Any]] = [
        {"cast": ["Jane Fonda", "Henry Fonda"], "director": "Sidney Lumet"},
        {"cast": ["Jane Fonda", "Peter Fonda"], "director": "Alan J. Pakula"},
        {
            "cast": ["Henry Fonda", "James Stewart"],
            "director": "Henry Koster",
            "writer": "Keith David",
        },
        {"cast": ["Bridget Fonda"], "director": "Jane Fonda", "writer": "David Keith"},
        {"cast": ["JÁNE FONDA"], "director": "Sidney  Lumet"},
        {"cast": ["Fonda"], "director": "Nobody"},
        {"cast": ["Jane Fonda-Smith"]},
        {"cast": [1, True, None, ["Jane Fonda"]], "director": 5},
        {"cast": "O'Brien; DROP TABLE x; --", "director": "Robert Bresson"},
        {"crew": {"lead": "Jane Fonda"}, "cast": []},
    ]
    return [
        Document(f"r{i}", f"film {i}", m, [float(x) for x in vecs[i]]) for i, m in enumerate(meta)
    ]
