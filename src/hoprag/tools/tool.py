"""`SearchTool`: graph-scoped search as one function an LLM agent calls with structured arguments.

A tool is declared once per dataset (`hoprag.tools.schema`: `Topic`, `Entity`, `Choice`,
`Range`, `Value`, `Limit`) and run with `await tool.arun(**arguments)` (sync: `tool.run`):

1. The arguments are checked by `tool.args_schema` (pydantic); a wrong type, a value outside
   an enum or an unknown parameter is an `InvalidInputError` naming the parameter, the value
   and what is allowed, before anything is sent. So are two scope entities in one call (a
   search has one scope: the call must choose) and a `gte` range above an `lte` range on the
   same field.
2. Each entity given is resolved with `store.aresolve(text, entity.fields, limit=10)`, in
   declaration order. An exact match (`Candidate.exact`: normalised equality, case, accents
   and spacing ignored; the same words in another order or with other punctuation, "Keith,
   David" for "Keith David", are not one) is taken without asking; when several fields hold
   one, the first of `entity.fields` wins (then the value carried by more documents, as
   `aresolve` orders them).
   A single candidate is taken too. No candidate, or several partial ones, make the answer a
   `FollowUp` for the first such entity: no search is run.
3. The query: the scope entity's value anchors `Scope(start={field: value},
   edges=entity.scope_edges, max_depth=entity.scope_depth)`; the other entities
   (`{field: value}`), choices (their option's filter), ranges and values are ANDed into one
   filter. `asearch(topic, k=limit, scope=..., filter=..., order_by=...)` ranks by the topic or,
   without one, lists the newest first (`order_by="-<order_field>"`), which needs at least one
   other parameter to narrow the search (an `InvalidInputError` on `topic` otherwise).
4. The answer (`hoprag.tools.answer.ToolAnswer`) holds the nodes, a numbered text for the
   LLM, the statements (each `aresolve` and the `asearch` with its values as parameters, and
   on a CassandraStore the CQL statements each sent, with their bound values) and the stats.

`tool.openai_schema()` is the function-calling declaration; `tool.as_langchain()` a LangChain
`StructuredTool` (needs `hoprag[langchain]`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from hoprag import telemetry
from hoprag.errors import InvalidInputError, invalid
from hoprag.filters import Filter
from hoprag.recording import Call, record_statements
from hoprag.resolve import Candidate, check_resolve
from hoprag.scopes import DEFAULT_MAX_SIZE, Scope, ScopeTooLargeError
from hoprag.search import asearch
from hoprag.stats import TraversalResult
from hoprag.stores.base import Store
from hoprag.sync import run_sync
from hoprag.tools.answer import FollowUp, Statement, ToolAnswer, jsonable, render_nodes
from hoprag.tools.schema import (
    Choice,
    Entity,
    Limit,
    Parameter,
    Range,
    Topic,
    Value,
    build_args_model,
    check_parameters,
    validate_arguments,
)
from hoprag.validation import check_field, check_int

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

__all__ = ["RESOLVE_LIMIT", "SearchTool", "check_call", "choose_candidate", "merge_filters"]

RESOLVE_LIMIT = 10
"""Candidates asked of `aresolve` per entity (and shown in a follow-up at most)."""
DEFAULT_LIMIT = 10
"""Results of a tool that declares no `Limit`."""

_TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
RESOLVE_TEXT = "store.aresolve(text, fields, limit=limit)"
SEARCH_TEXT = "asearch(query, store, k=k, scope=scope, filter=filter, order_by=order_by)"


def choose_candidate(entity: Entity, candidates: Sequence[Candidate]) -> Candidate | None:
    """The candidate a tool takes without asking: an exact match (the first of
    `entity.fields` when several fields hold one, then `aresolve`'s order), else the only
    candidate; None when there is none or several partial ones. Exactness is the
    candidate's `exact` (a token match scoring 1.0 is asked about like any other)."""
    exact = [c for c in candidates if c.exact]
    if exact:
        position = {f: i for i, f in enumerate(entity.fields)}
        return min(exact, key=lambda c: position.get(c.field, len(position)))  # stable
    return candidates[0] if len(candidates) == 1 else None


def _is_operators(cond: Any) -> bool:
    return isinstance(cond, Mapping) and bool(cond) and all(str(k).startswith("$") for k in cond)


def merge_filters(parts: Sequence[Filter]) -> dict[str, Any] | None:
    """The AND of `parts` as one filter: fields merged into one mapping (operator dicts on one
    field merged when their operators differ), or `{"$and": parts}` when two parts constrain
    a field in ways one mapping cannot hold; None for no part."""
    if not parts:
        return None
    out: dict[str, Any] = {}
    for part in parts:
        for key, cond in part.items():
            if key not in out:
                out[key] = dict(cond) if _is_operators(cond) else cond
                continue
            have = out[key]
            mergeable = not key.startswith("$") and _is_operators(have) and _is_operators(cond)
            if not mergeable or set(have) & set(cond):
                return {"$and": [dict(p) for p in parts]}
            have.update(cond)
    return out


def _noun_for(noun: str, n: int) -> str:
    if n == 1 and noun.endswith("s"):
        return noun[:-1]
    return noun


def _question(entity: Entity, text: str, candidates: Sequence[Candidate], noun: str) -> str:
    if not candidates:
        return (
            f"Nothing matched {text!r} for {entity.name} (looked in "
            f"{', '.join(entity.fields)}). Check the spelling, or give the full name."
        )
    shown = [
        f"{c.value} ({c.field}, {c.documents} {_noun_for(noun, c.documents)})" for c in candidates
    ]
    listing = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
    return f"Which did you mean by {text!r} for {entity.name}: {listing}?"


def _cql(log: Sequence[Call]) -> list[Statement]:
    return [Statement("cql", text, jsonable(list(params))) for text, params in log]


def _scope_dict(scope: Scope | None) -> dict[str, Any] | None:
    if scope is None:
        return None
    edges = scope.edges if isinstance(scope.edges, tuple) else ()
    return {
        "start": dict(scope.start or {}),
        "edges": [list(e) if isinstance(e, tuple) else e for e in edges],
        "max_depth": scope.max_depth,
    }


def check_call(
    model: type[BaseModel],
    parameters: Sequence[Parameter],
    arguments: Mapping[str, Any],
    *,
    order_field: str | None = "year",
    noun: str = "documents",
) -> dict[str, Any]:
    """A call's arguments checked by `model` (`validate_arguments`), then as a whole: at most
    one scope entity given, no `gte` range above an `lte` range on the same field, each
    entity's text one that can be resolved (`hoprag.resolve.check_resolve`), and a topic
    unless the tool lists by `order_field` and another parameter narrows the listing. The one
    check of a call: it needs no store, so a command line runs it before it connects."""
    values = validate_arguments(model, parameters, arguments)
    _check_one_scope(parameters, values)
    _check_ranges_meet(parameters, values)
    _check_entity_texts(parameters, values)
    _check_topic(parameters, values, order_field, noun)
    return values


def _check_entity_texts(parameters: Sequence[Parameter], values: Mapping[str, Any]) -> None:
    """Refuse an entity text no store could resolve (no letter or digit, too long), naming
    the parameter."""
    for entity in (p for p in parameters if isinstance(p, Entity)):
        text = values[entity.name]
        if text is None:
            continue
        try:
            check_resolve(text, entity.fields, RESOLVE_LIMIT)
        except InvalidInputError as exc:
            raise invalid(entity.name, text, exc.allowed or entity.allowed()) from None


def _check_topic(
    parameters: Sequence[Parameter], values: Mapping[str, Any], order_field: str | None, noun: str
) -> None:
    """Refuse a call without a topic unless the tool lists by `order_field` and another
    parameter narrows the listing."""
    topics = [p for p in parameters if isinstance(p, Topic)]
    if topics and values[topics[0].name] is not None:
        return
    name = topics[0].name if topics else "topic"
    if order_field is None:
        raise invalid(name, None, "a text (this tool ranks only by its topic)")
    narrowing = [p for p in parameters if not isinstance(p, Topic | Limit)]
    if all(values[p.name] is None for p in narrowing):
        others = ", ".join(p.name for p in narrowing)
        raise invalid(
            name,
            None,
            f"a text, unless one of {others} narrows the search",
            hint=f"without a topic the newest {noun} matching the others are listed",
        )


def _check_one_scope(parameters: Sequence[Parameter], values: Mapping[str, Any]) -> None:
    """Refuse a call that gives two scope entities."""
    scopes = [
        p.name
        for p in parameters
        if isinstance(p, Entity) and p.is_scope and values[p.name] is not None
    ]
    if len(scopes) > 1:
        raise invalid(
            scopes[1],
            values[scopes[1]],
            f"not given together with {scopes[0]!r}: a search has one scope",
            hint=f"give one of {', '.join(map(repr, scopes))} per call",
        )


def _check_ranges_meet(parameters: Sequence[Parameter], values: Mapping[str, Any]) -> None:
    """Refuse a `gte` range above an `lte` range on the same field."""
    given = [p for p in parameters if isinstance(p, Range) and values[p.name] is not None]
    highs = {(r.field, r.name): values[r.name] for r in given if r.bound == "lte"}
    for lo in (r for r in given if r.bound == "gte"):
        for (field, name), high in highs.items():
            if field == lo.field and values[lo.name] > high:
                raise invalid(
                    lo.name,
                    values[lo.name],
                    f"at most {name} ({high!r}): nothing lies between them",
                )


class SearchTool:
    """A search an LLM agent calls with structured arguments (see the module docstring).

    `name` (letters, digits, `_`, `-`; at most 64) and `description` are what the LLM sees;
    `store` is searched; `parameters` are the declarations. `order_field` is the field that
    orders results, newest first, when no topic is given (None: a topic is required);
    `title_field` and `year_field` are shown in the answer's text; `noun` names the documents
    in messages ("films"); `examples` are whole example calls, shown in the schema and checked
    here."""

    def __init__(
        self,
        name: str,
        description: str,
        store: Store,
        parameters: Sequence[Parameter],
        *,
        order_field: str | None = "year",
        title_field: str = "title",
        year_field: str = "year",
        noun: str = "documents",
        examples: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise invalid("name", name, "1..64 letters, digits, '_' or '-', starting with a letter")
        if not isinstance(description, str) or not description.strip():
            raise invalid("description", description, "a non-empty description")
        if not isinstance(store, Store):
            raise invalid("store", store, "a hoprag Store")
        self.name = name
        self.description = description
        self.store = store
        self.parameters: tuple[Parameter, ...] = check_parameters(parameters)
        self.order_field = None if order_field is None else check_field(order_field)
        self.title_field = check_field(title_field, what="title_field")
        self.year_field = check_field(year_field, what="year_field")
        if not isinstance(noun, str) or not noun:
            raise invalid("noun", noun, "a non-empty plural noun such as 'films'")
        self.noun = noun
        self.examples = [dict(e) for e in examples]
        self.args_schema: type[BaseModel] = build_args_model(
            name, description, self.parameters, self.examples
        )

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self.parameters)
        return f"SearchTool(name={self.name!r}, parameters=[{names}], store={self.store!r})"

    # -- schema ------------------------------------------------------------------------------

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (draft 2020-12, from `args_schema`)."""
        return self.args_schema.model_json_schema()

    def openai_schema(self) -> dict[str, Any]:
        """The OpenAI function-calling declaration: `{"type": "function", "function":
        {"name", "description", "parameters"}}`."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.json_schema(),
            },
        }

    def check_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The checked arguments of a call (every parameter present, None when not given), or
        an `InvalidInputError` naming the parameter (see the module docstring, step 1)."""
        return check_call(
            self.args_schema,
            self.parameters,
            arguments,
            order_field=self.order_field,
            noun=self.noun,
        )

    def _of(self, kind: type[Any]) -> list[Any]:
        return [p for p in self.parameters if isinstance(p, kind)]

    # -- running -----------------------------------------------------------------------------

    async def arun(self, **arguments: Any) -> ToolAnswer:
        """Check the arguments, resolve the entities, search (see the module docstring);
        an `InvalidInputError` for malformed arguments, a `ToolAnswer` otherwise (results, or
        a follow-up when an entity is ambiguous or unknown)."""
        values = self.check_arguments(arguments)
        span = telemetry.start_tool(self.name)
        try:
            with telemetry.traced(span):
                answer = await self._answer(values)
        except Exception as exc:
            telemetry.end_span(span, exc)
            raise
        telemetry.end_span(span)
        return answer

    async def _answer(self, values: dict[str, Any]) -> ToolAnswer:
        """`arun` after the argument checks."""
        statements: list[Statement] = []
        with record_statements() as log:
            resolved, follow_up = await self._resolve(values, statements, log)
            if follow_up is not None:
                return ToolAnswer(
                    nodes=[], text=follow_up.question, statements=statements, stats=None,
                    follow_up=follow_up, arguments=values, resolved=resolved,
                    title_field=self.title_field, year_field=self.year_field,
                )  # fmt: skip
            result = await self._search(values, resolved, statements, log)
        text = render_nodes(
            result, title_field=self.title_field, year_field=self.year_field, noun=self.noun
        )
        return ToolAnswer(
            nodes=list(result), text=text, statements=statements, stats=result.stats,
            follow_up=None, arguments=values, resolved=resolved,
            title_field=self.title_field, year_field=self.year_field,
        )  # fmt: skip

    def run(self, **arguments: Any) -> ToolAnswer:
        """Synchronous `arun` (`hoprag.sync.run_sync`: inside or outside an event loop)."""
        return run_sync(functools.partial(self.arun, **arguments))

    async def _resolve(
        self, values: Mapping[str, Any], statements: list[Statement], log: list[Call]
    ) -> tuple[dict[str, Candidate], FollowUp | None]:
        """Each given entity's candidate, and the follow-up of the first that needs one."""
        resolved: dict[str, Candidate] = {}
        follow_up: FollowUp | None = None
        for entity in self._of(Entity):
            text = values[entity.name]
            if text is None:
                continue
            statements.append(
                Statement("resolve", RESOLVE_TEXT, {"parameter": entity.name, "text": text,
                          "fields": list(entity.fields), "limit": RESOLVE_LIMIT})
            )  # fmt: skip
            mark = len(log)
            try:
                candidates = await self.store.aresolve(text, entity.fields, limit=RESOLVE_LIMIT)
            except InvalidInputError as exc:
                if exc.argument != "text":
                    raise
                raise invalid(entity.name, text, exc.allowed or entity.allowed()) from None
            statements.extend(_cql(log[mark:]))
            chosen = choose_candidate(entity, candidates)
            if chosen is not None:
                resolved[entity.name] = chosen
            elif follow_up is None:
                question = _question(entity, text, candidates, self.noun)
                follow_up = FollowUp(entity.name, text, list(candidates), question)
        return resolved, follow_up

    def query(
        self, values: Mapping[str, Any], resolved: Mapping[str, Candidate]
    ) -> tuple[Scope | None, dict[str, Any] | None]:
        """The scope and filter of a call's checked arguments and resolved entities."""
        scope: Scope | None = None
        parts: list[Filter] = []
        for p in self.parameters:
            value = values.get(p.name)
            if value is None or isinstance(p, Topic | Limit):
                continue
            if isinstance(p, Entity):
                c = resolved[p.name]
                if p.is_scope:
                    assert p.scope_edges is not None
                    scope = Scope(
                        start={c.field: c.value}, edges=p.scope_edges, max_depth=p.scope_depth
                    )
                else:
                    parts.append({c.field: c.value})
            elif isinstance(p, Choice):
                parts.append(p.options[value])
            elif isinstance(p, Range):
                parts.append({p.field: {p.operator: value}})
            elif isinstance(p, Value):
                parts.append({p.field: value})
        return scope, merge_filters(parts)

    def _ranking(self, values: Mapping[str, Any]) -> tuple[str | None, int, str | None]:
        """(topic, k, order_by) of a call."""
        topics = self._of(Topic)
        topic = values[topics[0].name] if topics else None
        limits = self._of(Limit)
        k = values[limits[0].name] if limits else DEFAULT_LIMIT
        if topic is not None:
            return topic, check_int("limit", k, minimum=1), None
        assert self.order_field is not None  # check_call: no topic needs an order field
        return None, k, f"-{self.order_field}"

    async def _search(
        self,
        values: Mapping[str, Any],
        resolved: Mapping[str, Candidate],
        statements: list[Statement],
        log: list[Call],
    ) -> TraversalResult:
        scope, flt = self.query(values, resolved)
        topic, k, order_by = self._ranking(values)
        statements.append(
            Statement("search", SEARCH_TEXT, {"query": topic, "k": k, "scope": _scope_dict(scope),
                      "filter": flt, "order_by": order_by})
        )  # fmt: skip
        mark = len(log)
        try:
            result = await asearch(
                topic, store=self.store, k=k, scope=scope, filter=flt, order_by=order_by
            )
        except ScopeTooLargeError as exc:
            raise self._too_many(scope, f"reach more than {exc.max_size:,}", values) from None
        except InvalidInputError as exc:
            if topic is not None or exc.argument != "filter":
                raise
            raise self._too_many(None, f"match more than {DEFAULT_MAX_SIZE:,}", values) from None
        statements.extend(_cql(log[mark:]))
        return result

    def _too_many(
        self, scope: Scope | None, how: str, values: Mapping[str, Any]
    ) -> InvalidInputError:
        """The error of a call whose scope or listing holds too many documents, naming only
        what the caller can change: this tool's own parameters (the store's limits, `Scope`
        and `max_size` are not the caller's to set)."""
        given = [n for n in self._names(values, given=True) if n not in self._names_of(Limit)]
        narrowing = self._names(values, given=False)
        scoped = [e.name for e in self._of(Entity) if e.is_scope and values.get(e.name)]
        what = f"the search through {scoped[0]}" if scope and scoped else "the listing"
        topics = self._names_of(Topic)
        fix = f"add one of {', '.join(narrowing)}" if narrowing else "narrow a parameter"
        if topics and scope is None:
            fix = f"give a {topics[0]}, or {fix}"
        return InvalidInputError(
            f"{what} would {how} {self.noun} with {', '.join(given) or 'these arguments'}; "
            f"{fix} to narrow the search",
            argument=given[0] if given else (topics[0] if topics else None),
            value=None,
            allowed=f"arguments matching fewer {self.noun}",
        )

    def _names_of(self, kind: type[Any]) -> list[str]:
        return [p.name for p in self._of(kind)]

    def _names(self, values: Mapping[str, Any], *, given: bool) -> list[str]:
        """The parameters given in `values` (`given`), or the narrowing ones not given."""
        if given:
            return [p.name for p in self.parameters if values.get(p.name) is not None]
        return [
            p.name
            for p in self.parameters
            if not isinstance(p, Topic | Limit) and values.get(p.name) is None
        ]

    # -- agents ------------------------------------------------------------------------------

    def as_langchain(self) -> StructuredTool:
        """This tool as a LangChain `StructuredTool` (sync and async; see
        `hoprag.tools.langchain`)."""
        from hoprag.tools.langchain import langchain_tool

        return langchain_tool(self)
