"""The filter language in every read: every operator, `$in` / `$or` / `$and`, ranges on
numbers and ISO dates, values full of quotes and CQL, and the same errors for bad filters."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hoprag.documents import Document
from hoprag.edges import MetadataEdge
from hoprag.engine.traversal import atraverse
from hoprag.errors import InvalidInputError
from hoprag.filters import MAX_BRANCHES, compile_filter, matches
from hoprag.stores.base import Store
from hoprag.strategies import Eager
from hoprag.testing.compliance.support import (
    Contract,
    _ids,
    _query,
    _ranked,
    writes,
)
from hoprag.testing.data import (
    COMPLIANCE_DIM,
)
from hoprag.validation import MAX_INT, MIN_INT


class FilterCompliance(Contract):
    """The filter language: every operator, `$in` / `$or` / `$and`, ranges, dates, quotes."""

    # -- the filter language: operators, $in / $or, ranges, dates -----------------------------

    @pytest.mark.parametrize(
        ("flt", "expected"),
        [
            ({"type": {"$eq": "bird"}}, {"d2", "d3"}),
            ({"type": {"$ne": "mammal"}}, {"d2", "d3", "d4", "d5", "d6", "d7", "d9", "d10"}),
            # $ne holds for documents without the field ...
            (
                {"loc.city": {"$ne": "Oslo"}},
                {"d0", "d2", "d3", "d4", "d5", "d7", "d8", "d9", "d10"},
            ),
            # ... and on a list field when no element equals the value.
            (
                {"keywords": {"$ne": "fur"}},
                {"d2", "d3", "d4", "d5", "d6", "d7", "d9", "d10", "d11"},
            ),
            ({"type": {"$in": ["bird", "fish"]}}, {"d2", "d3", "d4", "d5"}),
            ({"keywords": {"$in": ["hooves", "fins"]}}, {"d4", "d5", "d8"}),
            ({"n": {"$in": [1, 3]}}, {"d0", "d2", "d3", "d11"}),
            ({"flag": {"$in": [True]}}, {"d3"}),  # a bool is not a number
            ({"flag": {"$in": [1]}}, {"d5"}),
            ({"type": {"$nin": ["mammal", "bird"]}}, {"d4", "d5", "d6", "d7", "d9", "d10"}),
            (
                {"loc.city": {"$nin": ["Oslo", "Rome"]}},
                {"d0", "d2", "d3", "d4", "d5", "d7", "d9", "d10"},
            ),
            ({"flag": {"$exists": True}}, {"d3", "d5", "d9"}),
            (
                {"flag": {"$exists": False}},
                {"d0", "d1", "d2", "d4", "d6", "d7", "d8", "d10", "d11"},
            ),
            ({"loc.zip": {"$exists": True}}, {"d8", "d11"}),
            (
                {"cites": {"$exists": True}, "keywords": {"$ne": "scales"}},
                {"d0", "d1", "d2", "d3", "d10"},
            ),
            ({"$or": [{"type": "bird"}, {"loc.city": "Oslo"}]}, {"d1", "d2", "d3", "d6", "d11"}),
            (
                {
                    "$or": [{"type": "fish"}, {"flag": {"$exists": True}}],
                    "keywords": {"$ne": "fins"},
                },
                {"d3", "d9"},
            ),
            ({"$and": [{"type": "mammal"}, {"keywords": "fur"}]}, {"d0", "d1", "d8"}),
            (
                {
                    "$or": [
                        {"$and": [{"type": "mammal"}, {"loc.city": "Oslo"}]},
                        {"$or": [{"tag": "solo"}, {"n": 5}]},
                    ]
                },
                {"d1", "d9", "d10", "d11"},
            ),
            ({"type": {"$in": ["mammal", "bird"], "$ne": "bird"}}, {"d0", "d1", "d8", "d11"}),
            ({"type": {"$eq": "mammal", "$ne": "mammal"}}, set()),
            (
                {"keywords": {"$in": ["fur", "wings"]}, "type": {"$in": ["bird", "mammal"]}},
                {"d0", "d1", "d2", "d3", "d8"},
            ),
            (
                {"$or": [{"type": "mammal"}, {"type": "mammal", "keywords": "fur"}]},
                {"d0", "d1", "d8", "d11"},
            ),
            ({"$or": [{"type": "nothing"}, {"keywords": {"$in": ["nothing", "none"]}}]}, set()),
        ],
    )
    async def test_operator_filter_selects_the_same_documents_in_every_call(
        self, store: Store, docs: list[Document], flt: dict[str, Any], expected: set[str]
    ) -> None:
        q = _query()
        hits = await store.asearch(q, k=12, filter=flt)
        by_id = {d.id: d for d in docs}
        assert _ids(hits) == _ranked([by_id[i] for i in expected], q)
        got = await store.aget([f"d{i}" for i in range(12)], filter=flt, embedding=q)
        assert _ids(got) == sorted(expected, key=lambda i: int(i[1:]))
        mammals = {"d0", "d1", "d8", "d11"}
        adj = await store.aadjacent(MetadataEdge("type", "mammal"), q, k=12, filter=flt)
        assert set(_ids(adj)) == expected & mammals
        (many,) = await store.aadjacent_many([MetadataEdge("keywords", "fur")], q, k=12, filter=flt)
        assert set(_ids(many)) == expected & {"d0", "d1", "d8"}

    @pytest.mark.parametrize(
        "flt",
        [
            {"type": {"$nin": ["{top0}", "{top1}"]}},
            {"type": {"$ne": "{top0}"}, "keywords": {"$exists": True}},
            {"$or": [{"type": {"$ne": "{top0}"}}, {"type": "nothing"}]},
        ],
    )
    @pytest.mark.parametrize("k", [1, 3])
    async def test_conditions_checked_after_the_read_still_give_the_k_best(
        self, store: Store, docs: list[Document], flt: dict[str, Any], k: int
    ) -> None:
        # The most similar documents fail the filter: a store that checks $ne / $nin after
        # reading k rows must read further to find the k best that pass.
        q = _query()
        ranked = _ranked(docs, q)
        by_id = {d.id: d for d in docs}
        tops = [by_id[ranked[0]].metadata["type"]]
        tops.append(next(t for i in ranked if (t := by_id[i].metadata["type"]) not in tops))
        filled = json.loads(json.dumps(flt).replace("{top0}", tops[0]).replace("{top1}", tops[1]))
        compiled = compile_filter(filled)
        want = [i for i in ranked if matches(compiled, by_id[i].metadata)][:k]
        assert want and ranked[0] not in want
        assert _ids(await store.asearch(q, k=k, filter=filled)) == want
        prepared = await store.aprepare(q, filled)
        assert _ids(await prepared.asearch(k=k)) == want

    @pytest.mark.parametrize(
        ("flt", "expected"),
        [
            ({"n": {"$gt": 2}}, {"d3", "d4", "d7", "d9"}),
            ({"n": {"$gte": 2}}, {"d1", "d3", "d4", "d7", "d9"}),
            ({"n": {"$lt": 2}}, {"d0", "d2", "d11"}),
            ({"n": {"$lte": 2.5, "$gt": 1}}, {"d1", "d4"}),
            ({"n": {"$gte": 1.0, "$lt": 1.5}}, {"d0", "d2", "d11"}),  # 1 and 1.0 alike
            ({"flag": {"$gte": 0}}, {"d5"}),  # True and False are not numbers
            ({"n": {"$ne": 1, "$lte": 3}}, {"d1", "d3", "d4"}),
            ({"$or": [{"n": {"$gt": 4}}, {"type": "reptile"}]}, {"d6", "d7", "d9"}),
            # Bounds of one side ANDed: the tightest holds (Cassandra refuses two of them).
            ({"$and": [{"n": {"$gte": 1}}, {"n": {"$gt": 2, "$lte": 4}}]}, {"d3", "d4", "d7"}),
            ({"$and": [{"n": {"$lt": 5}}, {"n": {"$lte": 3, "$gte": 3}}]}, {"d3"}),
        ],
    )
    async def test_range_filter_on_numbers(
        self, store: Store, docs: list[Document], flt: dict[str, Any], expected: set[str]
    ) -> None:
        q = _query()
        by_id = {d.id: d for d in docs}
        assert _ids(await store.asearch(q, k=12, filter=flt)) == _ranked(
            [by_id[i] for i in expected], q
        )
        got = await store.aget([f"d{i}" for i in range(12)], filter=flt)
        assert set(_ids(got)) == expected
        adj = await store.aadjacent(MetadataEdge("type", "mammal"), q, k=12, filter=flt)
        assert set(_ids(adj)) == expected & {"d0", "d1", "d8", "d11"}

    @writes
    async def test_range_filter_compares_big_ints_and_floats_exactly(self, store: Store) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd(
            [
                Document("big", "b", {"kind": "x", "pid": 2**60, "pids": [1, 2**60]}, vec),
                Document("big1", "b1", {"kind": "x", "pid": 2**60 + 1, "pids": [2**60 + 1]}, vec),
                Document("max", "m", {"kind": "x", "pid": MAX_INT, "pids": [MIN_INT, 0]}, vec),
                Document("f53", "f", {"kind": "x", "pid": float(2**53), "pids": [0.5]}, vec),
                Document("neg", "n", {"kind": "x", "pid": -1.5}, vec),
            ]
        )
        q = _query()

        async def found(cond: dict[str, Any]) -> set[str]:
            hits = await store.asearch(q, k=20, filter={"kind": "x", **cond})
            got = await store.aget(["big", "big1", "max", "f53", "neg"], filter=cond)
            assert set(_ids(hits)) == set(_ids(got)), cond
            return set(_ids(hits))

        assert await found({"pid": {"$gt": 2**60}}) == {"big1", "max"}
        assert await found({"pid": {"$gte": float(2**60)}}) == {"big", "big1", "max"}
        assert await found({"pid": {"$lt": 2**60 + 1, "$gt": 0}}) == {"big", "f53"}
        assert await found({"pid": {"$gte": MAX_INT}}) == {"max"}
        # float(2**53) is below 2**53 + 1, though a float cannot hold 2**53 + 1.
        assert await found({"pid": {"$gte": 2**53 + 1, "$lt": 2**60}}) == set()
        assert await found({"pid": {"$lt": 2**53 + 1, "$gt": 2**53 - 1}}) == {"f53"}
        assert await found({"pid": {"$lte": -1.5}}) == {"neg"}
        # A list field: the range holds when any element satisfies it.
        assert await found({"pids": {"$gt": 2**60}}) == {"big1"}
        assert await found({"pids": {"$lt": 0}}) == {"max"}
        assert await found({"pids": {"$gt": 0, "$lt": 1}}) == {"f53"}
        assert await found({"pids": {"$gte": 1, "$lte": 1}}) == {"big"}

    @writes
    async def test_range_filter_on_iso_dates(self, store: Store) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        rows: dict[str, dict[str, Any]] = {
            "day": {"on": "1994-07-06", "shown": ["1980-05-01", "2010-01-01"]},
            "utc": {"on": "2001-09-11T08:46:00Z", "shown": ["2001-09-12"]},
            "plus2": {"on": "1975-01-01T12:00:00+02:00"},
            "naive": {"on": "1975-01-01 10:30"},
            "text": {"on": "not a date", "shown": "someday"},
            "number": {"on": 1994},
            # Its UTC instant falls before year 1: not a date (it never answers a range, and
            # no range on the field fails because of it).
            "before1": {"on": "0001-01-01T00:00:00+23:59"},
        }
        await store.aadd([Document(i, i, {"kind": "date", **md}, vec) for i, md in rows.items()])
        q = _query()

        async def found(cond: dict[str, Any]) -> set[str]:
            hits = await store.asearch(q, k=20, filter={"kind": "date", **cond})
            got = await store.aget(list(rows), filter=cond)
            assert set(_ids(hits)) == set(_ids(got)), cond
            return set(_ids(hits))

        assert await found({"on": {"$gte": "1990-01-01"}}) == {"day", "utc"}
        assert await found({"on": {"$gt": "1994-07-06"}}) == {"utc"}  # a date is its midnight
        assert await found({"on": {"$gte": "1994-07-06T00:00:00Z"}}) == {"day", "utc"}
        # 12:00 at +02:00 is 10:00 UTC; a datetime without an offset is UTC.
        assert await found({"on": {"$lt": "1975-01-01T10:15:00Z"}}) == {"plus2"}
        assert await found({"on": {"$lt": "1975-01-01T10:31"}}) == {"plus2", "naive"}
        assert await found({"on": {"$gte": "2001-09-11T10:46:00+02:00"}}) == {"utc"}
        assert await found({"shown": {"$gt": "2005-01-01"}}) == {"day"}
        assert await found({"shown": {"$gte": "2001-09-12", "$lt": "2005-01-01"}}) == {
            "utc",
            "day",  # each bound is met by some element, not necessarily one (as in MongoDB)
        }
        assert await found({"shown": {"$lte": "1980-05-01", "$gt": "2009-12-31"}}) == {"day"}
        assert await found({"shown": {"$lt": "1980-05-01"}}) == set()
        assert await found({"on": {"$lt": "0002-01-01"}}) == set()
        with pytest.raises(InvalidInputError, match=r"filter\['on'\]\['\$gte'\]"):
            await store.aget(["day"], filter={"on": {"$gte": "0001-01-01T00:00:00+23:59"}})

    async def test_traversal_with_a_range_filter_admits_only_passing_nodes(
        self, store: Store
    ) -> None:
        await self._traversal_holds_the_filter(
            store, {"n": {"$gte": 2}}, {"d1": 0, "d3": 1, "d9": 2}
        )

    async def test_traversal_with_an_in_filter_admits_only_passing_nodes(
        self, store: Store
    ) -> None:
        flt = {"type": {"$in": ["mammal", "bird", "insect"]}}
        depths = {"d1": 0, "d0": 1, "d8": 1, "d11": 1, "d3": 1, "d2": 2, "d9": 2}
        await self._traversal_holds_the_filter(store, flt, depths)

    async def test_explain_says_how_every_condition_of_the_filter_was_answered(
        self, store: Store
    ) -> None:
        flt = {"type": {"$in": ["mammal", "bird"]}, "keywords": {"$ne": "claws"}}
        result = await atraverse(
            None,
            query_embedding=_query(),
            store=store,
            edges=[("keywords", "keywords")],
            strategy=Eager(select_k=5, start_k=2, adjacent_k=5, max_depth=1),
            filter=flt,
        )
        plan = result.stats.filters["filter"]
        labels = {"type $eq", "keywords $ne"}
        assert set(plan.pushed) | set(plan.after_read) == labels
        assert not set(plan.pushed) & set(plan.after_read)
        assert plan.queries in (1, 2)  # one read, or one query per $in value, merged
        assert f"filter: {plan.describe()}" in result.stats.explain().splitlines()
        unfiltered = await atraverse(
            None,
            query_embedding=_query(),
            store=store,
            edges=[("keywords", "keywords")],
            strategy=Eager(select_k=5, start_k=2, adjacent_k=5, max_depth=1),
        )
        assert not unfiltered.stats.filters["filter"].filtered
        assert "filter:" not in unfiltered.stats.explain()

    @staticmethod
    async def _traversal_holds_the_filter(
        store: Store, flt: dict[str, Any], depths: dict[str, int]
    ) -> None:
        compiled = compile_filter(flt)
        result = await atraverse(
            None,
            query_embedding=_query(),
            store=store,
            edges=[("keywords", "keywords"), ("loc.city", "loc.city"), ("cites", "$id")],
            strategy=Eager(select_k=20, start_k=0, adjacent_k=20, max_depth=2),
            initial_root_ids=["d1"],
            filter=flt,
        )
        assert all(matches(compiled, n.metadata) for n in result)
        assert {n.id: n.depth for n in result} == depths

    @writes
    @pytest.mark.parametrize(
        "value",
        [
            "O'Brien; DROP TABLE docs; --",
            "%s",
            "' OR '1'='1",
            "SELECT * FROM system_schema.tables",
            'quote " and \\ backslash',
        ],
    )
    async def test_filter_values_with_quotes_and_cql_match_only_the_exact_document(
        self, store: Store, value: str
    ) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd(
            [
                Document("exact", "e", {"title": value, "it's; --": value}, vec),
                Document("other", "o", {"title": "plain", "it's; --": "plain"}, vec),
            ]
        )
        q = _query()
        for flt in (
            {"title": value},
            {"title": {"$in": [value, "%s'); DROP TABLE docs; --"]}},
            {"it's; --": {"$eq": value}},
            {"$or": [{"title": value}, {"title": "AND tokens CONTAINS '%s'"}]},
        ):
            assert _ids(await store.asearch(q, k=20, filter=flt)) == ["exact"], flt
            assert _ids(await store.aget(["exact", "other", "d0"], filter=flt)) == ["exact"]
        for flt in (
            {"title": value + " "},
            {"title": {"$in": [value.upper() + "x", "' OR 1=1 --"]}},
            {"title'; --": value},
        ):
            assert await store.asearch(q, k=20, filter=flt) == [], flt
        assert len(await store.asearch(q, k=50)) == 14  # the table is intact

    @pytest.mark.parametrize(
        ("flt", "argument", "phrase"),
        [
            ({"year": {"$regex": "19.*"}}, "filter['year']['$regex']", "$exists"),
            ({"year": {"$foo": 1}}, "filter['year']['$foo']", "one of the operators"),
            ({"title": {"$gt": "abc"}}, "filter['title']['$gt']", "a range on a text field"),
            ({"year": {"$gte": "1990"}}, "filter['year']['$gte']", "a range on a text field"),
            ({"year": {"$lt": True}}, "filter['year']['$lt']", "not a number"),
            ({"year": {"$lte": None}}, "filter['year']['$lte']", "ISO date"),
            ({"year": {"$gt": [1, 2]}}, "filter['year']['$gt']", "ISO date"),
            (
                {"year": {"$gt": 1, "$lt": "2020-01-01"}},
                "filter['year']['$lt']",
                "like the other range bound on 'year'",
            ),
            (
                {"$or": [{"d": {"$gt": "2020-01-01"}}, {"d": {"$lt": 5}}]},
                "filter['$or'][1]['d']['$lt']",
                "an ISO date string, like",
            ),
            ({"type": {"$in": []}}, "filter['type']['$in']", "non-empty list"),
            ({"type": {"$in": "bird"}}, "filter['type']['$in']", "non-empty list"),
            ({"type": {"$nin": [["a"]]}}, "filter['type']['$nin'][0]", "JSON scalar"),
            ({"type": {"$in": [float("nan")]}}, "filter['type']['$in'][0]", "finite"),
            ({"type": {"$exists": 1}}, "filter['type']['$exists']", "true or false"),
            ({"type": {}}, "filter['type']", "at least one operator"),
            ({"type": {"$eq": "x", "city": "y"}}, "filter['type']", "only operators"),
            ({"$or": []}, "filter['$or']", "non-empty list"),
            ({"$and": {"type": "x"}}, "filter['$and']", "non-empty list"),
            ({"$or": ["type"]}, "filter['$or'][0]", "a filter"),
            ({"$nor": [{"type": "x"}]}, "a filter field name", "'$and' / '$or'"),
            ({"$or": [{"$id": "d1"}]}, "a filter field name in filter['$or'][0]", "get(ids)"),
            (
                {"a": {"$in": list(range(9))}, "b": {"$in": list(range(8))}},
                "filter",
                "72 alternatives",
            ),
            ({"$or": [{"a": i} for i in range(65)]}, "filter", "65 alternatives"),
        ],
    )
    async def test_bad_filter_gets_the_same_error_naming_the_place_on_every_store(
        self, store: Store, flt: dict[str, Any], argument: str, phrase: str
    ) -> None:
        with pytest.raises(InvalidInputError) as caught:
            await store.aprepare(_query(), flt)
        assert caught.value.argument == argument
        assert phrase in str(caught.value), str(caught.value)
        with pytest.raises(InvalidInputError) as again:
            await store.asearch(_query(), k=3, filter=flt)
        assert str(again.value) == str(caught.value)

    @pytest.mark.parametrize("field", ["tag", "loc.city"])
    @pytest.mark.parametrize("bound", [5, "2020-01-01"], ids=["number", "date"])
    async def test_a_range_on_a_text_field_is_refused_naming_it_on_every_store(
        self, store: Store, field: str, bound: Any
    ) -> None:
        # The field holds text only: a range there could match nothing, so no store answers
        # it with an empty result (a store with declared types, such as a CassandraStore,
        # refuses a range on a field not declared as a number or date).
        for op in ("$gt", "$lte"):
            with pytest.raises(InvalidInputError) as caught:
                await store.asearch(_query(), k=3, filter={field: {op: bound}})
            assert caught.value.argument == f"filter[{field!r}][{op!r}]"
            assert f"a range on {field!r}" in str(caught.value), str(caught.value)

    async def test_filter_language_within_the_bound_of_branches_is_answered(
        self, store: Store
    ) -> None:
        flt = {"type": {"$in": [f"t{i}" for i in range(7)] + ["mammal"]}, "n": {"$in": [1, 2]}}
        assert len(compile_filter(flt).branches) == 16
        assert set(_ids(await store.asearch(_query(), k=12, filter=flt))) == {"d0", "d1", "d11"}
        big = {"$or": [{"tag": f"v{i}"} for i in range(63)] + [{"tag": "solo"}]}
        assert len(compile_filter(big).branches) == MAX_BRANCHES
        assert _ids(await store.asearch(_query(), k=12, filter=big)) == ["d10"]
