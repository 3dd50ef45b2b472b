"""`scripts/bench_scale.py --quick --json OUT`, run as a user runs it, on the test node: the 10k
corpus is loaded completely into keyspace `hoprag_scale`, every case runs on Cassandra and on
MemoryStore (and, with `--pool 100`, through a candidate pool; with `--holder-counts
--hub-holders 300 --read-holders 20`, through edge plans), rows and rounds per traversal stay
within what the strategy allows (bounds made from its parameters and the generator's degrees
alone, never from the corpus size), the plans chosen follow the values' holders, the stores
give the same exact answers, the common keywords' edges are checked against exact scoring, and
a second run reuses the load. Structure only, never time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bench_scale.py"
TRAVERSALS = {f"{k} d{d}" for k in ("Eager", "Mmr", "Beam") for d in (1, 2, 3)}
PLANNED = "cassandra plans 300"
READ = "cassandra plans read 20"
EXTRA_ROWS = {"cassandra pool 100": 100, PLANNED: 1000}
"""The rows a store's pool adds once per traversal: `--pool 100`, and the plans' pool at 10k
documents with `hub_holders=300` (`plans.pool_size`: 3 * 10 * 10,000 / 300, at most 1,000)."""


def _run(args: list[str], contact_points: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--contact-points", contact_points],
        cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, check=False, timeout=880,
    )  # fmt: skip


def _bounds(case: dict[str, Any], per_node_rows: int) -> tuple[int, int]:
    """(rows, rounds) one traversal of `case` may take: its start hits, plus every document
    whose edges it may read (Eager: the select_k it admits; Mmr: those, each with up to 4
    read-ahead guesses; Beam: beam_width per hop) times the rows one document's edges hold
    (per_node_rows: adjacent_k per keyword and per reverse-link edge, one per id link)."""
    p, kind, depth = case["params"], case["kind"], case["depth"]
    expanded = {"eager": p["select_k"], "mmr": p["select_k"] * 5}.get(
        kind, p.get("beam_width", 0) * depth
    )
    rounds = depth + 1 if kind == "beam" or (kind == "eager" and depth == 1) else p["select_k"] + 1
    return p["start_k"] + expanded * per_node_rows, rounds


@pytest.mark.timeout(1800)
def test_quick_scale_benchmark_bounds_rows_and_rounds_and_agrees_with_memory(
    tmp_path: Path, cassandra_contact_points: str
) -> None:
    out = tmp_path / "scale.json"
    png = tmp_path / "scale.png"
    args = ["--quick", "--pool", "100", "--holder-counts", "--hub-holders", "300",
            "--read-holders", "20", "--json", str(out), "--chart", str(png)]  # fmt: skip
    done = _run(args, cassandra_contact_points)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "FAIL" not in done.stdout
    assert "q/rows/rounds" in done.stdout  # the side-by-side table was printed

    data = json.loads(out.read_text())
    assert data["mode"] == "quick" and data["ok"] is True and data["failures"] == []
    assert "partial" not in data  # the whole document replaced the one written after the size
    assert data["machine"]["cassandra"].startswith("5.0")
    corpus = data["corpus"]
    per_node = (corpus["keywords_max"] + 1) * 10 + corpus["links_max"]
    assert data["per_node_rows"] == per_node
    [size] = data["sizes"]
    assert size["size"] == 10_000
    load = size["load"]
    assert load["complete"] is True and load["written"] == 10_000
    # The table is flushed before it is measured on the nodes the run can reach with nodetool
    # (those it also reads the CPU of), and the run waited until no node compacted.
    assert size["flush"]["flushed"] is data["node_cpu_measured"], size["flush"]
    assert size["flush"]["errors"] == []
    for store in ("cassandra", "cassandra pool 100", PLANNED, READ, "memory"):
        cases = size[store]["cases"]
        assert set(cases) == TRAVERSALS | {"Scoped 2-hop"}, store
        for name, c in cases.items():
            where = (store, name)
            assert c["n"] >= len(data["queries"]), where
            assert c["p99_ms"] >= c["p95_ms"] >= c["p50_ms"] > 0, where
            assert c["queries_max"] >= 1 and c["rows_max"] >= 1, where
            if c["kind"] == "scope":
                # 4 anchors, each with at most 4 links per document over 2 hops.
                assert c["rounds_max"] <= 3 and 0 < c["scope_size"] <= 4 * (1 + 4 + 16), where
                continue
            # An edge read whole reads up to read_holders + adjacent_k rows (20 + 10).
            node_rows = per_node + (corpus["keywords_max"] + 1) * 20 if store == READ else per_node
            rows, rounds = _bounds(c, node_rows)
            rows += EXTRA_ROWS.get(store, 0)  # the pool's rows, read once per traversal
            assert c["rows_max"] <= rows, (where, c["rows_max"], rows)
            assert c["rounds_max"] <= rounds, (where, c["rounds_max"], rounds)
        assert size[store]["rss_mb_after"] > 0, store
    # What is exact agrees: the scoped search ranked exactly, the id-link traversal.
    n = len(data["queries"])
    assert size["exact"] == {"scoped_exact_same": f"{n}/{n}", "links_same": f"{n}/{n}"}
    assert set(size["ann_agreement"]) == TRAVERSALS
    assert set(size["ann_agreement cassandra pool 100"]) == TRAVERSALS
    assert set(size[f"ann_agreement {PLANNED}"]) == TRAVERSALS
    # The plans follow the holders: the reverse links of uncited documents lead nowhere (none),
    # the common keywords k1-k3 (300 holders or more) are hubs read from the pool, the rest are
    # searched; the store without plans chose none.
    planned = size[PLANNED]["cases"]
    for name in TRAVERSALS:
        chosen = planned[name]["plans"]
        assert chosen.get("search", 0) > 0 and chosen.get("none", 0) > 0, (name, chosen)
        assert size["cassandra"]["cases"][name]["plans"] == {}, name
    assert all(planned[f"{k} d2"]["plans"].get("pool", 0) > 0 for k in ("Eager", "Mmr", "Beam"))
    # With read_holders=20 and no hubs: the keywords of 20 holders or fewer (most of the long
    # tail at 10k) are read whole, the rest searched, no pool.
    for name in TRAVERSALS:
        chosen = size[READ]["cases"][name]["plans"]
        assert chosen.get("read", 0) > 0 and chosen.get("search", 0) > 0, (name, chosen)
        assert "pool" not in chosen, (name, chosen)
    # The common keywords' edges against exact scoring: every query's edge of each keyword
    # checked; the most common keyword has holders enough for the pool to answer it.
    recall = size["edge_recall"]
    assert recall["holders"]["k1"] > recall["holders"]["k10"] > 0
    assert recall["edges"] == 5 * n and 0.0 <= recall["search_recall"] <= 1.0
    assert 0 < recall["pooled_edges"] <= recall["edges"] and 0.0 <= recall["pool_recall"] <= 1.0
    # The plans' pool (1,000 of the 10k documents) answers the keywords of 300 holders or more
    # (k1-k5 here) and gives their best 10 as exact scoring does.
    recall = size[f"edge_recall {PLANNED}"]
    assert recall["pooled_edges"] >= 3 * n and recall["pool_recall"] >= 0.95, recall
    # What the plans weigh, timed one read at a time: filtered searches from the most common
    # keyword down (their holders from the counts), and the pool's reads.
    costs = size["plan_costs"]
    held = [c["holders"] for c in costs["search"].values()]
    assert held[0] == max(held) and held[0] > held[-1] >= 0, held  # k1 holds the most
    assert all(c["p50_ms"] > 0 for c in costs["search"].values())
    assert set(costs["pool"]) == {"250", "500", "1000"}
    # The read of every holder is timed for the keywords of at most 2,000 holders.
    read = {w: c["holders"] for w, c in costs["read"].items()}
    assert read == {w: c["holders"] for w, c in costs["search"].items() if c["holders"] <= 2000}
    assert read and all(c["p50_ms"] > 0 for c in costs["read"].values())

    # The figures, drawn by the run and again from its JSON as a user redraws them.
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    redrawn = tmp_path / "redrawn.png"
    drawn = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "scale_chart.py"), str(out), str(redrawn)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert drawn.returncode == 0, drawn.stderr
    assert redrawn.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "scale_chart.py"), str(png), str(redrawn)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2 and "cannot read" in bad.stderr

    again = tmp_path / "again.json"
    done = _run(["--quick", "--load-only", "--json", str(again)], cassandra_contact_points)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    reload = json.loads(again.read_text())["sizes"][0]["load"]
    assert reload["already_complete"] is True and reload["added"] == 0
    assert reload["written"] == 10_000
