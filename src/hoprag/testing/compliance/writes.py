"""Writes: an upsert replaces, documents without an embedding are embedded, an id longer
than any store keeps is refused before anything is written."""

from __future__ import annotations

import pytest

from hoprag.documents import Document
from hoprag.edges import MetadataEdge
from hoprag.embeddings.hash import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores.base import Store
from hoprag.testing.compliance.support import (
    TOL,
    Contract,
    _ids,
    writes,
)
from hoprag.testing.data import (
    COMPLIANCE_DIM,
)
from hoprag.validation import MAX_ID_BYTES


class WriteCompliance(Contract):
    """Writes: an upsert replaces, documents without an embedding are embedded, an id longer
    than any store keeps is refused before anything is written."""

    # -- writes -----------------------------------------------------------------------------

    @writes
    async def test_upsert_replaces(self, store: Store) -> None:
        vec = [1.0] + [0.0] * (COMPLIANCE_DIM - 1)
        await store.aadd([Document("d0", "replaced", {"type": "rock", "keywords": ["hard"]}, vec)])
        got = (await store.aget(["d0"]))[0].document
        assert got.content == "replaced"
        assert dict(got.metadata) == {"type": "rock", "keywords": ["hard"]}
        assert "d0" not in _ids(await store.aadjacent(MetadataEdge("keywords", "fur"), vec, k=12))
        assert _ids(await store.aadjacent(MetadataEdge("type", "rock"), vec, k=12)) == ["d0"]
        top = (await store.asearch(vec, k=1))[0]
        assert top.document.id == "d0"
        assert top.score == pytest.approx(1.0, abs=TOL)
        assert len(await store.asearch(vec, k=50)) == 12

    @writes
    async def test_add_embeds_documents_without_embedding(self, store: Store) -> None:
        emb = HashEmbedding(COMPLIANCE_DIM)
        await store.aadd([Document("new", "a brand new text", {"type": "new"})])
        q = emb("a brand new text")
        hits = await store.asearch(q, k=1)
        assert _ids(hits) == ["new"]
        assert hits[0].score == pytest.approx(1.0, abs=TOL)

    @writes
    async def test_an_id_longer_than_any_store_keeps_is_refused_before_writing(
        self, store: Store
    ) -> None:
        """Every store refuses an id over `MAX_ID_BYTES` of UTF-8 before anything is written
        (issue #28: Cassandra refused the partition key mid-load, MemoryStore kept it)."""
        vec = [1.0] + [0.0] * (COMPLIANCE_DIM - 1)
        long_id = "é" * (MAX_ID_BYTES // 2 + 1)  # 65,536 bytes of UTF-8 in 32,768 characters
        batch = [Document("fresh", "first", {}, vec), Document(long_id, "second", {}, vec)]
        with pytest.raises(InvalidInputError, match=r"documents\[1\]\.id has 65,536 bytes"):
            await store.aadd(batch)
        assert await store.aget(["fresh"]) == []  # nothing of the batch was written
        with pytest.raises(InvalidInputError, match="bytes of UTF-8"):
            await store.aget([long_id])
