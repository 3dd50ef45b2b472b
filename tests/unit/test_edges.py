"""Edge spec parsing and MetadataEdgeFunction, with hypothesis for values and bad input."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoprag import Document, Edges, Id, IdEdge, MetadataEdge, MetadataEdgeFunction, parse_edges
from hoprag.errors import InvalidInputError

names = st.from_regex(r"[a-z][a-z0-9_]{0,6}(\.[a-z][a-z0-9_]{0,6}){0,2}", fullmatch=True)
sides = st.one_of(names, st.just("$id"), st.just(Id()))
# Metadata values of the stores' type model (hoprag.validation): no NaN or infinity.
scalars = st.one_of(
    st.text(max_size=5),
    st.integers(-5, 5),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)


def test_examples() -> None:
    fn = MetadataEdgeFunction(
        [("keywords", "keywords"), ("cites", "$id"), (Id(), "cites"), ("loc.city", "city")]
    )
    doc = Document(
        "x",
        "",
        {"keywords": ["a", "b"], "cites": ["y", "z"], "loc": {"city": "Oslo"}, "city": "Rome"},
    )
    edges = fn(doc)
    assert edges.outgoing == {
        MetadataEdge("keywords", "a"),
        MetadataEdge("keywords", "b"),
        IdEdge("y"),
        IdEdge("z"),
        MetadataEdge("cites", "x"),
        MetadataEdge("city", "Oslo"),
    }
    assert edges.incoming == {
        MetadataEdge("keywords", "a"),
        MetadataEdge("keywords", "b"),
        IdEdge("x"),
        MetadataEdge("cites", "y"),
        MetadataEdge("cites", "z"),
        MetadataEdge("city", "Rome"),
    }


def test_missing_and_unsupported_values_give_no_edges() -> None:
    fn = MetadataEdgeFunction([("a", "a"), ("b.c", "b.c")])
    assert fn(Document("x", "", {"a": None, "b": "not a dict"})) == Edges(frozenset(), frozenset())
    assert fn(Document("x", "", {"a": [{"deep": 1}, "ok"]})).outgoing == {MetadataEdge("a", "ok")}


@settings(max_examples=60, deadline=None)
@given(
    source=names,
    target=sides,
    value=st.one_of(scalars, st.lists(scalars, max_size=4)),
)
def test_values_explode_into_edges(source: str, target: Any, value: Any) -> None:
    fn = MetadataEdgeFunction([(source, target)])
    meta: dict[str, Any] = {}
    cursor = meta
    parts = source.split(".")
    for part in parts[:-1]:
        cursor = cursor.setdefault(part, {})
    cursor[parts[-1]] = value
    out = fn(Document("doc", "", meta)).outgoing
    values = value if isinstance(value, list) else [value]
    if target == "$id" or isinstance(target, Id):
        assert out == {IdEdge(str(v)) for v in values if str(v)}  # "" names no document
    else:
        assert out == {MetadataEdge(target, v) for v in values}


@settings(max_examples=60, deadline=None)
@given(source=sides, target=sides)
def test_id_on_either_side(source: Any, target: Any) -> None:
    fn = MetadataEdgeFunction([(source, target)])
    edges = fn(Document("me", "", {}))
    if source == "$id" or isinstance(source, Id):
        expected = IdEdge("me") if target in ("$id",) or isinstance(target, Id) else None
        if expected is None:
            assert edges.outgoing == {MetadataEdge(target, "me")}
        else:
            assert edges.outgoing == {expected}
    else:
        assert edges.outgoing == frozenset()


bad_specs = st.one_of(
    st.tuples(st.integers(), names),
    st.tuples(names, st.none()),
    st.tuples(names),
    st.tuples(names, names, names),
    st.tuples(st.just(""), names),
    st.tuples(names, st.sampled_from(["$idx", "$", "a..b", ".a", "a."])),
    st.text(max_size=3),
    st.integers(),
)


@settings(max_examples=60, deadline=None)
@given(spec=bad_specs)
def test_malformed_specs_name_the_spec(spec: Any) -> None:
    with pytest.raises(InvalidInputError) as err:
        MetadataEdgeFunction([("ok", "ok"), spec])
    assert repr(spec) in str(err.value)


def test_parse_edges() -> None:
    def fn(doc: Document) -> Edges:
        return Edges(frozenset(), frozenset())

    assert parse_edges(fn) is fn
    assert isinstance(parse_edges([("a", "b")]), MetadataEdgeFunction)
    with pytest.raises(InvalidInputError, match="edges"):
        parse_edges("keywords")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="edges"):
        parse_edges(42)  # type: ignore[arg-type]


def test_edge_equality_follows_value_equality_of_the_stores() -> None:
    # Numbers compare numerically, but a bool is not a number (as in every store).
    assert MetadataEdge("f", 1) == MetadataEdge("f", 1.0)
    assert hash(MetadataEdge("f", 1)) == hash(MetadataEdge("f", 1.0))
    assert MetadataEdge("f", True) != MetadataEdge("f", 1)
    assert MetadataEdge("f", False) != MetadataEdge("f", 0)
    assert len({MetadataEdge("f", True), MetadataEdge("f", 1), MetadataEdge("f", 1.0)}) == 2
    assert MetadataEdge("f", [1, {"a": True}]) == MetadataEdge("f", (1.0, {"a": True}))
    assert MetadataEdge("f", [1, {"a": True}]) != MetadataEdge("f", [1, {"a": 1}])
    assert MetadataEdge("f", 1) != MetadataEdge("g", 1)
    assert MetadataEdge("f", "1") != MetadataEdge("f", 1)


def test_a_list_with_true_and_one_gives_two_edges() -> None:
    fn = MetadataEdgeFunction([("probe", "v")])
    out = fn(Document("d", "", {"probe": [True, 1, 1.0]})).outgoing
    assert out == {MetadataEdge("v", True), MetadataEdge("v", 1)}
    assert len(out) == 2


def _reference_edges(doc: Document, specs: list[tuple[str, str]]) -> Edges:
    """The edge function's rules spelled out with the public, checking constructors."""

    def values(field: str) -> list[Any]:
        if field == "$id":
            return [doc.id]
        value: Any = doc.metadata
        for part in field.split("."):
            if not isinstance(value, dict) or part not in value:
                return []
            value = value[part]
        items = value if isinstance(value, list | tuple | set | frozenset) else [value]
        return [v for v in items if isinstance(v, str | int | float) and v is not None]

    def edge(target: str, v: Any) -> Any:
        return IdEdge(str(v)) if target == "$id" else MetadataEdge(target, v)

    def names(target: str, v: Any) -> bool:  # an empty value names no document (issue #28)
        return target != "$id" or str(v) != ""

    inc = {edge(t, v) for _, t in specs for v in values(t) if names(t, v)}
    out = {edge(t, v) for s, t in specs for v in values(s) if names(t, v)}
    return Edges(frozenset(inc), frozenset(out))


@settings(max_examples=200)
@given(
    specs=st.lists(
        st.tuples(st.sampled_from(["a", "b", "n.c", "$id"]), st.sampled_from(["a", "b", "$id"])),
        min_size=1,
        max_size=4,
    ),
    a=st.one_of(scalars, st.lists(scalars, max_size=4)),
    b=st.one_of(scalars, st.lists(scalars, max_size=4), st.none()),
    c=st.one_of(scalars, st.lists(scalars, max_size=3)),
)
def test_shared_fields_and_symmetric_specs_give_the_reference_edges(
    specs: list[tuple[str, str]], a: Any, b: Any, c: Any
) -> None:
    """The edge function builds each (target, field) edge list once per document and shares
    it between specs; the edges are exactly those of the rules applied spec by spec."""
    doc = Document("d1", "text", {"a": a, "b": b, "n": {"c": c}})
    assert MetadataEdgeFunction(specs)(doc) == _reference_edges(doc, specs)


def test_a_pickled_edge_meets_its_equal_in_another_process() -> None:
    """Edges cache their hash; string hashes differ between processes, so a pickled edge must
    rebuild it where it is loaded."""
    import os
    import pickle
    import subprocess
    import sys

    edges = [MetadataEdge("keywords", "bobcat"), MetadataEdge("n", 1), IdEdge("x")]
    assert pickle.loads(pickle.dumps(edges)) == edges
    code = (
        "import pickle, sys\n"
        "from hoprag import IdEdge, MetadataEdge\n"
        "edges = pickle.loads(sys.stdin.buffer.read())\n"
        "want = {MetadataEdge('keywords', 'bobcat'), MetadataEdge('n', 1.0), IdEdge('x')}\n"
        "assert set(edges) == want, edges\n"
        "assert all(e in want for e in edges)\n"
    )
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", code],
            input=pickle.dumps(edges),
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()


def test_edges_of_ints_beyond_2_to_53_stay_distinct() -> None:
    fn = MetadataEdgeFunction([("ref", "pid")])
    a = fn(Document("a", "", {"ref": [2**60, 2**60 + 1], "pid": 2**60}))
    assert a.outgoing == {MetadataEdge("pid", 2**60), MetadataEdge("pid", 2**60 + 1)}
    assert len(a.outgoing) == 2
    assert MetadataEdge("pid", 2**60) in a.incoming
    assert MetadataEdge("pid", 2**60 + 1) not in a.incoming
    assert MetadataEdge("pid", float(2**60)) in a.incoming  # the same number
