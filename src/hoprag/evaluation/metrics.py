"""Recall@k as HippoRAG reports it, and a bootstrap interval of a mean."""

from __future__ import annotations

import random
from collections.abc import Sequence

from hoprag.errors import invalid


def recall_at_k(retrieved: Sequence[str], gold: Sequence[str], k: int) -> float:
    """The fraction of `gold` among the first `k` of `retrieved`. InvalidInputError for no
    gold: a question without gold passages has no recall (the loaders drop it)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise invalid("k", k, "an int of at least 1")
    if not gold:
        hint = "a question without gold passages cannot be scored; drop it"
        raise invalid("gold", gold, "at least one gold passage id", hint=hint)
    top = set(retrieved[:k])
    return sum(g in top for g in set(gold)) / len(set(gold))


def bootstrap_interval(
    values: Sequence[float], *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of `values` at `level` (resampled
    `resamples` times with a seeded generator, so the same values give the same interval)."""
    if not values:
        raise invalid("values", values, "at least one value")
    if not 0 < level < 1:
        raise invalid("level", level, "a fraction in (0, 1)")
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    lo = means[int((1 - level) / 2 * resamples)]
    hi = means[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return lo, hi
