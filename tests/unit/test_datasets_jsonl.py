"""The JSONL format for a user's own articles: validation reports every bad line and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hoprag.datasets import (
    DATASETS,
    JsonlValidationError,
    UnknownDatasetError,
    jsonl_errors,
    load,
    validate_jsonl,
)
from hoprag.embeddings.hash import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores import MemoryStore

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


# --- strict JSON, checked up front (issue 17, defects 2 and 7) -----------------------------------


def _file_with_bad_line(tmp_path: Path, bad: str, *, at: int = 301) -> Path:
    """`at - 1` good records, then the raw `bad` line, then 50 more good records."""
    good = [json.dumps({"id": f"r{i}", "text": f"record {i}"}) for i in range(at + 49)]
    return write(tmp_path, [*good[: at - 1], bad, *good[at - 1 :]])


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("NaN", "score"),
        ("Infinity", "score"),
        ("-Infinity", "score"),
        ("1e400", "score"),
        ("-1e400", "score"),
        ('"\\ud800"', "score"),
        ('{"deep": [1, NaN]}', "score.deep[1]"),
        ('"ok \\ud83d\\ude00 then \\udc00"', "score"),
    ],
)
def test_numbers_json_has_not_and_lone_surrogates_are_refused_with_line_and_field(
    tmp_path: Path, value: str, field: str
) -> None:
    path = _file_with_bad_line(tmp_path, f'{{"id": "bad", "text": "t", "score": {value}}}')
    (error,) = jsonl_errors(path)
    assert (error.line, error.field) == (301, field)
    with pytest.raises(JsonlValidationError, match="line 301, field"):
        load("jsonl", path=path)  # before yielding anything


def test_a_surrogate_pair_is_text_and_loads(tmp_path: Path) -> None:
    path = write(tmp_path, ['{"id": "a", "text": "smile \\ud83d\\ude00"}'])
    (doc,) = load("jsonl", path=path)
    assert doc.content == "smile \U0001f600"


def test_integer_of_5001_digits_is_refused_with_line_and_field(tmp_path: Path) -> None:
    path = _file_with_bad_line(tmp_path, '{"id": "x", "text": "t", "n": ' + "7" * 5001 + "}", at=4)
    (error,) = jsonl_errors(path)
    assert (error.line, error.field) == (4, "n") and "5001 digits" in error.message


def test_nesting_too_deep_to_parse_is_one_problem_with_its_line(tmp_path: Path) -> None:
    deep = '{"id": "x", "text": "t", "a": ' + "[" * 3000 + "]" * 3000 + "}"
    path = _file_with_bad_line(tmp_path, deep, at=7)
    (error,) = jsonl_errors(path)
    assert error.line == 7 and "nested too deeply" in error.message


def test_binary_file_is_one_problem_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "image.jsonl"
    path.write_bytes(b'{"id": "a", "text": "t"}\n\x89PNG\r\n\x1a\n' + bytes(range(256)) * 40)
    (error,) = jsonl_errors(path)
    assert error.line == 2 and "not a text file" in error.message
    with pytest.raises(JsonlValidationError, match="line 2: not a text file"):
        validate_jsonl(path)


@pytest.mark.parametrize("text", ["", "\n", "  \n\n\t\n"])
def test_empty_or_blank_file_is_refused_not_loaded_as_nothing(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(text)
    assert jsonl_errors(path) == []
    with pytest.raises(InvalidInputError, match="holds no records"):
        validate_jsonl(path)
    with pytest.raises(InvalidInputError, match="holds no records"):
        load("jsonl", path=path)


def test_records_go_through_the_stores_shared_document_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader runs `hoprag.validation.check_documents` itself (not a copy of its rules), so
    what that check refuses at `add` is reported up front, with the line and the field."""
    from hoprag.datasets import jsonl as jsonl_module
    from hoprag.validation import check_documents

    assert jsonl_module.check_documents is check_documents
    seen: list[str] = []

    def counting(documents: Any) -> Any:  # the shared check itself, counting its documents
        docs = list(documents)
        seen.extend(doc.id for doc in docs)
        return check_documents(docs)

    monkeypatch.setattr(jsonl_module, "check_documents", counting)
    path = _file_with_bad_line(tmp_path, json.dumps({"id": "big", "text": "t", "n": 2**64}), at=5)
    (error,) = jsonl_errors(path)
    assert (error.line, error.field) == (5, "n") and "2**63" in error.message
    assert len(seen) == 55  # every record was checked, the bad one and the 50 after it too


def test_a_file_changed_after_its_check_stops_the_load_instead_of_writing_bad_records(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, [json.dumps({"id": f"r{i}", "text": "t"}) for i in range(3)])
    docs = load("jsonl", path=path)
    path.write_text(json.dumps({"id": "r0", "text": "t"}) + '\n{"id": "r1", "x": NaN}\n')
    with pytest.raises(JsonlValidationError, match="line 2"):
        list(docs)


@pytest.mark.parametrize("date", ["20200615", "2020-W25-1", "2020-06-15T25:00", "15/06/2020"])
def test_a_date_the_filters_cannot_read_is_refused_at_loading(tmp_path: Path, date: str) -> None:
    """One date grammar (issue #28, 2): Python's `date.fromisoformat` reads compact and ISO
    week dates, the filter language does not, so such a record would never match a range."""
    path = write(tmp_path, [json.dumps({"id": "a", "text": "x", "date": date})])
    (err,) = jsonl_errors(path)
    assert err.line == 1 and err.field == "date" and repr(date) in err.message


@pytest.mark.parametrize("date", ["2020-06-15", "2020-06-15T10:30:00+02:00", "2020-06-15 10:30Z"])
def test_every_date_the_filters_read_loads_and_answers_a_range(tmp_path: Path, date: str) -> None:
    path = write(tmp_path, [json.dumps({"id": "a", "text": "x", "date": date})])
    (doc,) = load("jsonl", path=path)
    store = MemoryStore(HashEmbedding(8))
    store.add([doc])
    june = {"date": {"$gte": "2020-06-01", "$lt": "2020-07-01"}}
    assert [h.id for h in store.prepare(None, june).get(["a"])] == ["a"]


def test_a_blank_text_gives_way_to_the_abstract(tmp_path: Path) -> None:
    """Issue #28, 3: a blank `text` is no text; the abstract is the content."""
    record = {"id": "a", "title": "T", "text": "  \n ", "abstract": "Graph retrieval."}
    path = write(tmp_path, [json.dumps(record)])
    (doc,) = load("jsonl", path=path)
    assert doc.content == "T\n\nGraph retrieval."


def test_a_key_given_twice_in_a_record_is_refused_naming_it(tmp_path: Path) -> None:
    """Issue #28, 17: JSON keeps the last of two equal keys and drops the first silently."""
    path = write(tmp_path, ['{"id": "a", "text": "x", "id": "b"}', '{"id": "c", "text": "y"}'])
    (err,) = jsonl_errors(path)
    assert err.line == 1 and err.field == "id" and "more than once" in err.message
    nested = write(tmp_path, ['{"id": "a", "text": "x", "metadata": {"k": 1, "k": 2}}'])
    (err,) = jsonl_errors(nested)
    assert err.field == "metadata.k"
