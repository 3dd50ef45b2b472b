"""The JSONL format for a user's own articles: validation reports every bad line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hoprag.datasets import (
    DATASETS,
    JsonlValidationError,
    UnknownDatasetError,
    jsonl_errors,
    load,
    validate_jsonl,
)

GOOD = [
    {
        "id": "smith2020",
        "title": "Graphs for retrieval",
        "abstract": "We traverse citation graphs.",
        "authors": ["Ann Smith", "Bo Chen"],
        "keywords": ["graphs", "retrieval"],
        "references": ["jones2018", "outside2001"],
        "date": "2020-05-01",
        "venue": "SIGIR",
        "metadata": {"citations": 12},
    },
    {"id": "jones2018", "title": "Vectors", "text": "Dense retrieval.", "authors": ["Cy Jones"]},
]


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "articles.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_good_file_maps_to_documents(tmp_path: Path) -> None:
    path = write(tmp_path, [json.dumps(r) for r in GOOD[:1]] + ["", json.dumps(GOOD[1])])
    assert validate_jsonl(path) == 2
    docs = list(load("jsonl", path=path))
    assert [d.id for d in docs] == ["smith2020", "jones2018"]
    first = docs[0]
    assert first.content == "Graphs for retrieval\n\nWe traverse citation graphs."
    assert first.metadata["references"] == ["jones2018", "outside2001"]
    assert first.metadata["authors"] == ["Ann Smith", "Bo Chen"]
    assert first.metadata["venue"] == "SIGIR" and first.metadata["citations"] == 12
    assert first.metadata["date"] == "2020-05-01"
    assert "id" not in first.metadata and "metadata" not in first.metadata
    assert docs[1].content == "Vectors\n\nDense retrieval."
    assert [d.id for d in load("jsonl", path=path, limit=1)] == ["smith2020"]
    assert ("references", "$id") in DATASETS["jsonl"].edges


def test_every_bad_line_reported_with_line_and_field(tmp_path: Path) -> None:
    lines = [
        json.dumps(GOOD[0]),  # 1 ok
        "{not json",  # 2
        json.dumps({"id": "", "text": 3, "authors": "Ann"}),  # 3
        json.dumps({"id": "x", "text": "t", "references": ["ok", 7], "date": "2020-13-40"}),  # 4
        json.dumps({"id": "smith2020", "text": "again"}),  # 5
        json.dumps(["a", "list"]),  # 6
        json.dumps({"title": "no id, no text"}),  # 7
        json.dumps({"id": "y", "text": "t", "metadata": {"title": "clash"}}),  # 8
    ]
    path = write(tmp_path, lines)
    found = {(e.line, e.field) for e in jsonl_errors(path)}
    assert found == {
        (2, None),
        (3, "id"),
        (3, "text"),
        (3, "authors"),
        (4, "references[1]"),
        (4, "date"),
        (5, "id"),
        (6, None),
        (7, "id"),
        (7, "text"),
        (8, "metadata.title"),
    }
    with pytest.raises(JsonlValidationError) as info:
        load("jsonl", path=path)  # raises before yielding anything
    err = info.value
    assert len(err.errors) == 11 and err.path == str(path)
    assert "line 5, field 'id': duplicate id 'smith2020' (first: line 1)" in str(err)
    assert isinstance(err, ValueError)


def test_registry_errors(tmp_path: Path) -> None:
    with pytest.raises(UnknownDatasetError, match="known datasets: films, foldoc, jsonl, wordnet"):
        load("imdb")
    with pytest.raises(ValueError, match="path"):
        load("jsonl")
    with pytest.raises(FileNotFoundError):
        load("jsonl", path=tmp_path / "missing.jsonl")
    with pytest.raises(ValueError, match="limit"):
        load("foldoc", limit=-1)
    assert set(DATASETS) == {"foldoc", "films", "wordnet", "jsonl"}
