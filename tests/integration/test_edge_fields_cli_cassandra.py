"""`hoprag query` with an edge on a field no document holds, as a user runs it against the
node: `--edges refs:id` (for `refs:$id`) or a misspelt field is exit 2 naming the field and the
fields the documents hold, `--allow-missing-fields` runs with a warning, and right edges say
nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def _hoprag(contact: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hoprag.cli", *args, "--contact-points", contact],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory, cassandra_contact_points: str,
          cassandra_session: Any) -> str:  # fmt: skip
    from keyspaces import new_keyspace

    f = Path(tmp_path_factory.mktemp("fields")) / "docs.jsonl"
    recs = [{"id": f"d{i}", "title": f"doc {i}", "text": f"document number {i}",
             "references": [f"d{(i + 1) % 12}"], "keywords": [f"k{i % 3}"]}
            for i in range(12)]  # fmt: skip
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    keyspace = new_keyspace(cassandra_session)
    load = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(f), "--table", "docs",
                   "--embedding", "hash:32", "--keyspace", keyspace)  # fmt: skip
    assert load.returncode == 0, load.stderr
    return keyspace


def _query(contact: str, keyspace: str, edges: str, *extra: str) -> Any:
    output = [] if "--explain" in extra else ["--json"]
    return _hoprag(contact, "query", "document", "--table", "docs", "--edges", edges,
                   "--max-depth", "2", "--keyspace", keyspace, *output, *extra)  # fmt: skip


@pytest.mark.parametrize(
    ("edges", "named"),
    [("references:id", "'id' (the document id is '$id')"), ("keyword:keyword", "'keyword'")],
)
def test_an_edge_on_a_field_no_document_holds_is_exit_2_naming_it_and_the_fields_held(
    table: str, cassandra_contact_points: str, edges: str, named: str
) -> None:
    q = _query(cassandra_contact_points, table, edges)
    assert q.returncode == 2 and q.stdout == "", q.stderr
    assert f"edges name {named}, held by none of the" in q.stderr, q.stderr
    assert "they hold keywords, references, title" in q.stderr, q.stderr
    assert "--allow-missing-fields" in q.stderr


def test_allow_missing_fields_runs_with_a_warning(
    table: str, cassandra_contact_points: str
) -> None:
    q = _query(cassandra_contact_points, table, "references:id", "--allow-missing-fields")
    assert q.returncode == 0, q.stderr
    assert "warning: --edges: edges name 'id'" in q.stderr
    out = json.loads(q.stdout)
    assert all(n["depth"] == 0 for n in out["nodes"])  # the edge led nowhere
    assert out["stats"]["unheld_fields"] == ["id"]


def test_edges_on_held_fields_say_nothing_and_reach_further(
    table: str, cassandra_contact_points: str
) -> None:
    q = _query(cassandra_contact_points, table, "references:$id,keywords:keywords", "--explain")
    assert q.returncode == 0 and "held by none" not in q.stderr + q.stdout, q.stderr
    assert "adjacent" in q.stdout  # the per-hop table: the edges were followed
