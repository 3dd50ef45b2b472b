"""The store compliance suite: what every hoprag Store must do, written once, run against every
store, as one contract per capability.

Subclass it in a test module and provide a `store_factory` fixture (see `hoprag.testing`).
Every factory call must return a store holding only the given documents (the twelve of
`compliance_documents()`). Scores are compared with a tolerance: float32 storage and
approximate indexes are fine on twelve documents. Needs pytest and pytest-asyncio.

* `CoreCompliance`: the required methods only, as four contracts (`ReadCompliance`: search,
  reads by id, adjacency, traversals, bad input; `FilterCompliance`: the filter language;
  `TypeModelCompliance`: the metadata type model; `WriteCompliance`); a store that implements
  nothing more passes it without listing deviations.
* `ScopeCompliance` (`amatching`, `afiltered`), `LexicalCompliance` (`alexical`),
  `ResolveCompliance` (`aresolve`): one per optional capability; subclass those the store has.
* `DeleteCompliance` (`adelete`): deletes, checked against every read path, so it needs the
  other capabilities too.
* `HolderCompliance` (`aholders`, `adelete`): holder counts equal a recount of the documents
  after every kind of write.
* `StoreCompliance`: all of them, what hoprag's own stores pass."""

from hoprag.testing.compliance.core import CoreCompliance
from hoprag.testing.compliance.deletes import DeleteCompliance
from hoprag.testing.compliance.filter_language import FilterCompliance
from hoprag.testing.compliance.holders import HolderCompliance
from hoprag.testing.compliance.lexical import LexicalCompliance
from hoprag.testing.compliance.reads import ReadCompliance
from hoprag.testing.compliance.resolve import ResolveCompliance
from hoprag.testing.compliance.scopes import ScopeCompliance
from hoprag.testing.compliance.support import WRITE_METHODS, Contract, StoreFactory, writes
from hoprag.testing.compliance.type_model import TypeModelCompliance
from hoprag.testing.compliance.writes import WriteCompliance

__all__ = [
    "WRITE_METHODS",
    "Contract",
    "CoreCompliance",
    "DeleteCompliance",
    "FilterCompliance",
    "HolderCompliance",
    "LexicalCompliance",
    "ReadCompliance",
    "ResolveCompliance",
    "ScopeCompliance",
    "StoreCompliance",
    "StoreFactory",
    "TypeModelCompliance",
    "WriteCompliance",
    "writes",
]


class StoreCompliance(
    CoreCompliance,
    ScopeCompliance,
    LexicalCompliance,
    ResolveCompliance,
    DeleteCompliance,
    HolderCompliance,
):
    """Every contract: what a store with every capability (MemoryStore, CassandraStore) must
    do. Subclasses provide the `store_factory` fixture, and may list documented deviations in
    `deviations` (test name -> reason; such a test must fail)."""
