"""hoprag.integrations.llamaindex.GraphRetriever on a real Cassandra 5.0 node and on
MemoryStore holding the same documents: `retrieve` and `aretrieve` return the ids, depths,
paths and scores that `atraverse` returns for the same call, options given per call included,
and a bad option is refused naming it before anything reaches the node."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from keyspaces import new_keyspace
from llama_index.core.schema import NodeWithScore

import hoprag
from hoprag import Node
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.integrations.llamaindex import GraphRetriever
from hoprag.stores import MemoryStore
from hoprag.stores.base import Store
from hoprag.stores.cassandra.store import CassandraStore
from launcher_run import flush_if_local
from shared_data import graph_documents

pytestmark = pytest.mark.integration

DIM = 16
EDGES = [("keywords", "keywords"), ("cites", "$id"), ("$id", "cites")]
STRATEGIES = {
    "eager": hoprag.Eager(select_k=10, start_k=2, adjacent_k=5, max_depth=2),
    "mmr": hoprag.Mmr(select_k=8, start_k=2, adjacent_k=8, max_depth=2, lambda_mult=0.5),
    "beam": hoprag.Beam(select_k=6, start_k=3, adjacent_k=5, max_depth=2, beam_width=4),
}


@pytest.fixture(scope="module")
def stores(cassandra_session: Any) -> dict[str, Store]:
    """The same 200 documents in a CassandraStore (loaded one at a time and flushed, so that
    its vector index answers alike on every run) and in a MemoryStore."""
    docs = graph_documents(200, DIM, seed=11)
    keyspace = new_keyspace(cassandra_session)
    cassandra = CassandraStore(
        HashEmbedding(DIM), keyspace=keyspace, table="graph", session=cassandra_session
    )
    cassandra.add(docs, concurrency=1)
    flush_if_local(keyspace, "graph")
    memory = MemoryStore(embedding=HashEmbedding(DIM))
    memory.add(docs)
    return {"cassandra": cassandra, "memory": memory}


def _as_tuples(nodes: list[Node]) -> list[tuple[Any, ...]]:
    return [(n.id, n.depth, n.path.nodes, n.similarity_score, n.extra_metadata) for n in nodes]


def _retrieved_tuples(hits: list[NodeWithScore]) -> list[tuple[Any, ...]]:
    out = []
    for h in hits:
        meta = h.node.metadata
        extra = {k: v for k, v in meta.items() if k.startswith("_")}
        out.append((h.node.node_id, meta["_depth"], tuple(meta["_path"]), h.score, extra))
    return out


@pytest.mark.parametrize("store_name", ["cassandra", "memory"])
@pytest.mark.parametrize("strategy_name", sorted(STRATEGIES))
async def test_retrieve_and_aretrieve_return_what_atraverse_returns(
    stores: dict[str, Store], store_name: str, strategy_name: str
) -> None:
    store, strategy = stores[store_name], STRATEGIES[strategy_name]
    retriever = GraphRetriever(store=store, edges=EDGES, strategy=strategy)
    for query in ("alpha", "delta epsilon"):
        want = _as_tuples(
            await hoprag.atraverse(query, store=store, edges=EDGES, strategy=strategy)
        )
        assert _retrieved_tuples(await retriever.aretrieve(query)) == want
        assert _retrieved_tuples(retriever.retrieve(query)) == want  # sync, from inside a loop
        assert any(depth > 0 for _, depth, *_ in want)


def test_sync_retrieve_outside_an_event_loop_matches_atraverse_on_cassandra(
    stores: dict[str, Store],
) -> None:
    store, strategy = stores["cassandra"], STRATEGIES["mmr"]
    got = GraphRetriever(store=store, edges=EDGES, strategy=strategy).retrieve("gamma")
    want = hoprag.traverse("gamma", store=store, edges=EDGES, strategy=strategy)
    assert _retrieved_tuples(got) == _as_tuples(want)


@pytest.mark.parametrize("store_name", ["cassandra", "memory"])
async def test_per_call_options_override_the_configured_ones(
    stores: dict[str, Store], store_name: str
) -> None:
    store = stores[store_name]
    configured = GraphRetriever(store=store, edges=EDGES, strategy=STRATEGIES["eager"], k=7)
    call = {
        "edges": [("keywords", "keywords")],
        "strategy": hoprag.Mmr(start_k=2, adjacent_k=6, max_depth=2),
        "k": 4,
        "filter": {"type": "c"},
        "initial_root_ids": ["doc17"],
    }
    hits = await configured.with_options(**call).aretrieve("beta")
    want = await hoprag.atraverse(
        "beta",
        store=store,
        edges=call["edges"],
        strategy=hoprag.Mmr(select_k=4, start_k=2, adjacent_k=6, max_depth=2),
        filter=call["filter"],
        initial_root_ids=call["initial_root_ids"],
    )
    assert _retrieved_tuples(hits) == _as_tuples(want)
    assert len(hits) == 4 and {h.node.metadata["type"] for h in hits} == {"c"}
    # the configured retriever still runs its own options
    plain = await configured.aretrieve("beta")
    own = dataclasses.replace(STRATEGIES["eager"], select_k=7)
    want = await hoprag.atraverse("beta", store=store, edges=EDGES, strategy=own)
    assert _retrieved_tuples(plain) == _as_tuples(want)
    assert len(plain) == 7 and {h.node.metadata["type"] for h in plain} != {"c"}


def test_bad_options_are_refused_naming_them_before_the_node_is_asked(
    stores: dict[str, Store],
) -> None:
    store = stores["cassandra"]
    with pytest.raises(InvalidInputError, match="edges:") as info:
        GraphRetriever(store=store, edges=[("keywords", "keywords", "x")])
    assert info.value.argument == "edges"
    retriever = GraphRetriever(store=store, edges=EDGES)
    with pytest.raises(InvalidInputError, match=r"k must be an int >= 1 .*got -2") as info:
        retriever.with_options(k=-2)
    assert info.value.argument == "k"
    with pytest.raises(InvalidInputError, match="strategy must be a hoprag Strategy") as info:
        retriever.with_options(strategy="mmr")
    assert info.value.argument == "strategy"
