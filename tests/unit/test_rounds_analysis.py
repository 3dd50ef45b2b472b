"""`scripts/rounds_analysis.py` as a user runs it (MemoryStore, no node): per case the rounds
of every speculation mode, reading ahead never adding rounds, and for Eager how long before
its expansion each expanded document was first seen."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(600)
def test_rounds_analysis_prints_rounds_per_mode_and_when_expanded_documents_were_seen() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "rounds_analysis.py"), "--embedding", "hash",
         "--queries", "3", "--foldoc", "3000"],
        cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, check=False, timeout=580,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    for case in ("Eager d2 k10 (floor 3 rounds)", "Eager d3 k10 (floor 4", "Mmr d2 k10 (floor 3"):
        assert case in out, out
    blocks = out.split("\n\n")[1:]
    assert len(blocks) == 3
    for block in blocks:
        rounds = {
            m.group(1).strip(): float(m.group(2))
            for m in re.finditer(r"^  (\S[^\d]*?) +rounds +([\d.]+)", block, re.M)
        }
        assert set(rounds) == {"off", "strategy", "wide", "on", "on, unbounded"}, block
        floor = int(re.search(r"floor (\d)", block).group(1))  # type: ignore[union-attr]
        assert rounds["on, unbounded"] <= rounds["on"] <= rounds["off"], block
        assert floor in (3, 4)
        assert rounds["wide"] <= rounds["off"] and rounds["strategy"] <= rounds["off"], block
    eager = [b for b in blocks if b.startswith("Eager")]
    for block in eager:
        m = re.search(r"(\d+) of (\d+) \((\d+)%\) first seen in the round just before", block)
        assert m is not None, block
        assert 0 <= int(m.group(1)) <= int(m.group(2)) > 0
