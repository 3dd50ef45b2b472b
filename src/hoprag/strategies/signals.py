"""Auxiliary signals for `Beam`: bounded bonuses that reorder paths of similar relevance.

A signal maps a candidate path (its end node and the path that reached it) to a value in
[0, 1]; `Beam` multiplies it by the signal's `weight` and adds the sum, capped by
`Beam.max_bonus`, to the path's relevance. Signals never see the query and never fetch
anything: they read the node's metadata and the run's `SignalContext`.

Missing values are neutral (value 0: no bonus); a value that is present but malformed (a
market cap of "big", a date of "soon") raises `InvalidInputError` naming the document, the field and
the value, rather than silently ranking the document as if the field were absent."""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

from hoprag.documents import Node, Path
from hoprag.edges import MISSING, nested_get
from hoprag.errors import InvalidInputError

DEFAULT_SIGNAL_WEIGHT = 0.02
"""Default weight of each shipped signal: a bonus of at most 0.02 in cosine-similarity units."""


@dataclasses.dataclass(slots=True)
class SignalContext:
    """What a signal may use besides the node: the run's reference time `now` (UTC), the
    start strength of each start node (id -> [0, 1]), every node the run has scored so far
    (`seen`, the set that normalising signals normalise over) and a per-round `cache`."""

    now: datetime
    start_strength: Mapping[str, float]
    seen: Sequence[Node]
    cache: dict[Any, Any] = dataclasses.field(default_factory=dict)


class Signal(ABC):
    """An auxiliary signal: `weight` (>= 0) times `value(...)` (in [0, 1]) is its bonus."""

    weight: float

    @abstractmethod
    def value(self, node: Node, path: Path, context: SignalContext) -> float:
        """The signal for the path `path` ending at `node`, in [0, 1]."""


def _check_weight(weight: Any) -> float:
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        raise InvalidInputError(f"signal weight must be a number >= 0, got {weight!r}")
    if not math.isfinite(weight) or weight < 0:
        raise InvalidInputError(f"signal weight must be a finite number >= 0, got {weight}")
    return float(weight)


def _check_field(field: Any, what: str) -> str:
    if not isinstance(field, str) or not field:
        raise InvalidInputError(
            f"{what} field must be a non-empty metadata field name, got {field!r}"
        )
    return field


@dataclasses.dataclass(frozen=True, slots=True)
class StartBoost(Signal):
    """Favours paths whose start node was a strong start hit. The value is the start node's
    similarity min-max normalised over the run's start nodes (vector-search hits and initial
    roots): 1 for the best start hit, 0 for the weakest (1 for all when they tie)."""

    weight: float = DEFAULT_SIGNAL_WEIGHT

    def __post_init__(self) -> None:
        object.__setattr__(self, "weight", _check_weight(self.weight))

    def value(self, node: Node, path: Path, context: SignalContext) -> float:
        """The start strength of `path.nodes[0]`."""
        return context.start_strength.get(path.nodes[0], 0.0)


def _importance(node: Node, field: str) -> float | None:
    raw = nested_get(node.metadata, field)
    if raw is MISSING or raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not raw >= 0:
        raise InvalidInputError(
            f"Importance: document {node.id!r} field {field!r} must be a number >= 0, got {raw!r}"
        )
    if not math.isfinite(raw):
        raise InvalidInputError(f"Importance: document {node.id!r} field {field!r} is {raw!r}")
    return math.log1p(float(raw))


@dataclasses.dataclass(frozen=True, slots=True)
class Importance(Signal):
    """Favours important documents by a numeric metadata field (e.g. market cap), on a log
    scale: with `x` the field's value (>= 0), the value is
    `(log1p(x) - lo) / (hi - lo)`, where `lo` and `hi` are the least and greatest `log1p` of
    the field over the nodes the run has scored so far (1 when `hi == lo`). A missing field is
    neutral (0); a non-numeric or negative value raises `InvalidInputError`. Dotted field names
    reach into nested dicts."""

    field: str
    weight: float = DEFAULT_SIGNAL_WEIGHT

    def __post_init__(self) -> None:
        _check_field(self.field, "Importance")
        object.__setattr__(self, "weight", _check_weight(self.weight))

    def _range(self, context: SignalContext) -> tuple[float, float] | None:
        key = ("importance", self.field)
        if key not in context.cache:
            logs = [v for n in context.seen if (v := _importance(n, self.field)) is not None]
            context.cache[key] = (min(logs), max(logs)) if logs else None
        return context.cache[key]  # type: ignore[no-any-return]

    def value(self, node: Node, path: Path, context: SignalContext) -> float:
        """The node's log-scaled importance, min-max normalised over the seen nodes."""
        v = _importance(node, self.field)
        if v is None:
            return 0.0
        bounds = self._range(context)
        if bounds is None:  # the node itself is not among the seen ones yet
            return 1.0
        lo, hi = min(bounds[0], v), max(bounds[1], v)
        return 1.0 if hi == lo else (v - lo) / (hi - lo)


def parse_time(value: Any) -> datetime:
    """A timezone-aware UTC datetime from a `datetime`/`date`, an ISO 8601 date or datetime
    string (`"2024-05-01"`, `"2024-05-01T12:00:00+02:00"`, `"...Z"`), or a Unix epoch in
    seconds (int or float). Naive datetimes are taken as UTC. Raises ValueError otherwise."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, bool):
        raise InvalidInputError(f"not a date: {value!r}")
    elif isinstance(value, int | float):
        if not math.isfinite(value):
            raise InvalidInputError(f"not a date: {value!r}")
        dt = datetime.fromtimestamp(float(value), tz=UTC)
    elif isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInputError(f"not an ISO 8601 date or datetime: {value!r}") from None
    else:
        raise InvalidInputError(f"not a date: {value!r}")
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


@dataclasses.dataclass(frozen=True, slots=True)
class Recency(Signal):
    """Favours recent documents by a date field (event date, publication date): with `age`
    the days from the field's time to `now` (the `now` given here, else the time the
    traversal started), the value is `0.5 ** (max(age, 0) / half_life_days)`, so a document
    `half_life_days` old gets half the bonus of one dated now; future dates count as now.
    Accepts ISO 8601 dates and datetimes, `datetime`/`date` objects and Unix epoch seconds.
    A missing field is neutral (0); an unparseable one raises `InvalidInputError`."""

    field: str
    half_life_days: float = 365.0
    weight: float = DEFAULT_SIGNAL_WEIGHT
    now: datetime | None = None

    def __post_init__(self) -> None:
        _check_field(self.field, "Recency")
        h = self.half_life_days
        if isinstance(h, bool) or not isinstance(h, int | float):
            raise InvalidInputError(f"half_life_days must be a number > 0, got {h!r}")
        if not math.isfinite(h) or h <= 0:
            raise InvalidInputError(f"half_life_days must be a finite number > 0, got {h}")
        object.__setattr__(self, "half_life_days", float(h))
        object.__setattr__(self, "weight", _check_weight(self.weight))
        if self.now is not None:
            object.__setattr__(self, "now", parse_time(self.now))

    def value(self, node: Node, path: Path, context: SignalContext) -> float:
        """`0.5 ** (age_days / half_life_days)` of the node's date; 0 when it has none."""
        raw = nested_get(node.metadata, self.field)
        if raw is MISSING or raw is None:
            return 0.0
        try:
            when = parse_time(raw)
        except ValueError as exc:
            raise InvalidInputError(
                f"Recency: document {node.id!r} field {self.field!r}: {exc}"
            ) from None
        now = self.now or context.now
        age_days = max((now - when).total_seconds() / 86400.0, 0.0)
        return float(0.5 ** (age_days / self.half_life_days))
