"""Embedding models: a plain callable `str -> vector`, or any LangChain `Embeddings`.

`aembed_query` / `aembed_documents` accept either and return validated float lists."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import anyio.to_thread

from hoprag import validation
from hoprag.errors import InvalidInputError, invalid


@runtime_checkable
class EmbeddingsLike(Protocol):
    """The LangChain `Embeddings` shape (sync methods; async ones are used when present)."""

    def embed_query(self, text: str) -> list[float]: ...

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...


Embedding = Callable[[str], Sequence[float]] | EmbeddingsLike


def check_vector(
    vec: Sequence[float], *, what: str = "embedding", dim: int | None = None
) -> list[float]:
    """Return `vec` as a list of floats, or raise `InvalidInputError` if it is empty, has the
    wrong dimension, or contains NaN/infinity or only zeros (cosine similarity is undefined
    there)."""
    out: list[float] = validation.check_vector(vec, dimension=dim, what=what).tolist()
    return out


def embed_query(embedding: Any, text: str) -> list[float]:
    """Embed one query text with a callable or a LangChain `Embeddings`."""
    out: list[float] = embed_query_vector(embedding, text).array.tolist()
    return out


def embed_query_vector(embedding: Any, text: str) -> validation.CheckedVector:
    """`embed_query`'s vector as a `hoprag.validation.CheckedVector` (so that the stores do
    not check it again)."""
    if isinstance(embedding, EmbeddingsLike):
        raw = embedding.embed_query(text)
    elif callable(embedding):
        raw = embedding(text)
    else:
        raise invalid("embedding", embedding, "a callable str -> vector or a LangChain Embeddings")
    return validation.checked_vector(raw, what="query embedding")


def embed_documents(embedding: Any, texts: list[str]) -> list[list[float]]:
    """Embed document texts in one batch where the model supports it."""
    if isinstance(embedding, EmbeddingsLike):
        vecs = embedding.embed_documents(texts)
    elif callable(embedding):
        vecs = [embedding(t) for t in texts]
    else:
        raise invalid("embedding", embedding, "a callable str -> vector or a LangChain Embeddings")
    if len(vecs) != len(texts):
        raise InvalidInputError(
            f"the embedding model returned {len(vecs)} vectors for {len(texts)} texts"
        )
    return [check_vector(v, what=f"embedding of document {i}") for i, v in enumerate(vecs)]


async def aembed_query(embedding: Any, text: str) -> list[float]:
    """Async `embed_query`: uses the model's own `aembed_query` when it has one, else runs the
    sync call in a worker thread so the event loop is not blocked."""
    out: list[float] = (await aembed_query_vector(embedding, text)).array.tolist()
    return out


async def aembed_query_vector(embedding: Any, text: str) -> validation.CheckedVector:
    """`aembed_query`'s vector as a `hoprag.validation.CheckedVector`."""
    native = getattr(embedding, "aembed_query", None)
    if native is not None:
        return validation.checked_vector(await native(text), what="query embedding")
    return await anyio.to_thread.run_sync(embed_query_vector, embedding, text)


async def aembed_documents(embedding: Any, texts: list[str]) -> list[list[float]]:
    """Async `embed_documents`, in a worker thread unless the model is natively async."""
    native = getattr(embedding, "aembed_documents", None)
    if native is not None:
        vecs = await native(texts)
        return [check_vector(v, what=f"embedding of document {i}") for i, v in enumerate(vecs)]
    return await anyio.to_thread.run_sync(embed_documents, embedding, texts)
