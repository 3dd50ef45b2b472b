"""The shipped store compliance suite (`hoprag.testing`) run against MemoryStore."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from hoprag import Document
from hoprag.stores import MemoryStore
from hoprag.testing import StoreCompliance, StoreFactory


@pytest.fixture
def store_factory() -> StoreFactory:
    async def make(
        embedding: Any, documents: list[Document], fields: Mapping[str, str] | None = None
    ) -> MemoryStore:
        store = MemoryStore(embedding=embedding)  # resolves any field: `fields` is not needed
        await store.aadd(documents)
        return store

    # A MemoryStore costs nothing to make, so its "shared" store is a fresh one: offering it
    # makes the suite refuse writes in the tests not marked @writes on every run.
    make.shared = make  # type: ignore[attr-defined]
    return make


class TestMemoryStoreCompliance(StoreCompliance):
    """MemoryStore passes the shared suite."""
