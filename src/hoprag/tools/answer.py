"""What a `SearchTool` run returns: `ToolAnswer`, either results or a `FollowUp` question.

* `ToolAnswer.nodes`: the documents found (`hoprag.Node`, best first); `text`: their rendering
  for an LLM's context, numbered, each with its title, year, id and content (for a follow-up,
  the question instead); `statements`: what the run sent (`Statement`); `stats`: the search's
  `TraversalStats` (None when no search ran); `follow_up`: None, or the question to ask the
  user back.
* `Statement(operation, text, parameters)`: `operation` is "resolve" (a `Store.aresolve`
  call), "search" (the `asearch` call, with its scope, filter and ranking) or "cql" (a
  statement a CassandraStore sent, as recorded by its executor). `text` never holds a value
  from the call: user values are only in `parameters` (named for "resolve" and "search",
  positional, in `?` order, for "cql").
* `FollowUp(parameter, text, candidates, question)`: the entity that could not be settled, the
  text the user gave, the candidates `aresolve` returned (empty when nothing matched) and a
  question to put to the user.

`to_dict()` gives JSON-able dicts (NaN scores as None, vectors as lists of floats)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from hoprag.documents import Node
from hoprag.edges import MISSING, nested_get
from hoprag.resolve import Candidate
from hoprag.stats import TraversalStats

__all__ = ["ANSWER_JSON_SCHEMA", "FollowUp", "Statement", "ToolAnswer", "jsonable", "render_nodes"]


def jsonable(value: Any) -> Any:
    """`value` with only JSON types: mappings as dicts, sequences, sets and arrays as lists
    (numpy arrays included), non-finite floats as None, dates as ISO text, bytes as hex, other
    objects as their text form."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [jsonable(v) for v in items]
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, date | datetime):
        return value.isoformat()
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return jsonable(tolist())
    return str(value)


@dataclass(frozen=True, slots=True)
class Statement:
    """One call a run made: `operation` ("resolve", "search" or "cql"), `text` (the call's
    form or the CQL text, never holding a value of the call) and `parameters` (the values:
    named for "resolve" and "search", positional for "cql")."""

    operation: str
    text: str
    parameters: dict[str, Any] | list[Any]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict of the statement."""
        return {
            "operation": self.operation,
            "text": self.text,
            "parameters": jsonable(self.parameters),
        }


def _candidate_dict(c: Candidate) -> dict[str, Any]:
    return {
        "field": c.field,
        "value": jsonable(c.value),
        "documents": c.documents,
        "score": c.score,
    }


@dataclass(frozen=True, slots=True)
class FollowUp:
    """The question to ask back: `parameter` could not be settled from `text`; `candidates`
    are what `aresolve` returned (several partial matches, or none), `question` the sentence
    to put to the user."""

    parameter: str
    text: str
    candidates: list[Candidate]
    question: str

    @property
    def not_found(self) -> bool:
        """Whether nothing matched the text (no candidate at all)."""
        return not self.candidates

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict of the follow-up."""
        return {
            "parameter": self.parameter,
            "text": self.text,
            "candidates": [_candidate_dict(c) for c in self.candidates],
            "question": self.question,
        }


def _stats_dict(stats: TraversalStats) -> dict[str, Any]:
    return {
        "plan": stats.plan,
        "scope_size": stats.scope_size,
        "rounds": stats.rounds,
        "queries": stats.queries_by_kind,
        "rows": stats.total_rows,
        "seconds": round(stats.seconds, 6),
        "explain": stats.explain(),
    }


@dataclass(slots=True)
class ToolAnswer:
    """One run's answer: results (`nodes`, `text`, `stats`) or, when an entity could not be
    settled, a `follow_up` (then `nodes` is empty, `stats` None and `text` the question).
    `statements` lists what was sent either way; `arguments` are the checked arguments and
    `resolved` the candidate taken for each entity given."""

    nodes: list[Node]
    text: str
    statements: list[Statement]
    stats: TraversalStats | None = None
    follow_up: FollowUp | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    resolved: dict[str, Candidate] = field(default_factory=dict)
    title_field: str = "title"
    year_field: str = "year"

    @property
    def is_follow_up(self) -> bool:
        """Whether the answer is a question for the user rather than results."""
        return self.follow_up is not None

    def html(self, *, title: str = "hoprag search") -> str:
        """The results as one self-contained HTML page (`hoprag.picture.render_html`): each
        node in the column of its scope depth, linked along the path that put it in the
        scope, labelled by its title; the topic as the page's query."""
        from hoprag.picture import render_html

        topic = self.arguments.get("topic")
        return render_html(
            self.nodes,
            title=title,
            query=topic if isinstance(topic, str) else None,
            label_field=self.title_field,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict: arguments, resolved entities, results (id, title, year, score,
        depth, path, content, metadata), text, statements, follow-up and stats (plan, scope
        size, rounds, queries by kind, rows, seconds and the `explain()` text)."""
        results = [
            {
                "id": n.id,
                "title": jsonable(field_of(n, self.title_field)),
                "year": jsonable(field_of(n, self.year_field)),
                "score": jsonable(float(n.similarity_score)),
                "depth": n.depth,
                "path": list(n.path.nodes),
                "content": n.content,
                "metadata": jsonable(dict(n.metadata)),
            }
            for n in self.nodes
        ]
        return {
            "arguments": jsonable(self.arguments),
            "resolved": {k: _candidate_dict(c) for k, c in self.resolved.items()},
            "results": results,
            "text": self.text,
            "statements": [s.to_dict() for s in self.statements],
            "follow_up": self.follow_up.to_dict() if self.follow_up is not None else None,
            "stats": _stats_dict(self.stats) if self.stats is not None else None,
        }


def field_of(node: Node, name: str) -> Any:
    """The node's metadata field `name` (a dotted name reaches into nested objects, as in
    filters and edges), or None when it has none."""
    value = nested_get(node.metadata, name)
    return None if value is MISSING else value


def render_nodes(
    nodes: Sequence[Node], *, title_field: str = "title", year_field: str = "year", noun: str
) -> str:
    """The nodes as numbered entries for an LLM's context: `[1] Title (year), id: ...` and the
    content on the next line; a sentence saying nothing matched when there are none."""
    if not nodes:
        return f"No {noun} matched the search."
    out = []
    for i, n in enumerate(nodes, 1):
        title = field_of(n, title_field) or n.id
        year = field_of(n, year_field)
        head = f"[{i}] {title}" + (f" ({year})" if year not in (None, "") else "")
        out.append(f"{head}, id: {n.id}\n{n.content}")
    return "\n\n".join(out)


# --- the JSON schema of `ToolAnswer.to_dict()` --------------------------------------------------

_ANY = {"description": "any JSON value"}
_NULLABLE_INT = {"type": ["integer", "null"]}
_CANDIDATE = {
    "type": "object",
    "properties": {
        "field": {"type": "string"},
        "value": _ANY,
        "documents": {"type": "integer", "minimum": 0},
        "score": {"type": "number"},
    },
    "required": ["field", "value", "documents", "score"],
}
_RESULT = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "title": _ANY,
        "year": _ANY,
        "score": {"type": ["number", "null"], "description": "null when no topic ranked it"},
        "depth": {"type": "integer", "minimum": 0},
        "path": {"type": "array", "items": {"type": "string"}},
        "content": {"type": "string"},
        "metadata": {"type": "object"},
    },
    "required": ["id", "title", "year", "score", "depth", "path", "content", "metadata"],
}
_STATEMENT = {
    "type": "object",
    "properties": {
        "operation": {"type": "string", "enum": ["resolve", "search", "cql"]},
        "text": {"type": "string"},
        "parameters": {"type": ["object", "array"]},
    },
    "required": ["operation", "text", "parameters"],
}
_FOLLOW_UP = {
    "type": "object",
    "properties": {
        "parameter": {"type": "string"},
        "text": {"type": "string"},
        "candidates": {"type": "array", "items": _CANDIDATE},
        "question": {"type": "string"},
    },
    "required": ["parameter", "text", "candidates", "question"],
}
_STATS = {
    "type": "object",
    "properties": {
        "plan": {"type": ["string", "null"]},
        "scope_size": _NULLABLE_INT,
        "rounds": {"type": "integer", "minimum": 0},
        "queries": {"type": "object", "additionalProperties": {"type": "integer"}},
        "rows": {"type": "integer", "minimum": 0},
        "seconds": {"type": "number", "minimum": 0},
        "explain": {"type": "string"},
    },
    "required": ["plan", "scope_size", "rounds", "queries", "rows", "seconds", "explain"],
}
ANSWER_JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "hoprag search answer",
    "description": (
        "The results of a search, or a follow-up question when a name could not be settled "
        "(then results is empty, stats null and follow_up the question)."
    ),
    "type": "object",
    "properties": {
        "arguments": {"type": "object"},
        "resolved": {"type": "object", "additionalProperties": _CANDIDATE},
        "results": {"type": "array", "items": _RESULT},
        "text": {"type": "string"},
        "statements": {"type": "array", "items": _STATEMENT},
        "follow_up": {"oneOf": [{"type": "null"}, _FOLLOW_UP]},
        "stats": {"oneOf": [{"type": "null"}, _STATS]},
    },
    "required": ["arguments", "resolved", "results", "text", "statements", "follow_up", "stats"],
}
"""The JSON schema (2020-12) every `ToolAnswer.to_dict()` satisfies: MCP's output schema of the
tool, which clients check each structured result against."""
