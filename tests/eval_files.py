"""Small multi-hop QA files for `hoprag eval` tests, written by the tests themselves."""

from __future__ import annotations

import json
from pathlib import Path

WORDS = "amber basalt cobalt dune ember fjord garnet harbor iris jasper kelp lagoon".split()


def hotpot_file(path: Path) -> Path:
    """Six questions; each names two rare words found only in its two gold paragraphs."""
    recs = []
    for i in range(6):
        a, b = WORDS[2 * i], WORDS[2 * i + 1]
        recs.append({
            "_id": f"h{i}", "type": "bridge" if i % 2 else "comparison",
            "question": f"What links {a} and {b}?",
            "context": [[f"Page {a}", [f"About {a}."]], [f"Page {b}", [f"About {b}."]],
                        [f"Noise {i}", ["Nothing to see."]]],
            "supporting_facts": [[f"Page {a}", 0], [f"Page {b}", 0]],
        })  # fmt: skip
    path.write_text(json.dumps(recs), encoding="utf-8")
    return path
