"""The values catalogue of a hoprag table (`<table>_values`): one row per (entity field,
string value) with the value's JSON, its normalised form `norm` and its normalised `words`
(`hoprag.resolve`), an SAI index on `norm` (exact matches: `norm = ?`), on `words` (token
matches: `words CONTAINS ?`, one clause per word of the text, ANDed) and on `field` (each read
carries `AND field = ?`, so only the fields asked for are read and counted against
`resolve.MAX_CANDIDATES`, as MemoryStore counts them).

The name can be taken by another table (a user's `films_values`, or a hoprag documents table
`x_values`, which is the catalogue name of table `x`): `SHAPE` is the catalogue's columns, and
a store refuses a table of any other shape under that name (`declare.refuse_foreign_catalogue`)
before it creates or writes anything.

The number of documents carrying a value is not stored: `aresolve` counts them when it needs
them, with the main table's `tokens CONTAINS ?` (the same token an equality filter uses). So
the catalogue only grows: a value no document carries any more counts 0 and is left out.
Rows are written with `UPDATE ... SET words = words + ?` (no collection tombstone), so
writing a value again is free of garbage. Every value is a bound parameter."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from hoprag.resolve import catalogue_entry
from hoprag.stores.cassandra.fields import values_table

_SAI = "USING 'StorageAttachedIndex'"
_INDEXED = ("norm", "words", "field")
"""The catalogue's SAI-indexed columns (`<catalogue>_<column>_idx`)."""

SHAPE: dict[str, tuple[str, int, str]] = {
    "field": ("partition_key", 0, "text"),
    "value": ("partition_key", 1, "text"),
    "norm": ("regular", -1, "text"),
    "words": ("regular", -1, "set<text>"),
}
"""The catalogue's columns as `system_schema.columns` describes them: (kind, position, type)."""


def value_json(value: str) -> str:
    """The catalogue key of a string value: its JSON."""
    return json.dumps(value, ensure_ascii=False)


class ValuesCatalogue:
    """Query texts of one table's values catalogue (names validated by the layout)."""

    def __init__(self, keyspace: str, table: str) -> None:
        self.keyspace = keyspace
        self.table = table
        self.name = values_table(table)
        self.fq = f"{keyspace}.{self.name}"
        self.main_fq = f"{keyspace}.{table}"

    def create_statements(self) -> list[str]:
        """The table and its three SAI indexes, when missing."""
        return [
            f"CREATE TABLE IF NOT EXISTS {self.fq} (field text, value text, norm text, "
            "words set<text>, PRIMARY KEY ((field, value)))",
            *(
                f"CREATE CUSTOM INDEX IF NOT EXISTS {self.name}_{column}_idx ON {self.fq} "
                f"({column}) {_SAI}"
                for column in _INDEXED
            ),
        ]

    def index_names(self) -> list[str]:
        """The SAI indexes `create_statements` makes."""
        return [f"{self.name}_{column}_idx" for column in _INDEXED]

    def upsert_query(self) -> str:
        """Add one value (bound: norm, words, field, value JSON)."""
        return f"UPDATE {self.fq} SET norm = ?, words = words + ? WHERE field = ? AND value = ?"

    def upsert_rows(self, entries: Iterable[tuple[str, str]]) -> list[tuple[Any, ...]]:
        """The `upsert_query` values of (field, value) entries; values that cannot be
        resolved (`resolve.catalogue_entry`) are left out."""
        rows: list[tuple[Any, ...]] = []
        for field, value in sorted(entries):
            entry = catalogue_entry(value)
            if entry is not None:
                norm, found = entry
                rows.append((norm, set(found), field, value_json(value)))
        return rows

    def exact_query(self) -> str:
        """Values of one field whose normalised form equals the bound one (bound: norm,
        field, limit)."""
        return (
            f"SELECT field, value, norm, words FROM {self.fq} WHERE norm = ? AND field = ? LIMIT ?"
        )

    def token_query(self, n_words: int) -> str:
        """Values of one field holding each of `n_words` bound words (bound: the words,
        field, limit)."""
        where = " AND ".join(["words CONTAINS ?"] * n_words)
        return (
            f"SELECT field, value, norm, words FROM {self.fq} WHERE {where} AND field = ? LIMIT ?"
        )

    def count_query(self) -> str:
        """The number of documents of the main table with the bound token."""
        return f"SELECT COUNT(*) FROM {self.main_fq} WHERE tokens CONTAINS ?"
