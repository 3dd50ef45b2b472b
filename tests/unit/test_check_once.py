"""A filter and a query vector are checked once per call path: a caller that checked them at
its entry hands the checked form on (`CompiledFilter`, `CheckedVector`), and the stores take
it as it is (issue #27)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hoprag.filters
from hoprag import Eager, InvalidInputError, Scope, asearch, atraverse
from hoprag.cli import build_parser
from hoprag.cli.query import check_query_args
from hoprag.embeddings.hash import HashEmbedding
from hoprag.filters import CompiledFilter, compile_filter
from hoprag.stores import MemoryStore
from hoprag.testing.data import COMPLIANCE_DIM, compliance_documents
from hoprag.validation import check_vector, checked_vector


class _CountedVector:
    """A query vector that counts how often numpy reads it (each full check reads it once)."""

    def __init__(self, values: list[float]) -> None:
        self.values = values
        self.reads = 0

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self.reads += 1
        return np.array(self.values, dtype=dtype)

    def __len__(self) -> int:
        return len(self.values)


@pytest.fixture
def store() -> MemoryStore:
    s = MemoryStore(embedding=HashEmbedding(COMPLIANCE_DIM))
    s.add(compliance_documents())
    return s


def _vector(store: MemoryStore) -> list[float]:
    return [float(x) for x in store.embedding("mammal")]


def test_a_compiled_filter_is_taken_as_compiled() -> None:
    compiled = compile_filter({"type": "mammal", "year": {"$gte": 1990}})
    assert isinstance(compiled, CompiledFilter)
    assert compile_filter(compiled) is compiled


def test_a_checked_vector_is_checked_for_its_dimension_only() -> None:
    checked = checked_vector([0.5, 0.5, 0.0], what="query embedding")
    assert checked_vector(checked, what="query embedding") is checked
    assert check_vector(checked, dimension=3, what="query embedding") is checked.array
    assert list(checked) == [0.5, 0.5, 0.0] and len(checked) == 3
    with pytest.raises(InvalidInputError, match="dimension 3, but the store holds vectors of"):
        check_vector(checked, dimension=4, what="query embedding")
    with pytest.raises(ValueError):  # read-only: what was checked cannot change
        checked.array[0] = float("nan")


def test_a_checked_vector_is_still_refused_when_it_was_bad() -> None:
    with pytest.raises(InvalidInputError, match="zero vector"):
        checked_vector([0.0, 0.0], what="query embedding")


async def test_a_scoped_search_reads_its_query_vector_once(store: MemoryStore) -> None:
    vector = _CountedVector(_vector(store))
    scope = Scope(start={"type": "mammal"}, edges=[("habitat", "habitat")], max_depth=1)
    found = await asearch(None, store=store, k=3, scope=scope, query_embedding=vector)  # type: ignore[arg-type]
    assert found  # the rank, walk and anchor queries were all prepared with it
    assert vector.reads == 1


async def test_a_traversal_reads_its_query_vector_once(store: MemoryStore) -> None:
    vector = _CountedVector(_vector(store))
    edges = [("habitat", "habitat")]
    found = await atraverse(
        None,
        store=store,
        edges=edges,
        strategy=Eager(select_k=4, start_k=2),
        query_embedding=vector,  # type: ignore[arg-type]
    )
    assert found
    assert vector.reads == 1


async def test_a_scope_start_is_compiled_once_for_a_search(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Any] = []
    real = hoprag.filters._mapping

    def counting(*args: Any) -> Any:
        if args[1] == "filter":
            calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(hoprag.filters, "_mapping", counting)
    scope = Scope(start={"type": "mammal"}, edges=[("habitat", "habitat")], max_depth=1)
    assert len(calls) == 1  # checked at construction
    await asearch("whale", store=store, k=3, scope=scope)
    assert len(calls) == 1  # not again by the store


def test_hoprag_query_hands_the_library_its_compiled_filter() -> None:
    args = build_parser().parse_args(
        [
            "query",
            "whale",
            "--table",
            "docs",
            "--edges",
            "habitat:habitat",
            "--filter",
            "type=mammal",
        ]
    )
    _, flt, _ = check_query_args(args)
    assert flt == compile_filter({"type": "mammal"})
