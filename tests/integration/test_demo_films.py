"""`scripts/demo --films` as a user runs it (the shell script, which sets up the venv and calls
scripts/demo.py), against the test node on a fresh keyspace, with `--embedding hash:32`: the
films loaded with their declared fields (the run's films table, which the tools, MCP and
scopes modules then read), five questions through the films tool, the follow-up
for an ambiguous name, and the tool's results all correct. Correctness is checked here again
with tests/films_sql.py, independently of the demo's own SQL; a second run reuses the table."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from films_demo import FilmsDemoRun, run_films_demo
from films_sql import films_sharing_a_director_with, films_where
from hoprag.datasets.films import movies_db_path

REPO = Path(__file__).resolve().parents[2]
DB = movies_db_path()
# The first test of the films unit sets up the run's films table (17,472 films, 2-4 minutes
# here) before its own second demo run: beyond the suite's 300 s default.
pytestmark = pytest.mark.timeout(1200)


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
    cassandra_contact_points: str, films_demo: FilmsDemoRun, tmp_path: Path
) -> None:
    """The run's first films demo (integration/conftest.py's `films_demo`, on a fresh
    keyspace), then a second run on the same keyspace."""
    out, first, keyspace = films_demo.stdout, films_demo.json_path, films_demo.keyspace
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
    again = run_films_demo(
        [sys.executable, str(REPO / "scripts" / "demo.py")],
        cassandra_contact_points,
        keyspace,
        tmp_path / "again.json",
    ).stdout
    assert f"reusing {keyspace}.films: 17472 films" in again
    assert "embedded and written" not in again
    second = json.loads((tmp_path / "again.json").read_text())["questions"]
    assert [q["tool_results"] for q in second] == [q["tool_results"] for q in questions]
