"""A JSONL format for a user's own articles and their citations, with a validator and a loader.

One JSON object per line (UTF-8; blank lines are skipped):

| field        | type                   | required | becomes                                  |
|--------------|------------------------|----------|------------------------------------------|
| `id`         | non-empty string       | yes      | `Document.id` (unique in the file)       |
| `title`      | string                 | no       | `metadata["title"]`, start of the text   |
| `text`       | string                 | one of   | the document text                        |
| `abstract`   | string                 | the two  | `metadata["abstract"]`; the text if no `text` |
| `authors`    | list of strings        | no       | `metadata["authors"]`                    |
| `keywords`   | list of strings        | no       | `metadata["keywords"]`                   |
| `references` | list of id strings     | no       | `metadata["references"]`                 |
| `date`       | `YYYY-MM-DD` string    | no       | `metadata["date"]`                       |
| `metadata`   | object                 | no       | merged into `metadata`                   |
| anything else| any JSON value         | no       | copied into `metadata` as it is          |

`Document.content` is the title, a blank line and the text (or the abstract). Keys in the
`metadata` object may not repeat a top-level field. References may name ids that are not in the
file (citations of outside work); they are kept. Edges: `("references", "$id")` (an article to
those it cites), `("$id", "references")` (to those citing it), `("authors", "authors")`,
`("keywords", "keywords")`.

`jsonl_errors` returns every problem (line number, field, message); `validate_jsonl` raises
`JsonlValidationError` listing all of them; `load_jsonl` validates the whole file before it
yields anything, so a bad file yields no document at all.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hoprag.datasets.errors import JsonlValidationError, RecordError
from hoprag.documents import Document

CORE_FIELDS = ("id", "title", "text", "abstract", "authors", "keywords", "references", "date")
_STRING_FIELDS = ("title", "text", "abstract")
_LIST_FIELDS = ("authors", "keywords", "references")


_Bad = Callable[[str | None, str], None]


def _check_id_and_texts(obj: dict[str, Any], bad: _Bad) -> None:
    rid = obj.get("id")
    if "id" not in obj:
        bad("id", "missing (every record needs a non-empty string id)")
    elif not isinstance(rid, str) or not rid.strip():
        bad("id", f"must be a non-empty string, got {rid!r}")
    for field in _STRING_FIELDS:
        if field in obj and not isinstance(obj[field], str):
            bad(field, f"must be a string, got {type(obj[field]).__name__}")
    texts = [obj[f] for f in ("text", "abstract") if f in obj]
    if all(isinstance(t, str) for t in texts) and not any(t.strip() for t in texts):
        bad("text", "missing: a record needs a non-empty 'text' or 'abstract'")


def _check_lists(obj: dict[str, Any], bad: _Bad) -> None:
    for field in _LIST_FIELDS:
        if field not in obj:
            continue
        value = obj[field]
        if not isinstance(value, list):
            bad(field, f"must be a list of strings, got {type(value).__name__}")
            continue
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                bad(f"{field}[{i}]", f"must be a non-empty string, got {item!r}")


def _check_date_and_extra(obj: dict[str, Any], bad: _Bad) -> None:
    if "date" in obj:
        date = obj["date"]
        try:
            if not isinstance(date, str):
                raise TypeError
            dt.date.fromisoformat(date)
        except (TypeError, ValueError):
            bad("date", f"must be an ISO date string YYYY-MM-DD, got {date!r}")
    if "metadata" not in obj:
        return
    extra = obj["metadata"]
    if not isinstance(extra, dict):
        bad("metadata", f"must be an object, got {type(extra).__name__}")
        return
    for key in extra:
        if key in obj or key in CORE_FIELDS:
            bad(f"metadata.{key}", f"{key!r} is a top-level field; set it there, not in metadata")


def _check_record(obj: Any, line: int, errors: list[RecordError]) -> None:
    """Append every problem of the record on `line` to `errors`."""

    def bad(field: str | None, message: str) -> None:
        errors.append(RecordError(line, field, message))

    if not isinstance(obj, dict):
        bad(None, f"expected a JSON object, got {type(obj).__name__}")
        return
    _check_id_and_texts(obj, bad)
    _check_lists(obj, bad)
    _check_date_and_extra(obj, bad)


def _records(path: Path) -> Iterator[tuple[int, Any, RecordError | None]]:
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield line_no, json.loads(line), None
            except json.JSONDecodeError as exc:
                yield line_no, None, RecordError(line_no, None, f"not valid JSON: {exc.msg}")


def jsonl_errors(path: str | Path) -> list[RecordError]:
    """Check every record of the JSONL file at `path` and return all problems found, in line
    order (an empty list when the file is valid): lines that are not JSON objects, missing or
    mistyped fields, a missing text, bad dates, and ids that repeat an earlier line's."""
    errors: list[RecordError] = []
    first_line: dict[str, int] = {}
    for line_no, obj, err in _records(Path(path)):
        if err is not None:
            errors.append(err)
            continue
        _check_record(obj, line_no, errors)
        rid = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(rid, str) and rid.strip():
            if rid in first_line:
                first = first_line[rid]
                errors.append(
                    RecordError(line_no, "id", f"duplicate id {rid!r} (first: line {first})")
                )
            else:
                first_line[rid] = line_no
    return errors


def validate_jsonl(path: str | Path) -> int:
    """Check the whole JSONL file at `path` and return its number of records, or raise
    `JsonlValidationError` listing every problem (see `jsonl_errors`) if there is any;
    `FileNotFoundError` if the file does not exist."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"JSONL file {path} does not exist")
    errors = jsonl_errors(path)
    if errors:
        raise JsonlValidationError(str(path), errors)
    return sum(1 for _ in _records(path))


def record_to_document(obj: dict[str, Any]) -> Document:
    """Map one valid record (see the module doc) to a `Document`."""
    meta: dict[str, Any] = {}
    for key, value in obj.items():
        if key in ("id", "text", "metadata"):
            continue
        meta[key] = value
    meta.update(obj.get("metadata") or {})
    title = obj.get("title") or ""
    text = obj.get("text") or obj.get("abstract") or ""
    content = f"{title}\n\n{text}" if title else text
    return Document(id=obj["id"], content=content, metadata=meta)


def load_jsonl(path: str | Path, *, limit: int | None = None) -> Iterator[Document]:
    """Validate the whole JSONL file at `path` now, raising `JsonlValidationError` with every
    problem if there is any, and return an iterator over its records as Documents in file
    order (at most `limit`)."""
    path = Path(path)
    validate_jsonl(path)
    return _documents(path, limit)


def _documents(path: Path, limit: int | None) -> Iterator[Document]:
    count = 0
    for _, obj, _ in _records(path):
        if limit is not None and count >= limit:
            return
        yield record_to_document(obj)
        count += 1
