"""The filter language, compiled once per run into one expression every store understands.

A filter is a mapping of field names (dotted names reach into nested dicts) to conditions;
the fields are ANDed. A condition is

* a plain value: the field equals it or, when the field holds a list, contains it. A list value
  is matched as a whole (the field equals that list, or is a list containing it);
* an operator dict, its operators ANDed: `$eq` (the plain-value match), `$ne` (not `$eq`),
  `$gt`, `$gte`, `$lt`, `$lte` (ranges), `$in` / `$nin` (a non-empty list of JSON scalars:
  `$eq` one of them / `$eq` none of them) and `$exists` (true or false).

Beside the fields, a filter may hold `$and` and `$or`, each a non-empty list of filters (which
may hold `$and` / `$or` again, up to `MAX_NESTING` levels): `{"$or": [{"genre": "War"},
{"year": {"$lt": 1950}}], "country": "Italy"}`.

Semantics, the same in every store (one evaluator, `matches`, decides whatever a store checks
itself):

* `$ne` and `$nin` are the negations of `$eq` and `$in`: they hold for a document without the
  field (as in the Astra Data API), and on a list field they hold when no element (and not the
  list itself) equals the value.
* A range bound is a number (int or float, never a bool: ints and floats compare exactly by
  value, so `2**60 + 1 > 2**60` even where a float cannot tell them apart) or an ISO date given
  as a string: `'YYYY-MM-DD'` or an ISO datetime (`'2020-01-01T12:30:00'`, optionally with
  seconds' fractions and `Z` or `+HH:MM`). A date means its midnight, and a datetime without an
  offset is UTC. A document value of another type than the bound (a string against a number, a
  number or a non-date string against a date, a bool, None) does not satisfy the range; on a
  list field a range holds when any element satisfies it. A document without the field
  satisfies no range, no `$eq` and no `$in`.
* A range bound that is a string but not an ISO date is refused ("a range on a text field"),
  as are range bounds of both kinds on one field anywhere in the filter (`{"$gt": 1,
  "$lt": "2020-01-01"}`), unknown operators (`$regex`) and field names starting with `$`
  (`"$id"`: the id is not a metadata field).
* `$eq`, `$ne`, `$in` and `$nin` compare values as the metadata type model does
  (`hoprag.edges.value_key`): `1 == 1.0`, `True != 1`, strings exactly (a date string is
  compared as text there).

`compile_filter` checks a filter and returns its `CompiledFilter`: immutable, hashable and in
disjunctive normal form (an OR of ANDs of `Condition`s, `$in` expanded into one `$eq` branch per
value, `$nin` into several `$ne`), with at most `MAX_BRANCHES` branches. Stores translate that,
never the raw mapping, so every store accepts and refuses exactly the same filters. Every error
is an `InvalidInputError` whose argument names the place, e.g. `filter['year']['$gte']`."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from hoprag.dates import iso_instant
from hoprag.edges import MISSING, nested_get, value_key
from hoprag.errors import InvalidInputError, invalid
from hoprag.validation import METADATA_TYPES, check_field, json_value

__all__ = [
    "MAX_BRANCHES",
    "MAX_NESTING",
    "OPERATORS",
    "RANGE_OPERATORS",
    "CompiledFilter",
    "Condition",
    "Filter",
    "FilterPlan",
    "and_filters",
    "check_complete_read",
    "compile_filter",
    "holds",
    "matches",
]

Filter = Mapping[str, Any]
"""A filter as given: field -> plain value or operator dict, plus optional `$and` / `$or`."""

MAX_BRANCHES = 64
"""The most branches (ANDs of conditions) a filter may expand to in disjunctive normal form:
each `$in` value and each `$or` alternative is a branch, multiplied across ANDed parts (two
`$in` lists of 8 values on two fields make 64). A store may run one query per branch."""

MAX_NESTING = 16
"""`$and` / `$or` nest at most this many levels deep."""

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists")
"""The operators a field's operator dict may hold."""

RANGE_OPERATORS = frozenset({"$gt", "$gte", "$lt", "$lte"})
"""The operators that compare by order (numbers or ISO dates)."""

COMBINATORS = ("$and", "$or")
"""The keys beside field names: each takes a non-empty list of filters."""

_ALLOWED = (
    "a JSON scalar (str, int, float, bool, None), a list of them, or an operator dict such as "
    "{'$gte': 1990} or {'$in': ['a', 'b']}"
)
_EQ_ALLOWED = "a JSON scalar (str, int, float, bool, None) or a list of them"
_RANGE_ALLOWED = (
    "a number or an ISO date string ('YYYY-MM-DD' or an ISO datetime such as "
    "'2020-01-01T12:00:00Z', in years 1..9999 at UTC)"
)
_LIST_ALLOWED = "a non-empty list of JSON scalars (str, int, float, bool, None)"
_OP_ORDER = {op: i for i, op in enumerate(("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$exists"))}
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_date(text: str) -> datetime | None:
    """`text` as an aware datetime when it is an ISO date ('YYYY-MM-DD': its midnight) or ISO
    datetime (no offset: UTC), else None: `hoprag.dates.iso_instant`, the parser the typed date
    columns of a CassandraStore use too, so both stores read the same strings as the same
    instants."""
    instant = iso_instant(text)
    return None if instant is None else _EPOCH + timedelta(microseconds=instant)


@dataclass(frozen=True, slots=True)
class Condition:
    """One test on one field: `op` is `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte` or `$exists`.

    `value` is the checked value (a JSON scalar, a tuple of them for a whole-list `$eq` /
    `$ne`, a number or the ISO date string of a range, a bool for `$exists`); `key` is what
    comparisons use (`hoprag.edges.value_key` for equality, `("n", number)` or `("t",
    datetime)` for a range). Two conditions are equal when field, operator and key are, so
    `$eq 1` equals `$eq 1.0` but not `$eq True`. `where` names the place in the filter the
    condition came from (`filter['year']['$gte']`) for error messages."""

    field: str
    op: str
    value: Any = dc_field(compare=False)
    key: Any = dc_field(repr=False)
    where: str = dc_field(default="", compare=False, repr=False)

    @property
    def is_range(self) -> bool:
        """Whether the condition compares by order."""
        return self.op in RANGE_OPERATORS

    @property
    def kind(self) -> str | None:
        """A range's kind, "number" or "date" (None for other operators)."""
        if self.op not in RANGE_OPERATORS:
            return None
        return "number" if self.key[0] == "n" else "date"


def _sort_key(c: Condition) -> tuple[str, int, str]:
    return (c.field, _OP_ORDER[c.op], repr(c.key))


@dataclass(frozen=True, slots=True)
class CompiledFilter:
    """A checked filter in disjunctive normal form: a document passes when every condition of
    at least one branch holds. Branches and their conditions are deduplicated and in a
    canonical order, so equal filters compile to equal (and equally hashed) expressions.
    The empty filter is the single empty branch (everything passes)."""

    branches: tuple[tuple[Condition, ...], ...]

    @property
    def matches_all(self) -> bool:
        """Whether every document passes (no filter, or an empty one)."""
        return self.branches == ((),)

    @property
    def conditions(self) -> tuple[Condition, ...]:
        """Every distinct condition of every branch."""
        return tuple(dict.fromkeys(c for b in self.branches for c in b))

    @property
    def only_equality(self) -> bool:
        """Whether every condition is an `$eq` (a store's equality index decides alone)."""
        return all(c.op == "$eq" for b in self.branches for c in b)


MATCH_ALL = CompiledFilter(((),))
"""The compiled form of no filter."""


@dataclass(frozen=True, slots=True)
class FilterPlan:
    """How a store answers one run's filter, shown by `TraversalStats.explain()`: the
    `queries` each read sends (a vector search, an edge, a complete read: one per filter
    branch the store sends, their rows merged; `$in` values and `$or` alternatives are
    branches), the conditions the store's indexes answer (`pushed`) and those checked on
    each row after the read (`after_read`), each as 'field operator'. Read through a store
    view (`Store.restricted`), `access` lists the view's own conditions, which are part of
    every read beside the caller's."""

    queries: int = 1
    pushed: tuple[str, ...] = ()
    after_read: tuple[str, ...] = ()
    access: tuple[str, ...] = ()

    @property
    def filtered(self) -> bool:
        """Whether there is a filter to describe."""
        return bool(self.pushed or self.after_read or self.access)

    def describe(self) -> str:
        """One line: '3 queries per read, merged; by the index: genre $eq, year $gte; after the
        read: country $ne'."""
        parts = [f"{self.queries} {'query' if self.queries == 1 else 'queries'} per read"]
        if self.queries > 1:
            parts[0] += ", merged"
        if self.pushed:
            parts.append("by the index: " + ", ".join(self.pushed))
        if self.after_read:
            parts.append("after the read: " + ", ".join(self.after_read))
        if self.access:
            parts.append("the access view's: " + ", ".join(self.access))
        return "; ".join(parts)


COMPLETE_READ_ALLOWED = (
    "a filter with an equality or a range in every branch of its $or / $in (a branch of only "
    "$ne, $nin or $exists conditions would read every document of the store)"
)


def check_complete_read(compiled: CompiledFilter, argument: str, value: Any) -> None:
    """Refuse, with `InvalidInputError` naming `argument` and `value`, a filter that a read of
    every match (`PreparedQuery.afiltered`: a scope's `start`, `order_by` without a scope)
    cannot take from an index: the empty filter, or one with a branch of only `$ne`, `$nin`
    and `$exists` conditions. The same rule for every store, though MemoryStore could scan."""
    if compiled.matches_all:
        raise invalid(argument, value, "a non-empty filter for a read of every match")
    for branch in compiled.branches:
        if not any(c.op == "$eq" or c.is_range for c in branch):
            raise invalid(argument, value, COMPLETE_READ_ALLOWED)


def condition_label(condition: Condition) -> str:
    """'field operator', as `FilterPlan` lists a condition."""
    return f"{condition.field} {condition.op}"


# --- the evaluator ----------------------------------------------------------------------------


def _equal(value: Any, key: Any) -> bool:
    """The document value equals the compared value or, as a list, contains it."""
    if value_key(value) == key:
        return True
    return isinstance(value, list | tuple) and any(value_key(v) == key for v in value)


def _in_range(c: Condition, value: Any) -> bool:
    kind, bound = c.key
    if kind == "n":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return _COMPARE[c.op](value, bound)
    if not isinstance(value, str):
        return False
    when = parse_date(value)
    return when is not None and _COMPARE[c.op](when, bound)


def holds(c: Condition, metadata: Mapping[str, Any]) -> bool:
    """Whether the condition holds for a document's metadata (see the module docstring)."""
    value = nested_get(metadata, c.field)
    op = c.op
    if op == "$eq":
        return value is not MISSING and _equal(value, c.key)
    if op == "$ne":
        return value is MISSING or not _equal(value, c.key)
    if op == "$exists":
        return (value is not MISSING) is c.value
    if value is MISSING:
        return False
    if isinstance(value, list):
        return any(_in_range(c, v) for v in value)
    return _in_range(c, value)


def matches(compiled: CompiledFilter, metadata: Mapping[str, Any]) -> bool:
    """Whether a document with this metadata passes the filter: the one evaluator every store
    uses for what it checks itself, so their semantics cannot drift."""
    for branch in compiled.branches:
        for c in branch:
            if not holds(c, metadata):
                break
        else:
            return True
    return False


# --- the compiler -----------------------------------------------------------------------------

# A parsed filter before normalisation: a Condition, or ("and" | "or", [children]).
_Node = Any


def _eq_value(value: Any, where: str) -> Any:
    """A plain (equality) value in the metadata type model: numpy scalars become Python numbers,
    ints beyond 64 bits, NaN or lone surrogates are refused; a list becomes a tuple of
    scalars."""
    if isinstance(value, list | tuple):
        out = json_value(list(value), what=where)
        for v in out:
            if isinstance(v, list | dict):
                raise invalid(f"an element of {where}", v, "a finite JSON scalar")
        return tuple(out)
    if isinstance(value, Mapping):
        raise invalid(where, value, _EQ_ALLOWED)
    try:
        return json_value(value, what=where)
    except InvalidInputError as exc:
        if exc.allowed == METADATA_TYPES:  # not a JSON value at all
            raise invalid(where, value, _EQ_ALLOWED) from None
        raise


def _scalar(value: Any, where: str) -> Any:
    """One JSON scalar (an element of `$in` / `$nin`)."""
    if isinstance(value, list | tuple | Mapping):
        raise invalid(where, value, "a JSON scalar (str, int, float, bool, None)")
    return _eq_value(value, where)


def _eq(field: str, op: str, value: Any, where: str) -> Condition:
    return Condition(field, op, value, value_key(value), where)


def _range(field: str, op: str, bound: Any, where: str) -> Condition:
    if isinstance(bound, list | tuple | Mapping) or bound is None:
        raise invalid(where, bound, _RANGE_ALLOWED)
    try:
        value = json_value(bound, what=where)
    except InvalidInputError as exc:
        if exc.allowed == METADATA_TYPES:
            hint = "give a date as its ISO string: value.isoformat()"
            raise invalid(
                where, bound, _RANGE_ALLOWED, hint=hint if isinstance(bound, date) else ""
            ) from None
        raise
    if isinstance(value, bool):
        raise invalid(where, value, _RANGE_ALLOWED, hint="a bool is not a number")
    if isinstance(value, int | float):
        return Condition(field, op, value, ("n", value), where)
    assert isinstance(value, str)
    when = parse_date(value)
    if when is None:
        hint = "a range on a text field is not supported: match text with a plain value or $in"
        if _looks_numeric(value):
            hint += f" (to compare numbers, give the number itself: {value.strip()}, not a str)"
        raise invalid(where, value, _RANGE_ALLOWED, hint=hint)
    return Condition(field, op, value, ("t", when), where)


def _looks_numeric(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _values(operand: Any, where: str) -> list[Any]:
    """The distinct values of a `$in` / `$nin` list, in order."""
    if not isinstance(operand, list | tuple) or not operand:
        raise invalid(where, operand, _LIST_ALLOWED)
    seen: dict[Any, Any] = {}
    for i, v in enumerate(operand):
        checked = _scalar(v, f"{where}[{i}]")
        seen.setdefault(value_key(checked), checked)
    return list(seen.values())


def _check_operator_dict(value: Mapping[Any, Any], where: str) -> None:
    """Refuse a field's dict unless it holds one or more operators and nothing else."""
    keys = list(value)
    ops = [k for k in keys if isinstance(k, str) and k.startswith("$")]
    if keys and len(ops) == len(keys):
        return
    hint = "use a dotted field name (e.g. 'loc.city') for a nested value"
    if ops:
        hint = "an operator dict holds only operators (keys starting with '$')"
    elif not keys:
        hint = "an operator dict needs at least one operator"
    raise invalid(where, value, _ALLOWED, hint=hint)


def _exists(field: str, operand: Any, at: str) -> list[_Node]:
    if not isinstance(operand, bool):
        raise invalid(at, operand, "true or false")
    return [Condition(field, "$exists", operand, ("b", operand), at)]


_OPERATOR_PARSERS: dict[str, Callable[[str, str, Any, str], list[_Node]]] = {
    "$eq": lambda field, op, operand, at: [_eq(field, op, _eq_value(operand, at), at)],
    "$ne": lambda field, op, operand, at: [_eq(field, op, _eq_value(operand, at), at)],
    **{
        op: (lambda field, op, operand, at: [_range(field, op, operand, at)])
        for op in RANGE_OPERATORS
    },
    "$in": lambda field, op, operand, at: [
        ("or", [_eq(field, "$eq", v, at) for v in _values(operand, at)])
    ],
    "$nin": lambda field, op, operand, at: [_eq(field, "$ne", v, at) for v in _values(operand, at)],
    "$exists": lambda field, op, operand, at: _exists(field, operand, at),
}
"""The parse of one operator of a field's dict: (field, operator, operand, where) to its
conditions (ANDed)."""


def _field(field: str, value: Any, where: str) -> list[_Node]:
    """The parsed conditions of one field of a filter (ANDed)."""
    if not isinstance(value, Mapping):
        return [_eq(field, "$eq", _eq_value(value, where), where)]
    _check_operator_dict(value, where)
    out: list[_Node] = []
    for op, operand in value.items():
        at = f"{where}[{op!r}]"
        parse = _OPERATOR_PARSERS.get(op)
        if parse is None:
            raise invalid(at, op, f"one of the operators {', '.join(OPERATORS)}")
        out.extend(parse(field, op, operand, at))
    return out


def _mapping(flt: Mapping[Any, Any], where: str, depth: int) -> _Node:
    """A filter mapping (its fields and `$and` / `$or` ANDed) as a parse tree."""
    items: list[_Node] = []
    in_what = "a filter field name" if where == "filter" else f"a filter field name in {where}"
    for key, value in flt.items():
        if key in COMBINATORS:
            at = f"{where}[{key!r}]"
            if not isinstance(value, list | tuple) or not value:
                raise invalid(at, value, "a non-empty list of filters (mappings)")
            if depth >= MAX_NESTING:
                raise invalid(at, "<nested deeper>", f"nested at most {MAX_NESTING} levels deep")
            parts: list[_Node] = []
            for i, sub in enumerate(value):
                if not isinstance(sub, Mapping):
                    raise invalid(f"{at}[{i}]", sub, "a filter (a mapping of field to value)")
                parts.append(_mapping(sub, f"{at}[{i}]", depth + 1))
            items.append(("and" if key == "$and" else "or", parts))
        elif isinstance(key, str) and key.startswith("$") and key != "$id":
            raise invalid(
                in_what,
                key,
                "a field name, or '$and' / '$or' (the only operators beside field names)",
                hint="operators such as $gte go inside a field's dict: {'year': {'$gte': 1990}}",
            )
        else:
            name = check_field(key, what=in_what)
            items.extend(_field(name, value, f"{where}[{name!r}]"))
    return ("and", items)


def _count(node: _Node) -> int:
    """The branches `node` expands to (before duplicates are dropped)."""
    if isinstance(node, Condition):
        return 1
    kind, children = node
    if kind == "or":
        return sum(_count(c) for c in children)
    total = 1
    for c in children:
        total *= _count(c)
    return total


def _dnf(node: _Node) -> list[list[Condition]]:
    if isinstance(node, Condition):
        return [[node]]
    kind, children = node
    if kind == "or":
        return [b for c in children for b in _dnf(c)]
    out: list[list[Condition]] = [[]]
    for c in children:
        out = [a + b for a in out for b in _dnf(c)]
    return out


def _leaves(node: _Node) -> list[Condition]:
    if isinstance(node, Condition):
        return [node]
    return [leaf for c in node[1] for leaf in _leaves(c)]


def _check_range_kinds(leaves: list[Condition]) -> None:
    """Every range bound on one field is of one kind (number or date), across the filter."""
    first: dict[str, Condition] = {}
    for c in leaves:
        if not c.is_range:
            continue
        seen = first.setdefault(c.field, c)
        if seen.kind != c.kind:
            kind = "a number" if seen.kind == "number" else "an ISO date string"
            raise invalid(
                c.where,
                c.value,
                f"{kind}, like the other range bound on {c.field!r} ({seen.where} is "
                f"{seen.value!r})",
                hint="range bounds on one field must all be numbers or all dates",
            )


def _show_count(n: int) -> str:
    return f"{n:,}" if n < 10**9 else "more than a billion"


def compile_filter(filter: Any, argument: str = "filter") -> CompiledFilter:
    """`filter` (None or empty: everything passes) checked and compiled into its
    `CompiledFilter` (see the module docstring). Field names are plain dotted names
    (`hoprag.validation.check_field`: `"$id"` is refused), values are in the metadata type
    model, operators and their operands as described above; anything else raises
    `InvalidInputError` naming the place (`filter['year']['$gte']`), the bad value and what is
    allowed. A filter expanding to more than `MAX_BRANCHES` branches is refused. A
    `CompiledFilter` (checked already) is returned as it is, so a caller that checked a filter
    at its entry hands the result on and the stores do not check it again. `argument` names
    the filter in errors (`access_filter['tenant']` for a store view's)."""
    if filter is None:
        return MATCH_ALL
    if isinstance(filter, CompiledFilter):
        return filter
    if not isinstance(filter, Mapping):
        raise invalid(argument, filter, "a mapping of field name to value, or None")
    tree = _mapping(filter, argument, 0)
    _check_range_kinds(_leaves(tree))
    _check_branches(_count(tree), argument, filter)
    return _normal_form(_dnf(tree))


def and_filters(first: CompiledFilter, second: CompiledFilter) -> CompiledFilter:
    """The filter a document passes when it passes both (checked as one filter: at most
    `MAX_BRANCHES` branches, and one kind of range bound per field across both)."""
    if first.matches_all:
        return second
    if second.matches_all:
        return first
    _check_range_kinds([*first.conditions, *second.conditions])
    _check_branches(len(first.branches) * len(second.branches), "filter", second)
    return _normal_form([[*a, *b] for a in first.branches for b in second.branches])


def _check_branches(n: int, argument: str, filter: Any) -> None:
    """Refuse a filter of more than `MAX_BRANCHES` branches."""
    if n > MAX_BRANCHES:
        raise InvalidInputError(
            f"{argument} expands to {_show_count(n)} alternatives ($in values and $or branches, "
            f"multiplied across the ANDed fields), more than the {MAX_BRANCHES} allowed; "
            "narrow the $in lists or split the query",
            argument=argument,
            value=filter,
            allowed=f"a filter of at most {MAX_BRANCHES} alternatives in disjunctive normal form",
        )


_LOWER = frozenset({"$gt", "$gte"})


def _tightest(conds: list[Condition]) -> list[Condition]:
    """The conditions of one branch with, per field, only the tightest lower and the tightest
    upper range bound (the others are implied by them; Cassandra refuses two restrictions of
    one bound of a column)."""
    bounds: dict[tuple[str, bool], Condition] = {}
    out = []
    for c in conds:
        if not c.is_range:
            out.append(c)
            continue
        lower = c.op in _LOWER
        seen = bounds.setdefault((c.field, lower), c)
        value, other = c.key[1], seen.key[1]
        strict = c.op in ("$gt", "$lt")
        if (value > other if lower else value < other) or (value == other and strict):
            bounds[(c.field, lower)] = c
    return out + list(bounds.values())


def _normal_form(raw_branches: list[list[Condition]]) -> CompiledFilter:
    """The canonical `CompiledFilter` of branches (each an AND of conditions, the list ORed):
    conditions and branches deduplicated and sorted, each range bound the tightest of its side
    and field, and a branch that holds every condition of another dropped (it passes only
    documents the other passes: one query fewer)."""
    branches: dict[tuple[Condition, ...], None] = {}
    for raw in raw_branches:
        conds = sorted(dict.fromkeys(_tightest(raw)), key=_sort_key)
        if not conds:
            return MATCH_ALL  # one branch without conditions: everything passes
        branches[tuple(conds)] = None
    ordered = sorted(_absorbed(list(branches)), key=lambda b: [_sort_key(c) for c in b])
    return CompiledFilter(tuple(ordered))


def _absorbed(branches: list[tuple[Condition, ...]]) -> list[tuple[Condition, ...]]:
    """The distinct branches without those that contain all the conditions of a shorter one
    (`a OR (a AND b)` is `a`)."""
    sets = [frozenset(b) for b in branches]
    return [b for b, s in zip(branches, sets, strict=True) if not any(o < s for o in sets)]
