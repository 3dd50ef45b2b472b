"""`scripts/demo --films` as a user runs it (the shell script, which sets up the venv and calls
scripts/demo.py), against the test node in a keyspace of its own, with `--embedding hash`: the
films loaded with their declared fields, five questions through the films tool, the follow-up
for an ambiguous name, and the tool's results all correct. Correctness is checked here again
with tests/films_sql.py, independently of the demo's own SQL; a second run reuses the table."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from films_sql import films_sharing_a_director_with, films_where
from hoprag.datasets.films import movies_db_path

REPO = Path(__file__).resolve().parents[2]
DB = movies_db_path()


def _demo(command: list[str], contact: str, keyspace: str, out: Path) -> str:
    env = {**os.environ, "HOPRAG_CASSANDRA": contact, "HOPRAG_SETUP_MINILM": "0",
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    r = subprocess.run(
        [*command, "--films", "--embedding", "hash", "--keyspace", keyspace, "--json", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
        timeout=1500, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    return r.stdout


def _expected(key: str) -> set[str]:
    """The films that answer each demo question, by tests/films_sql.py."""
    if key == "fonda-westerns":
        anchors, shared = films_sharing_a_director_with(DB, "Henry Fonda")
        return (anchors | shared) & set(films_where(DB, genre="Western", meter_at_least=60))
    if key == "italian-dramas":
        return set(films_where(DB, country="Italy", genre="Drama", year_to=1979,
                               meter_at_least=60))  # fmt: skip
    if key == "fonda-comedies":
        return set(films_where(DB, cast="Jane Fonda", genre="Comedy", meter_at_least=60))
    if key == "scorsese-crime":
        return set(films_where(DB, director="Martin Scorsese", genre="Crime"))
    assert key == "latest-british-war"
    return set(films_where(DB, country="United Kingdom", genre="War"))


def test_the_films_demo_answers_five_questions_with_only_correct_films(
    cassandra_contact_points: str, keyspace: str, tmp_path: Path
) -> None:
    first = tmp_path / "first.json"
    out = _demo([str(REPO / "scripts" / "demo")], cassandra_contact_points, keyspace, first)
    assert "17472 films embedded and written" in out
    assert "declared fields: year=number" in out and "cast=entity" in out
    doc: dict[str, Any] = json.loads(first.read_text())
    questions = doc["questions"]
    assert [q["key"] for q in questions] == [
        "fonda-westerns", "italian-dramas", "fonda-comedies", "scorsese-crime",
        "latest-british-war",
    ]  # fmt: skip
    for i, q in enumerate(questions, 1):
        assert f"\nQ{i}. {q['question']}\n" in out
    assert len(re.findall(r"^Q\d\. ", out, re.M)) == 5

    # The ambiguous name: the follow-up with its candidates, then the chosen one.
    fonda = questions[2]
    assert fonda["follow_up"]["parameter"] == "actor" and fonda["follow_up"]["text"] == "fonda"
    names = [c["value"] for c in fonda["follow_up"]["candidates"]]
    assert {"Jane Fonda", "Henry Fonda", "Peter Fonda"} <= set(names)
    assert re.search(r"follow-up for actor 'fonda': Which did you mean .*Jane Fonda.*Henry Fonda",
                     out)  # fmt: skip
    assert fonda["resolved"]["actor"]["value"] == "Jane Fonda"
    assert all(q["follow_up"] is None for q in questions if q is not fonda)

    for q in questions:
        expected = _expected(q["key"])
        tool = [r["id"] for r in q["tool_results"]]
        assert tool, q["key"]
        # Precision 1.0 by the demo's figures and by films_sql, and the same SQL answer size.
        assert q["tool_correct"] == len(tool) and all(r["correct"] for r in q["tool_results"])
        assert set(tool) <= expected, q["key"]
        assert q["sql_answers"] == len(expected), q["key"]
        assert len(q["plain_results"]) == 10
        assert q["plain_correct"] == sum(r["id"] in expected for r in q["plain_results"])
        assert len(tool) == min(10, len(expected))
        assert [s["operation"] for s in q["statements"]["tool"]][-1] == "search"
        assert q["statements"]["cql"] >= 1
    anchors, shared = films_sharing_a_director_with(DB, "Henry Fonda")
    assert questions[0]["scope_size"] == len(anchors | shared)
    assert "scope: 415 films" in out or f"scope: {len(anchors | shared)} films" in out
    # The newest British war films: the years, newest first, of the newest by SQL.
    years = sorted(films_where(DB, country="United Kingdom", genre="War").values(), reverse=True)
    war = questions[4]
    got = [films_where(DB, country="United Kingdom", genre="War")[r["id"]]
           for r in war["tool_results"]]  # fmt: skip
    assert got == years[: len(got)]
    assert re.search(r"^\s+Q5 .*10/10 \|", out, re.M)

    # A second run reuses the complete table.
    again = _demo([sys.executable, str(REPO / "scripts" / "demo.py")], cassandra_contact_points,
                  keyspace, tmp_path / "again.json")  # fmt: skip
    assert f"reusing {keyspace}.films_hash_64: 17472 films" in again
    assert "embedded and written" not in again
    second = json.loads((tmp_path / "again.json").read_text())["questions"]
    assert [q["tool_results"] for q in second] == [q["tool_results"] for q in questions]
