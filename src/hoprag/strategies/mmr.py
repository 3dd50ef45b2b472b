"""Mmr: maximal marginal relevance, balancing similarity to the query against redundancy with
the nodes already admitted."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from hoprag.documents import Node
from hoprag.errors import InvalidInputError, StoreError
from hoprag.strategies.base import (
    RunState,
    Strategy,
    _check_int,
    check_unit_interval,
    shown_number,
)


def _matrix(vectors: Sequence[Sequence[float]]) -> NDArray[np.float64]:
    """The vectors as one float64 matrix. A vector that already holds its values as a float64
    numpy row (`array`, as the Cassandra store's embeddings do) is not converted again."""
    own = getattr(vectors, "array", None)
    if own is not None:  # one vector
        return own  # type: ignore[no-any-return]
    if vectors and not isinstance(vectors[0], int | float):
        arrays = [getattr(v, "array", None) for v in vectors]
        if all(a is not None for a in arrays):
            return np.vstack(arrays)  # type: ignore[arg-type]
    return np.asarray(vectors, dtype=np.float64)


def _unit_rows(vectors: Sequence[Sequence[float]]) -> NDArray[np.float64]:
    mat = _matrix(vectors)
    if mat.ndim == 1:
        mat = mat[None, :]
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: NDArray[np.float64] = mat / norms
    return out


class _MmrRun(RunState):
    strategy: Mmr

    def __init__(self, strategy: Mmr, query_embedding: Sequence[float] | None) -> None:
        super().__init__(strategy, query_embedding)
        if query_embedding is None:
            raise InvalidInputError("Mmr needs the query embedding")
        self._query = _unit_rows([query_embedding])[0]
        dim = self._query.shape[0]
        self._nodes: list[Node] = []
        self._emb = np.empty((0, dim))
        self._sim = np.empty(0)
        self._red = np.empty(0)
        self._alive = np.empty(0, dtype=bool)
        self._selected = np.empty((0, dim))

    def _add(self, nodes: Sequence[Node]) -> None:
        missing = [n.id for n in nodes if n.embedding is None]
        if missing:
            raise StoreError(f"Mmr needs embeddings; the store returned none for {missing[:5]}")
        emb = _unit_rows([n.embedding for n in nodes])  # type: ignore[misc]
        if emb.shape[1] != self._query.shape[0]:
            raise StoreError(
                f"embedding dimension {emb.shape[1]} does not match the query's "
                f"{self._query.shape[0]}"
            )
        sim = emb @ self._query
        if self._selected.shape[0]:
            red = (emb @ self._selected.T).max(axis=1)
        else:
            red = np.zeros(len(nodes))
        self._nodes.extend(nodes)
        self._emb = np.vstack((self._emb, emb))
        self._sim = np.concatenate((self._sim, sim))
        self._red = np.concatenate((self._red, red))
        self._alive = np.concatenate((self._alive, np.ones(len(nodes), dtype=bool)))

    def _next(self) -> Node | None:
        if not self._alive.any():
            return None
        lam = self.strategy.lambda_mult
        scores = lam * self._sim - (1.0 - lam) * self._red
        scores = np.where(self._alive, scores, -np.inf)
        best = int(np.argmax(scores))
        if scores[best] < self.strategy.min_mmr_score:
            return None
        self._alive[best] = False
        chosen = self._emb[best]
        self._selected = np.vstack((self._selected, chosen))
        node = self._nodes[best]
        node.extra_metadata["_mmr_score"] = float(scores[best])
        node.extra_metadata["_redundancy"] = float(self._red[best])
        np.maximum(self._red, self._emb @ chosen, out=self._red)
        return node

    def likely_next(self) -> Sequence[Node]:
        """The `prefetch` traversable candidates with the best MMR scores right now: while
        the chosen node's neighbours are fetched, the next pick is most often one of them."""
        tracker = self.tracker
        width = self.strategy.prefetch * self.look_ahead_factor
        if width <= 0 or tracker.remaining <= 1 or not self._alive.any():
            return ()
        lam = self.strategy.lambda_mult
        scores = np.where(self._alive, lam * self._sim - (1.0 - lam) * self._red, -np.inf)
        out: list[Node] = []
        for i in np.argsort(-scores, kind="stable"):
            if not scores[i] >= self.strategy.min_mmr_score or scores[i] == -np.inf:
                break
            node = self._nodes[int(i)]
            if node.id not in tracker.to_traverse and tracker.can_traverse(node):
                out.append(node)
                if len(out) == width:
                    break
        return out

    def iterate(self, nodes: Sequence[Node]) -> None:
        if nodes:
            self._add(nodes)
        tracker = self.tracker
        while tracker.remaining > 0:
            node = self._next()
            if node is None:
                break
            if tracker.select_and_traverse([node]) == 1:
                # Fetch this node's neighbours before admitting more.
                break


@dataclasses.dataclass(frozen=True, kw_only=True)
class Mmr(Strategy):
    """Admits one node at a time, the candidate with the best
    `lambda_mult * similarity - (1 - lambda_mult) * max similarity to the admitted nodes`,
    and fetches its neighbours before admitting more. `lambda_mult` 1 is pure relevance, 0 pure
    diversity; candidates scoring below `min_mmr_score` are never admitted. Scores are recorded
    as `_mmr_score` and `_redundancy`.

    `prefetch` (hoprag's own, default 2; 0 turns it off): while a node's neighbours are
    fetched, the neighbours of the `prefetch` candidates most likely to be picked next are
    fetched with them, so a right guess saves the next round trip; when the traversal reads
    ahead over a slow link (`speculation=`), twice as many. Results are identical whatever
    its value; only the queries issued (and the latency) change."""

    needs_embeddings: ClassVar[bool] = True

    lambda_mult: float = 0.5
    min_mmr_score: float = float("-inf")
    prefetch: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(
            self, "lambda_mult", check_unit_interval("lambda_mult", self.lambda_mult)
        )
        m = self.min_mmr_score
        if isinstance(m, bool) or not isinstance(m, int | float) or m != m:
            raise InvalidInputError(f"min_mmr_score must be a number, got {m!r}")
        if isinstance(m, int) and abs(m) > 1e300:  # float() would overflow
            raise InvalidInputError(
                f"min_mmr_score must be a number a float can hold, got {shown_number(m)}"
            )
        object.__setattr__(self, "min_mmr_score", float(m))
        _check_int("prefetch", self.prefetch)

    def start_run(self, query_embedding: Sequence[float] | None) -> RunState:
        """A fresh per-call state."""
        return _MmrRun(self, query_embedding)
