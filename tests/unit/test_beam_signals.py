"""Beam's auxiliary signals on their own: values in [0, 1], date parsing, missing values
neutral, malformed values refused, weights scaled to `max_bonus`, custom signals."""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from test_beam import doc, ids, run, store_of

from hoprag import Beam, Importance, MetadataEdge, Node, Path, Recency, Signal, StartBoost
from hoprag.errors import InvalidInputError
from hoprag.strategies.signals import SignalContext, parse_time

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def node(node_id: str, sim: float = 0.5, **metadata: Any) -> Node:
    return Node(
        id=node_id,
        content="",
        depth=0,
        similarity_score=sim,
        embedding=None,
        metadata=metadata,
        incoming_edges=frozenset(),
        outgoing_edges=frozenset(),
        path=Path((node_id,)),
    )


def context(*seen: Node, **strength: float) -> SignalContext:
    return SignalContext(now=NOW, start_strength=strength, seen=list(seen))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-12-31", datetime(2024, 12, 31, tzinfo=UTC)),
        ("2024-12-31T23:00:00Z", datetime(2024, 12, 31, 23, tzinfo=UTC)),
        ("2024-12-31T23:00:00+02:00", datetime(2024, 12, 31, 21, tzinfo=UTC)),
        ("2024-12-31 12:30", datetime(2024, 12, 31, 12, 30, tzinfo=UTC)),
        (1735689600, NOW),
        (1735689600.0, NOW),
        (date(2025, 1, 1), NOW),
        (datetime(2025, 1, 1), NOW),
        (datetime(2025, 1, 1, 1, tzinfo=UTC) + timedelta(hours=-1), NOW),
    ],
)
def test_parse_time_accepts_iso_dates_datetimes_and_epochs(value: Any, expected: datetime) -> None:
    assert parse_time(value) == expected
    assert parse_time(value).tzinfo is not None


@pytest.mark.parametrize("value", ["yesterday", "", True, float("nan"), [2024], "1735689600"])
def test_parse_time_refuses_other_values(value: Any) -> None:
    with pytest.raises(ValueError):
        parse_time(value)


def test_recency_halves_per_half_life_and_missing_is_neutral() -> None:
    r = Recency("when", half_life_days=10)
    ctx = context()
    assert r.value(node("a", when="2025-01-01"), Path(("a",)), ctx) == 1.0
    assert r.value(node("a", when="2024-12-22"), Path(("a",)), ctx) == pytest.approx(0.5)
    assert r.value(node("a", when="2024-12-12"), Path(("a",)), ctx) == pytest.approx(0.25)
    assert r.value(node("a", when="2030-01-01"), Path(("a",)), ctx) == 1.0  # future: now
    assert r.value(node("a"), Path(("a",)), ctx) == 0.0
    assert r.value(node("a", when=None), Path(("a",)), ctx) == 0.0
    fixed = Recency("when", half_life_days=10, now="2025-01-11")
    assert fixed.value(node("a", when="2025-01-01"), Path(("a",)), ctx) == pytest.approx(0.5)
    nested = Recency("event.date", half_life_days=10)
    assert nested.value(node("a", event={"date": "2024-12-22"}), Path(("a",)), ctx) == (
        pytest.approx(0.5)
    )


def test_recency_names_the_document_and_field_of_a_bad_date() -> None:
    with pytest.raises(ValueError, match=r"'x'.*'when'.*soon"):
        Recency("when").value(node("x", when="soon"), Path(("x",)), context())


def test_importance_is_log_scaled_and_normalised_over_seen_nodes() -> None:
    a, b, c = node("a", cap=9.0), node("b", cap=99.0), node("c", cap=999.0)
    imp = Importance("cap")
    ctx = context(a, b, c)
    values = [imp.value(n, n.path, ctx) for n in (a, b, c)]
    lo, hi = math.log(10), math.log(1000)
    assert values == pytest.approx([0.0, (math.log(100) - lo) / (hi - lo), 1.0])
    assert values[1] == pytest.approx(0.5)  # log scale: 100 is halfway between 10 and 1000
    assert imp.value(node("d"), Path(("d",)), ctx) == 0.0  # missing: neutral
    alone = node("e", cap=5)
    assert imp.value(alone, alone.path, context(alone)) == 1.0


@pytest.mark.parametrize("bad", ["big", -1, float("nan"), float("inf"), True, [1]])
def test_importance_refuses_malformed_values(bad: Any) -> None:
    n = node("x", cap=bad)
    with pytest.raises(ValueError, match=r"'x'.*'cap'"):
        Importance("cap").value(n, n.path, context(n))


def test_start_boost_reads_the_start_node_of_the_path() -> None:
    n = node("child")
    path = Path(("start",)).extend(MetadataEdge("k", "v"), "child")
    assert StartBoost().value(n, path, context(start=0.75)) == 0.75
    assert StartBoost().value(n, Path(("child",)), context(start=0.75)) == 0.0


@pytest.mark.parametrize(
    ("factory", "kwargs", "error"),
    [
        (StartBoost, {"weight": -0.1}, ValueError),
        (StartBoost, {"weight": "x"}, InvalidInputError),
        (Importance, {"field": ""}, InvalidInputError),
        (Importance, {"field": "cap", "weight": float("inf")}, ValueError),
        (Recency, {"field": "d", "half_life_days": 0}, ValueError),
        (Recency, {"field": "d", "half_life_days": "1"}, InvalidInputError),
        (Recency, {"field": "d", "now": "soon"}, ValueError),
    ],
)
def test_signal_parameters_are_checked(factory: Any, kwargs: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        factory(**kwargs)


async def test_weights_above_max_bonus_are_scaled_down_together() -> None:
    docs = [doc("a", 0.8, cap=1e9, when="2024-12-31"), doc("b", 0.7, cap=1.0)]
    strategy = Beam(
        start_k=2,
        max_bonus=0.04,
        signals=[Importance("cap", 0.3), Recency("when", 30, 0.1, now=NOW)],
    )
    result = await run(store_of(docs), strategy)
    a = result[0].extra_metadata
    # a has both signals near 1: the scaled weights (0.03 + 0.01) sum to max_bonus.
    assert a["_bonus"] == pytest.approx(0.03 + 0.01 * 0.5 ** (1 / 30))
    assert result[1].extra_metadata["_bonus"] == 0.0


@dataclasses.dataclass(frozen=True)
class ByLength(Signal):
    """A custom signal: short contents first (values outside [0, 1] are clipped)."""

    weight: float = 0.02
    scale: float = 1.0

    def value(self, node: Node, path: Path, context: SignalContext) -> float:
        return self.scale / (1 + len(node.content))


async def test_custom_signals_are_clipped_and_nan_refused() -> None:
    docs = [doc("long-name", 0.8), doc("s", 0.797)]
    result = await run(store_of(docs), Beam(start_k=2, signals=[ByLength(scale=12.0)]))
    assert ids(result) == ["s", "long-name"]
    assert result[0].extra_metadata["_bonus"] == pytest.approx(0.02)
    with pytest.raises(ValueError, match="returned nan"):
        await run(store_of(docs), Beam(start_k=2, signals=[ByLength(scale=float("nan"))]))
