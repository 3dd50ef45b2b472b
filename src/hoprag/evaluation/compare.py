"""Two `hoprag eval` runs of the same questions compared question by question (the JSON's
`ids`): how many questions got the same ids in the same order, the same set, how much of the
top 5 is shared, and, for a question whose ids differ, whether the vector search's differ too
(then the stores' vector searches, approximate on Cassandra, explain it)."""

from __future__ import annotations

from typing import Any

from hoprag.errors import invalid


def _ids(run: dict[str, Any], method: str) -> list[list[str]]:
    ids = run["methods"][method].get("ids")
    if not isinstance(ids, list):
        raise invalid("figures", method, "an eval run's JSON with each method's `ids`")
    return ids


def compare_runs(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Per method both runs hold: questions, same order, same set, mean top-5 overlap (of 5),
    the differing questions whose vector ids also differ (None without `vector`), and each
    run's recall@5 and median ms per query."""
    if a.get("questions") != b.get("questions"):
        raise invalid("figures", "questions", "two runs of the same questions (same ids, order)")
    vector_differs: list[bool] | None = None
    if "vector" in a["methods"] and "vector" in b["methods"]:
        vector_differs = [x != y for x, y in zip(_ids(a, "vector"), _ids(b, "vector"), strict=True)]
    out: dict[str, Any] = {}
    for method in [m for m in a["methods"] if m in b["methods"]]:
        pairs = list(zip(_ids(a, method), _ids(b, method), strict=True))
        differ = [i for i, (x, y) in enumerate(pairs) if x != y]
        shared = sum(len(set(x[:5]) & set(y[:5])) for x, y in pairs)
        explained = None
        if vector_differs is not None:
            explained = sum(vector_differs[i] for i in differ)
        out[method] = {
            "questions": len(pairs),
            "same_order": len(pairs) - len(differ),
            "same_set": sum(set(x) == set(y) for x, y in pairs),
            "top5_overlap": round(shared / max(len(pairs), 1), 3),
            "differ_with_vector_differing": explained,
            "recall@5": [a["methods"][method]["recall@5"], b["methods"][method]["recall@5"]],
            "ms_p50": [a["methods"][method].get("ms_p50"), b["methods"][method].get("ms_p50")],
        }
    return out
