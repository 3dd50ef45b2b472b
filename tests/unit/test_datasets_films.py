"""Films loader on the real bokeh-sampledata movies.db (installed by scripts/setup)."""

from __future__ import annotations

import sqlite3

import pytest

from hoprag.datasets import DatasetNotInstalledError, load
from hoprag.datasets.films import LIST_FIELDS, movies_db_path


@pytest.fixture(scope="module")
def films() -> dict:
    return {d.id: d for d in load("films")}


def test_count_and_ids(films: dict) -> None:
    assert len(films) == 17_472
    assert sum("~" in i for i in films) == 2  # two IMDb ids appear twice in the database


def test_fields_populated(films: dict) -> None:
    docs = list(films.values())
    for field in LIST_FIELDS:
        assert all(isinstance(d.metadata[field], list) for d in docs)
    share = {f: sum(bool(d.metadata[f]) for d in docs) / len(docs) for f in LIST_FIELDS}
    assert share["director"] > 0.99 and share["country"] > 0.99 and share["genre"] > 0.95
    assert share["cast"] > 0.85 and share["writer"] > 0.75 and share["language"] > 0.95
    assert all(1940 <= d.metadata["year"] <= 2014 for d in docs)


def test_known_film(films: dict) -> None:
    jaws = films["tt0073195"]
    m = jaws.metadata
    assert m["title"] == "Jaws" and m["year"] == 1975
    assert m["director"] == ["Steven Spielberg"]
    assert {"Roy Scheider", "Robert Shaw", "Richard Dreyfuss"} <= set(m["cast"])
    assert "Peter Benchley" in m["writer"] and m["country"] == ["United States"]
    assert jaws.content.startswith("Jaws (1975).") and "Steven Spielberg" in jaws.content


def test_director_edges_connect_films(films: dict) -> None:
    spielberg = [d for d in films.values() if "Steven Spielberg" in d.metadata["director"]]
    assert len(spielberg) >= 15


def test_limit_and_source() -> None:
    docs = list(load("films", limit=5))
    assert len(docs) == 5 and all(d.metadata["source"] == "films" for d in docs)


def test_missing_database(tmp_path) -> None:
    with pytest.raises(DatasetNotInstalledError):
        load("films", path=tmp_path / "movies.db")


def test_database_found_without_importing_pandas() -> None:
    db = movies_db_path()
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT count(*) FROM omdb").fetchone()[0] == 17_472


def test_missing_package_names_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(DatasetNotInstalledError, match=r"bokeh-sampledata.*pip install"):
        load("films")
