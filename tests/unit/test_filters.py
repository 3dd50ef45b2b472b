"""The filter compiler (`hoprag.filters`): disjunctive normal form, canonical and hashable
results, the bound on branches, and the shared evaluator's semantics."""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np
import pytest

from hoprag.errors import InvalidInputError
from hoprag.filters import (
    MAX_BRANCHES,
    MAX_NESTING,
    CompiledFilter,
    Condition,
    and_filters,
    compile_filter,
    matches,
    parse_date,
)


def _ops(compiled: CompiledFilter) -> list[list[tuple[str, str, Any]]]:
    return [[(c.field, c.op, c.value) for c in b] for b in compiled.branches]


def test_no_filter_and_an_empty_filter_match_everything() -> None:
    for flt in (None, {}, {"$or": [{}, {"a": 1}]}, {"$and": [{}]}):
        compiled = compile_filter(flt)
        assert compiled.matches_all and compiled.branches == ((),)
        assert matches(compiled, {}) and matches(compiled, {"a": 2})


def test_in_expands_to_one_equality_branch_per_value_and_the_rest_is_anded_into_each() -> None:
    compiled = compile_filter({"genre": {"$in": ["War", "Drama"]}, "year": {"$gte": 1990}})
    assert _ops(compiled) == [
        [("genre", "$eq", "Drama"), ("year", "$gte", 1990)],
        [("genre", "$eq", "War"), ("year", "$gte", 1990)],
    ]


def test_nin_stays_one_branch_of_not_equal_conditions() -> None:
    compiled = compile_filter({"type": {"$nin": ["a", "b", "a"]}})
    assert _ops(compiled) == [[("type", "$ne", "a"), ("type", "$ne", "b")]]


def test_nested_or_and_and_flatten_into_a_disjunction_of_conjunctions() -> None:
    flt = {
        "$or": [
            {"$and": [{"a": 1}, {"$or": [{"b": 2}, {"c": 3}]}]},
            {"d": {"$exists": False}},
        ],
        "e": "x",
    }
    assert _ops(compile_filter(flt)) == [
        [("a", "$eq", 1), ("b", "$eq", 2), ("e", "$eq", "x")],
        [("a", "$eq", 1), ("c", "$eq", 3), ("e", "$eq", "x")],
        [("d", "$exists", False), ("e", "$eq", "x")],
    ]


def test_equal_filters_compile_to_equal_hashable_expressions() -> None:
    a = compile_filter({"x": 1, "y": {"$in": ["p", "q"]}})
    b = compile_filter({"y": {"$in": ["q", "p", "q"]}, "x": 1.0})
    assert a == b and hash(a) == hash(b)
    assert {a: "cached"}[b] == "cached"
    assert compile_filter({"$or": [{"x": 1}, {"x": 1}]}) == compile_filter({"x": 1})
    with pytest.raises(AttributeError):
        a.branches = ()  # type: ignore[misc]


def test_a_bool_and_a_number_stay_apart_in_the_expression() -> None:
    compiled = compile_filter({"f": {"$in": [True, 1, 1.0]}})
    assert len(compiled.branches) == 2  # 1 and 1.0 are one value, True another
    assert Condition("f", "$eq", True, ("b", True)) != Condition("f", "$eq", 1, ("n", 1))
    assert matches(compiled, {"f": 1.0}) and matches(compiled, {"f": True})
    assert not matches(compiled, {"f": False})


def test_filter_values_are_normalised_like_metadata() -> None:
    ((c,),) = compile_filter({"n": {"$gte": np.int64(7)}}).branches
    assert c.value == 7 and type(c.value) is int and c.kind == "number"
    ((c,),) = compile_filter({"d": {"$lt": np.str_("2020-01-01")}}).branches
    assert c.kind == "date" and type(c.value) is str


def test_expansion_beyond_the_bound_is_refused_with_the_count() -> None:
    ok = {"a": {"$in": list(range(8))}, "b": {"$in": list(range(8))}}
    assert len(compile_filter(ok).branches) == MAX_BRANCHES
    with pytest.raises(InvalidInputError, match="81 alternatives") as caught:
        compile_filter({"a": {"$in": list(range(9))}, "b": {"$in": list(range(9))}})
    assert caught.value.argument == "filter"
    huge = {f"f{i}": {"$in": [1, 2]} for i in range(200)}
    with pytest.raises(InvalidInputError, match="more than a billion"):
        compile_filter(huge)


def test_or_nesting_is_bounded() -> None:
    flt: dict[str, Any] = {"a": 1}
    for _ in range(MAX_NESTING):
        flt = {"$or": [flt]}
    assert compile_filter(flt) == compile_filter({"a": 1})
    with pytest.raises(InvalidInputError, match=f"at most {MAX_NESTING} levels"):
        compile_filter({"$or": [flt]})


@pytest.mark.parametrize(
    ("flt", "argument", "phrase"),
    [
        ({"y": {"$regex": "x"}}, "filter['y']['$regex']", "$eq, $ne, $gt, $gte, $lt, $lte"),
        ({"t": {"$gt": "abc"}}, "filter['t']['$gt']", "a range on a text field"),
        ({"t": {"$gt": "1990"}}, "filter['t']['$gt']", "give the number itself"),
        ({"t": {"$gt": "2020-13-01"}}, "filter['t']['$gt']", "a range on a text field"),
        ({"t": {"$gt": "20200101"}}, "filter['t']['$gt']", "a range on a text field"),
        ({"y": {"$gt": 1, "$lt": "2020-01-01"}}, "filter['y']['$lt']", "a number, like"),
        ({"y": {"$gte": 2**64}}, "filter['y']['$gte']", "64-bit"),
        ({"y": {"$gte": float("inf")}}, "filter['y']['$gte']", "finite"),
        ({"y": {"$gte": datetime.date(2020, 1, 1)}}, "filter['y']['$gte']", "isoformat()"),
        ({"y": {"$in": []}}, "filter['y']['$in']", "non-empty list"),
        ({"y": {"$exists": "yes"}}, "filter['y']['$exists']", "true or false"),
        ({"y": {"$eq": {"a": 1}}}, "filter['y']['$eq']", "JSON scalar"),
        ({"loc": {"city": "Oslo"}}, "filter['loc']", "dotted field name"),
        ({"$id": "B"}, "a filter field name", "get(ids)"),
        ({"$where": "1"}, "a filter field name", "'$and' / '$or'"),
        ({"$and": [{"a": {"$foo": 1}}]}, "filter['$and'][0]['a']['$foo']", "operators"),
    ],
)
def test_bad_filters_name_the_place_the_value_and_what_is_allowed(
    flt: dict[str, Any], argument: str, phrase: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        compile_filter(flt)
    assert caught.value.argument == argument
    assert phrase in str(caught.value), str(caught.value)
    assert caught.value.allowed


def test_ne_and_nin_hold_for_documents_without_the_field_and_lists_without_the_value() -> None:
    ne = compile_filter({"tags": {"$ne": "a"}})
    assert matches(ne, {}) and matches(ne, {"tags": ["b"]}) and matches(ne, {"tags": None})
    assert not matches(ne, {"tags": ["b", "a"]}) and not matches(ne, {"tags": "a"})
    nin = compile_filter({"tags": {"$nin": ["a", "c"]}})
    assert matches(nin, {"other": 1}) and not matches(nin, {"tags": ["c"]})


def test_exists_tells_an_absent_field_from_a_none_value() -> None:
    yes = compile_filter({"x.y": {"$exists": True}})
    no = compile_filter({"x.y": {"$exists": False}})
    assert matches(yes, {"x": {"y": None}}) and not matches(no, {"x": {"y": None}})
    assert matches(no, {"x": 3}) and matches(no, {})


def test_ranges_compare_ints_and_floats_exactly_and_skip_other_types() -> None:
    gt = compile_filter({"n": {"$gt": 2**53}})
    assert matches(gt, {"n": 2**53 + 1}) and not matches(gt, {"n": float(2**53)})
    assert not matches(gt, {"n": True}) and not matches(gt, {"n": "9e99"})
    assert matches(gt, {"n": [1, 2**60]}) and not matches(gt, {"n": [[2**60]]})
    assert matches(compile_filter({"n": {"$lte": 0.5}}), {"n": -(2**63)})


def test_dates_are_midnight_and_datetimes_without_an_offset_are_utc() -> None:
    assert parse_date("2020-01-01") == parse_date("2020-01-01T00:00:00Z")
    assert parse_date("2020-01-01T02:00:00+02:00") == parse_date("2020-01-01 00:00")
    assert parse_date("2020-01-01T00:00:00.5Z") is not None
    for bad in ("2020-1-1", "2020-01-01T", "tomorrow", "2020-02-30", "２０２０-01-01"):
        assert parse_date(bad) is None, bad
    after = compile_filter({"d": {"$gte": "2020-01-01"}})
    assert matches(after, {"d": "2020-01-01T00:00:00+00:00"})
    assert not matches(after, {"d": "2019-12-31T23:59:59"})
    assert not matches(after, {"d": 2021}) and not matches(after, {"d": "2021"})


def test_range_bounds_anded_on_one_side_of_a_field_keep_only_the_tightest() -> None:
    flt = {
        "$and": [
            {"y": {"$gte": 1990, "$lt": 2010}},
            {"y": {"$gt": 2000, "$lte": 2010}},
            {"y": {"$gte": 2000}},
        ]
    }
    [branch] = compile_filter(flt).branches
    assert [(c.field, c.op, c.value) for c in branch] == [("y", "$gt", 2000), ("y", "$lt", 2010)]
    # Dates too, and each branch of an $or on its own.
    dated = compile_filter(
        {"d": {"$gte": "2020-01-01"}, "$or": [{"d": {"$gte": "2021-06-01"}}, {"k": 1}]}
    )
    assert [[(c.op, c.value) for c in b] for b in dated.branches] == [
        [("$gte", "2020-01-01"), ("$eq", 1)],
        [("$gte", "2021-06-01")],
    ]


def test_and_filters_is_the_conjunction_checked_as_one_filter() -> None:
    access = compile_filter({"tenant": {"$in": ["a", "b"]}, "y": {"$gte": 2000}}, "access_filter")
    caller = compile_filter({"$or": [{"k": 1}, {"y": {"$gte": 1990}}]})
    both = and_filters(access, caller)
    docs = [
        {"tenant": "a", "y": 2001, "k": 2},
        {"tenant": "c", "y": 2001, "k": 1},
        {"tenant": "b", "y": 1995, "k": 1},
    ]
    assert [matches(both, d) for d in docs] == [True, False, False]
    assert and_filters(access, compile_filter(None)) is access
    with pytest.raises(InvalidInputError, match="must all be numbers or all dates"):
        and_filters(access, compile_filter({"y": {"$lt": "2020-01-01"}}))
    wide = compile_filter({"k": {"$in": list(range(40))}})
    with pytest.raises(InvalidInputError, match="80 alternatives"):
        and_filters(access, wide)


def test_a_branch_holding_every_condition_of_another_is_dropped_as_implied() -> None:
    """`a OR (a AND b)` is `a`: one query instead of two, the same documents pass."""
    flt = {"$or": [{"a": 1}, {"a": 1, "b": 2}, {"c": 3}]}
    assert _ops(compile_filter(flt)) == [[("a", "$eq", 1)], [("c", "$eq", 3)]]
    # A view's access filter ANDed with a caller's $or whose one side the access range
    # already implies (y >= 2000 is tighter than y >= 1990): the k = 1 branches add nothing.
    access = compile_filter({"tenant": {"$in": ["a", "b"]}, "y": {"$gte": 2000}}, "access_filter")
    caller = compile_filter({"$or": [{"k": 1}, {"y": {"$gte": 1990}}]})
    both = and_filters(access, caller)
    assert both == access and len(both.branches) == 2
    rng = np.random.default_rng(7)
    for _ in range(200):
        d = {"tenant": str(rng.choice(["a", "b", "c"])), "y": int(rng.integers(1980, 2020)),
             "k": int(rng.integers(0, 3))}  # fmt: skip
        assert matches(both, d) == (matches(access, d) and matches(caller, d)), d
