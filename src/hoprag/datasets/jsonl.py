"""A JSONL format for a user's own articles and their citations, with a validator and a loader.

One JSON object per line (UTF-8, strict JSON: no NaN or Infinity, no number beyond a
float's range; blank lines are skipped; a file without any record is refused):

| field        | type                   | required | becomes                                  |
|--------------|------------------------|----------|------------------------------------------|
| `id`         | non-empty string       | yes      | `Document.id` (unique in the file)       |
| `title`      | string                 | no       | `metadata["title"]`, start of the text   |
| `text`       | string                 | one of   | the document text                        |
| `abstract`   | string                 | the two  | `metadata["abstract"]`; else the text    |
| `authors`    | list of strings        | no       | `metadata["authors"]`                    |
| `keywords`   | list of strings        | no       | `metadata["keywords"]`                   |
| `references` | list of id strings     | no       | `metadata["references"]`                 |
| `date`       | ISO date string        | no       | `metadata["date"]`                       |
| `metadata`   | object                 | no       | merged into `metadata`                   |
| anything else| any JSON value         | no       | copied into `metadata` as it is          |

`Document.content` is the title, a blank line and the text (or the abstract, when the text is
missing or blank). A `date` is read
by the grammar the filter language reads (`hoprag.dates`: `YYYY-MM-DD`, or a date-time with an
optional offset), so that every loaded date answers date ranges; other forms Python reads
(`20200615`, `2020-W25-1`) are refused. A key given twice in one object is refused. Keys in the
`metadata` object may not repeat a top-level field. References may name ids that are not in the
file (citations of outside work); they are kept. Edges: `("references", "$id")` (an article to
those it cites), `("$id", "references")` (to those citing it), `("authors", "authors")`,
`("keywords", "keywords")`.

`jsonl_errors` returns every problem (line number, field, message), including what the stores'
own checks at `add` would refuse (`hoprag.validation.check_documents` runs on each record's
Document); `validate_jsonl` raises `JsonlValidationError` listing all of them; `load_jsonl`
validates the whole file before it yields anything, so a bad file yields no document at all.
"""

from __future__ import annotations

import ast
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hoprag.datasets.errors import JsonlValidationError, RecordError
from hoprag.dates import DATE_FORMS, iso_instant
from hoprag.documents import Document
from hoprag.errors import InvalidInputError
from hoprag.validation import check_documents

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
    if "date" in obj and iso_instant(obj["date"]) is None:
        bad("date", f"must be an ISO date string ({DATE_FORMS}), got {obj['date']!r}")
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


MAX_ERRORS = 1000
"""`jsonl_errors` stops reading after this many problems (a binary file has one per line)."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
"""A `\\uD800`..`\\uDFFF` escape in a raw line: its string may hold a lone surrogate."""


class _Refused:
    """A number token that JSON does not allow or Python cannot hold (NaN, Infinity, 1e400,
    an integer of thousands of digits), kept in place while parsing so that the field it is
    in can be named."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _short(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:10]}...{text[-6:]} ({len(text)} characters)"


class _Parser:
    """Strict JSON for one line: numbers JSON has not got (NaN, Infinity), floats beyond
    float's range and integers too long to convert become `_Refused` markers, not values."""

    def __init__(self) -> None:
        self.refused = 0
        self.decoder = json.JSONDecoder(
            parse_constant=self._constant,
            parse_float=self._float,
            parse_int=self._int,
            object_pairs_hook=self._object,
        )

    def _refuse(self, why: str) -> _Refused:
        self.refused += 1
        return _Refused(why)

    def _constant(self, token: str) -> Any:
        return self._refuse(f"{token} is not a JSON number (JSON has no NaN or infinity)")

    def _float(self, text: str) -> Any:
        value = float(text)
        if math.isfinite(value):
            return value
        return self._refuse(f"the number {_short(text)} is beyond the range of a float")

    def _int(self, text: str) -> Any:
        digits = len(text.lstrip("-"))
        limit = sys.get_int_max_str_digits()  # what Python converts (0: no limit)
        if limit and digits > limit:
            return self._refuse(f"an integer of {digits} digits is too long")
        return int(text)

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        """The object; a key given twice becomes a marker (JSON would keep the last value
        and drop the first without a word)."""
        out = dict(pairs)
        if len(out) < len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    out[key] = self._refuse(
                        f"the key {key!r} appears more than once in one object (the later "
                        "value would replace the earlier); keep one"
                    )
                seen.add(key)
        return out

    def parse(self, text: str) -> Any:
        """The line's value; `refused` counts the markers in it. Raises ValueError with a
        one-line reason (including a nesting too deep to parse) for what is not JSON."""
        self.refused = 0
        try:
            return self.decoder.decode(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc.msg} (column {exc.colno})") from None
        except RecursionError:
            raise ValueError(
                "not readable JSON: nested too deeply (hundreds of levels of arrays or objects)"
            ) from None


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def _bad_values(obj: Any) -> Iterator[tuple[str | None, str]]:
    """(field, message) for every refused number and every string or key holding a lone
    surrogate (it cannot be stored as UTF-8) in `obj`, fields named as `a.b[2]`."""
    stack: list[tuple[str | None, Any]] = [(None, obj)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Refused):
            yield path, value.why
        elif isinstance(value, str):
            if _has_surrogate(value):
                yield path, "holds a lone surrogate escape (\\ud800-\\udfff), not text"
        elif isinstance(value, dict):
            for key, item in value.items():
                where = key if path is None else f"{path}.{key}"
                if _has_surrogate(key):
                    yield where, "the key holds a lone surrogate escape, not text"
                stack.append((where, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(value))


def _decode(raw: bytes, line_no: int) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
            "is this a binary file?"
        ) from None
    return text.removeprefix("\ufeff") if line_no == 1 else text


def _records(path: Path) -> Iterator[tuple[int, Any, list[RecordError]]]:
    """(line number, value, problems) for each non-blank line: the problems of the line as
    JSON (not UTF-8, not JSON, nested too deeply, numbers JSON or Python cannot hold, lone
    surrogates); the value is None when the line could not be read at all."""
    parser = _Parser()
    with open(path, "rb") as fh:
        for line_no, raw in enumerate(fh, 1):
            try:
                text = _decode(raw, line_no)
                if not text.strip():
                    continue
                obj = parser.parse(text)
            except ValueError as exc:
                yield line_no, None, [RecordError(line_no, None, str(exc))]
                continue
            problems: list[RecordError] = []
            if parser.refused or _SURROGATE_ESCAPE.search(text):
                problems = [RecordError(line_no, f, m) for f, m in _bad_values(obj)]
            yield line_no, obj, problems


_METADATA_FIELD = re.compile(
    r"metadata field (?P<path>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\") of document "
)
"""How the shared metadata check names a field (`validation.check_metadata`)."""


def _field_of(exc: InvalidInputError, doc: Document) -> str | None:
    """The record field named by a shared check's error about `doc`, when it names one."""
    argument = exc.argument or ""
    named = _METADATA_FIELD.match(argument)
    if named:  # "metadata field 'a.b[1]' of document 'x'"
        field: str = ast.literal_eval(named.group("path"))
        return field
    if argument.endswith(".id"):
        return "id"
    if argument.startswith("content of"):
        return "text"
    return None


def _check_shared(obj: dict[str, Any], line: int, errors: list[RecordError]) -> None:
    """Check the Document the record becomes with the checks every store applies at `add`
    (`hoprag.validation.check_documents`), so a record they would refuse mid-load is
    reported now, before anything is written."""
    doc = record_to_document(obj)
    try:
        check_documents([doc])
    except InvalidInputError as exc:
        errors.append(RecordError(line, _field_of(exc, doc), str(exc)))


SNIFF_BYTES = 8192
"""How much of a file `_binary_problem` looks at."""


def _binary_problem(path: Path) -> RecordError | None:
    """One problem for a file that is not text at all (a NUL byte, or bytes that are not
    UTF-8, in its first SNIFF_BYTES), naming the line, rather than one per line."""
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    found = [head.find(b"\0")]
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.end < len(head) or exc.reason != "unexpected end of data":
            found.append(exc.start)
    found = [i for i in found if i >= 0]
    if not found:
        return None
    bad = min(found)
    line = head.count(b"\n", 0, bad) + 1
    column = bad - (head.rfind(b"\n", 0, bad) + 1) + 1
    what = "a NUL byte" if head[bad] == 0 else f"byte 0x{head[bad]:02x}, which is not UTF-8,"
    return RecordError(
        line,
        None,
        f"not a text file: {what} at column {column} (a JSONL file is UTF-8 text, one JSON "
        "object per line)",
    )


def _scan(path: Path) -> tuple[list[RecordError], int]:
    """Every problem of the file (at most MAX_ERRORS) and its number of records."""
    binary = _binary_problem(path)
    if binary is not None:
        return [binary], 0
    errors: list[RecordError] = []
    first_line: dict[str, int] = {}
    count = 0
    for line_no, obj, problems in _records(path):
        count += 1
        if len(errors) >= MAX_ERRORS:
            break
        if problems or obj is None:
            errors.extend(problems)
            continue
        before = len(errors)
        _check_record(obj, line_no, errors)
        if len(errors) == before:
            _check_shared(obj, line_no, errors)
        rid = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(rid, str) and rid.strip():
            if rid in first_line:
                first = first_line[rid]
                errors.append(
                    RecordError(line_no, "id", f"duplicate id {rid!r} (first: line {first})")
                )
            else:
                first_line[rid] = line_no
    return errors, count


def jsonl_errors(path: str | Path) -> list[RecordError]:
    """Check every record of the JSONL file at `path` and return all problems found, in line
    order (an empty list when the file is valid; reading stops after MAX_ERRORS): lines that
    are not UTF-8, not JSON or nested too deeply to parse, NaN, Infinity, numbers beyond a
    float's range or integers too long to convert, lone surrogates, lines that are not JSON
    objects, missing or mistyped fields, a missing text, bad dates, metadata the stores'
    shared checks refuse (`hoprag.validation.check_documents`), and ids that repeat an
    earlier line's."""
    return _scan(Path(path))[0]


def validate_jsonl(path: str | Path) -> int:
    """Check the whole JSONL file at `path` and return its number of records, or raise
    `JsonlValidationError` listing every problem (see `jsonl_errors`) if there is any,
    `InvalidInputError` if it holds no record (empty or blank), and `FileNotFoundError` if
    it does not exist."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"JSONL file {path} does not exist")
    errors, count = _scan(path)
    if errors:
        raise JsonlValidationError(str(path), errors)
    if count == 0:
        raise InvalidInputError(
            f"{path} holds no records (it is empty or has only blank lines); nothing to load",
            argument="path",
            value=str(path),
            allowed="a JSONL file with at least one record",
        )
    return count


def record_to_document(obj: dict[str, Any]) -> Document:
    """Map one valid record (see the module doc) to a `Document`."""
    meta: dict[str, Any] = {}
    for key, value in obj.items():
        if key in ("id", "text", "metadata"):
            continue
        meta[key] = value
    meta.update(obj.get("metadata") or {})
    title = obj.get("title") or ""
    texts = (obj.get("text"), obj.get("abstract"))
    text = next((t for t in texts if isinstance(t, str) and t.strip()), "")
    content = f"{title}\n\n{text}" if title else text
    return Document(id=obj["id"], content=content, metadata=meta)


def load_jsonl(path: str | Path, *, limit: int | None = None) -> Iterator[Document]:
    """Validate the whole JSONL file at `path` now, raising `JsonlValidationError` with every
    problem if there is any, and return an iterator over its records as Documents in file
    order (at most `limit`)."""
    path = Path(path)
    validate_jsonl(path)
    return _documents(path, limit)


def jsonl_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """Validate the whole JSONL file at `path` now (as `load_jsonl` does) and return an
    iterator over its records as the JSON objects they are, in file order."""
    path = Path(path)
    validate_jsonl(path)
    return _objects(path)


def _objects(path: Path) -> Iterator[dict[str, Any]]:
    for _, obj, problems in _records(path):
        if problems or obj is None:  # the file changed after it was checked
            raise JsonlValidationError(str(path), problems)
        yield obj


def _documents(path: Path, limit: int | None) -> Iterator[Document]:
    count = 0
    for _, obj, problems in _records(path):
        if limit is not None and count >= limit:
            return
        if problems or obj is None:  # the file changed after it was checked
            raise JsonlValidationError(str(path), problems)
        yield record_to_document(obj)
        count += 1
