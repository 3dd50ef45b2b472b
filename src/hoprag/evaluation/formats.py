"""The multi-hop QA formats `hoprag eval` reads, as passages and questions with gold passages.

* **2WikiMultihopQA** as HippoRAG 2 ships it: a corpus file (a JSON list of `{title, text}`)
  and a questions file (a JSON list of `{id, question_type, question, evidence}`, the
  evidence being `[subject, relation, object]` triples; no `supporting_facts`). A question's
  gold passages are the corpus pages of its triples' subjects: the page whose title equals the
  subject after `normalise`, else the pages whose title without a trailing "(...)" qualifier
  equals it, narrowed to one by the question's text (the qualifier's words in it) or by the
  triple's object occurring in the passage. A question with a subject left unmapped (or
  ambiguous), or with no evidence, is dropped and counted.
* **MuSiQue** (official format): a JSON list (or JSON lines) of `{id, question, paragraphs:
  [{title, paragraph_text, is_supporting}]}`; the corpus is the union of every question's
  paragraphs, deduplicated, and the gold passages are its supporting ones. The type is the
  id's prefix (`2hop`, `3hop1`, ...).
* **Your own** (`jsonl`): `passages.jsonl`, one `{id, title?, text, metadata?}` per line, and
  `questions.jsonl`, one `{id, question, gold: [passage id, ...], type?}` per line. The
  passages are the corpus as given (ids unique; a missing title is the empty string), the gold
  passages are named by id: an id that is no passage's is refused, naming the record.
* **HotpotQA** (distractor setting): `{_id, question, type, context: [[title, [sentence,
  ...]]], supporting_facts: [[title, index]]}`; the corpus is the union of the contexts,
  deduplicated, and the gold passages are the context paragraphs named by the supporting
  facts.

A passage's id is its title, made unique with " [2]", " [3]", ... when several passages share
one. A question left without a gold passage (no supporting paragraph, supporting facts naming
no paragraph of its context, no evidence) cannot be scored: it is dropped and counted under
`no gold passage`, with the other reasons, in `EvalSet.dropped`. Every problem with a file
(missing, not JSON, not this format: a record without a field, or a field of the wrong shape,
named with the record's index) is an InvalidInputError naming the file and what was expected;
so is a set whose every question was dropped."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hoprag.errors import InvalidInputError
from hoprag.text import normalise

_QUALIFIER = re.compile(r"^(?P<bare>.*?)\s*\((?P<q>[^()]*)\)\s*$")
NO_GOLD = "no gold passage"
"""The reason a question without gold passages is dropped (recall would be undefined)."""


@dataclass(frozen=True)
class Passage:
    """One passage of a corpus: its unique id, title and text, and (from your own files) its
    metadata, which the store holds beside the title and the edges found in the text."""

    id: str
    title: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Question:
    """One question: its id, text, type and the ids of its gold passages."""

    id: str
    text: str
    type: str
    gold: tuple[str, ...]


@dataclass
class EvalSet:
    """A data set ready to evaluate: the corpus, the questions kept, and how many were
    dropped and why."""

    name: str
    passages: list[Passage]
    questions: list[Question]
    dropped: dict[str, int] = field(default_factory=dict)


def _bad_file(path: Path | str, expected: str, problem: str) -> InvalidInputError:
    return InvalidInputError(
        f"{path}: {problem}; expected {expected}",
        argument="data",
        value=str(path),
        allowed=expected,
    )


def read_json(path: Path, expected: str) -> Any:
    """The JSON value of `path` (a JSON document, or JSON lines read as a list; a `.jsonl`
    file is always a list)."""
    if not path.is_file():
        raise _bad_file(path, expected, "no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad_file(path, expected, f"cannot be read as UTF-8 text ({exc})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        pass
    else:  # JSON lines of one record parse as one JSON document
        return [value] if path.suffix == ".jsonl" and isinstance(value, dict) else value
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise _bad_file(path, expected, f"not JSON or JSON lines ({exc})") from None


@dataclass(frozen=True)
class _Shape:
    """What a record's field must be: `ok` says whether a value (or, with `each`, every item
    of a list) is right, `what` says it to people."""

    ok: Callable[[Any], bool]
    what: str
    each: bool = False

    def problem(self, key: str, value: Any) -> str | None:
        """Why `value` of field `key` is wrong, or None."""
        if not self.each:
            return None if self.ok(value) else f"{key} must be {self.what}, found {_show(value)}"
        if not isinstance(value, list):
            return f"{key} must be a list of {self.what}, found {_show(value)}"
        bad = next((j for j, item in enumerate(value) if not self.ok(item)), None)
        if bad is None:
            return None
        return f"{key}[{bad}] must be {self.what}, found {_show(value[bad])}"


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and value != ""


_TEXT = _Shape(lambda v: isinstance(v, str), "a string")
_ID = _Shape(_is_id, "a string or number")


def _records(path: Path, expected: str, shapes: Mapping[str, _Shape]) -> list[dict[str, Any]]:
    """The list of objects in `path`, each with every field of `shapes` in its shape."""
    data = read_json(path, expected)
    if not isinstance(data, list) or not data:
        raise _bad_file(path, expected, "not a non-empty list of records")
    for i, rec in enumerate(data):
        missing = [k for k in shapes if not isinstance(rec, dict) or k not in rec]
        if missing:
            raise _bad_file(path, expected, f"record {i} has no {', '.join(missing)}")
        problems = (shape.problem(k, rec[k]) for k, shape in shapes.items())
        problem = next((p for p in problems if p), None)
        if problem:
            raise _bad_file(path, expected, f"record {i}: {problem}")
    return data


def _kept(evalset: EvalSet, paths: Sequence[str | Path], expected: str) -> EvalSet:
    """`evalset`, or InvalidInputError naming the files when every question was dropped."""
    if evalset.questions:
        return evalset
    reasons = ", ".join(f"{n} {r}" for r, n in evalset.dropped.items() if n)
    names = ", ".join(map(str, paths))
    raise _bad_file(names, expected, f"every question was dropped ({reasons}): none is left "
                    "to evaluate")  # fmt: skip


class _Corpus:
    """Passages gathered in order, deduplicated by (title, text), ids unique."""

    def __init__(self) -> None:
        self.passages: list[Passage] = []
        self._by_content: dict[tuple[str, str], str] = {}
        self._titles: dict[str, int] = {}

    def add(self, title: str, text: str) -> str:
        """The id of the passage (title, text), added if new."""
        key = (title, text)
        found = self._by_content.get(key)
        if found is not None:
            return found
        n = self._titles.get(title, 0) + 1
        self._titles[title] = n
        pid = title if n == 1 else f"{title} [{n}]"
        self._by_content[key] = pid
        self.passages.append(Passage(pid, title, text))
        return pid


# --- 2WikiMultihopQA ---------------------------------------------------------------------------

WIKI_CORPUS = "a JSON list of {title, text} (HippoRAG's 2wikimultihopqa_corpus.json)"
WIKI_QUESTIONS = "a JSON list of {id, question, evidence: [[subject, relation, object]]}"


_TRIPLE = _Shape(lambda v: isinstance(v, list) and len(v) == 3 and isinstance(v[0], str),
                 "[subject, relation, object] (a string subject)", each=True)  # fmt: skip


def load_2wiki(corpus_path: str | Path, questions_path: str | Path) -> EvalSet:
    """2WikiMultihopQA from HippoRAG's corpus and the questions with evidence triples."""
    corpus = _Corpus()
    for rec in _records(Path(corpus_path), WIKI_CORPUS, {"title": _TEXT, "text": _TEXT}):
        corpus.add(rec["title"], rec["text"])
    mapper = _TitleMapper(corpus.passages)
    questions: list[Question] = []
    dropped = {"subject not in the corpus": 0, "subject ambiguous": 0, NO_GOLD: 0}
    shapes = {"id": _ID, "question": _TEXT, "evidence": _TRIPLE}
    for rec in _records(Path(questions_path), WIKI_QUESTIONS, shapes):
        gold, problem = mapper.gold(str(rec["question"]), rec["evidence"])
        if problem:
            dropped[problem] += 1
            continue
        qtype = str(rec.get("question_type") or rec.get("type") or "unknown")
        questions.append(Question(str(rec["id"]), str(rec["question"]), qtype, gold))
    evalset = EvalSet("2wiki", corpus.passages, questions, dropped)
    return _kept(evalset, [questions_path], WIKI_QUESTIONS)


class _TitleMapper:
    """Subjects of evidence triples -> corpus passages (see the module docstring)."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self.exact: dict[str, list[Passage]] = {}
        self.bare: dict[str, list[Passage]] = {}
        for p in passages:
            self.exact.setdefault(normalise(p.title), []).append(p)
            m = _QUALIFIER.match(p.title)
            if m:
                self.bare.setdefault(normalise(m["bare"]), []).append(p)

    def gold(self, question: str, evidence: Any) -> tuple[tuple[str, ...], str]:
        """The gold passage ids of a question, or () and why it is dropped."""
        if not evidence:
            return (), NO_GOLD
        ids: dict[str, None] = {}
        for triple in evidence:
            subject, obj = str(triple[0]), str(triple[-1]) if len(triple) > 2 else ""
            found, problem = self.subject(subject, obj, question)
            if found is None:
                return (), problem
            ids[found] = None
        return tuple(ids), ""

    def subject(self, subject: str, obj: str, question: str) -> tuple[str | None, str]:
        key = normalise(subject)
        exact = self.exact.get(key, [])
        if len(exact) == 1:
            return exact[0].id, ""
        candidates = exact or self.bare.get(key, [])
        if not candidates:
            return None, "subject not in the corpus"
        if len(candidates) == 1:
            return candidates[0].id, ""
        chosen = _narrow(candidates, question, obj)
        return (chosen.id, "") if chosen else (None, "subject ambiguous")


def _narrow(candidates: Sequence[Passage], question: str, obj: str) -> Passage | None:
    """The one candidate whose qualifier's words the question has, or whose text holds the
    triple's object; None when neither singles one out."""
    q = f" {normalise(question)} "
    by_qualifier = [
        p for p in candidates
        if (m := _QUALIFIER.match(p.title)) and f" {normalise(m['q'])} " in q
    ]  # fmt: skip
    if len(by_qualifier) == 1:
        return by_qualifier[0]
    o = normalise(obj)
    by_object = [p for p in candidates if o and o in normalise(p.text)]
    return by_object[0] if len(by_object) == 1 else None


# --- MuSiQue and HotpotQA ----------------------------------------------------------------------

MUSIQUE = "MuSiQue records {id, question, paragraphs: [{title, paragraph_text, is_supporting}]}"
HOTPOT = "HotpotQA records {_id, question, context: [[title, [sentences]]], supporting_facts}"
_PARAGRAPH = _Shape(
    lambda v: (
        isinstance(v, dict)
        and isinstance(v.get("title"), str)
        and isinstance(v.get("paragraph_text"), str)
    ),
    "{title, paragraph_text, is_supporting} (strings)",
    each=True,
)
_CONTEXT = _Shape(
    lambda v: isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)
    and isinstance(v[1], list),
    "[title, [sentence, ...]]",
    each=True,
)  # fmt: skip
_FACT = _Shape(lambda v: isinstance(v, list) and len(v) == 2 and isinstance(v[0], str),
               "[title, sentence index]", each=True)  # fmt: skip


def load_musique(paths: Iterable[str | Path]) -> EvalSet:
    """MuSiQue from one or more files of official records (the corpus is their union)."""
    files = list(paths)
    corpus, dropped = _Corpus(), {NO_GOLD: 0}
    questions: list[Question] = []
    shapes = {"id": _ID, "question": _TEXT, "paragraphs": _PARAGRAPH}
    for path in files:
        for rec in _records(Path(path), MUSIQUE, shapes):
            gold = []
            for para in rec["paragraphs"]:
                pid = corpus.add(para["title"], para["paragraph_text"])
                if para.get("is_supporting"):
                    gold.append(pid)
            qtype = str(rec["id"]).split("__", 1)[0]
            q = Question(str(rec["id"]), rec["question"], qtype, tuple(gold))
            _keep(q, questions, dropped)
    return _kept(EvalSet("musique", corpus.passages, questions, dropped), files, MUSIQUE)


def load_hotpotqa(paths: Iterable[str | Path]) -> EvalSet:
    """HotpotQA (distractor setting) from one or more files (the corpus is their union)."""
    files = list(paths)
    corpus, dropped = _Corpus(), {NO_GOLD: 0}
    questions: list[Question] = []
    shapes = {"question": _TEXT, "context": _CONTEXT, "supporting_facts": _FACT}
    for path in files:
        for i, rec in enumerate(_records(Path(path), HOTPOT, shapes)):
            ids: dict[str, str] = {}
            for title, sentences in rec["context"]:
                ids[title] = corpus.add(title, "".join(map(str, sentences)).strip())
            wanted = {f[0] for f in rec["supporting_facts"]}
            gold = tuple(ids[t] for t in ids if t in wanted)
            qid = _hotpot_id(rec, Path(path), i)
            qtype = str(rec.get("type") or "unknown")
            _keep(Question(qid, rec["question"], qtype, gold), questions, dropped)
    return _kept(EvalSet("hotpotqa", corpus.passages, questions, dropped), files, HOTPOT)


def _hotpot_id(rec: dict[str, Any], path: Path, i: int) -> str:
    """A HotpotQA record's `_id` (or `id`), or InvalidInputError naming the record."""
    qid = rec.get("_id", rec.get("id"))
    if not _is_id(qid):
        raise _bad_file(path, HOTPOT, f"record {i}: _id (or id) must be {_ID.what}, found "
                        f"{_show(qid)}")  # fmt: skip
    return str(qid)


def _keep(question: Question, questions: list[Question], dropped: dict[str, int]) -> None:
    """Append `question` to `questions`, or count it in `dropped` under NO_GOLD when it has no
    gold passage."""
    if question.gold:
        questions.append(question)
    else:
        dropped[NO_GOLD] += 1


# --- your own: passages.jsonl and questions.jsonl ---------------------------------------------

OWN_PASSAGES = "JSON lines of {id, title?, text, metadata?} (passages.jsonl)"
OWN_QUESTIONS = "JSON lines of {id, question, gold: [passage id, ...], type?} (questions.jsonl)"
RESERVED_METADATA = ("title", "mentions", "phrases")
"""Metadata fields `hoprag eval` writes itself (the title, and the edges found in the text)."""
_OPTIONAL_TEXT = _Shape(lambda v: v is None or isinstance(v, str), "a string")
_OBJECT = _Shape(lambda v: v is None or isinstance(v, dict), "an object")


def _own_passages(path: Path) -> list[Passage]:
    """The passages of `path`, ids unique, metadata free of the fields eval writes."""
    passages: list[Passage] = []
    seen: set[str] = set()
    for i, rec in enumerate(_records(path, OWN_PASSAGES, {"id": _ID, "text": _TEXT})):
        problem = _OPTIONAL_TEXT.problem("title", rec.get("title"))
        problem = problem or _OBJECT.problem("metadata", rec.get("metadata"))
        meta = rec.get("metadata") or {}
        taken = [k for k in RESERVED_METADATA if k in meta]
        if taken:
            problem = f"metadata holds {', '.join(taken)}, which eval writes itself"
        pid = str(rec["id"])
        if pid in seen:
            problem = f"id {_show(pid)} is the id of an earlier record"
        if problem:
            raise _bad_file(path, OWN_PASSAGES, f"record {i}: {problem}")
        seen.add(pid)
        passages.append(Passage(pid, rec.get("title") or "", rec["text"], dict(meta)))
    return passages


def load_jsonl_set(passages_path: str | Path, questions_path: str | Path) -> EvalSet:
    """Your own corpus and questions (see the module docstring)."""
    passages = _own_passages(Path(passages_path))
    ids = {p.id for p in passages}
    questions: list[Question] = []
    dropped = {NO_GOLD: 0}
    shapes = {"id": _ID, "question": _TEXT, "gold": _Shape(_is_id, "a passage id", each=True)}
    path = Path(questions_path)
    for i, rec in enumerate(_records(path, OWN_QUESTIONS, shapes)):
        gold = tuple(dict.fromkeys(str(g) for g in rec["gold"]))
        unknown = [g for g in gold if g not in ids]
        if unknown:
            raise _bad_file(path, OWN_QUESTIONS, f"record {i}: gold {_show(unknown)} names no "
                            f"passage of {passages_path}")  # fmt: skip
        qtype = str(rec.get("type") or "unknown")
        _keep(Question(str(rec["id"]), rec["question"], qtype, gold), questions, dropped)
    return _kept(EvalSet("jsonl", passages, questions, dropped), [questions_path], OWN_QUESTIONS)
