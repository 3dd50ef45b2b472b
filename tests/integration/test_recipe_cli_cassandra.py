"""The multi-hop recipe from the command line, as a user runs it against the node: `hoprag
link` on a JSONL file (mentions and phrases), `hoprag load --lexical`, then `hoprag query
--recipe multihop` returns the ids (and order) the Python recipe
(`hoprag.recipes.MULTIHOP.aretrieve`: its traversal, then its ranking) returns on the same
table, with and without the Beam flags overriding its settings."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from typing import Any

import pytest

from hoprag.embeddings import HashEmbedding
from hoprag.recipes import MULTIHOP
from hoprag.stores.cassandra.store import CassandraStore

PLACES = ["Rottnest Island", "Perth", "Fremantle", "Swan River", "Kings Park", "Cottesloe"]


def _records() -> list[dict[str, Any]]:
    """Thirty pages: six places, each named by a few people's pages; people who share a
    Capitalised Society name it in their text."""
    recs = [
        {"id": f"place{i}", "title": p, "text": f"{p} is a place in Western Australia."}
        for i, p in enumerate(PLACES)
    ]
    for i in range(24):
        place = PLACES[i % len(PLACES)]
        society = f"Society Number{i % 8}"
        text = f"Person {i} was born in {place} and joined the {society}."
        recs.append({"id": f"person{i}", "title": f"Person {i}", "text": text})
    return recs


def _hoprag(contact: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    extra = ["--contact-points", contact] if contact else []
    return subprocess.run(
        [sys.executable, "-m", "hoprag.cli", *args, *extra],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def linked_table(
    tmp_path_factory: pytest.TempPathFactory, cassandra_contact_points: str, cassandra_session: Any
) -> tuple[str, str]:
    from keyspaces import new_keyspace

    d = tmp_path_factory.mktemp("recipe")
    raw, linked = d / "pages.jsonl", d / "linked.jsonl"
    raw.write_text("".join(json.dumps(r) + "\n" for r in _records()))
    link = _hoprag(None, "link", "--path", str(raw), "--out", str(linked), "--phrases",
                   "phrases", "--max-share", "0.5")  # fmt: skip
    assert link.returncode == 0, link.stderr
    rows = [json.loads(line) for line in linked.read_text().splitlines()]
    assert any(r.get("mentions") for r in rows) and any(r.get("phrases") for r in rows)
    keyspace = new_keyspace(cassandra_session)
    load = _hoprag(cassandra_contact_points, "load", "jsonl", "--path", str(linked), "--table",
                   "pages", "--embedding", "hash:32", "--lexical",
                   "--keyspace", keyspace)  # fmt: skip
    assert load.returncode == 0, load.stderr
    return keyspace, "pages"


async def _python_ids(
    session: Any, keyspace: str, question: str, roots: int | None = None, **overrides: Any
) -> list[str]:
    """The Python recipe's ids: its edges, its Beam with `overrides`, and the roots the
    question names (`roots` of them: the recipe's 3 by default)."""
    store = CassandraStore(HashEmbedding(32), keyspace=keyspace, table="pages", session=session,
                           lexical=True)  # fmt: skip
    recipe = MULTIHOP if roots is None else dataclasses.replace(MULTIHOP, question_roots=roots)
    nodes = await recipe.aretrieve(question, store=store, settings=overrides)
    return [n.id for n in nodes]


@pytest.mark.parametrize(
    ("flags", "overrides"),
    [
        ([], {}),
        (["--select-k", "8", "--decay", "0.2", "--lexical-weight", "0.6", "--edge-weight",
          "mentions=0.4", "--edge-weight", "phrases=0.9", "--lexical-k", "3"],
         {"select_k": 8, "decay": 0.2, "lexical_weight": 0.6, "lexical_k": 3,
          "edge_weights": {"mentions": 0.4, "phrases": 0.9}}),
    ],
    ids=["recipe", "recipe-with-flags"],
)  # fmt: skip
@pytest.mark.parametrize("question", ["Who was born in Perth?", "Society Number3 members"])
async def test_query_recipe_multihop_returns_the_python_recipes_ids(
    linked_table: tuple[str, str],
    cassandra_contact_points: str,
    cassandra_session: Any,
    flags: list[str],
    overrides: dict[str, Any],
    question: str,
) -> None:
    keyspace, table = linked_table
    q = _hoprag(cassandra_contact_points, "query", question, "--table", table, "--recipe",
                "multihop", "--json", "--keyspace", keyspace, *flags)  # fmt: skip
    assert q.returncode == 0, q.stderr
    got = [n["id"] for n in json.loads(q.stdout)["nodes"]]
    want = await _python_ids(cassandra_session, keyspace, question, **overrides)
    assert got == want and len(got) == overrides.get("select_k", 5)
    ranking = json.loads(q.stdout)["ranking"]  # the traversal's whole pool, then the best k
    assert ranking["recipe"] == "multihop" and ranking["kept"] == len(got)
    assert MULTIHOP.requery is not None
    most = MULTIHOP.requery.starts * MULTIHOP.requery.per_start  # the re-query's finds
    assert 0 <= ranking["searched"] <= most
    assert len(got) <= ranking["candidates"] <= MULTIHOP.pool_size(len(got)) + most
    if overrides:  # 8 of at most 6 starts: the graph gave the rest
        assert any(n["depth"] == 1 for n in json.loads(q.stdout)["nodes"])
    named = "place1" if "Perth" in question else "none"
    assert f"question roots (documents whose titles the question names): {named}" in q.stderr


async def test_question_roots_start_from_the_pages_the_question_names_and_can_be_turned_off(
    linked_table: tuple[str, str], cassandra_contact_points: str, cassandra_session: Any
) -> None:
    keyspace, table = linked_table
    question = "Is Cottesloe nearer Fremantle, Perth or Kings Park?"  # places 5, 2, 1, 4
    for roots, named in ((None, "place5, place2, place1"), (1, "place5"), (0, None)):
        flags = [] if roots is None else ["--question-roots", str(roots)]
        q = _hoprag(cassandra_contact_points, "query", question, "--table", table, "--recipe",
                    "multihop", "--json", "--keyspace", keyspace, *flags)  # fmt: skip
        assert q.returncode == 0, q.stderr
        nodes = json.loads(q.stdout)["nodes"]
        want = await _python_ids(cassandra_session, keyspace, question, roots=roots)
        assert [n["id"] for n in nodes] == want
        said = "question roots (documents whose titles the question names): "
        assert (f"{said}{named}\n" in q.stderr) if named else said not in q.stderr


def test_explain_says_how_many_candidates_the_recipe_ranked(
    linked_table: tuple[str, str], cassandra_contact_points: str
) -> None:
    keyspace, table = linked_table
    q = _hoprag(cassandra_contact_points, "query", "Who was born in Perth?", "--table", table,
                "--recipe", "multihop", "--explain", "--keyspace", keyspace)  # fmt: skip
    assert q.returncode == 0, q.stderr
    line = next(x for x in q.stdout.splitlines() if x.startswith("ranking: "))
    shown = q.stdout.split("\n\n")[0].splitlines()[1:]  # the table's rows
    said = re.fullmatch(r"ranking: the best (\d+) of (\d+) candidates, the traversal's (\d+) "
                        r"and the re-query's (\d+) \(--recipe multihop, hoprag.reranking\)",
                        line)  # fmt: skip
    assert said is not None, line
    kept, candidates, traversal, searched = map(int, said.groups())
    assert kept == len(shown) and candidates == traversal + searched >= kept


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--recipe", "multihop", "--strategy", "mmr"], "--recipe multihop is a beam traversal"),
        (["--recipe", "multihop", "--edge-weight", "mentions"], "expected FIELD=W"),
        (["--recipe", "multihop", "--decay", "2"], "decay"),
        (["--decay", "0.5", "--edges", "a:b"], "--decay applies to --strategy beam"),
        ([], "needs --edges"),
        (["--recipe", "nope"], "invalid choice: 'nope'"),
        (["--recipe", "multihop", "--question-roots", "-1"], "--question-roots must be 0 or"),
        (["--recipe", "multihop", "--stream"], "ranks its candidates after the traversal"),
    ],
)
def test_bad_recipe_flags_exit_2_before_connecting(flags: list[str], says: str) -> None:
    q = _hoprag("127.0.0.1:1", "query", "q", "--table", "pages", *flags)
    assert q.returncode == 2 and says in q.stderr, q.stderr
