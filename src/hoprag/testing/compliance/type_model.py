"""The metadata type model: the same values kept, compared and refused by every store (big
ints, numbers in lists, normalisation, lone surrogates, vector norms, copies in and out)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from hoprag.documents import Document
from hoprag.edges import MetadataEdge
from hoprag.errors import InvalidInputError
from hoprag.stores.base import Store
from hoprag.testing.compliance.support import (
    TOL,
    Contract,
    _cos,
    _ids,
    _nested,
    _query,
    _ranked,
    writes,
)
from hoprag.testing.data import (
    COMPLIANCE_DIM,
    compliance_documents,
)
from hoprag.validation import MAX_INT, MIN_INT


class TypeModelCompliance(Contract):
    """The metadata type model: the same values kept, compared and refused by every store."""

    # -- the metadata type model: the same values kept, compared and refused by every store ----

    @writes
    async def test_ints_beyond_2_to_53_stay_distinct_in_filters_and_edges(
        self, store: Store
    ) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd(
            [
                Document("big", "b", {"pid": 2**60, "pids": [2**60]}, vec),
                Document("big1", "b1", {"pid": 2**60 + 1, "pids": [2**60 + 1]}, vec),
                Document("max", "m", {"pid": MAX_INT, "pids": [MIN_INT]}, vec),
            ]
        )
        q = _query()
        assert _ids(await store.asearch(q, k=20, filter={"pid": 2**60})) == ["big"]
        assert _ids(await store.asearch(q, k=20, filter={"pid": 2**60 + 1})) == ["big1"]
        assert _ids(await store.asearch(q, k=20, filter={"pids": MIN_INT})) == ["max"]
        assert _ids(await store.aadjacent(MetadataEdge("pids", 2**60 + 1), q, k=20)) == ["big1"]
        assert _ids(await store.aadjacent(MetadataEdge("pid", MAX_INT), q, k=20)) == ["max"]
        # A float equal to the int is the same number; one off is not.
        assert _ids(await store.asearch(q, k=20, filter={"pid": float(2**60)})) == ["big"]
        got = {h.document.id: h.document.metadata for h in await store.aget(["big1", "max"])}
        assert got["big1"]["pid"] == 2**60 + 1 and type(got["big1"]["pid"]) is int
        assert got["max"] == {"pid": MAX_INT, "pids": [MIN_INT]}

    @writes
    async def test_numbers_in_lists_compare_by_value(self, store: Store) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        await store.aadd([Document("pairs", "p", {"pair": [[1.0, 2]], "flat": [1.0, 2]}, vec)])
        q = _query()
        assert _ids(await store.asearch(q, k=20, filter={"pair": [1, 2.0]})) == ["pairs"]
        assert _ids(await store.asearch(q, k=20, filter={"flat": [1, 2]})) == ["pairs"]
        assert _ids(await store.aadjacent(MetadataEdge("pair", [1, 2]), q, k=20)) == ["pairs"]
        assert await store.asearch(q, k=20, filter={"flat": [True, 2]}) == []

    @writes
    async def test_metadata_is_normalized_the_same_way_by_every_store(self, store: Store) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        given = {
            "i": np.int64(7),
            "b": np.bool_(True),
            "f": np.float32(0.5),
            "t": ("x", np.int32(2)),
            "s": np.str_("text"),
            "nested": {"u": np.uint8(3), "l": [(1, 2)]},
            "neg0": -0.0,
            "tiny": 5e-324,
        }
        await store.aadd([Document("np", "n", given, vec)])
        (hit,) = await store.aget(["np"])
        md = dict(hit.document.metadata)
        want = {
            "i": 7,
            "b": True,
            "f": 0.5,
            "t": ["x", 2],
            "s": "text",
            "nested": {"u": 3, "l": [[1, 2]]},
            "neg0": -0.0,
            "tiny": 5e-324,
        }
        assert md == want
        assert [type(md[k]) for k in want] == [type(v) for v in want.values()]
        assert type(md["nested"]["u"]) is int and math.copysign(1.0, md["neg0"]) == -1.0
        q = _query()
        for flt in ({"i": 7}, {"b": True}, {"t": 2}, {"nested.u": np.int16(3)}, {"s": "text"}):
            assert _ids(await store.asearch(q, k=20, filter=flt)) == ["np"], flt
        assert await store.asearch(q, k=20, filter={"b": 1}) == []  # a bool is not a number

    @writes
    @pytest.mark.parametrize(
        ("metadata", "field", "shown"),
        [
            ({"tags": {"a", "b"}}, "'tags'", "set"),
            ({"n": float("nan")}, "'n'", "nan"),
            ({"n": float("-inf")}, "'n'", "inf"),
            ({"n": 10**400}, "'n'", "401 digits"),
            ({"n": 2**63}, "'n'", "9223372036854775808"),
            ({"n": [1, -(2**63) - 1]}, "'n[1]'", "-9223372036854775809"),
            ({"s": "bad \ud800 text"}, "'s'", "ud800"),
            ({"a": {"s": ["ok", "\udfff"]}}, "'a.s[1]'", "udfff"),
            ({"a.b": 1}, "'a.b'", "'a.b'"),
            ({"a": {"b.c": 1}}, "'a'", "'b.c'"),
            ({"$id": "B"}, "key of metadata", "'$id'"),
            ({"a=b": 1}, "key of metadata", "'a=b'"),
            ({"": 1}, "key of metadata", "''"),
            ({3: "x"}, "key of metadata", "3"),
            ({"blob": b"bytes"}, "'blob'", "bytes"),
            ({"arr": np.zeros(2)}, "'arr'", "ndarray"),
            ({"when": object()}, "'when'", "object"),
            ({"deep": _nested(40)}, "'deep", "nested at most"),
            ({"k" * 300: 1}, "key of metadata", "256 bytes"),
        ],
    )
    async def test_metadata_outside_the_type_model_is_refused_naming_document_and_field(
        self, store: Store, metadata: dict[Any, Any], field: str, shown: str
    ) -> None:
        good = Document("ok", "fine", {"type": "x"}, [0.5] * COMPLIANCE_DIM)
        bad = Document("bad-doc", "x", {}, [0.5] * COMPLIANCE_DIM)
        bad.metadata = metadata
        with pytest.raises(InvalidInputError) as caught:
            await store.aadd([good, bad])
        message = str(caught.value)
        assert "'bad-doc'" in message and field in message and shown in message, message
        assert caught.value.allowed
        assert await store.aget(["ok", "bad-doc"]) == []

    @writes
    @pytest.mark.parametrize(("doc_id", "content"), [("bad\ud800", "text"), ("bad", "text \udc00")])
    async def test_ids_and_content_with_lone_surrogates_are_refused(
        self, store: Store, doc_id: str, content: str
    ) -> None:
        good = Document("ok", "fine", {}, [0.5] * COMPLIANCE_DIM)
        with pytest.raises(InvalidInputError, match="surrogate"):
            await store.aadd([good, Document(doc_id, content, {}, [0.5] * COMPLIANCE_DIM)])
        assert await store.aget(["ok"]) == []
        with pytest.raises(InvalidInputError, match="surrogate"):
            await store.aget(["d0", "x\ud800"])

    @pytest.mark.parametrize(
        ("flt", "argument"),
        [
            ({"$id": "d1"}, "'\\$id'"),
            ({"loc.$city": "Oslo"}, "loc.\\$city"),
            ({"n": 2**64}, "filter\\['n'\\]"),
            ({"n": [1, 10**400]}, "filter\\['n'\\]"),
            ({"type": "x\ud800"}, "filter\\['type'\\]"),
            ({"keywords": {"fur"}}, "filter\\['keywords'\\]"),
            ({"x" * 300: 1}, "256 bytes"),
        ],
    )
    async def test_filters_outside_the_type_model_are_refused(
        self, store: Store, flt: dict[str, Any], argument: str
    ) -> None:
        with pytest.raises(InvalidInputError, match=argument):
            await store.aprepare(_query(), flt)

    async def test_filter_values_are_normalized_like_metadata(self, store: Store) -> None:
        q = _query()
        assert _ids(await store.asearch(q, k=12, filter={"n": np.int64(2)})) == ["d1"]
        assert set(_ids(await store.asearch(q, k=12, filter={"flag": np.bool_(True)}))) == {"d3"}
        assert _ids(await store.asearch(q, k=12, filter={"n": np.float32(2.5)})) == ["d4"]

    @writes
    @pytest.mark.parametrize(
        "vec",
        [
            [1e-320] * COMPLIANCE_DIM,
            [1e-12] * COMPLIANCE_DIM,
            [1e30] * COMPLIANCE_DIM,
            [3e38] * COMPLIANCE_DIM,
            [1e308] * COMPLIANCE_DIM,
        ],
    )
    async def test_vectors_whose_norm_underflows_or_overflows_are_refused(
        self, store: Store, vec: list[float]
    ) -> None:
        with pytest.raises(InvalidInputError, match="embedding"):
            await store.aadd([Document("tiny", "t", {}, vec)])
        assert await store.aget(["tiny"]) == []
        with pytest.raises(InvalidInputError, match="embedding"):
            await store.aprepare(vec)

    @pytest.mark.parametrize("scale", [1e-8, 1e8])
    async def test_vectors_of_small_and_large_norm_within_bounds_score_right(
        self, store: Store, docs: list[Document], scale: float
    ) -> None:
        q = [scale * x for x in _query()]
        hits = await store.asearch(q, k=3)
        assert _ids(hits) == _ranked(docs, q)[:3]
        by_id = {d.id: d for d in docs}
        for h in hits:
            assert h.score == pytest.approx(_cos(by_id[h.document.id], q), abs=TOL)

    async def test_returned_documents_are_copies(self, store: Store) -> None:
        q = _query()
        (hit,) = await store.aget(["d1"], embedding=q)
        doc = hit.document
        assert doc.embedding is not None
        doc.metadata["type"] = "changed"
        doc.metadata["keywords"].append("scales")
        doc.metadata["loc"]["city"] = "Lima"
        doc.embedding[0] = 123.0
        (again,) = await store.aget(["d1"])
        assert dict(again.document.metadata) == compliance_documents()[1].metadata
        assert again.document.embedding is not None and again.document.embedding[0] != 123.0
        assert "d1" in _ids(await store.asearch(q, k=12, filter={"type": "mammal"}))
        assert "d1" not in _ids(await store.asearch(q, k=12, filter={"keywords": "scales"}))
        assert "d1" in _ids(await store.asearch(q, k=12, filter={"loc.city": "Oslo"}))
        assert await store.asearch(q, k=12, filter={"loc.city": "Lima"}) == []

    @writes
    async def test_added_documents_are_copied_on_the_way_in(self, store: Store) -> None:
        vec = [0.0, 1.0] + [0.0] * (COMPLIANCE_DIM - 2)
        mine = Document("mine", "m", {"type": "kept", "tags": ["a"]}, list(vec))
        await store.aadd([mine])
        mine.metadata["type"] = "changed"
        mine.metadata["tags"].append("b")
        assert mine.embedding is not None
        mine.embedding[0] = 5.0
        (hit,) = await store.aget(["mine"])
        assert dict(hit.document.metadata) == {"type": "kept", "tags": ["a"]}
        assert _ids(await store.asearch(_query(), k=20, filter={"type": "kept"})) == ["mine"]
        assert await store.asearch(_query(), k=20, filter={"tags": "b"}) == []
        assert hit.document.embedding is not None and hit.document.embedding[0] == 0.0

    async def test_query_vector_reused_in_place_gives_the_new_querys_results(
        self, store: Store, docs: list[Document]
    ) -> None:
        buffer = np.asarray(_query(1), dtype=np.float64)
        first = _ids(await store.asearch(buffer, k=3))  # type: ignore[arg-type]
        assert first == _ranked(docs, list(buffer))[:3]
        prepared = await store.aprepare(buffer)  # type: ignore[arg-type]
        for seed in (2, 3, 4):
            buffer[:] = _query(seed)  # the same object, new values
            want = _ranked(docs, list(buffer))[:3]
            assert _ids(await store.asearch(buffer, k=3)) == want  # type: ignore[arg-type]
        listed = _query(5)
        assert _ids(await store.asearch(listed, k=3)) == _ranked(docs, listed)[:3]
        listed[:] = _query(6)
        assert _ids(await store.asearch(listed, k=3)) == _ranked(docs, listed)[:3]
        # A prepared query keeps the vector it was prepared with.
        assert _ids(await prepared.asearch(k=3)) == first
