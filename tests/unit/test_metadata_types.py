"""The metadata type model (`hoprag.validation.check_metadata`), shared by every store, by
filters and by edges: what is kept, what is converted, what is refused and how it is named."""

from __future__ import annotations

import enum
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hoprag import Document, MetadataEdge
from hoprag.edges import value_key
from hoprag.errors import InvalidInputError
from hoprag.filters import compile_filter
from hoprag.stores.cassandra.tokens import canonical_value, metadata_tokens, token
from hoprag.validation import (
    MAX_DEPTH,
    MAX_FIELD_BYTES,
    MAX_INT,
    MIN_INT,
    check_documents,
    check_field,
    check_metadata,
    check_vector,
)


class Colour(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(MIN_INT, MAX_INT)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True), json_values))
def test_json_metadata_is_kept_exactly_and_round_trips_through_json_text(
    metadata: dict[str, Any],
) -> None:
    checked = check_metadata(metadata)
    assert checked == metadata
    assert json.loads(json.dumps(checked)) == checked  # what CassandraStore keeps


def test_metadata_is_copied_sharing_no_container() -> None:
    given_md = {"tags": ["a"], "loc": {"city": "Oslo", "near": [["x"]]}}
    checked = check_metadata(given_md)
    assert checked == given_md
    assert checked is not given_md and checked["tags"] is not given_md["tags"]
    assert checked["loc"]["near"][0] is not given_md["loc"]["near"][0]


def test_conversions_give_plain_python_values() -> None:
    checked = check_metadata(
        {
            "i": np.int64(-5),
            "u": np.uint64(2**63 - 1),
            "b": np.bool_(False),
            "h": np.float16(0.5),
            "f": np.float64(0.25),
            "s": np.str_("x"),
            "e": Colour.RED,
            "l": Level.HIGH,
            "t": (1, (2,)),
        }
    )
    assert checked == {
        "i": -5, "u": 2**63 - 1, "b": False, "h": 0.5, "f": 0.25, "s": "x", "e": "red",
        "l": 3, "t": [1, [2]],
    }  # fmt: skip
    types = [int, int, bool, float, float, str, str, int, list]
    assert [type(v) for v in checked.values()] == types


@pytest.mark.parametrize("n", [MIN_INT, MAX_INT, 0, 2**53 + 1])
def test_ints_in_the_64_bit_range_are_kept(n: int) -> None:
    assert check_metadata({"n": n}) == {"n": n}


@pytest.mark.parametrize("n", [MIN_INT - 1, MAX_INT + 1, 10**400, np.uint64(2**64 - 1)])
def test_ints_beyond_64_bits_are_refused(n: Any) -> None:
    with pytest.raises(InvalidInputError, match=r"metadata field 'n' of document 'x'.*64-bit"):
        check_documents([Document("x", "", {"n": n})])


def test_a_5001_digit_int_is_named_without_printing_it() -> None:
    with pytest.raises(InvalidInputError, match="an int of about 5001 digits") as caught:
        check_metadata({"n": 10**5000}, doc="document 'x'")
    assert caught.value.argument == "metadata field 'n' of document 'x'"
    assert caught.value.value == 10**5000


def test_nesting_is_bounded() -> None:
    assert check_metadata({"deep": _nested(MAX_DEPTH - 1)})
    with pytest.raises(InvalidInputError, match=f"nested at most {MAX_DEPTH} levels"):
        check_metadata({"deep": _nested(MAX_DEPTH)})
    with pytest.raises(InvalidInputError, match="nested at most"):
        check_metadata({"deep": _nested(3000)})  # no RecursionError


@pytest.mark.parametrize(
    "key", ["a.b", "$id", "$x", "a=b", "", "tab\there", "new\nline", "bad\ud800"]
)
def test_keys_that_would_collide_or_cannot_be_addressed_are_refused(key: str) -> None:
    with pytest.raises(InvalidInputError, match="a key of metadata"):
        check_metadata({key: 1})
    with pytest.raises(InvalidInputError, match="a key of metadata field 'outer'"):
        check_metadata({"outer": {key: 1}})


def test_keys_may_hold_other_punctuation_and_unicode() -> None:
    md = {"a-b c": 1, "ÿ$": {"日本": [1]}, "a#b": 2, "x\x7f": 3}
    assert check_metadata(md) == md


def test_field_paths_are_bounded_in_bytes() -> None:
    assert check_metadata({"a" * MAX_FIELD_BYTES: 1})
    with pytest.raises(InvalidInputError, match=f"{MAX_FIELD_BYTES} bytes"):
        check_metadata({"é" * (MAX_FIELD_BYTES // 2 + 1): 1})  # 2 bytes each in UTF-8
    with pytest.raises(InvalidInputError, match=f"{MAX_FIELD_BYTES} bytes"):
        check_metadata({"a" * 200: {"b" * 60: 1}})


def test_a_dotted_key_and_a_nested_dict_cannot_share_a_token() -> None:
    nested = metadata_tokens(check_metadata({"a": {"b": 1}}))
    assert token("a.b", 1) in nested
    with pytest.raises(InvalidInputError, match="nest a dict instead"):
        check_metadata({"a.b": 1})


def test_dollar_id_filter_is_refused_with_a_hint_to_read_by_id() -> None:
    with pytest.raises(InvalidInputError, match=r"'\$id'.*get\(ids\)") as caught:
        compile_filter({"$id": "B"})
    assert caught.value.argument == "a filter field name"
    with pytest.raises(InvalidInputError, match="reserved"):
        check_field("loc.$where")


def test_filter_values_follow_the_model() -> None:
    ((c,),) = compile_filter({"n": np.int64(3)}).branches
    assert c.value == 3 and type(c.value) is int
    ((c,),) = compile_filter({"tags": (np.str_("a"), np.float32(1.5))}).branches
    assert c.value == ("a", 1.5) and type(c.value[0]) is str
    for bad in (2**64, float("inf"), "x\udc00", {1, 2}, b"x"):
        with pytest.raises(InvalidInputError, match=r"filter\['f'\]"):
            compile_filter({"f": bad})


def test_edge_values_follow_the_model() -> None:
    assert MetadataEdge("n", np.int64(2**60 + 1)) != MetadataEdge("n", 2**60)
    assert MetadataEdge("n", np.int64(7)) == MetadataEdge("n", 7)
    assert type(MetadataEdge("n", np.int64(7)).value) is int
    assert MetadataEdge("pair", (1, np.float64(2.0))).value == (1, 2.0)
    for bad in (float("nan"), 2**63, {1}, "x\ud800", object()):
        with pytest.raises(InvalidInputError, match="MetadataEdge"):
            MetadataEdge("n", bad)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (2**60, 2**60 + 1, False),
        (2**60, float(2**60), True),
        (2**53 + 1, float(2**53), False),
        (1, 1.0, True),
        (True, 1, False),
        (False, 0.0, False),
        ([1.0, 2], [1, 2.0], True),
        ({"a": [1.0]}, {"a": [1]}, True),
        (-0.0, 0, True),
        ("1", 1, False),
        (None, "null", False),
    ],
)
def test_memory_and_cassandra_equality_agree(a: Any, b: Any, equal: bool) -> None:
    assert (value_key(a) == value_key(b)) is equal
    assert (canonical_value(a) == canonical_value(b)) is equal


@given(json_values, json_values)
def test_value_key_and_tokens_agree_on_any_two_values(a: Any, b: Any) -> None:
    assert (value_key(a) == value_key(b)) == (canonical_value(a) == canonical_value(b))


@pytest.mark.parametrize("vec", [[1e-320] * 16, [1e-10] * 16, [1e30] * 16, [1e308] * 16])
def test_vectors_whose_norm_underflows_or_overflows_are_refused(vec: list[float]) -> None:
    with pytest.raises(InvalidInputError, match=r"norm|float32") as caught:
        check_vector(vec, what="query embedding")
    assert caught.value.argument == "query embedding"


@pytest.mark.parametrize("scale", [1e-9, 1e9 / 4, 1.0])
def test_vectors_within_the_norm_bounds_are_kept(scale: float) -> None:
    vec = [scale] * 16
    assert check_vector(vec, what="v").tolist() == vec


def test_check_vector_returns_a_copy() -> None:
    buf = np.array([1.0, 2.0])
    out = check_vector(buf, what="v")
    buf[0] = 9.0
    assert out.tolist() == [1.0, 2.0]
