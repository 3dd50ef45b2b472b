"""Store views (`Store.restricted`) on a CassandraStore over the real node: the property of
tests/view_checks.py (nothing outside the view is returned, counted or named, through every
read path) on seeded random graphs, with the access filter pushed down like any filter."""

from __future__ import annotations

from typing import Any

import pytest
from keyspaces import new_keyspace

from hoprag.embeddings import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore
from view_checks import (
    DECLARED,
    check_lexical_score_through_a_view_ignores_other_tenants,
    check_range_through_a_view_ignores_other_tenants,
    check_view,
    check_writes_reach_only_their_own_tenant,
    check_writes_through_a_view_stay_out_of_other_views,
    corpus,
)


def _store(session: Any) -> CassandraStore:
    return CassandraStore(
        HashEmbedding(16),
        keyspace=new_keyspace(session),
        table="stories",
        session=session,
        fields=DECLARED,
        lexical=True,
    )


@pytest.mark.parametrize("seed", [11, 29])
async def test_no_read_through_a_view_returns_counts_or_names_a_document_outside_it(
    cassandra_session: Any, seed: int
) -> None:
    docs = corpus(seed)
    store = _store(cassandra_session)
    await store.aadd(docs)
    await check_view(store, docs, seed, rounds=4)


async def test_a_write_through_a_view_cannot_land_in_another_tenants_view(
    cassandra_session: Any,
) -> None:
    await check_writes_through_a_view_stay_out_of_other_views(_store(cassandra_session))


async def test_a_range_through_a_view_is_decided_by_the_schema_not_other_tenants(
    cassandra_session: Any,
) -> None:
    await check_range_through_a_view_ignores_other_tenants(_store(cassandra_session))


async def test_a_lexical_score_through_a_view_ignores_other_tenants_documents(
    cassandra_session: Any,
) -> None:
    await check_lexical_score_through_a_view_ignores_other_tenants(_store(cassandra_session))


@pytest.mark.parametrize("seed", [5, 17])
async def test_writes_through_random_views_reach_only_their_tenant_and_change_no_other_score(
    cassandra_session: Any, seed: int
) -> None:
    store = _store(cassandra_session)
    await store.aadd(corpus(seed))
    await check_writes_reach_only_their_own_tenant(store, seed, rounds=6)
