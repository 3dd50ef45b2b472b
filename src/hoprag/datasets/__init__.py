"""Real datasets as hoprag `Document`s, read from packages installed from registries (Debian's
apt, PyPI); nothing is downloaded at run time. See docs/datasets.md.

    from hoprag.datasets import load
    docs = list(load("foldoc"))                 # Debian dict-foldoc
    docs = list(load("wordnet", limit=1000))    # Debian wordnet-base
    docs = list(load("films"))                  # PyPI bokeh-sampledata
    docs = list(load("jsonl", path="mine.jsonl"))

`load` checks at once that the data is installed (`DatasetNotInstalledError` names the install
command) and returns an iterator of Documents.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hoprag.datasets import films, foldoc, wordnet
from hoprag.datasets.errors import (
    DatasetNotInstalledError,
    JsonlValidationError,
    RecordError,
    UnknownDatasetError,
)
from hoprag.datasets.films import load_films
from hoprag.datasets.foldoc import FoldocData, FoldocStats, load_foldoc, read_foldoc
from hoprag.datasets.jsonl import jsonl_errors, load_jsonl, validate_jsonl
from hoprag.datasets.wordnet import load_wordnet
from hoprag.documents import Document

__all__ = [
    "DATASETS",
    "DatasetInfo",
    "DatasetNotInstalledError",
    "FoldocData",
    "FoldocStats",
    "JsonlValidationError",
    "RecordError",
    "UnknownDatasetError",
    "jsonl_errors",
    "load",
    "load_films",
    "load_foldoc",
    "load_jsonl",
    "load_wordnet",
    "read_foldoc",
    "validate_jsonl",
]


@dataclass(frozen=True, slots=True)
class DatasetInfo:
    """A registered dataset: its `name`, a one-line `description`, the `install` command for
    its data, the `edges` that suit it, the loader behind `load`, and the `fields` to declare
    on a table it is loaded into (field, kind: number, date or entity; `hoprag load` declares
    them, see `CassandraStore(fields=...)`)."""

    name: str
    description: str
    install: str
    edges: tuple[tuple[str, str], ...]
    loader: Callable[..., Iterator[Document]]
    fields: tuple[tuple[str, str], ...] = ()


def _load_jsonl(*, limit: int | None = None, path: str | Path | None = None) -> Iterator[Document]:
    if path is None:
        raise ValueError("load('jsonl') needs path=... naming the JSONL file to read")
    return load_jsonl(path, limit=limit)


DATASETS: dict[str, DatasetInfo] = {
    "foldoc": DatasetInfo(
        "foldoc",
        "Free On-line Dictionary of Computing: ~12k articles, cross-references, subject tags",
        foldoc.INSTALL_HINT,
        (("links", "$id"), ("$id", "links"), ("keywords", "keywords")),
        load_foldoc,
    ),
    "films": DatasetInfo(
        "films",
        "17,472 films (Wikidata, CC0): director, writer, cast, genre, country, language",
        films.INSTALL_HINT,
        tuple((f, f) for f in films.LIST_FIELDS),
        load_films,
        films.DECLARED_FIELDS,
    ),
    "wordnet": DatasetInfo(
        "wordnet",
        "WordNet 3.0: 117,659 synsets with typed pointers (hypernyms, meronyms, ...)",
        wordnet.INSTALL_HINT,
        (("hypernyms", "$id"), ("$id", "hypernyms"), ("part_meronyms", "$id")),
        load_wordnet,
    ),
    "jsonl": DatasetInfo(
        "jsonl",
        "your own articles in hoprag's JSONL format (id, title, text, references, ...)",
        "nothing to install; pass path=",
        (("references", "$id"), ("$id", "references"), ("keywords", "keywords")),
        _load_jsonl,
    ),
}


def load(
    name: str, *, limit: int | None = None, path: str | Path | None = None
) -> Iterator[Document]:
    """Documents of the dataset `name` (one of `DATASETS`: foldoc, films, wordnet, jsonl), at
    most `limit` of them; `path` overrides where the data is read from (required for jsonl).
    Raises `UnknownDatasetError` for an unknown name and `DatasetNotInstalledError`, naming
    the install command, when the data's package is missing."""
    info = DATASETS.get(name)
    if info is None:
        raise UnknownDatasetError(
            f"unknown dataset {name!r}; known datasets: {', '.join(sorted(DATASETS))}"
        )
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative int or None, got {limit!r}")
    return info.loader(limit=limit, path=path)
