"""`scripts/bench_rounds.py` refuses bad arguments with exit 2 and one usage line, before it
connects or measures anything (no node is needed here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--modes", "fast"], "--modes: 'fast' is not default, auto, on, wide, strategy, off"),
        (["--cases", "Eager d9"], "unknown case(s) Eager d9"),
        (["--queries", "0"], "--queries must be in 1..20"),
        (["--reps", "0"], "--reps must be >= 1"),
        (["--latency-ms", "-1"], "--latency-ms must be in 0..1000"),
        (["--compare-with", "missing.json"], "--compare-with missing.json: not the --json"),
    ],
)
def test_bad_arguments_are_exit_2_before_connecting(args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_rounds.py"), *args,
         "--contact-points", "127.0.0.1:1"],
        cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
