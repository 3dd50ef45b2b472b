"""Deterministic datasets shared by unit, compliance, parity and integration tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from hoprag import Document

COMPLIANCE_DIM = 8


def unit_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    """`n` random unit vectors (rows), reproducible from `seed`."""
    rng = np.random.default_rng(seed)
    mat = rng.standard_normal((n, dim))
    return mat / np.linalg.norm(mat, axis=1, keepdims=True)


def compliance_documents(dim: int = COMPLIANCE_DIM) -> list[Document]:
    """Twelve documents with explicit embeddings covering every metadata shape a store must
    match: scalars, lists, nested dicts, ints vs floats vs bools, and citations by id."""
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


def graph_documents(
    n: int, dim: int, *, seed: int = 0, n_keywords: int = 40, max_cites: int = 3
) -> list[Document]:
    """`n` documents with random unit embeddings, 1-3 keywords out of `n_keywords`, a `type`
    among five, and up to `max_cites` citations of other documents by id."""
    rng = np.random.default_rng(seed)
    vecs = unit_vectors(n, dim, seed=seed + 1)
    types = ["a", "b", "c", "d", "e"]
    docs = []
    for i in range(n):
        kws = sorted({f"k{int(x)}" for x in rng.integers(0, n_keywords, rng.integers(1, 4))})
        cites = sorted({f"doc{int(x)}" for x in rng.integers(0, n, rng.integers(0, max_cites + 1))})
        meta = {"keywords": kws, "type": types[int(rng.integers(0, 5))], "cites": cites}
        docs.append(Document(f"doc{i}", f"content {i}", meta, [float(x) for x in vecs[i]]))
    return docs


def write_articles_jsonl(path: Path, n: int) -> list[str]:
    """`n` article records for `hoprag load jsonl` (keywords and references), written to
    `path`; returns their ids in order."""
    ids = [f"a{i:05d}" for i in range(n)]
    with path.open("w") as f:
        for i, rid in enumerate(ids):
            rec = {
                "id": rid,
                "title": f"article {i}",
                "text": f"article {i} on topic {i % 17} and method {i % 5}",
                "keywords": [f"topic{i % 17}", f"method{i % 5}"],
                "references": [ids[(i * 7 + 3) % n], ids[(i * 11 + 1) % n]],
            }
            f.write(json.dumps(rec) + "\n")
    return ids
