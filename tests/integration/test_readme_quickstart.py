"""The README's "Quick start (library)" block runs as shown on the test node, with MiniLM:
the store it creates (keyspace `demo`), the traversals and the stream, the scoped searches on
the run's films table (the `films` the block says it needs) and the store view. Its printed
lines and the names it leaves behind are checked against the same calls made here."""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

from hoprag import Scope, asearch
from hoprag.embeddings.hash import HashEmbedding
from hoprag.stores.cassandra.store import CassandraStore

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"


def _quickstart() -> str:
    section = README.read_text().split("## Quick start (library)", 1)[1]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]


@pytest.mark.timeout(600)
async def test_the_readme_quick_start_runs_as_shown(
    cassandra_contact_points: str,
    cassandra_session: Any,
    films_keyspace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("sentence_transformers", reason="MiniLM is installed by scripts/setup")
    monkeypatch.setenv("HOPRAG_CASSANDRA", cassandra_contact_points)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    films = CassandraStore(
        HashEmbedding(32), keyspace=films_keyspace, table="films",
        session=cassandra_session, create_schema=False,
    )  # fmt: skip
    code = compile(_quickstart(), "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    names: dict[str, Any] = {"films": films}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        pending = eval(code, names)  # the README's own code
        if pending is not None:
            await pending
    lines = out.getvalue().splitlines()
    result = names["result"]
    assert {n.id for n in result} == {"lisp", "scheme"}
    assert [line.split()[0] for line in lines[:2]] == [n.id for n in result]
    explain = result.stats.explain().splitlines()
    assert lines[2 : 2 + len(explain)][:2] == explain[:2]  # the rounds line and the header
    assert {n.id for n in names["nodes"]} == set()  # the acme view: no document has a tenant
    scope = Scope(start={"cast": "Meryl Streep"}, edges=[("director", "director")], max_depth=1)
    war = await asearch("war", store=films, k=10, scope=scope, filter={"genre": "War"})
    assert [n.id for n in names["res"]] != [] and len(war) > 0
    latest = await asearch(None, store=films, k=10, scope=scope, order_by="-year")
    assert [n.id for n in names["res"]] == [n.id for n in latest]
