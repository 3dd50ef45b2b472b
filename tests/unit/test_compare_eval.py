"""`scripts/compare_eval.py` and `hoprag.evaluation.compare`: two eval runs of the same
questions compared question by question, as docs/quality.md runs it; runs of different
questions refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hoprag.errors import InvalidInputError
from hoprag.evaluation.compare import compare_runs

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "compare_eval.py"


def _run(ids: dict[str, list[list[str]]], recall: float = 0.5) -> dict[str, Any]:
    methods = {m: {"ids": v, "recall@5": recall, "ms_p50": 1.5} for m, v in ids.items()}
    return {"questions": ["q1", "q2", "q3"], "methods": methods}


A = _run({"vector": [["a", "b"], ["c", "d"], ["e"]],
          "recommended": [["a", "b", "x"], ["c", "d"], ["e", "f"]]})  # fmt: skip
B = _run({"vector": [["a", "b"], ["d", "c"], ["e"]],
          "recommended": [["b", "a", "x"], ["c", "d", "y"], ["e", "f"]]}, recall=0.6)  # fmt: skip


def test_runs_are_compared_question_by_question() -> None:
    rows = compare_runs(A, B)
    assert rows["vector"] == {
        "questions": 3, "same_order": 2, "same_set": 3, "top5_overlap": round(5 / 3, 3),
        "differ_with_vector_differing": 1, "recall@5": [0.5, 0.6], "ms_p50": [1.5, 1.5],
    }  # fmt: skip
    rec = rows["recommended"]
    assert (rec["same_order"], rec["same_set"]) == (1, 2)
    # q1 differs (order) with vector the same; q2 differs with vector differing too.
    assert rec["differ_with_vector_differing"] == 1
    assert rec["top5_overlap"] == round(7 / 3, 3)


def test_runs_of_other_questions_are_refused() -> None:
    other = dict(B, questions=["q1", "q2", "q9"])
    with pytest.raises(InvalidInputError, match="same questions"):
        compare_runs(A, other)


def test_the_script_prints_the_table_and_refuses_bad_input(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(A))
    b.write_text(json.dumps(B))
    r = subprocess.run([sys.executable, str(SCRIPT), str(a), str(b)], capture_output=True,
                       text=True, check=False, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "3 questions" in lines[0] and lines[1].split()[:3] == ["method", "same", "order"]
    assert lines[3].split()[:5] == ["recommended", "1", "2", "2.33", "1/2"]
    b.write_text(json.dumps(dict(B, questions=["x"])))
    bad = subprocess.run([sys.executable, str(SCRIPT), str(a), str(b)], capture_output=True,
                         text=True, check=False, timeout=60)  # fmt: skip
    assert bad.returncode == 2 and "same questions" in bad.stderr


def _bench(p50: float, ids: list[list[str]], rows: int = 7) -> dict[str, Any]:
    travs = [{"query": f"q{i}", "ids": x, "queries": 3, "rows": rows, "rounds": 2}
             for i, x in enumerate(ids)]  # fmt: skip
    case = {"case": "Eager d2 k10", "ours_p50_ms": p50, "peer_p50_ms": 2 * p50, "ours_queries": 3,
            "ours_rows": rows, "ours_hops": 2, "ours_traversals": travs}  # fmt: skip
    return {"cases": [case]}


def test_bench_runs_of_two_versions_are_compared_traversal_by_traversal(tmp_path: Path) -> None:
    same = [["a", "b"], ["c"]]
    runs = {"before-1": _bench(10, same), "before-2": _bench(30, same),
            "after-1": _bench(12, same, rows=8),
            "after-2": _bench(14, [["a", "b"], ["d"]])}  # fmt: skip
    for name, run in runs.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(run))

    def compare(b: str) -> subprocess.CompletedProcess[str]:
        a = str(tmp_path / "before-*.json")
        return subprocess.run([sys.executable, str(SCRIPT), "--bench", a, b], capture_output=True,
                              text=True, check=False, timeout=60)  # fmt: skip

    r = compare(str(tmp_path / "after-1.json"))
    assert r.returncode == 0, r.stderr
    row = r.stdout.splitlines()[2].split(" | ")
    # The ids agree; the rows do not (7 before, 8 after); p50 medians 20 / 12.
    assert row[:6] == ["Eager d2 k10", "2/2", "0/2", "3.00 / 3.00", "7.00 / 8.00", "2.00 / 2.00"]
    assert row[6:9] == ["10.0, 30.0", "12.0", "20.0 / 12.0 (0.60)"]
    r = compare(f"{tmp_path / 'after-1.json'},{tmp_path / 'after-2.json'}")
    assert r.returncode == 1 and r.stdout.splitlines()[2].split(" | ")[1] == "1/2"
    del runs["after-2"]["cases"][0]["ours_traversals"]
    (tmp_path / "after-2.json").write_text(json.dumps(runs["after-2"]))
    assert compare(str(tmp_path / "after-2.json")).returncode == 2
