"""Embedding models and helpers that accept a plain callable or a LangChain `Embeddings`."""

from typing import Any

from hoprag.embeddings.base import (
    Embedding,
    EmbeddingsLike,
    aembed_documents,
    aembed_query,
    check_vector,
    embed_documents,
    embed_query,
)
from hoprag.embeddings.hash import HashEmbedding

__all__ = [
    "CachedEmbedding",
    "Embedding",
    "EmbeddingsLike",
    "HashEmbedding",
    "MiniLMEmbedding",
    "aembed_documents",
    "aembed_query",
    "check_vector",
    "embed_documents",
    "embed_query",
]


def __getattr__(name: str) -> Any:
    # Imported on first use: MiniLMEmbedding needs the [minilm] extra (torch is imported only
    # when the model is first used), CachedEmbedding needs sqlite3.
    if name == "MiniLMEmbedding":
        from hoprag.embeddings.minilm import MiniLMEmbedding

        return MiniLMEmbedding
    if name == "CachedEmbedding":
        from hoprag.embeddings.cache import CachedEmbedding

        return CachedEmbedding
    raise AttributeError(f"module 'hoprag.embeddings' has no attribute {name!r}")
