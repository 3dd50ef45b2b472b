"""HashEmbedding: a deterministic embedding with no semantics beyond shared words, for tests."""

from __future__ import annotations

import hashlib
import re

import numpy as np

_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashEmbedding:
    """Embeds text as a unit vector of `dim` floats by feature hashing its lower-cased words
    (each word adds a signed unit to a hashed coordinate) plus a small component derived from
    the whole text, so equal texts give equal vectors and no text gives a zero vector. Works
    as a plain callable and as a LangChain-style `Embeddings`."""

    def __init__(self, dim: int = 64) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 2:
            raise ValueError(f"HashEmbedding dim must be an int >= 2, got {dim!r}")
        self.dim = dim

    def __repr__(self) -> str:
        return f"HashEmbedding(dim={self.dim})"

    def _vector(self, text: str) -> list[float]:
        vec = np.zeros(self.dim, dtype=np.float64)
        for token in _TOKEN.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
            vec[h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        vec += 0.1 * np.random.default_rng(seed).standard_normal(self.dim)
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:  # pragma: no cover - the random part makes this practically impossible
            vec[0], norm = 1.0, 1.0
        return [float(x) for x in vec / norm]

    def __call__(self, text: str) -> list[float]:
        """The embedding of `text`."""
        return self._vector(text)

    def embed_query(self, text: str) -> list[float]:
        """LangChain `Embeddings.embed_query`."""
        return self._vector(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """LangChain `Embeddings.embed_documents`."""
        return [self._vector(t) for t in texts]
