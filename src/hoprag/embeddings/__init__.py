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
    "Embedding",
    "EmbeddingsLike",
    "HashEmbedding",
    "aembed_documents",
    "aembed_query",
    "check_vector",
    "embed_documents",
    "embed_query",
]


def __getattr__(name: str) -> Any:
    # MiniLMEmbedding needs the [minilm] extra; import it only when asked for.
    if name == "MiniLMEmbedding":
        from hoprag.embeddings.minilm import MiniLMEmbedding  # type: ignore[import-not-found]

        return MiniLMEmbedding
    raise AttributeError(name)
