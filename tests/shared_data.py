"""Deterministic datasets shared by unit, compliance, parity and integration tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hoprag import Document
from hoprag.testing.data import COMPLIANCE_DIM, compliance_documents, unit_vectors

__all__ = [
    "COMPLIANCE_DIM",
    "compliance_documents",
    "graph_documents",
    "unit_vectors",
    "write_articles_jsonl",
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
