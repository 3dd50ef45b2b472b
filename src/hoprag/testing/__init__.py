"""The store compliance suite, shipped so that any `Store` can prove itself.

    # test_my_store.py  (needs pytest and pytest-asyncio: the `testing` extra)
    import pytest
    from hoprag.testing import StoreCompliance

    class TestMyStore(StoreCompliance):
        @pytest.fixture
        def store_factory(self):
            async def make(embedding, documents):   # a fresh store holding exactly `documents`
                store = MyStore(embedding=embedding)
                await store.aadd(documents)
                return store
            return make

The suite's tests are coroutines: run them with pytest-asyncio's auto mode (`asyncio_mode =
"auto"` in the project's pytest configuration); without it pytest fails every one of them
("async def functions are not natively supported").

A factory that takes a `fields` keyword gets `fields=RESOLVE_FIELDS` from the `aresolve`
tests, for stores that resolve declared fields only (`CassandraStore(..., fields=fields)`);
factories without it are called as before.

A factory may also offer `make.shared`, called like `make`: a store over the documents that
it may reuse between tests (see `StoreFactory`). The suite uses it only in tests that do not
write, and refuses writes to it; a test of your own that writes marks itself `@writes`.

A store that implements only the required methods (`aprepare`, `aadd`, and the prepared
query's `asearch`, `aget`, `aadjacent`, `aadjacent_many`) subclasses `CoreCompliance`, and adds
`ScopeCompliance`, `LexicalCompliance`, `ResolveCompliance`, `DeleteCompliance` (which needs
the other three) or `HolderCompliance` (`aholders` and `adelete`) for each optional capability
it has; `StoreCompliance` is all of them.

A store with a documented deviation lists the test in `deviations` (test name -> reason):
the test is then expected to fail, and a deviation that no longer fails is reported."""

try:
    import pytest  # noqa: F401
    import pytest_asyncio  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "hoprag.testing needs pytest and pytest-asyncio: install hoprag with its `testing` "
        "extra (README.md, Install)"
    ) from exc

from hoprag.testing.compliance import (
    Contract,
    CoreCompliance,
    DeleteCompliance,
    HolderCompliance,
    LexicalCompliance,
    ResolveCompliance,
    ScopeCompliance,
    StoreCompliance,
    StoreFactory,
    writes,
)
from hoprag.testing.data import (
    COMPLIANCE_DIM,
    RESOLVE_FIELDS,
    compliance_documents,
    resolve_documents,
    unit_vectors,
)

__all__ = [
    "COMPLIANCE_DIM",
    "RESOLVE_FIELDS",
    "Contract",
    "CoreCompliance",
    "DeleteCompliance",
    "HolderCompliance",
    "LexicalCompliance",
    "ResolveCompliance",
    "ScopeCompliance",
    "StoreCompliance",
    "StoreFactory",
    "compliance_documents",
    "resolve_documents",
    "unit_vectors",
    "writes",
]
