"""The shipped store compliance suite (`hoprag.testing`) run against MemoryStore."""

from __future__ import annotations

from typing import Any

import pytest

from hoprag import Document
from hoprag.stores import MemoryStore
from hoprag.testing import StoreCompliance, StoreFactory


@pytest.fixture
def store_factory() -> StoreFactory:
    async def make(embedding: Any, documents: list[Document]) -> MemoryStore:
        store = MemoryStore(embedding=embedding)
        await store.aadd(documents)
        return store

    return make


class TestMemoryStoreCompliance(StoreCompliance):
    """MemoryStore passes the shared suite."""
