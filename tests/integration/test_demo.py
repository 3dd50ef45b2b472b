"""The README's main job, `scripts/demo`, runs its Python part the way the shell script does:
against the test node, with MiniLM, on a small FOLDOC subset, answering its three questions by
vector search and by traversal, and showing what only the graph reached."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_demo_answers_its_questions_by_search_and_by_traversal(
    cassandra_contact_points: str, keyspace: str
) -> None:
    env = {**os.environ, "HOPRAG_CASSANDRA": cassandra_contact_points, "HF_HUB_OFFLINE": "1"}
    r = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo.py"), "--limit", "120",
         "--keyspace", keyspace],
        cwd=REPO, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
        timeout=900, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    assert "120 documents embedded and written" in out
    assert len(re.findall(r"^Q: ", out, re.M)) == 3
    assert out.count("vector search only (top 8") == 3
    assert out.count("graph traversal, MMR over links and subjects") == 3
    # Every traversal row shows its path; some rows were reached by following an edge.
    assert re.search(r"depth 1 .*--(\$id|keywords)=", out)
    assert len(re.findall(r"traversal results were reached only through the graph", out)) == 3
