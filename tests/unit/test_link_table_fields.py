"""`alink_table` (`hoprag link --table`) against a table whose documents already hold the
field: refused naming it and how many hold it, nothing written, unless `overwrite` is given.
A store stand-in serves the documents: no Cassandra needed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from hoprag import Document
from hoprag.errors import InvalidInputError
from hoprag.stores.cassandra.link_table import alink_table


class _Table:
    """What `alink_table` uses of a CassandraStore: pages of documents, metadata updates."""

    def __init__(self, docs: list[Document]) -> None:
        self.docs = docs
        self.updated: list[Document] = []

    async def adocuments(self) -> AsyncIterator[list[Document]]:
        yield list(self.docs)

    async def aupdate_metadata(
        self, docs: list[Document], progress: Callable[[int, int], None] | None = None
    ) -> None:
        self.updated.extend(docs)


def _table() -> _Table:
    return _Table([
        Document("a", "see Beta Street", {"title": "Alpha Road", "mentions": ["kept"]}),
        Document("b", "see Alpha Road", {"title": "Beta Street"}),
        Document("c", "nothing", {"title": "Gamma Lane", "names": "mine"}),
    ])  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "argument", "held"),
    [({}, "field", "'mentions'"), ({"field": "names"}, "field", "'names'"),
     ({"field": "links", "phrases": "names"}, "phrases", "'names'")],
)  # fmt: skip
async def test_linking_a_table_refuses_a_field_its_documents_hold_and_writes_nothing(
    kwargs: dict[str, Any], argument: str, held: str
) -> None:
    table = _table()
    with pytest.raises(InvalidInputError) as e:
        await alink_table(table, **kwargs)
    assert e.value.argument == argument
    assert f"1 of 3 documents hold {held}" in str(e.value) and "overwrite" in str(e.value)
    assert table.updated == []


async def test_linking_a_table_with_overwrite_replaces_the_field_it_holds() -> None:
    table = _table()
    done = await alink_table(table, overwrite=True)
    got = {d.id: d.metadata["mentions"] for d in table.updated}
    assert got == {"a": ["b"], "b": ["a"], "c": []} and done.updated == 3
