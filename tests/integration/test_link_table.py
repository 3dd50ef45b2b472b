"""Edges from plain text for a table already loaded: `hoprag link --table` as a user runs it
(the mentions written in place, followed by queries both ways, content and vectors untouched,
a second run refused because the documents hold the field, and with --overwrite nothing to
update), and `CassandraStore.aupdate_metadata` under it (declared fields follow the new
metadata; an id not in the table writes nothing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hoprag import Document
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores.cassandra.store import CassandraStore

RECORDS = [
    {"id": "quokka", "title": "Quokka", "text": "A marsupial of Rottnest Island."},
    {"id": "rottnest", "title": "Rottnest Island", "text": "An island off Perth."},
    {"id": "perth", "title": "Perth", "text": "Capital of Western Australia."},
    {"id": "wa", "title": "Western Australia", "text": "A state."},
]


def _hoprag(contact: str, keyspace: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hoprag.cli", *args, "--contact-points", contact,
                           "--keyspace", keyspace],
                          capture_output=True, text=True, check=False, timeout=600)  # fmt: skip


async def test_link_table_writes_mentions_in_place_that_queries_follow(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    f = tmp_path / "places.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    load = _hoprag(cassandra_contact_points, keyspace, "load", "jsonl", "--path", str(f),
                   "--table", "places", "--embedding", "hash:32", "--lexical")  # fmt: skip
    assert load.returncode == 0, load.stderr
    store = CassandraStore(HashEmbedding(32), keyspace=keyspace, table="places",
                           session=cassandra_session)  # fmt: skip
    ids = [r["id"] for r in RECORDS]
    before = await (await store.aprepare(None)).aget(ids)

    report = tmp_path / "report.json"
    r = _hoprag(cassandra_contact_points, keyspace, "link", "--table", "places",
                "--json", str(report))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"linked {keyspace}.places: 3 of 4 documents linked, 3 links" in r.stdout
    assert "updated 4 of 4 documents" in r.stdout  # `wa` gets its empty list
    assert json.loads(report.read_text())["updated"] == 4

    after = await (await store.aprepare(None)).aget(ids)
    mentions = {h.id: h.document.metadata["mentions"] for h in after}
    assert mentions == {"quokka": ["rottnest"], "rottnest": ["perth"], "perth": ["wa"], "wa": []}
    for old, new in zip(before, after, strict=True):
        assert new.document.content == old.document.content
        assert new.document.embedding == old.document.embedding
        assert new.document.metadata == {**old.document.metadata, "mentions": mentions[old.id]}

    def reached(edges: str, root: str) -> dict[str, int]:
        q = _hoprag(cassandra_contact_points, keyspace, "query", "island", "--table", "places",
                    "--edges", edges, "--root", root, "--start-k", "0", "--select-k", "10",
                    "--max-depth", "3", "--json")  # fmt: skip
        assert q.returncode == 0, q.stderr
        return {n["id"]: n["depth"] for n in json.loads(q.stdout)["nodes"]}

    assert reached("mentions:$id", "quokka") == {"quokka": 0, "rottnest": 1, "perth": 2, "wa": 3}
    assert reached("$id:mentions", "perth") == {"perth": 0, "rottnest": 1, "quokka": 2}
    # The lexical index is untouched: the content did not change.
    hits = await (await store.aprepare(None)).alexical("island", k=5)
    assert {h.id for h in hits} == {"quokka", "rottnest"}

    # The documents now hold `mentions`: a second run is refused naming it, unless asked.
    refused = _hoprag(cassandra_contact_points, keyspace, "link", "--table", "places")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "field must be a field no document of the table holds, got 'mentions'" in (
        refused.stderr
    )
    assert "4 of 4 documents hold 'mentions'" in refused.stderr and "--overwrite" in refused.stderr
    again = _hoprag(cassandra_contact_points, keyspace, "link", "--table", "places",
                    "--overwrite")  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "updated 0 of 4 documents" in again.stdout


async def test_update_metadata_keeps_declared_fields_right_and_refuses_unknown_ids(
    cassandra_session: Any, keyspace: str
) -> None:
    emb = HashEmbedding(16)
    store = CassandraStore(emb, keyspace=keyspace, table="films", session=cassandra_session,
                           fields={"year": "number", "cast": "entity"})  # fmt: skip
    await store.aadd([Document("a", "first", {"year": 1990, "cast": ["Ann Lee"]}),
                      Document("b", "second", {"year": 2000})])  # fmt: skip
    await store.aupdate_metadata([Document("a", "ignored", {"year": 2010, "cast": ["Bo Kim"]})])
    q = await store.aprepare(None, {"year": {"$gte": 2005}})
    assert [h.id for h in await q.afiltered(limit=10)] == ["a"]
    (got,) = await (await store.aprepare(None)).aget(["a"])
    assert got.document.content == "first"  # only the metadata is replaced
    assert [c.value for c in await store.aresolve("bo kim", ["cast"])] == ["Bo Kim"]

    with pytest.raises(InvalidInputError, match="ids of documents in") as caught:
        await store.aupdate_metadata([Document("b", "", {"year": 1}), Document("zz", "", {})])
    assert caught.value.argument == "documents"
    (b,) = await (await store.aprepare(None)).aget(["b"])
    assert b.document.metadata == {"year": 2000}  # nothing was written
    assert await (await store.aprepare(None)).aget(["zz"]) == []


def test_a_missing_table_is_a_mistake_in_the_command_for_link_and_the_store(
    cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    """A table that is not there is named back with exit status 2 (the README's rule for an
    unknown table), and the store refuses it with InvalidInputError naming `table`."""
    r = _hoprag(cassandra_contact_points, keyspace, "link", "--table", "no_such_table")
    assert r.returncode == 2, r.stderr
    assert f"{keyspace}.no_such_table does not exist" in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(InvalidInputError, match=r"table='no_such_table'.*does not exist"):
        CassandraStore(HashEmbedding(8), keyspace=keyspace, table="no_such_table",
                       session=cassandra_session, create_schema=False)  # fmt: skip
