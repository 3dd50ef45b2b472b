"""Access-restricted store views: `store.restricted(access_filter)` is a `Store` that answers as
if the documents outside `access_filter` did not exist.

Every read of a run goes through `aprepare`, and the view prepares each run on the store it
wraps with its access filter ANDed into the caller's (`hoprag.filters.and_filters`): vector and
lexical starts, edge adjacency, reads by id (`initial_root_ids`, `Scope(ids=...)`, id edges),
the complete reads of scopes and `order_by` listings. Name resolution asks the store to count
only the documents that pass the access filter and to leave out values no such document
carries. Holder counts (`aholders`) are unknown (None) through a view: the store's counts
cover every document, so they would tell of documents outside it. A caller's filter can only
narrow what the view shows, since it is ANDed, never ORed, with the access filter;
`view.restricted(f)` narrows the view further.

Deletes through a view delete only documents inside it: ids outside it are skipped as unknown
ids are, and a delete by filter deletes the documents passing the filter and the access filter.
Writes through a view refuse, before anything is written, a document outside the view and a
document whose id belongs to a stored document outside it (the check and the write are not one
transaction: a concurrent writer to the same id through another view is not excluded). A
write is checked more strictly than a read (`written_inside`): a document must pass a branch of
the access filter by its values themselves, and carry on every field an equality of the access
filter names only a value the filter allows there, so that it cannot also pass another view's
filter naming another value (a list `["a", "b"]` passes `{"tenant": "a"}` when read)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hoprag.documents import Document
from hoprag.edges import MISSING, MetadataEdge, nested_get, value_key
from hoprag.errors import InvalidInputError, invalid
from hoprag.filters import (
    CompiledFilter,
    Condition,
    Filter,
    FilterPlan,
    and_filters,
    compile_filter,
    condition_label,
    holds,
    matches,
)
from hoprag.resolve import Candidate
from hoprag.stats import EdgePlan
from hoprag.stores.base import (
    DEFAULT_MAX_CONCURRENCY,
    Hit,
    LexicalHit,
    PreparedQuery,
    Store,
    check_delete,
    check_holder_edges,
)
from hoprag.sync import run_sync
from hoprag.validation import check_documents

__all__ = ["RestrictedQuery", "RestrictedStore"]

ACCESS_ALLOWED = "a non-empty filter (the filter language of every store)"


def compile_access(access: Filter | CompiledFilter) -> CompiledFilter:
    """`access` checked and compiled as an access filter: errors name `access_filter`, and a
    filter that lets every document through is refused (a view of everything is a mistake)."""
    compiled = compile_filter(access, "access_filter")
    if compiled.matches_all:
        raise invalid("access_filter", access, ACCESS_ALLOWED)
    return compiled


def holds_by_itself(condition: Condition, metadata: Mapping[str, Any]) -> bool:
    """Whether the condition holds for the document's value itself: an `$eq` when the value
    equals the compared value (a list only when it is that whole list, never because it
    contains it), a range when the value is no list and in the range; the other operators as
    `hoprag.filters.holds` decides them."""
    value = nested_get(metadata, condition.field)
    if condition.op == "$eq":
        return value is not MISSING and value_key(value) == condition.key
    if condition.is_range and isinstance(value, list | tuple):
        return False
    return holds(condition, metadata)


def allowed_values(access: CompiledFilter) -> dict[str, set[Any]]:
    """Field -> the keys (`hoprag.edges.value_key`) of the values the `$eq` conditions of any
    branch of `access` allow on it (a `$in` is one `$eq` per value)."""
    allowed: dict[str, set[Any]] = {}
    for c in access.conditions:
        if c.op == "$eq":
            allowed.setdefault(c.field, set()).add(c.key)
    return allowed


def written_inside(access: CompiledFilter, metadata: Mapping[str, Any]) -> bool:
    """Whether a document with this metadata may be written through a view with `access`:
    every condition of one branch holds by the document's own values (`holds_by_itself`), and
    each field an equality of `access` names (in any branch) is either absent or holds exactly
    one of the values allowed there. A document that passes is not found by a filter that
    names, on those fields, only values the access filter does not allow."""
    if not any(all(holds_by_itself(c, metadata) for c in b) for b in access.branches):
        return False
    for field, keys in allowed_values(access).items():
        value = nested_get(metadata, field)
        if value is not MISSING and value_key(value) not in keys:
            return False
    return True


class RestrictedStore(Store):
    """A view of `store` that holds only the documents passing `access` (see the module
    docstring). Made by `Store.restricted`."""

    def __init__(self, store: Store, access: Filter | CompiledFilter) -> None:
        if not isinstance(store, Store):
            raise invalid("store", store, "a hoprag Store")
        self.store = store
        self.access = compile_access(access)
        self.embedding = store.embedding

    def __repr__(self) -> str:
        labels = ", ".join(map(condition_label, self.access.conditions))
        return f"RestrictedStore({self.store!r}, access: {labels})"

    def restricted(self, access_filter: Filter | CompiledFilter) -> RestrictedStore:
        """A view of the same store holding the documents that pass this view's access filter
        and `access_filter` too."""
        narrower = and_filters(self.access, compile_access(access_filter))
        return RestrictedStore(self.store, narrower)

    async def aprepare(
        self,
        embedding: Sequence[float] | None,
        filter: Filter | CompiledFilter | None = None,
        *,
        include_embeddings: bool = True,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> RestrictedQuery:
        """The wrapped store's prepared query for the caller's filter ANDed with the access
        filter."""
        both = and_filters(self.access, compile_filter(filter))
        inner = await self.store.aprepare(
            embedding,
            both,
            include_embeddings=include_embeddings,
            max_concurrency=max_concurrency,
        )
        return RestrictedQuery(inner, self.access)

    async def aresolve(
        self,
        text: str,
        fields: Sequence[str],
        *,
        limit: int = 10,
        filter: Filter | CompiledFilter | None = None,
    ) -> list[Candidate]:
        """The wrapped store's resolution counting only documents in the view (and passing
        `filter`)."""
        both = and_filters(self.access, compile_filter(filter))
        return await self.store.aresolve(text, fields, limit=limit, filter=both)

    async def aholders(self, edges: Sequence[MetadataEdge]) -> list[int | None]:
        """None for every edge: unknown. The wrapped store's counts are of all its documents,
        so they would tell how many documents outside the view hold a value; counting inside
        the view would read every holder, the cost counts exist to avoid."""
        return [None] * len(check_holder_edges(edges))

    async def aadd(self, documents: Iterable[Document]) -> None:
        """Write `documents` to the wrapped store, after refusing the whole batch when one of
        them is outside the view by its own values (`written_inside`) or would replace a stored
        document outside it."""
        docs = check_documents(documents)
        self._refuse(
            [d.id for d in docs if not written_inside(self.access, d.metadata)],
            "are outside this store view (a write must pass its access filter by the values "
            "themselves: each field an equality of the access filter names holds one allowed "
            "value, not a list that also holds others, and a range holds for a single value)",
        )
        stored = await self.store.aget([d.id for d in docs], include_embeddings=False)
        self._refuse(
            [h.id for h in stored if not matches(self.access, h.document.metadata)],
            "would replace documents outside this store view",
        )
        await self.store.aadd(docs)

    def add(self, documents: Iterable[Document]) -> None:
        """Sync `aadd`."""
        run_sync(self.aadd, documents)

    async def adelete(
        self, ids: Sequence[str] | None = None, *, filter: Filter | CompiledFilter | None = None
    ) -> int:
        """Delete the documents inside the view with these `ids` (those outside it are
        skipped, as unknown ids are), or those inside it passing `filter`; how many were
        deleted. The arguments are checked as every store checks them."""
        request = check_delete(ids, filter)
        if request.filter is not None:
            return await self.store.adelete(filter=and_filters(self.access, request.filter))
        assert request.ids is not None
        inside = await self.store.aget(request.ids, filter=self.access, include_embeddings=False)
        if not inside:
            return 0
        return await self.store.adelete([h.id for h in inside])

    def _refuse(self, ids: list[str], why: str) -> None:
        if ids:
            shown = ", ".join(map(repr, ids[:5])) + (" ..." if len(ids) > 5 else "")
            raise InvalidInputError(
                f"documents {shown} {why}; nothing was written",
                argument="documents",
                value=ids,
                allowed="documents that pass the view's access filter by their own values",
            )


class RestrictedQuery(PreparedQuery):
    """A run prepared through a store view: the wrapped store's prepared query (whose filter
    holds the access filter), with the access conditions named in its `filter_plan`."""

    def __init__(self, inner: PreparedQuery, access: CompiledFilter) -> None:
        # Whole-store counts would tell of documents outside the view (a query that does not
        # subclass PreparedQuery may lack the method: it plans nothing then).
        getattr(inner, "without_plans", lambda: None)()
        self.inner = inner
        self.access = access
        self.embedding = inner.embedding
        self.filter = inner.filter
        self.include_embeddings = inner.include_embeddings
        self.limiter = inner.limiter

    @property
    def filter_plan(self) -> FilterPlan:
        """The wrapped query's plan, with the access filter's conditions as `access`."""
        plan = self.inner.filter_plan
        labels = tuple(dict.fromkeys(map(condition_label, self.access.conditions)))
        return FilterPlan(plan.queries, plan.pushed, plan.after_read, labels)

    async def alexical(
        self,
        text: str,
        *,
        k: int,
        filtered_statistics: bool = True,
        max_holders: int | None = None,
    ) -> Sequence[LexicalHit]:
        """The wrapped query's lexical search, always with the statistics of the documents it
        may return (`filtered_statistics`): a score through a view says nothing of the
        documents outside it, nor does which terms `max_holders` leaves out."""
        return await self.inner.alexical(
            text, k=k, filtered_statistics=True, max_holders=max_holders
        )

    async def around_trip(self) -> float | None:
        return await self.inner.around_trip()

    async def asearch(self, *, k: int) -> list[Hit]:
        return await self.inner.asearch(k=k)

    async def astart(self, *, k: int, adjacent_k: int) -> list[Hit]:
        return await self.inner.astart(k=k, adjacent_k=adjacent_k)

    def take_notes(self) -> dict[str, int]:
        return self.inner.take_notes()

    def take_plans(self) -> list[EdgePlan]:
        return self.inner.take_plans()

    async def aget(self, ids: Sequence[str]) -> list[Hit]:
        return await self.inner.aget(ids)

    async def aadjacent(self, edge: MetadataEdge, *, k: int) -> list[Hit]:
        return await self.inner.aadjacent(edge, k=k)

    async def aadjacent_many(self, edges: Sequence[MetadataEdge], *, k: int) -> list[list[Hit]]:
        return await self.inner.aadjacent_many(edges, k=k)

    async def amatching(self, edges: Sequence[MetadataEdge], *, limit: int) -> list[list[Hit]]:
        return await self.inner.amatching(edges, limit=limit)

    async def afiltered(self, *, limit: int) -> list[Hit]:
        return await self.inner.afiltered(limit=limit)
