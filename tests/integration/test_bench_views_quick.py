"""`scripts/bench_views.py`, run as a user runs it, on the test node with 600 films and one
timed call per case: the view every film passes answers each films question with the store's
ids on both stores, a tenant's view never returns more than the store, and the JSON holds
each figure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = {"store", "view of all", "view tenant=t3", "view year>=1990"}


@pytest.mark.timeout(600)
def test_the_view_benchmark_finds_the_stores_answers_through_a_view_of_everything(
    tmp_path: Path, cassandra_contact_points: str
) -> None:
    out = tmp_path / "views.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_views.py"), "--runs", "1",
         "--films", "600", "--json", str(out)],
        cwd=ROOT, env={**os.environ, "HOPRAG_CASSANDRA": cassandra_contact_points},
        stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False, timeout=580,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "FAIL" not in done.stdout and "x store" in done.stdout

    data = json.loads(out.read_text())
    assert data["ok"] is True and data["films"] == 600 and data["runs"] == 1
    rows = data["rows"]
    assert {(r["store"], r["case"]) for r in rows} == {
        (s, c) for s in ("cassandra", "memory") for c in CASES
    }
    store = {(r["question"], r["store"]): r for r in rows if r["case"] == "store"}
    assert len(store) == 10 and any(r["results"] for r in store.values())
    for r in rows:
        base = store[(r["question"], r["store"])]
        if r["case"] == "view of all":
            assert r["ids"] == base["ids"], r
        assert r["results"] == len(r["ids"]) and r["median_ms"] > 0, r
        if r["store"] == "cassandra":
            assert r["cql"] >= 1, r
    # The two stores answer alike, through the store and through each view.
    by = {(r["question"], r["store"], r["case"]): r["ids"] for r in rows}
    for q, kind, case in by:
        assert by[(q, kind, case)] == by[(q, "memory", case)], (q, case)
