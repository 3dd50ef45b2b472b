"""Ranking a traversal's candidates by a weighted sum of what each one shows, after the run.

A path score ranks a document by its own similarity and its parent's, so it cannot tell the
bridge a question needs from its siblings: all share the parent's relevance. `LinearRanking`
ranks the whole candidate pool of a run (every start and every neighbour it kept, admitted with
a wide `select_k`) by `sum(weight[f] * feature[f])` over these features of a candidate
(`features`):

- `coverage`: the share of the question's distinct terms (`hoprag.lexical`'s tokenizer) that
  its content holds;
- `residual`: the share its content holds and its reference's does not, where the reference
  is its parent for a document reached by an edge and, for a start, the best-scoring other
  start (what it adds to the passage it is read with);
- `union`: the share its content and its reference's hold together;
- `similarity`: its cosine similarity to the question (-1 when the store gave none);
- `hop`: 1 for a document reached by an edge, 0 for a start;
- `root`: 1 for a document the question names (an initial root);
- `edge:FIELD`: 1 when the edge that reached it leads to field FIELD (`$id` for an id edge,
  `$search` for a re-query's, `hoprag.requery`);
- `search_score`: for a document a re-query found, its BM25 score over the search's
  best (`_search_score`; 0 for the others);
- `parent_relevance`: its parent's `_relevance` (0 for a start);
- `path_score`: its `_path_score`;
- `linked`: 1 when an edge of the run's joins it to a start other than itself;
- `hop_coverage`, `hop_residual`, `hop_union`, `hop_similarity`: the same four for a
  document reached by an edge, 0 for a start (so that starts and neighbours weigh them apart).

A feature the weights do not name costs nothing; a weight naming no feature is an error. The
ranking is pure: it reads the nodes and the question, never a store."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hoprag.documents import Node, known_similarity
from hoprag.edges import target_field
from hoprag.errors import invalid
from hoprag.lexical import tokenize
from hoprag.validation import check_int

__all__ = ["FEATURES", "LinearRanking", "features"]

FEATURES = (
    "coverage",
    "residual",
    "union",
    "similarity",
    "hop",
    "root",
    "parent_relevance",
    "path_score",
    "linked",
    "hop_coverage",
    "hop_residual",
    "hop_union",
    "hop_similarity",
    "search_score",
)
"""The features every candidate has; `edge:FIELD` ones come on top, one per field."""

EDGE_PREFIX = "edge:"


def _score(node: Node, key: str) -> float:
    value = node.extra_metadata.get(key)
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else 0.0


class _Pool:
    """The candidates' terms, starts and scores, computed once per ranking."""

    def __init__(self, question: str, nodes: Sequence[Node]) -> None:
        self.terms = frozenset(tokenize(question))
        self.held = {n.id: frozenset(tokenize(n.content)) & self.terms for n in nodes}
        self.by_id = {n.id: n for n in nodes}
        starts = sorted((n for n in nodes if n.depth == 0), key=lambda n: -_score(n, "_path_score"))
        self.starts = [n.id for n in starts]

    def share(self, terms: frozenset[str]) -> float:
        return len(terms) / len(self.terms) if self.terms else 0.0

    def reference(self, node: Node) -> str | None:
        """The parent of a neighbour; the best-scoring other start of a start."""
        if node.depth > 0:
            return node.path.nodes[-2]
        return next((s for s in self.starts if s != node.id), None)

    def linked(self, node: Node) -> bool:
        if node.depth > 0:
            return True
        return any(
            node.outgoing_edges & other.incoming_edges or other.outgoing_edges & node.incoming_edges
            for other in (self.by_id[s] for s in self.starts if s != node.id)
        )


def features(
    question: str, nodes: Sequence[Node], roots: Collection[str] = ()
) -> list[dict[str, float]]:
    """Each node's features (see the module docstring), in the order of `nodes`: the whole
    candidate pool of one run, starts included, each neighbour's parent among them."""
    pool = _Pool(question, nodes)
    out = []
    for node in nodes:
        held = pool.held[node.id]
        ref = pool.reference(node)
        ref_held = pool.held.get(ref, frozenset()) if ref is not None else frozenset()
        parent = pool.by_id.get(ref) if node.depth > 0 and ref is not None else None
        row = {
            "coverage": pool.share(held),
            "residual": pool.share(held - ref_held),
            "union": pool.share(held | ref_held),
            "similarity": known_similarity(node),
            "hop": float(node.depth > 0),
            "root": float(node.id in roots),
            "parent_relevance": _score(parent, "_relevance") if parent is not None else 0.0,
            "path_score": _score(node, "_path_score"),
            "linked": float(pool.linked(node)),
            "search_score": _score(node, "_search_score"),
        }
        if node.depth > 0:
            for name in ("coverage", "residual", "union", "similarity"):
                row["hop_" + name] = row[name]
            row[EDGE_PREFIX + target_field(node.path.edges[-1])] = 1.0
        out.append(row)
    return out


def _known(name: Any) -> bool:
    """Whether `name` is a feature: one of FEATURES, or `edge:` and a field."""
    if name in FEATURES:
        return True
    return isinstance(name, str) and name.startswith(EDGE_PREFIX) and name != EDGE_PREFIX


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_weights(weights: Any) -> tuple[tuple[str, float], ...]:
    """`weights` as sorted (feature, weight) pairs, or InvalidInputError naming the bad one."""
    if not isinstance(weights, Mapping) or not weights:
        raise invalid("weights", weights, "a non-empty mapping of feature name to weight")
    for name, weight in weights.items():
        if not _known(name):
            raise invalid("weights", name, f"one of {', '.join(FEATURES)} or {EDGE_PREFIX}FIELD")
        if not _finite(weight):
            raise invalid(f"weights[{name!r}]", weight, "a finite number")
    return tuple(sorted((k, float(v)) for k, v in weights.items()))


@dataclass(frozen=True)
class LinearRanking:
    """Rank a run's candidate pool by `sum(weights[f] * feature f)` (module docstring), after
    a traversal that admitted the whole pool (`pool`: the `select_k` that admits it). Weights
    are fitted by `scripts/fit_ranking.py`; a feature not named weighs 0."""

    weights: Mapping[str, float] | tuple[tuple[str, float], ...]
    pool: int = 40

    def __post_init__(self) -> None:
        given = dict(self.weights) if isinstance(self.weights, tuple) else self.weights
        object.__setattr__(self, "weights", _check_weights(given))
        object.__setattr__(self, "pool", check_int("pool", self.pool, minimum=1, maximum=1000))

    def scores(
        self, question: str, nodes: Sequence[Node], roots: Collection[str] = ()
    ) -> list[float]:
        """Each node's ranking score, in the order of `nodes`."""
        weights = dict(self.weights)
        return [
            sum(weights.get(name, 0.0) * value for name, value in row.items())
            for row in features(question, nodes, roots)
        ]

    def rank(
        self,
        question: str,
        nodes: Sequence[Node],
        roots: Collection[str] = (),
        *,
        k: int | None = None,
    ) -> list[Node]:
        """`nodes` best first by their ranking score (kept in `extra_metadata["_rank_score"]`;
        equal scores in the order given), the first `k` when given."""
        scored = self.scores(question, nodes, roots)
        for node, score in zip(nodes, scored, strict=True):
            node.extra_metadata["_rank_score"] = score
        order = sorted(range(len(nodes)), key=lambda i: -scored[i])
        ranked = [nodes[i] for i in order]
        return ranked if k is None else ranked[:k]
