#!/usr/bin/env python3
"""Compare two `hoprag eval --json` runs of the same questions, question by question, e.g. the
same recipe on MemoryStore and on CassandraStore:

    .venv/bin/python scripts/compare_eval.py memory.json cassandra.json

Per method: questions with the same ids in the same order, with the same set, the mean shared
part of the top 5, how many differing questions also differ in vector search (the node's
approximate search explains those), and each run's recall@5 and median ms per query."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hoprag.errors import InvalidInputError
from hoprag.evaluation.compare import compare_runs


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: compare_eval.py A.json B.json", file=sys.stderr)
        return 2
    try:
        a, b = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv)
        rows = compare_runs(a, b)
    except (OSError, ValueError, KeyError) as exc:
        kind = "" if isinstance(exc, InvalidInputError) else f"{type(exc).__name__}: "
        print(f"compare_eval: error: {kind}{exc}", file=sys.stderr)
        return 2
    print(f"{argv[0]} (A) against {argv[1]} (B), {len(a['questions'])} questions")
    print(f"{'method':<12} {'same order':>10} {'same set':>8} {'top-5 shared':>12} "
          f"{'vector too':>10} {'recall@5 A':>10} {'recall@5 B':>10} {'p50 ms A':>8} "
          f"{'p50 ms B':>8}")  # fmt: skip
    for name, r in rows.items():
        explained = "-" if r["differ_with_vector_differing"] is None else (
            f"{r['differ_with_vector_differing']}/{r['questions'] - r['same_order']}")  # fmt: skip
        p50a, p50b = (f"{v:.2f}" if v is not None else "-" for v in r["ms_p50"])
        print(f"{name:<12} {r['same_order']:>10} {r['same_set']:>8} {r['top5_overlap']:>12.2f} "
              f"{explained:>10} {r['recall@5'][0]:>10.3f} {r['recall@5'][1]:>10.3f} "
              f"{p50a:>8} {p50b:>8}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
