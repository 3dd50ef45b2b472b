"""`hoprag eval --store cassandra` as a user runs it, on a small HotpotQA file the test writes:
every method (the recipe's lexical starts included) returns, question by question, the ids it
returns on MemoryStore; the corpus is loaded once and reused by the next run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from eval_files import hotpot_file


def _eval(tmp_path: Path, out: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    r = subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "eval", "--dataset", "hotpotqa", "--data",
         str(tmp_path), "--embedding", "hash:32", "--json", str(tmp_path / out), *extra],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    return r, json.loads((tmp_path / out).read_text())


def test_eval_on_cassandra_returns_the_memorystore_ids_and_reuses_its_corpus(
    tmp_path: Path, cassandra_contact_points: str, keyspace: str
) -> None:
    hotpot_file(tmp_path / "hotpotqa_small.json")
    _, memory = _eval(tmp_path, "memory.json")
    node = ("--store", "cassandra", "--keyspace", keyspace,
            "--contact-points", cassandra_contact_points)  # fmt: skip
    first, on_node = _eval(tmp_path, "node.json", *node)
    assert "embedding and loading 18 passages into" in first.stdout
    assert "loaded 18 passages into" in first.stdout
    assert memory["store"] == "memory" and on_node["store"] == "cassandra"
    assert on_node["questions"] == memory["questions"]
    for name, figures in memory["methods"].items():
        assert len(figures["ids"]) == 6 and all(figures["ids"])
        assert on_node["methods"][name]["ids"] == figures["ids"], name
        assert on_node["methods"][name]["recall@5"] == figures["recall@5"]

    again, second = _eval(tmp_path, "again.json", *node)
    assert "(loaded by an earlier run)" in again.stdout and "embedding and" not in again.stdout
    for name, figures in memory["methods"].items():
        assert second["methods"][name]["ids"] == figures["ids"], name
