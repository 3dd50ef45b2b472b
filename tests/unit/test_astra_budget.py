"""Astra mode (`hoprag.stores.cassandra.astra`, #54) without a node: the arithmetic of Astra's
table and SAI index budget over a fake `system_schema`, what a store's set-up would create,
the write consistency a config in Astra mode takes or refuses, and that scripts/cassandra's
`--astra` node enforces the same numbers."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores.cassandra import astra
from hoprag.stores.cassandra.config import CassandraConfig
from hoprag.stores.cassandra.layouts import layout_for
from hoprag.stores.cassandra.store import CassandraStore

LAUNCHER = Path(__file__).resolve().parents[2] / "scripts" / "cassandra"


class SchemaSession:
    """A session whose `system_schema` holds `tables` (keyspace, table) and `indexes`
    (keyspace, table, index); every statement is recorded."""

    def __init__(self, tables: list[tuple[str, str]], indexes: list[tuple[str, str, str]]):
        self.tables = tables
        self.indexes = indexes
        self.executed: list[str] = []
        self.cluster = type("C", (), {"metadata": type("M", (), {"keyspaces": {}})()})()

    def execute(self, stmt: str, *args: Any, **kw: Any) -> list[Any]:
        self.executed.append(stmt)
        if "FROM system_schema.tables" in stmt and "WHERE" not in stmt:
            return [{"keyspace_name": k, "table_name": t} for k, t in self.tables]
        if "FROM system_schema.indexes" in stmt and "WHERE" not in stmt:
            return [
                {"keyspace_name": k, "table_name": t, "index_name": i} for k, t, i in self.indexes
            ]
        return []


def filled(n_tables: int, indexes_on_first: int = 0) -> SchemaSession:
    """A database holding `n_tables` tables in keyspace `other` (and Cassandra's own tables),
    the first with `indexes_on_first` indexes."""
    tables = [("other", f"t{i}") for i in range(n_tables)] + [("system", "local")]
    indexes = [("other", "t0", f"t0_i{i}") for i in range(indexes_on_first)]
    return SchemaSession(tables, [*indexes, ("system_schema", "x", "sys_idx")])


def store_plan(**options: Any) -> astra.Plan:
    config = CassandraConfig(keyspace="ks", table="docs", astra=True, **options)
    layout = layout_for(config)
    layout.lexical = config.lexical
    return astra.store_plan(layout, config, existed=False)


def test_a_lexical_store_with_an_entity_field_plans_its_tables_and_sai_indexes() -> None:
    plan = store_plan(lexical=True, fields={"who": "entity", "year": "number"})
    assert plan.tables == {
        ("ks", "docs"),
        ("ks", "hoprag_lexicon"),
        ("ks", "hoprag_postings"),
        ("ks", "hoprag_lexicon_pending"),
        ("ks", "hoprag_fields"),
        ("ks", "docs_values"),
    }
    on_docs = {i for k, t, i in plan.indexes if t == "docs"}
    assert {"docs_embedding_idx", "docs_tokens_idx"} < on_docs and len(on_docs) == 3
    on_values = {i for _, t, i in plan.indexes if t == "docs_values"}
    assert on_values == {"docs_values_norm_idx", "docs_values_words_idx", "docs_values_field_idx"}
    assert store_plan().tables == {("ks", "docs")} and len(store_plan().indexes) == 2


def test_holder_counts_plan_their_counter_table_and_the_ledger() -> None:
    """The counters and the ledger they share with the lexical index: two keyspace tables, no
    SAI index; with the lexical index, one more table than the lexical index alone."""
    plan = store_plan(holder_counts=True)
    assert plan.tables == {
        ("ks", "docs"),
        ("ks", "hoprag_holders"),
        ("ks", "hoprag_lexicon_pending"),
    }
    assert plan.indexes == store_plan().indexes
    both = store_plan(lexical=True, holder_counts=True)
    assert both.tables - store_plan(lexical=True).tables == {("ks", "hoprag_holders")}


def test_holder_counts_asked_of_an_existing_table_plan_only_the_keyspace_tables() -> None:
    config = CassandraConfig(keyspace="ks", table="docs", astra=True, holder_counts=True)
    plan = astra.store_plan(layout_for(config), config, existed=True)
    assert plan.tables == {("ks", "hoprag_holders"), ("ks", "hoprag_lexicon_pending")}
    assert plan.indexes == frozenset()


def test_a_store_with_holder_counts_one_table_past_the_limit_is_refused() -> None:
    held = astra.holdings(filled(astra.MAX_TABLES - 2))
    astra.check_budget(
        store_plan(holder_counts=True, lexical=False),
        astra.holdings(filled(astra.MAX_TABLES - 3)),
        "x",
    )  # docs, counters, ledger: 3 fit
    with pytest.raises(InvalidInputError, match=r"ks\.hoprag_holders"):
        astra.check_budget(store_plan(holder_counts=True), held, "x")


def test_a_plan_that_fits_passes_and_system_keyspaces_count_for_nothing() -> None:
    session = filled(astra.MAX_TABLES - 4)
    held = astra.holdings(session)
    assert len(held.tables) == astra.MAX_TABLES - 4 and held.indexes == frozenset()
    astra.check_budget(store_plan(lexical=True), held, "setting up ks.docs")  # 4 new: fits


def test_one_table_too_many_is_refused_naming_the_limit_and_what_fits() -> None:
    held = astra.holdings(filled(astra.MAX_TABLES - 3))
    with pytest.raises(InvalidInputError) as caught:
        astra.check_budget(store_plan(lexical=True), held, "setting up ks.docs")
    message = str(caught.value)
    assert f"at most {astra.MAX_TABLES} tables per database" in message
    assert f"it holds {astra.MAX_TABLES - 3}" in message and "3 would fit" in message
    assert "ks.hoprag_postings" in message and astra.SOURCE in message
    assert caught.value.argument == "table" and "ks.docs" in caught.value.value


def test_tables_the_database_already_holds_are_not_counted_again() -> None:
    session = filled(astra.MAX_TABLES - 2)
    session.tables += [("ks", "hoprag_lexicon"), ("ks", "hoprag_postings")]
    held = astra.holdings(session)  # full: 50 tables, two of them the lexical index's
    with pytest.raises(InvalidInputError, match="none would fit"):
        astra.check_budget(store_plan(lexical=True), held, "x")  # docs and pending are new
    session.tables.pop(0)
    session.tables.pop(0)
    astra.check_budget(store_plan(lexical=True), astra.holdings(session), "x")


def test_sai_indexes_past_the_database_limit_are_refused() -> None:
    session = filled(3)
    session.indexes = [
        ("other", f"t{i % 3}", f"i{i}") for i in range(astra.MAX_SAI_PER_DATABASE - 1)
    ]
    with pytest.raises(InvalidInputError) as caught:
        astra.check_budget(store_plan(), astra.holdings(session), "setting up ks.docs")
    message = str(caught.value)
    assert f"at most {astra.MAX_SAI_PER_DATABASE} SAI indexes per database" in message
    assert "1 would fit" in message and "ks.docs_embedding_idx" in message


def test_sai_indexes_past_the_table_limit_are_refused_naming_the_table() -> None:
    plan = astra.Plan(indexes=frozenset({("other", "t0", "new1"), ("other", "t0", "new2")}))
    astra.check_budget(plan, astra.holdings(filled(1, astra.MAX_SAI_PER_TABLE - 2)), "x")
    with pytest.raises(InvalidInputError) as caught:
        astra.check_budget(plan, astra.holdings(filled(1, astra.MAX_SAI_PER_TABLE - 1)), "x")
    assert f"{astra.MAX_SAI_PER_TABLE} SAI indexes per table (other.t0)" in str(caught.value)
    assert "1 would fit" in str(caught.value)


def test_plan_of_reads_the_names_of_create_statements_only() -> None:
    plan = astra.plan_of(
        [
            "CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {}",
            "CREATE TABLE IF NOT EXISTS Ks.T (id text PRIMARY KEY)",
            "CREATE CUSTOM INDEX IF NOT EXISTS t_x_idx ON ks.t (x) USING 'StorageAttachedIndex'",
            "ALTER TABLE ks.t ADD (y int)",
        ]
    )
    assert plan == astra.Plan(frozenset({("ks", "t")}), frozenset({("ks", "t", "t_x_idx")}))


def test_a_store_in_astra_mode_refuses_a_full_database_before_creating_anything() -> None:
    session = filled(astra.MAX_TABLES)
    with pytest.raises(InvalidInputError, match="50 tables per database"):
        CassandraStore(HashEmbedding(4), keyspace="ks", table="docs", session=session,
                       dimension=4, astra=True)  # fmt: skip
    assert not any(s.lstrip().upper().startswith("CREATE") for s in session.executed)
    # Without Astra mode nothing is counted (the node's own guardrails decide).
    plain = filled(astra.MAX_TABLES)
    CassandraStore(HashEmbedding(4), keyspace="ks", table="docs", session=plain, dimension=4,
                   wait_indexes=False)  # fmt: skip
    assert not any("system_schema.indexes" in s for s in plain.executed)


def test_astra_mode_writes_at_local_quorum_and_refuses_levels_astra_refuses() -> None:
    assert CassandraConfig(keyspace="k", table="t", astra=True).write_consistency == "LOCAL_QUORUM"
    assert CassandraConfig(keyspace="k", table="t").write_consistency is None
    each = CassandraConfig(keyspace="k", table="t", astra=True, write_consistency="each_quorum")
    assert each.write_consistency == "EACH_QUORUM"
    for level in astra.REFUSED_WRITE_CONSISTENCY:
        with pytest.raises(InvalidInputError, match="not ONE, ANY or LOCAL_ONE") as caught:
            CassandraConfig(keyspace="k", table="t", astra=True, write_consistency=level.lower())
        assert caught.value.argument == "write_consistency"


def test_the_launchers_astra_node_enforces_the_stores_numbers() -> None:
    loader = importlib.machinery.SourceFileLoader("hoprag_launcher_astra", str(LAUNCHER))
    spec = importlib.util.spec_from_loader("hoprag_launcher_astra", loader)
    assert spec is not None
    launcher = importlib.util.module_from_spec(spec)
    loader.exec_module(launcher)
    assert launcher.ASTRA_LIMITS == {
        "tables": astra.MAX_TABLES,
        "sai_per_table": astra.MAX_SAI_PER_TABLE,
        "sai_per_database": astra.MAX_SAI_PER_DATABASE,
        "ops_per_s": astra.OPS_PER_SECOND,
    }
    assert tuple(launcher.ASTRA_WRITE_REFUSED) == astra.REFUSED_WRITE_CONSISTENCY
    yaml = launcher.astra_guardrails()
    assert f"tables_fail_threshold: {astra.MAX_TABLES}\n" in yaml
    assert f"secondary_indexes_per_table_fail_threshold: {astra.MAX_SAI_PER_TABLE}\n" in yaml
    assert "write_consistency_levels_disallowed: [ONE, ANY, LOCAL_ONE]\n" in yaml
    assert "user_defined_functions_enabled: false\n" in yaml
    assert "class_name: UnifiedCompactionStrategy" in yaml
