"""What the contracts share: the store factory protocol, the `@writes` mark and the shared
store's write guard, reference answers (similarity order, scopes), and `Contract`, the base
of every contract class."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
import pytest
import pytest_asyncio

from hoprag.documents import Document
from hoprag.edges import MISSING, nested_get, value_key
from hoprag.embeddings.hash import HashEmbedding
from hoprag.scopes import Scope
from hoprag.stores.base import Hit, Store
from hoprag.testing.data import (
    COMPLIANCE_DIM,
    compliance_documents,
    unit_vectors,
)

StoreFactory = Callable[..., Awaitable[Store]]
"""`await factory(embedding, documents)`: a fresh store holding exactly `documents`. A factory
that also takes a `fields` keyword gets `fields=RESOLVE_FIELDS` from the `aresolve` tests: a
store that needs declared fields declares them (`{field: "entity", ...}`). Factories without
it are called as before.

A factory may also have a `shared` attribute, called the same way: a store over `documents`
that it may have loaded for an earlier test and reuses (a store whose set-up is costly, such
as a Cassandra table with its indexes, then loads the suite's documents once). The suite asks
for it only in tests that do not write (those not marked `@writes`), and turns the shared
store's write methods into failures for the test's duration, so that a test that writes
without being marked fails instead of changing what later tests read."""

WRITE_METHODS = ("aadd", "adelete", "adeclare_fields")
"""The store methods that change what a store holds: refused on a shared store."""

_Test = TypeVar("_Test", bound=Callable[..., Any])


def writes(test: _Test) -> _Test:
    """Mark a suite test that writes to its store: it always gets a fresh store from the
    factory, never a shared one."""
    test.compliance_writes = True  # type: ignore[attr-defined]
    return test


def _writes(request: pytest.FixtureRequest) -> bool:
    return bool(getattr(request.function, "compliance_writes", False))


def _refuse_writes(store: Any, test: str) -> bool:
    """Make `store`'s write methods raise AssertionError naming `test`; False when the store
    does not allow it (its instance attributes cannot be set)."""
    for name in WRITE_METHODS:
        if not callable(getattr(store, name, None)):
            continue

        async def refuse(*args: Any, _name: str = name, **kwargs: Any) -> None:
            raise AssertionError(
                f"{test} called {_name} on a store shared between tests; mark the test "
                "@writes (hoprag.testing.compliance) so that it gets a store of its own"
            )

        try:
            setattr(store, name, refuse)
        except (AttributeError, TypeError):
            return False
    return True


async def _store_for(
    request: pytest.FixtureRequest, factory: StoreFactory, *args: Any, **kwargs: Any
) -> Any:
    """The factory's shared store for a test that does not write (when the factory shares
    stores and the store lets its writes be refused), else a fresh one."""
    shared = getattr(factory, "shared", None)
    if shared is not None and not _writes(request):
        store = await shared(*args, **kwargs)
        if _refuse_writes(store, request.node.name):
            return store
    return await factory(*args, **kwargs)


def _takes_fields(factory: Callable[..., Any]) -> bool:
    """Whether the factory accepts a `fields` keyword (or any keyword)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.kind is inspect.Parameter.VAR_KEYWORD
        or (p.name == "fields" and p.kind is not inspect.Parameter.POSITIONAL_ONLY)
        for p in params
    )


TOL = 1e-3


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _query(seed: int = 99) -> list[float]:
    return [float(x) for x in unit_vectors(1, COMPLIANCE_DIM, seed=seed)[0]]


def _cos(doc: Document, q: Sequence[float]) -> float:
    a = np.asarray(doc.embedding)
    b = np.asarray(q)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _ranked(docs: list[Document], q: list[float]) -> list[str]:
    return [d.id for d in sorted(docs, key=lambda d: _cos(d, q), reverse=True)]


def _ids(hits: list[Hit]) -> list[str]:
    return [h.document.id for h in hits]


def _scores(hits: list[Hit]) -> list[float]:
    out = [h.score for h in hits]
    assert all(s is not None for s in out), "a search with an embedding scores every hit"
    return [s for s in out if s is not None]


def _values(doc: Document, field: str) -> list[Any]:
    """The values of a field of a compliance document (list elements exploded)."""
    if field == "$id":
        return [doc.id]
    value = nested_get(doc.metadata, field)
    if value is MISSING or value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _reference_scope(
    docs: list[Document], anchors: set[str], specs: list[tuple[str, str]], max_depth: int
) -> dict[str, int]:
    """Each document within `max_depth` hops of `anchors` with its smallest hop count, by a
    plain breadth-first search over every pair of documents (the expected answer)."""
    by_id = {d.id: d for d in docs}
    depth = {a: 0 for a in anchors if a in by_id}
    frontier = set(depth)
    for d in range(1, max_depth + 1):
        reached: set[str] = set()
        for src in frontier:
            for source, target in specs:
                out = {value_key(v) for v in _values(by_id[src], source)}
                for doc in docs:
                    if doc.id not in depth and out & {value_key(v) for v in _values(doc, target)}:
                        reached.add(doc.id)
        for r in reached:
            depth[r] = d
        frontier = reached
    return depth


_SCOPE_CASES: dict[str, tuple[dict[str, Any], list[tuple[str, str]], int]] = {
    "start-depth0": ({"start": {"type": "bird"}}, [], 0),
    "start-depth1": ({"start": {"type": "bird"}}, [("keywords", "keywords")], 1),
    "start-depth2": ({"start": {"type": "bird"}}, [("keywords", "keywords")], 2),
    "ids-depth0": ({"ids": ["d3", "d0", "missing"]}, [], 0),
    "ids-cites-out-depth2": ({"ids": ["d3"]}, [("cites", "$id")], 2),
    "ids-cited-by-depth2": ({"ids": ["d0"]}, [("$id", "cites")], 2),
    "ids-both-ways-depth1": ({"ids": ["d10"]}, [("cites", "$id"), ("$id", "cites")], 1),
    "nested-field-depth1": ({"start": {"type": "fish"}}, [("loc.city", "loc.city")], 1),
    "list-filter-start-depth1": ({"start": {"keywords": "claws"}}, [("type", "type")], 1),
}


def _scope(case: str, **kw: Any) -> Scope:
    anchors, specs, depth = _SCOPE_CASES[case]
    return Scope(**anchors, edges=specs, max_depth=depth, **kw)


def _expected_scope(docs: list[Document], case: str) -> dict[str, int]:
    anchors, specs, depth = _SCOPE_CASES[case]
    if "ids" in anchors:
        start = set(anchors["ids"])
    else:
        ((field, value),) = anchors["start"].items()
        start = {d.id for d in docs if value_key(value) in map(value_key, _values(d, field))}
    return _reference_scope(docs, start, specs, depth)


class Contract:
    """What every contract shares: the suite's documents, the `store` fixture over the
    subclass's `store_factory`, and documented deviations in `deviations` (test name ->
    reason; such a test must fail)."""

    deviations: ClassVar[dict[str, str]] = {}

    @pytest.fixture(autouse=True)
    def _deviation(self, request: pytest.FixtureRequest) -> None:
        reason = self.deviations.get(request.node.originalname)
        if reason is not None:
            request.applymarker(pytest.mark.xfail(reason=reason, strict=True))

    @pytest.fixture
    def docs(self) -> list[Document]:
        return compliance_documents()

    @pytest_asyncio.fixture
    async def store(
        self, request: pytest.FixtureRequest, store_factory: StoreFactory, docs: list[Document]
    ) -> AsyncIterator[Any]:
        yield await _store_for(request, store_factory, HashEmbedding(COMPLIANCE_DIM), docs)
