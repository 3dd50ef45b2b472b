"""The core pieces of declared fields and entity resolution, without a store: ISO dates as
instants, the one normalisation, the field-name and declaration checks, column naming."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from hoprag.dates import iso_instant
from hoprag.errors import InvalidInputError
from hoprag.resolve import check_resolve, normalize, words
from hoprag.stores.cassandra.config import CassandraConfig
from hoprag.stores.cassandra.fields import (
    check_declaration,
    column_for,
    number_value,
    values_table,
)


@pytest.mark.parametrize(
    ("text", "micros"),
    [
        ("1970-01-01", 0),
        ("1970-01-02", 86_400_000_000),
        ("1969-12-31T23:59:59.999999Z", -1),
        ("2000-01-01T01:00+01:00", 946_684_800_000_000),
        ("2000-01-01 00:00:00", 946_684_800_000_000),
        ("2000-01-01T00:00:00.5", 946_684_800_500_000),
        ("0001-01-01", -62_135_596_800_000_000),
    ],
)
def test_iso_dates_become_exact_utc_microseconds(text: str, micros: int) -> None:
    assert iso_instant(text) == micros


@pytest.mark.parametrize(
    "text",
    ["2023-02-30", "1994", "94-07-06", "1994-7-6", "yesterday", "", "2000-01-01T25:00", 1994,
     None, "2000-01-01T00:00+24:00", "1994-07-06x"],
)  # fmt: skip
def test_anything_but_an_iso_date_is_no_instant(text: Any) -> None:
    assert iso_instant(text) is None


@pytest.mark.parametrize(
    ("text", "norm", "found"),
    [
        ("Jáne  FÖNDA", "jane fonda", {"jane", "fonda"}),
        ("  Straße ", "strasse", {"strasse"}),
        ("Fonda-Smith, Jane", "fonda-smith, jane", {"fonda", "smith", "jane"}),
        ("ﬁlm Ⅻ", "film xii", {"film", "xii"}),
        ("Łódź", "łodz", {"łodz"}),
        ("O'Brien; DROP", "o'brien; drop", {"o", "brien", "drop"}),
    ],
)
def test_one_normalisation_folds_case_accents_compatibility_and_spaces(
    text: str, norm: str, found: set[str]
) -> None:
    assert normalize(text) == norm
    assert words(norm) == found


def test_resolve_requests_keep_fields_once_in_order() -> None:
    req = check_resolve("Fonda", ["cast", "director", "cast"], 5)
    assert (req.norm, req.words, req.limit) == ("fonda", {"fonda"}, 5)
    assert req.fields == ("cast", "director")
    with pytest.raises(InvalidInputError, match="at most 16 distinct words"):
        check_resolve(" ".join(f"w{i}" for i in range(17)), ["cast"], 5)
    with pytest.raises(InvalidInputError, match="normalised form has at most 512 bytes"):
        check_resolve("\ufdfa" * 40, ["cast"], 5)  # each expands to 18 characters


def test_numbers_are_exact_decimals_and_bools_are_not_numbers() -> None:
    assert number_value(2**60 + 1) == Decimal(2**60 + 1)
    exact = Decimal("0.1000000000000000055511151231257827021181583404541015625")
    assert number_value(0.1) == exact != Decimal("0.1")
    assert number_value(True) is None and number_value("1") is None and number_value(None) is None


def test_column_names_are_prefixed_lower_case_and_dots_doubled() -> None:
    assert column_for("Year", "number") == "n_year"
    assert column_for("ratings.imdb", "date") == "d_ratings__imdb"
    assert column_for("cast", "entity") is None


def test_values_table_names_stay_within_48_characters() -> None:
    assert values_table("films") == "films_values"
    long = values_table("t" * 48)
    assert len(long) == 48 and long.endswith("_values") and long != values_table("t" * 47 + "u")


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"a'b": "number"}, "plain field name"),
        ({"a;DROP TABLE x": "number"}, "plain field name"),
        ({"%s": "date"}, "plain field name"),
        ({"_x": "number"}, "plain field name"),
        ({"a.": "number"}, "plain field name"),
        ({"x" * 47: "number"}, "at most 48 characters"),
        ({"year": "integer"}, "'number', 'date' or 'entity'"),
        ({"year": None}, "'number', 'date' or 'entity'"),
        ({"Year": "number", "year": "number"}, "share the column"),
        ({"a.b": "number", "a__b": "number"}, "share the column"),
    ],
)
def test_bad_declarations_are_invalid_input(fields: dict[Any, Any], says: str) -> None:
    with pytest.raises(InvalidInputError, match=says):
        check_declaration(fields)
    with pytest.raises(InvalidInputError, match=says):
        CassandraConfig(keyspace="k", table="t", fields=fields)


def test_a_declaration_must_be_a_mapping_and_needs_the_hoprag_layout() -> None:
    with pytest.raises(InvalidInputError, match="a mapping of field name to kind"):
        CassandraConfig(keyspace="k", table="t", fields=["year"])
    with pytest.raises(InvalidInputError, match="mode='hoprag'"):
        CassandraConfig(keyspace="k", table="t", mode="cassio", fields={"year": "number"})
    ok = CassandraConfig(keyspace="k", table="t", fields={"year": "number", "a.b": "entity"})
    assert ok.field_kinds == {"year": "number", "a.b": "entity"}
    assert hash(ok) == hash(CassandraConfig(keyspace="k", table="t", fields=dict(ok.fields)))
