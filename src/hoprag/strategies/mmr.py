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
    """The vectors as rows of unit length (a zero vector stays zero)."""
    mat = _matrix(vectors)
    if mat.ndim == 1:
        mat = mat[None, :]
    # np.linalg.norm(mat, axis=1) without its dispatch: the same sums, bit for bit.
    norms = np.sqrt(np.add.reduce(mat * mat, axis=1))[:, None]
    norms[norms == 0] = 1.0
    out: NDArray[np.float64] = mat / norms
    return out


class _Candidates:
    """Every candidate of one run as rows of preallocated arrays, grown by doubling: its unit
    embedding, its similarity to the query, its redundancy (the largest similarity to an
    admitted node) and whether it may still be admitted. The admitted nodes' embeddings are
    kept the same way. Rows are appended, never moved, so each step computes on views of the
    filled rows instead of concatenating new arrays."""

    def __init__(self, dim: int, selected: int) -> None:
        self.n = 0
        self.emb = np.empty((16, dim))
        self.sim = np.empty(16)
        self.red = np.empty(16)
        self.alive = np.zeros(16, dtype=bool)
        self.m = 0
        self.chosen = np.empty((max(selected, 1), dim))

    def add(self, emb: NDArray[np.float64], sim: NDArray[np.float64]) -> None:
        """Append candidates: unit embeddings `emb` with query similarities `sim`; their
        redundancy is taken against the nodes admitted so far."""
        b, start = emb.shape[0], self.n
        self._reserve(start + b)
        stop = start + b
        self.emb[start:stop] = emb
        self.sim[start:stop] = sim
        if self.m:
            self.red[start:stop] = (emb @ self.chosen[: self.m].T).max(axis=1)
        else:
            self.red[start:stop] = 0.0
        self.alive[start:stop] = True
        self.n = stop

    def _reserve(self, rows: int) -> None:
        size = self.sim.shape[0]
        if rows <= size:
            return
        while size < rows:
            size *= 2
        for name in ("emb", "sim", "red", "alive"):
            old = getattr(self, name)
            grown = np.zeros((size, *old.shape[1:]), dtype=old.dtype)
            grown[: self.n] = old[: self.n]
            setattr(self, name, grown)

    def scores(self, lam: float) -> NDArray[np.float64]:
        """Each candidate's MMR score; -inf for those no longer admissible."""
        n = self.n
        scores = lam * self.sim[:n] - (1.0 - lam) * self.red[:n]
        out: NDArray[np.float64] = np.where(self.alive[:n], scores, -np.inf)
        return out

    def admit(self, i: int) -> None:
        """Admit candidate `i`: it is no longer admissible, and every candidate's redundancy
        takes its similarity to it into account."""
        self.alive[i] = False
        chosen = self.emb[i]
        if self.m == self.chosen.shape[0]:
            self.chosen = np.vstack((self.chosen, self.chosen))
        self.chosen[self.m] = chosen
        self.m += 1
        red = self.red[: self.n]
        np.maximum(red, self.emb[: self.n] @ chosen, out=red)


class _MmrRun(RunState):
    strategy: Mmr

    def __init__(self, strategy: Mmr, query_embedding: Sequence[float] | None) -> None:
        super().__init__(strategy, query_embedding)
        if query_embedding is None:
            raise InvalidInputError("Mmr needs the query embedding")
        self._query = _unit_rows([query_embedding])[0]
        self._nodes: list[Node] = []
        self._pool = _Candidates(self._query.shape[0], strategy.select_k)

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
        self._pool.add(emb, emb @ self._query)
        self._nodes.extend(nodes)

    def _next(self) -> Node | None:
        pool = self._pool
        if not pool.alive[: pool.n].any():
            return None
        scores = pool.scores(self.strategy.lambda_mult)
        best = int(np.argmax(scores))
        if scores[best] < self.strategy.min_mmr_score:
            return None
        node = self._nodes[best]
        node.extra_metadata["_mmr_score"] = float(scores[best])
        node.extra_metadata["_redundancy"] = float(pool.red[best])
        pool.admit(best)
        return node

    def likely_next(self) -> Sequence[Node]:
        """The `prefetch` traversable candidates with the best MMR scores right now: while
        the chosen node's neighbours are fetched, the next pick is most often one of them."""
        tracker = self.tracker
        width = self.strategy.prefetch * self.look_ahead_factor
        pool = self._pool
        if width <= 0 or tracker.remaining <= 1 or not pool.alive[: pool.n].any():
            return ()
        scores = pool.scores(self.strategy.lambda_mult)
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
