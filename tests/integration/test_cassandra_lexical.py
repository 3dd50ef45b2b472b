"""The lexical index of a CassandraStore (`lexical=True`, `hoprag load --lexical`) on the real
node: the same BM25 ranking and scores as MemoryStore for the same documents, before and
after replacements, kept by stores and loads that do not ask for it, used by `hoprag query
--lexical-k`; and refused, with nothing changed, where it cannot be right."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hoprag import Document
from hoprag.datasets import load
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.lexical import tokenize
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.stores.memory import MemoryStore

WORDS = (
    "river castle mountain archive harbour lantern meadow glacier comet violin orchard "
    "canyon falcon marble pepper quartz saddle timber velvet willow"
).split()
QUERIES = ("river castle", "comet violin violin", "glacier harbour lantern", "Meadow, orchard!")


def _hoprag(contact: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hoprag.cli", *args, "--contact-points", contact],
                          capture_output=True, text=True, check=False, timeout=600)  # fmt: skip


def _write_texts(path: Path, n: int, seed: int) -> None:
    """`n` JSONL records whose texts draw 3-30 words from `WORDS` (seeded): terms repeat
    within a text and lengths differ, so BM25's counts and length norm both matter."""
    rng = np.random.default_rng(seed)
    with path.open("w") as f:
        for i in range(n):
            words = rng.choice(WORDS, size=int(rng.integers(3, 31)))
            rec = {"id": f"t{i:04d}", "title": f"text {i}", "text": " ".join(words),
                   "keywords": [str(words[0])]}  # fmt: skip
            f.write(json.dumps(rec) + "\n")


async def _same_ranking(cassandra: CassandraStore, memory: MemoryStore) -> None:
    """Every query's lexical top 10 (ids, BM25 scores, cosine scores) agrees on both stores."""
    q = HashEmbedding(32)("a query vector")
    on_c = await cassandra.aprepare(q)
    on_m = await memory.aprepare(q)
    for text in QUERIES:
        got = await on_c.alexical(text, k=10)
        want = await on_m.alexical(text, k=10)
        assert len(want) == 10
        assert [h.id for h in got] == [h.id for h in want], text
        assert [h.lexical for h in got] == pytest.approx([h.lexical for h in want], rel=1e-9)
        assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-5)


def _counters(session: Any, keyspace: str, table: str) -> tuple[int, int]:
    row = session.execute(
        f"SELECT documents, length FROM {keyspace}.hoprag_lexicon WHERE table_name = %s", (table,)
    ).one()
    return int(row.documents), int(row.length)


async def test_a_table_loaded_with_lexical_ranks_as_memorystore_and_keeps_its_index(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    f = tmp_path / "texts.jsonl"
    _write_texts(f, 400, seed=3)
    loaded = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(f), "--table",
                     "texts", "--embedding", "hash:32", "--keyspace", keyspace,
                     "--lexical")  # fmt: skip
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    docs = list(load("jsonl", path=str(f)))
    memory = MemoryStore(HashEmbedding(32))
    await memory.aadd(docs)

    # A store opened later without the option finds the index and keeps it up to date.
    later = CassandraStore(HashEmbedding(32), keyspace=keyspace, table="texts",
                           session=cassandra_session)  # fmt: skip
    await _same_ranking(later, memory)
    changes = [Document(d.id, "river river river castle", {"keywords": ["x"]}) for d in docs[:5]]
    changes += [
        Document("new1", "comet comet", {}),
        Document("new2", "violin glacier", {}),
        Document("new1", "comet violin harbour lantern meadow", {}),  # the last one counts
    ]
    await later.aadd(changes)
    await memory.aadd(changes)
    await _same_ranking(later, memory)
    now = {d.id: d.content for d in [*docs, *changes]}
    assert _counters(cassandra_session, keyspace, "texts") == (
        len(now),
        sum(len(tokenize(text)) for text in now.values()),
    )

    # `hoprag query --lexical-k`: the lexical matches are among the start nodes.
    top = [h.id for h in await (await memory.aprepare(None)).alexical("comet violin", k=2)]
    r = _hoprag(cassandra_contact_points, "query", "comet violin", "--table", "texts",
                "--edges", "keywords:keywords", "--keyspace", keyspace, "--embedding",
                "hash:32", "--start-k", "1", "--lexical-k", "2", "--select-k", "5",
                "--max-depth", "1", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    starts = {n["id"] for n in out["nodes"] if n["depth"] == 0}
    assert set(top) <= starts
    assert out["stats"]["hops"][0]["queries"]["lexical"] == 1


async def test_lexical_is_refused_where_it_cannot_be_right_and_nothing_changes(
    tmp_path: Path, cassandra_contact_points: str, cassandra_session: Any, keyspace: str
) -> None:
    emb = HashEmbedding(32)
    plain = CassandraStore(emb, keyspace=keyspace, table="plain", session=cassandra_session)
    await plain.aadd([Document("a", "river castle", {}), Document("b", "comet", {})])
    asked = CassandraStore(emb, keyspace=keyspace, table="plain", session=cassandra_session,
                           lexical=True)  # fmt: skip
    with pytest.raises(InvalidInputError, match="written without a lexical index") as caught:
        await asked.asetup()
    assert caught.value.argument == "lexical"
    columns = {
        r.column_name
        for r in cassandra_session.execute(
            "SELECT column_name FROM system_schema.columns WHERE keyspace_name = %s "
            "AND table_name = 'plain'",
            (keyspace,),
        )
    }
    assert "lexicon" not in columns and "lexicon_length" not in columns
    with pytest.raises(InvalidInputError, match="lexical=True") as caught:
        await (await plain.aprepare(None)).alexical("river", k=3)
    assert caught.value.argument == "lexical_k"

    # The same refusal from `hoprag load --lexical` on that table: one line, nothing recorded.
    f = tmp_path / "texts.jsonl"
    _write_texts(f, 20, seed=5)
    r = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(f), "--table",
                "plain", "--embedding", "hash:32", "--keyspace", keyspace, "--lexical")  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr[-3000:]
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("hoprag: error: ") and "without a lexical index" in line
    recorded = cassandra_session.execute(
        f"SELECT table_name FROM {keyspace}.hoprag_catalog WHERE table_name = 'plain'"
    ).one()
    assert recorded is None

    # An empty table made without it gets it.
    await CassandraStore(emb, keyspace=keyspace, table="empty", session=cassandra_session).asetup()
    given = CassandraStore(emb, keyspace=keyspace, table="empty", session=cassandra_session,
                           lexical=True)  # fmt: skip
    await given.aadd([Document("a", "river castle", {}), Document("b", "comet river", {})])
    hits = await (await given.aprepare(None)).alexical("castle", k=3)
    assert [h.id for h in hits] == ["a"]

    with pytest.raises(InvalidInputError, match="mode='hoprag'") as caught:
        CassandraStore(emb, keyspace=keyspace, table="cassio", session=cassandra_session,
                       mode="cassio", lexical=True)  # fmt: skip
    assert caught.value.argument == "lexical"
