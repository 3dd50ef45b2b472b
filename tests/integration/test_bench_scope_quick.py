"""`scripts/bench_scope.py --quick --json OUT`, run as a user runs it, on the test node: every
case runs every plan, every hoprag plan returns the naive plan's ids, the 2-hop scopes answer
in at most 3 sequential rounds, and the JSON holds each figure. The script keeps its films
table in keyspace `bench_scope` and reuses it on a later run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLANS = {"auto", "exact", "pushdown", "naive"}


@pytest.mark.timeout(900)
def test_quick_scope_benchmark_agrees_with_the_naive_plan_within_the_round_bound(
    tmp_path: Path, cassandra_contact_points: str
) -> None:
    out = tmp_path / "scope.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_scope.py"), "--quick", "--json", str(out),
         "--contact-points", cassandra_contact_points],
        cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, check=False, timeout=880,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "FAIL" not in done.stdout
    assert "naive/plan" in done.stdout  # the side-by-side table was printed

    data = json.loads(out.read_text())
    assert data["mode"] == "quick" and data["ok"] is True and data["failures"] == []
    assert data["dataset"]["docs"] == 300
    cases = data["cases"]
    # 1-value, few-value and 2-hop scopes, each without and with the filter.
    assert {c["depth"] for c in cases} == {1, 2}
    assert any(c["last_hop_values"] == 1 for c in cases)
    assert any(c["last_hop_values"] > 5 for c in cases)
    assert {json.dumps(c["filter"]) for c in cases} == {"null", '{"genre": "Drama"}'}
    for c in cases:
        where = (c["case"], c["filter"])
        assert set(c["plans"]) == PLANS, where
        assert c["scope_size"] > 0 and c["passing_filter"] <= c["scope_size"], where
        for name, p in c["plans"].items():
            assert p["same_ids"] is True, (where, name)
            assert p["p95_ms"] >= p["p50_ms"] > 0, (where, name)
            assert p["n"] == 3 * c["reps"], (where, name)  # 3 queries x repetitions
            assert p["queries"] >= 1 + c["last_hop_values"], (where, name)
        # The hoprag plans ran as asked; auto ran one of them.
        assert c["plans"]["exact"]["ran"] == ["exact"], where
        assert c["plans"]["pushdown"]["ran"] == ["pushdown"], where
        assert c["auto_chose"] in ("exact", "pushdown"), where
        # One round per hop at most, plus the anchors: never more than depth + 1 for these.
        for name in ("auto", "exact", "pushdown"):
            assert c["plans"][name]["rounds"] <= c["depth"] + 1, (where, name)
    two_hop = [c for c in cases if c["depth"] == 2]
    assert two_hop and max(c["last_hop_values"] for c in two_hop) > 1
    assert data["two_hop_max_rounds"] <= 3
    for c in two_hop:
        assert c["plans"]["pushdown"]["rounds"] == 3, c["case"]  # both hops expand
    assert [u["filter"] for u in data["unscoped"]] == [None, {"genre": "Drama"}]
    assert all(u["rounds"] == 1 and u["p50_ms"] > 0 for u in data["unscoped"])
    assert "| case | filter |" in data["markdown"]
