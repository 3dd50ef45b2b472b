"""Embedding models and helpers that accept a plain callable or a LangChain `Embeddings`."""

from hoprag.embeddings.base import (
    Embedding,
    EmbeddingsLike,
    aembed_documents,
    aembed_query,
    check_vector,
    embed_documents,
    embed_query,
)

__all__ = [
    "Embedding",
    "EmbeddingsLike",
    "aembed_documents",
    "aembed_query",
    "check_vector",
    "embed_documents",
    "embed_query",
]
