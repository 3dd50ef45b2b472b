#!/usr/bin/env python3
"""Compare two `hoprag eval --json` runs of the same questions, question by question, e.g. the
same recipe on MemoryStore and on CassandraStore:

    .venv/bin/python scripts/compare_eval.py memory.json cassandra.json

Per method: questions with the same ids in the same order, with the same set, the mean shared
part of the top 5, how many differing questions also differ in vector search (the node's
approximate search explains those), and each run's recall@5 and median ms per query.

With `--bench`, compare `scripts/bench.py --json` runs of two versions over the same tables,
each side one or more runs (comma-separated files or quoted globs):

    .venv/bin/python scripts/compare_eval.py --bench 'before-*.json' 'after-*.json'

Per case: how many of hoprag's traversals returned the same ids in the same order, and the
same queries, rows and rounds, in every run of both sides (traversal i is the same query in
every run); each side's mean queries, rows and rounds per traversal (one value when every run
agrees); hoprag's p50 in each run; the median over the runs of hoprag's p50 and of
graph-retriever's (the machine's load in the same runs), with the ratio B / A. The exit status
is 1 when any ids differ."""

from __future__ import annotations

import glob
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hoprag.errors import InvalidInputError
from hoprag.evaluation.compare import compare_runs


def main(argv: list[str]) -> int:
    if argv[:1] == ["--bench"] and len(argv) == 3:
        return bench_main(argv[1:])
    if len(argv) != 2:
        print(
            "usage: compare_eval.py A.json B.json | --bench A1.json[,A2.json] B1.json[,...]",
            file=sys.stderr,
        )
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


def _runs(arg: str) -> list[dict[str, Any]]:
    """The bench runs an argument names: comma-separated files, each maybe a glob."""
    paths = [p for part in arg.split(",") for p in sorted(glob.glob(part)) or [part]]
    return [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]


def _figures(values: list[float]) -> str:
    """One value when every run agrees, else each run's."""
    shown = [f"{v:.2f}" for v in values]
    return shown[0] if len(set(shown)) == 1 else " ".join(shown)


def bench_main(argv: list[str]) -> int:
    try:
        sides = [_runs(arg) for arg in argv]
        cases = [[{c["case"]: c for c in run["cases"]} for run in side] for side in sides]
    except (OSError, ValueError, KeyError) as exc:
        print(f"compare_eval: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(f"A: {argv[0]} ({len(sides[0])} runs), B: {argv[1]} ({len(sides[1])} runs)")
    heads = ("case", "same ids", "same q/rows/rounds", "queries A / B", "rows A / B",
             "rounds A / B", "p50 ms per run A", "B", "median A / B (B/A)",
             "GR median A / B")  # fmt: skip
    print(" | ".join(heads))
    differ = False
    for name in cases[0][0]:
        per_side = [[run[name] for run in side if name in run] for side in cases]
        runs = per_side[0] + per_side[1]
        if any("ours_traversals" not in r for r in runs):
            print(f"{name}: a run without ours_traversals (bench.py from before it)")
            return 2
        n = min(len(r["ours_traversals"]) for r in runs)
        ref = runs[0]["ours_traversals"]
        same_ids = sum(all(r["ours_traversals"][i]["ids"] == ref[i]["ids"] for r in runs)
                       for i in range(n))  # fmt: skip
        counts = [
            all(
                {k: r["ours_traversals"][i][k] for k in ("queries", "rows", "rounds")}
                == {k: ref[i][k] for k in ("queries", "rows", "rounds")}
                for r in runs
            )
            for i in range(n)
        ]
        differ |= same_ids < n
        cols = [name, f"{same_ids}/{n}", f"{sum(counts)}/{n}"]
        for key in ("ours_queries", "ours_rows", "ours_hops"):
            cols.append(" / ".join(_figures([r[key] for r in side]) for side in per_side))
        for side in per_side:
            cols.append(", ".join(f"{r['ours_p50_ms']:.1f}" for r in side))
        ours = [statistics.median(r["ours_p50_ms"] for r in side) for side in per_side]
        peer = [statistics.median(r["peer_p50_ms"] for r in side) for side in per_side]
        cols.append(f"{ours[0]:.1f} / {ours[1]:.1f} ({ours[1] / ours[0]:.2f})")
        cols.append(f"{peer[0]:.1f} / {peer[1]:.1f}")
        print(" | ".join(cols))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
