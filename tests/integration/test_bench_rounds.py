"""`scripts/bench_rounds.py`, the README's round-trip benchmark, as a user runs it on the test
node: over the delay proxy, every mode returns the first mode's results in every traversal,
the JSON has each case's figures, and `--compare-with` checks a second run against the first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = ["Eager d2 k10", "Eager d3 k10", "Mmr d2 k10"]


def _run(contact_points: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_rounds.py"), "--embedding", "hash",
         "--foldoc", "1000", "--queries", "3", "--reps", "1", "--latency-ms", "2",
         "--contact-points", contact_points, *extra],
        cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, check=False, timeout=880,
    )  # fmt: skip


@pytest.mark.timeout(900)
def test_round_benchmark_compares_modes_over_the_proxy_with_the_same_results(
    tmp_path: Path, cassandra_contact_points: str
) -> None:
    first = tmp_path / "first.json"
    done = _run(cassandra_contact_points, "--modes", "off", "strategy", "on", "--json", str(first))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "same results in every traversal of every mode" in done.stdout
    assert "through a proxy process on" in done.stdout
    data = json.loads(first.read_text())
    assert data["latency_ms"] == 2 and not data["nagle"]
    assert [c["case"] for c in data["cases"]] == CASES
    for case in data["cases"]:
        modes = case["modes"]
        assert set(modes) == {"off", "strategy", "on"}
        assert case["one_query_ms"] > 4  # two ways of 2 ms through the proxy
        for name, f in modes.items():
            assert f["all_same"], (case["case"], name)
            assert len(f["rounds_per_query"]) == 3 and len(f["results"]) == 3
            assert f["p95_ms"] >= f["p50_ms"] > 0
        assert modes["off"]["issued"] == 0
        assert modes["on"]["rounds"] <= modes["off"]["rounds"]
        assert modes["on"]["used"] <= modes["on"]["issued"]
    again = _run(cassandra_contact_points, "--modes", "wide", "--compare-with", str(first))
    assert again.returncode == 0, again.stdout[-4000:] + again.stderr[-4000:]
    for case in CASES:
        assert f"  {case} wide: 3/3 queries as in {first}" in again.stdout, again.stdout
