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
