"""The parameters a `SearchTool` declares, and the pydantic model (`args_schema`) built from them.

Each declaration is one argument an LLM may fill, with its description:

* `Topic`: free text the results are ranked by (embedded); `examples` are the few-shot hints
  an LLM sees in the schema. Without a topic, a tool lists the newest documents instead.
* `Entity`: a name the user typed, resolved against `fields` with `Store.aresolve` ("fonda" ->
  "Henry Fonda" in `cast`). Without `scope_edges` the chosen value is an equality filter on its
  field; with them the entity anchors a graph scope, `Scope(start={field: value},
  edges=scope_edges, max_depth=scope_depth)` ("films by the directors of her films").
* `Choice`: an enum, each option mapped to a filter (`reviews`: "positive" ->
  `{"tomato_meter": {"$gte": 60}}`).
* `Range`: a bound on a numeric `field` (`year_from` -> `{"year": {"$gte": v}}`).
* `Value`: a string compared for equality with `field` as given, not resolved (for values an
  LLM can name exactly, such as countries).
* `Limit`: how many results (default 10, at most 50).

`build_args_model` turns the declarations into a pydantic v2 model class (`extra="forbid"`,
a description per field, `Literal` enums for choices, examples on topics and entities, whole
example calls on the model); `validate_arguments` checks a call's arguments with it and turns
pydantic's `ValidationError` into an `InvalidInputError` that names the parameter, the bad
value and what is allowed. Every parameter but `Limit` is optional (None: not given)."""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from hoprag.edges import EdgeSpec, parse_edges
from hoprag.errors import InvalidInputError, invalid
from hoprag.filters import Filter, compile_filter
from hoprag.resolve import MAX_TEXT_CHARS
from hoprag.scopes import MAX_SCOPE_DEPTH
from hoprag.validation import MAX_INT, MIN_INT, check_field, check_int

__all__ = [
    "MAX_LIMIT",
    "MAX_TOPIC_CHARS",
    "Choice",
    "Entity",
    "Limit",
    "Parameter",
    "Range",
    "Topic",
    "Value",
    "arguments_error",
    "build_args_model",
    "validate_arguments",
]

MAX_TOPIC_CHARS = 500
"""The longest topic a tool accepts (characters)."""
MAX_LIMIT = 1000
"""The largest `Limit.maximum` a tool may declare."""

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def _check_name(name: Any, what: str) -> str:
    """A parameter name: lower-case letters, digits and underscores, starting with a letter
    (it is a pydantic field, a JSON property and, with dashes, a CLI flag)."""
    allowed = "a lower-case identifier such as 'year_from' (letters, digits, _; at most 64)"
    if not isinstance(name, str) or not _NAME.match(name) or keyword.iskeyword(name):
        raise invalid(what, name, allowed)
    if name.startswith("model_"):
        raise invalid(what, name, allowed, hint="names starting with 'model_' are pydantic's")
    return name


def _check_description(description: Any, what: str) -> str:
    if not isinstance(description, str) or not description.strip():
        raise invalid(what, description, "a non-empty description (the LLM reads it)")
    return description


def _strings(values: Any, what: str, *, max_chars: int) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise invalid(what, values, "a list of strings")
    out = tuple(values)
    for v in out:
        if not isinstance(v, str) or not v or len(v) > max_chars:
            raise invalid(what, v, f"a string of 1..{max_chars} characters")
    return out


def _optional_text(description: str, max_chars: int, examples: Sequence[str]) -> tuple[Any, Any]:
    """The pydantic (annotation, field) of an optional text of 1..`max_chars` characters."""
    info = Field(
        None,
        description=description,
        min_length=1,
        max_length=max_chars,
        examples=list(examples) or None,
    )
    return str | None, info


@dataclass(frozen=True, slots=True)
class Topic:
    """The free-text topic the results are ranked by (similarity to its embedding); optional
    in a call: without it the tool lists the newest documents matching the other parameters.
    `examples` are shown to the LLM in the schema."""

    description: str
    examples: Sequence[str] = ()
    name: str = "topic"

    def __post_init__(self) -> None:
        _check_name(self.name, "Topic name")
        _check_description(self.description, "Topic description")
        examples = _strings(self.examples, "Topic examples", max_chars=MAX_TOPIC_CHARS)
        object.__setattr__(self, "examples", examples)

    def pydantic_field(self) -> tuple[Any, Any]:
        """The pydantic (annotation, field) of this parameter."""
        return _optional_text(self.description, MAX_TOPIC_CHARS, self.examples)

    def allowed(self) -> str:
        """What a call may give, for error messages."""
        return f"a text of 1..{MAX_TOPIC_CHARS} characters, or null"


@dataclass(frozen=True, slots=True)
class Entity:
    """A name resolved against `fields` (`Store.aresolve`): the chosen value becomes the
    equality filter `{field: value}`, or, with `scope_edges`, the anchor of the scope
    `Scope(start={field: value}, edges=scope_edges, max_depth=scope_depth)`."""

    name: str
    fields: Sequence[str]
    description: str
    scope_edges: Sequence[EdgeSpec] | None = None
    examples: Sequence[str] = ()
    scope_depth: int = 1

    def __post_init__(self) -> None:
        _set = object.__setattr__
        _check_name(self.name, "Entity name")
        _check_description(self.description, f"Entity {self.name!r} description")
        fields = self.fields
        if isinstance(fields, str) or not isinstance(fields, Iterable) or not fields:
            raise invalid(f"Entity {self.name!r} fields", fields, "a non-empty list of fields")
        checked = tuple(dict.fromkeys(check_field(f, what="an Entity field") for f in fields))
        _set(self, "fields", checked)
        examples = _strings(self.examples, f"Entity {self.name!r} examples", max_chars=200)
        _set(self, "examples", examples)
        if self.scope_edges is not None:
            edges = self.scope_edges
            if isinstance(edges, str | bytes) or not isinstance(edges, Iterable):
                raise invalid(f"Entity {self.name!r} scope_edges", edges, "a list of edge specs")
            edges = tuple(edges)
            if not edges:
                raise invalid(f"Entity {self.name!r} scope_edges", edges, "at least one edge")
            parse_edges(edges)  # checked now
            _set(self, "scope_edges", edges)
        depth = check_int(
            f"Entity {self.name!r} scope_depth",
            self.scope_depth,
            minimum=1,
            maximum=MAX_SCOPE_DEPTH,
        )
        _set(self, "scope_depth", depth)

    @property
    def is_scope(self) -> bool:
        """Whether the entity anchors a graph scope (it has `scope_edges`)."""
        return self.scope_edges is not None

    def pydantic_field(self) -> tuple[Any, Any]:
        """The pydantic (annotation, field) of this parameter."""
        return _optional_text(self.description, MAX_TEXT_CHARS, self.examples)

    def allowed(self) -> str:
        """What a call may give, for error messages."""
        return f"a name of 1..{MAX_TEXT_CHARS} characters (matched against {list(self.fields)})"


@dataclass(frozen=True, slots=True)
class Choice:
    """An enum: each option (a string) stands for a filter, e.g. `options={"positive":
    {"tomato_meter": {"$gte": 60}}, "negative": {"tomato_meter": {"$lte": 40}}}`."""

    name: str
    options: Mapping[str, Filter]
    description: str

    def __post_init__(self) -> None:
        _check_name(self.name, "Choice name")
        _check_description(self.description, f"Choice {self.name!r} description")
        opts = self.options
        if not isinstance(opts, Mapping) or not opts:
            raise invalid(f"Choice {self.name!r} options", opts, "a non-empty mapping")
        for key, flt in opts.items():
            if not isinstance(key, str) or not key:
                raise invalid(f"Choice {self.name!r} option", key, "a non-empty string")
            if not isinstance(flt, Mapping) or not flt:
                raise invalid(f"Choice {self.name!r} option {key!r}", flt, "a non-empty filter")
            compile_filter(flt)  # checked now
        object.__setattr__(self, "options", {k: dict(v) for k, v in opts.items()})

    def pydantic_field(self) -> tuple[Any, Any]:
        """The pydantic (annotation, field) of this parameter: a `Literal` of the options."""
        return Literal[tuple(self.options)] | None, Field(None, description=self.description)

    def allowed(self) -> str:
        """What a call may give, for error messages."""
        return f"one of {', '.join(map(repr, self.options))}, or null"


@dataclass(frozen=True, slots=True)
class Range:
    """A bound on the numeric `field`: `bound="gte"` gives `{field: {"$gte": value}}`, "lte"
    `{field: {"$lte": value}}`. `kind` is int (the default) or float; `minimum` and `maximum`
    bound what a call may give."""

    name: str
    field: str
    bound: Literal["gte", "lte"]
    description: str
    kind: type = int
    minimum: float | None = None
    maximum: float | None = None

    def __post_init__(self) -> None:
        _check_name(self.name, "Range name")
        check_field(self.field, what=f"Range {self.name!r} field")
        if self.bound not in ("gte", "lte"):
            raise invalid(f"Range {self.name!r} bound", self.bound, "'gte' or 'lte'")
        _check_description(self.description, f"Range {self.name!r} description")
        if self.kind not in (int, float):
            raise invalid(f"Range {self.name!r} kind", self.kind, "int or float")
        for what, v in (("minimum", self.minimum), ("maximum", self.maximum)):
            if v is not None and (
                isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v)
            ):
                raise invalid(f"Range {self.name!r} {what}", v, "a finite number or None")

    @property
    def operator(self) -> str:
        """The filter operator: "$gte" or "$lte"."""
        return f"${self.bound}"

    def pydantic_field(self) -> tuple[Any, Any]:
        """The pydantic (annotation, field) of this parameter (a strict number: no strings,
        no booleans)."""
        lo, hi = self.bounds
        info = Field(None, description=self.description, strict=True, ge=lo, le=hi)
        return self.kind | None, info

    @property
    def bounds(self) -> tuple[float | None, float | None]:
        """The (minimum, maximum) a call may give: the declared ones, and for an int at most
        what the filter language holds (int64), so that a call beyond it is refused naming
        this parameter, not the filter built from it."""
        if self.kind is not int:
            return self.minimum, self.maximum
        lo = MIN_INT if self.minimum is None else max(self.minimum, MIN_INT)
        hi = MAX_INT if self.maximum is None else min(self.maximum, MAX_INT)
        return lo, hi

    def allowed(self) -> str:
        """What a call may give, for error messages."""
        kind = "an integer" if self.kind is int else "a number"
        lo, hi = self.bounds
        lo_text = "" if lo is None else f" >= {_bound_text(lo)}"
        hi_text = "" if hi is None else f" <= {_bound_text(hi)}"
        both = " and".join(p for p in (lo_text, hi_text) if p)
        return f"{kind}{both}, or null"


def _bound_text(bound: float) -> str:
    """A bound for a message: an int as it is, a float in its short form."""
    return str(bound) if isinstance(bound, int) else f"{bound:g}"


@dataclass(frozen=True, slots=True)
class Value:
    """A string compared for equality with `field` as given (not resolved): `{field: value}`.
    For values an LLM can name exactly (a country), where `Entity` needs a resolvable field."""

    name: str
    field: str
    description: str
    examples: Sequence[str] = ()

    def __post_init__(self) -> None:
        _check_name(self.name, "Value name")
        check_field(self.field, what=f"Value {self.name!r} field")
        _check_description(self.description, f"Value {self.name!r} description")
        examples = _strings(self.examples, f"Value {self.name!r} examples", max_chars=200)
        object.__setattr__(self, "examples", examples)

    def pydantic_field(self) -> tuple[Any, Any]:
        """The pydantic (annotation, field) of this parameter."""
        info = Field(
            None,
            description=self.description,
            min_length=1,
            max_length=200,
            examples=list(self.examples) or None,
        )
        return str | None, info

    def allowed(self) -> str:
        """What a call may give, for error messages."""
        return "a text of 1..200 characters, or null"


@dataclass(frozen=True, slots=True)
class Limit:
    """How many results a call asks for: an integer 1..`maximum`, `default` when not given
    or null (models often send null for an optional parameter)."""

    default: int = 10
    maximum: int = 50
    description: str = "How many results to return."
    name: str = "limit"

    def __post_init__(self) -> None:
        _check_name(self.name, "Limit name")
        check_int("Limit maximum", self.maximum, minimum=1, maximum=MAX_LIMIT)
        check_int("Limit default", self.default, minimum=1, maximum=self.maximum)
        _check_description(self.description, "Limit description")

    def pydantic_field(self) -> tuple[Any, Any]:
        """The pydantic (annotation, field) of this parameter (a strict integer, or null)."""
        info = Field(
            self.default,
            description=f"{self.description} Default {self.default}, at most {self.maximum}.",
            strict=True,
            ge=1,
            le=self.maximum,
        )
        return int | None, info

    def allowed(self) -> str:
        """What a call may give, for error messages."""
        return f"an integer in 1..{self.maximum}"


Parameter: TypeAlias = Topic | Entity | Choice | Range | Value | Limit
"""Any parameter declaration."""

_KINDS = (Topic, Entity, Choice, Range, Value, Limit)


def check_parameters(parameters: Any) -> tuple[Parameter, ...]:
    """`parameters` as a tuple of declarations: each a `Parameter`, names unique, at most one
    `Topic` and one `Limit`."""
    if isinstance(parameters, str | bytes) or not isinstance(parameters, Iterable):
        raise invalid("parameters", parameters, "a list of parameter declarations")
    out = tuple(parameters)
    seen: set[str] = set()
    for p in out:
        if not isinstance(p, _KINDS):
            allowed = "a Topic, Entity, Choice, Range, Value or Limit"
            raise invalid("parameters", p, allowed)
        if p.name in seen:
            raise invalid("parameters", p.name, "parameters with distinct names")
        seen.add(p.name)
    for kind in (Topic, Limit):
        if sum(isinstance(p, kind) for p in out) > 1:
            raise invalid("parameters", kind.__name__, f"at most one {kind.__name__}")
    return out


def build_args_model(
    name: str,
    description: str,
    parameters: Sequence[Parameter],
    examples: Sequence[Mapping[str, Any]] = (),
) -> type[BaseModel]:
    """The pydantic model of a tool's arguments: one optional field per declaration (the
    `Limit` has its default), unknown arguments refused (`extra="forbid"`), the tool's
    `description` as the model's, and `examples` (whole argument objects, each checked here
    by the model itself) as the schema's `examples`."""
    params = check_parameters(parameters)
    fields = {p.name: p.pydantic_field() for p in params}
    extra: Any = {"examples": [dict(e) for e in examples]} if examples else None
    config = ConfigDict(extra="forbid", title=name, json_schema_extra=extra)
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        f"{name}_arguments", __config__=config, __doc__=description, **fields
    )
    for i, example in enumerate(examples):
        try:
            model.model_validate(example)
        except ValidationError as exc:
            detail = arguments_error(exc, params)
            hint = str(detail)
            raise invalid(
                f"examples[{i}]", example, "arguments the tool accepts", hint=hint
            ) from None
    return model


def _problem(err: Mapping[str, Any], by_name: Mapping[str, Parameter]) -> InvalidInputError:
    loc = err.get("loc") or ()
    name = str(loc[0]) if loc else "arguments"
    value = err.get("input")
    if err.get("type") == "extra_forbidden" or name not in by_name:
        known = ", ".join(by_name)
        return InvalidInputError(
            f"unknown parameter {name!r} (given {value!r}); the parameters are: {known}",
            argument=name,
            value=value,
            allowed=f"one of the parameters {known}",
        )
    return invalid(name, value, by_name[name].allowed())


def arguments_error(exc: ValidationError, parameters: Sequence[Parameter]) -> InvalidInputError:
    """pydantic's `ValidationError` for a call as one `InvalidInputError`: its argument, value
    and allowed are the first problem's; its message lists every problem ("reviews must be one
    of 'positive', 'negative', or null, got 'good'")."""
    by_name = {p.name: p for p in parameters}
    problems = [_problem(err, by_name) for err in exc.errors(include_url=False)]
    if not problems:  # pydantic always reports one; kept total
        return InvalidInputError(str(exc), argument="arguments")
    first = problems[0]
    message = "; ".join(str(p) for p in problems)
    return InvalidInputError(
        message, argument=first.argument, value=first.value, allowed=first.allowed
    )


def validate_arguments(
    model: type[BaseModel], parameters: Sequence[Parameter], arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """The checked arguments of a call (every parameter present, None when not given, the
    `Limit` defaulted), or the `InvalidInputError` of `arguments_error`."""
    if not isinstance(arguments, Mapping):
        raise invalid("arguments", arguments, "a mapping of parameter names to values")
    try:
        checked = model.model_validate(dict(arguments))
    except ValidationError as exc:
        raise arguments_error(exc, parameters) from None
    values = checked.model_dump()
    for p in parameters:
        if isinstance(p, Limit) and values[p.name] is None:
            values[p.name] = p.default
    return values
