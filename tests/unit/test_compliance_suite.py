"""The shipped compliance suite catches a store that breaks the contract, and a documented
deviation is a strict expected failure: run as a third party would run it, in a pytest of its
own over a test file outside this project."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

BROKEN_STORE = '''
import pytest
from hoprag.filters import compile_filter
from hoprag.stores import MemoryStore
from hoprag.stores.memory import MemoryQuery
from hoprag.testing import StoreCompliance


class FilterlessQuery(MemoryQuery):
    """Forgets the filter in vector searches: a silent wrong answer."""

    def search(self, k):
        flt, self.filter = self.filter, compile_filter(None)
        try:
            return super().search(k)
        finally:
            self.filter = flt


class FilterlessStore(MemoryStore):
    def prepare(self, *args, **kwargs):
        q = super().prepare(*args, **kwargs)
        broken = FilterlessQuery.__new__(FilterlessQuery)
        broken.__dict__.update(q.__dict__)
        return broken


@pytest.fixture
def store_factory():
    async def make(embedding, documents):
        store = {cls}(embedding)
        await store.aadd(documents)
        return store
    return make


class TestStore(StoreCompliance):
    deviations = {deviations}
'''


SHARING_STORE = """
import pytest
from hoprag import Document
from hoprag.stores import MemoryStore
from hoprag.testing import StoreCompliance
from hoprag.testing import writes

MADE = {"fresh": 0, "shared": 0}


@pytest.fixture
def store_factory():
    async def make(embedding, documents):
        MADE["fresh"] += 1
        store = MemoryStore(embedding)
        await store.aadd(documents)
        return store

    async def shared(embedding, documents):
        MADE["shared"] += 1
        store = MemoryStore(embedding)
        await store.aadd(documents)
        return store

    make.shared = shared
    return make


class TestStore(StoreCompliance):
    async def test_write_unmarked(self, store):
        await store.aadd([Document("x", "x", {}, [1.0] + [0.0] * 7)])

    @writes
    async def test_write_marked(self, store):
        await store.aadd([Document("x", "x", {}, [1.0] + [0.0] * 7)])
        assert len(await store.aget(["x"])) == 1

    def test_zz_counts(self):
        print("MADE", MADE)
"""


MINIMAL_STORE = """
import pytest
from hoprag.stores import MemoryStore
from hoprag.stores.base import PreparedQuery, Store
from hoprag.testing import CoreCompliance


class OnlyRequiredQuery(PreparedQuery):
    # Forwards the four reads a PreparedQuery must have; everything else is the default.
    def __init__(self, inner):
        self._inner = inner
        self.embedding = inner.embedding
        self.filter = inner.filter
        self.include_embeddings = inner.include_embeddings
        self.limiter = inner.limiter

    async def asearch(self, *, k):
        return await self._inner.asearch(k=k)

    async def aget(self, ids):
        return await self._inner.aget(ids)

    async def aadjacent(self, edge, *, k):
        return await self._inner.aadjacent(edge, k=k)

    async def aadjacent_many(self, edges, *, k):
        return await self._inner.aadjacent_many(edges, k=k)


class OnlyRequiredStore(Store):
    # aprepare and aadd, nothing else: no scopes, no lexical index, no resolve.
    def __init__(self, embedding):
        self.embedding = embedding
        self._inner = MemoryStore(embedding)

    async def aprepare(self, embedding, filter=None, *, include_embeddings=True,
                       max_concurrency=16):
        inner = await self._inner.aprepare(embedding, filter,
                                           include_embeddings=include_embeddings,
                                           max_concurrency=max_concurrency)
        return OnlyRequiredQuery(inner)

    async def aadd(self, documents):
        await self._inner.aadd(documents)


@pytest.fixture
def store_factory():
    async def make(embedding, documents):
        store = OnlyRequiredStore(embedding)
        await store.aadd(documents)
        return store
    return make


class TestStore(CoreCompliance):
    pass
"""


def _run(
    tmp_path: Path,
    cls: str,
    deviations: dict[str, str],
    select: str | None = None,
    source: str = BROKEN_STORE,
) -> dict[str, str]:
    """Outcome per test name of the suite run on `cls` with `deviations` (only the tests
    `select` names, a `-k` expression, when given)."""
    (tmp_path / "test_third_party.py").write_text(
        source.format(cls=cls, deviations=json.dumps(deviations))
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n")
    report = tmp_path / "report.txt"
    only = ["-k", select] if select else []
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-rA",
         f"--junitxml={report}", *only, "test_third_party.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    (tmp_path / "output.txt").write_text(r.stdout + r.stderr)
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = case.get("name", "").split("[")[0]
        kinds = {child.tag for child in case}
        state = "failed" if kinds & {"failure", "error"} else "passed"
        if "skipped" in kinds:
            state = "xfailed"
        if outcomes.get(name) != "failed":
            outcomes[name] = state
    return outcomes


def test_the_suite_fails_a_store_that_ignores_the_filter(tmp_path: Path) -> None:
    select = "test_search_filter or test_filter_on_list or test_search_order_and_k"
    outcomes = _run(tmp_path, "FilterlessStore", {}, select)
    assert outcomes["test_search_filter"] == "failed"
    assert outcomes["test_filter_on_list_and_nested_fields"] == "failed"
    assert outcomes["test_search_order_and_k"] == "passed"  # the rest still holds


def test_a_documented_deviation_must_fail_and_a_stale_one_is_reported(tmp_path: Path) -> None:
    reason = "this store cannot filter its vector searches"
    outcomes = _run(
        tmp_path,
        "FilterlessStore",
        {"test_search_filter": reason, "test_search_k_zero": "claimed but untrue"},
        "test_search_filter or test_search_k_zero",
    )
    assert outcomes["test_search_filter"] == "xfailed"
    assert outcomes["test_search_k_zero"] == "failed"  # strict: a deviation that passes fails


def test_the_reference_store_passes_the_suite_as_a_third_party_runs_it(tmp_path: Path) -> None:
    outcomes = _run(tmp_path, "MemoryStore", {})
    assert outcomes and set(outcomes.values()) == {"passed"}


def test_tests_that_only_read_share_a_store_and_an_unmarked_write_to_it_fails(
    tmp_path: Path,
) -> None:
    outcomes = _run(tmp_path, "", {}, source=SHARING_STORE.replace("{", "{{").replace("}", "}}"))
    assert outcomes["test_write_unmarked"] == "failed"
    assert outcomes["test_write_marked"] == "passed"
    assert outcomes["test_search_filter"] == outcomes["test_upsert_replaces"] == "passed"
    output = (tmp_path / "output.txt").read_text()
    assert "test_write_unmarked called aadd on a store shared between tests" in output
    made = json.loads(output.split("MADE ", 1)[1].splitlines()[0].replace("'", '"'))
    # Every test marked @writes (and the suite's own writers) got a fresh store; the rest,
    # most of the suite, the shared one.
    assert 0 < made["fresh"] < made["shared"]


def test_a_store_with_only_the_required_methods_passes_the_core_contract_without_deviations(
    tmp_path: Path,
) -> None:
    outcomes = _run(tmp_path, "", {}, source=MINIMAL_STORE.replace("{", "{{").replace("}", "}}"))
    assert len(outcomes) > 40  # the core contract ran, not an empty class
    assert {n: o for n, o in outcomes.items() if o != "passed"} == {}
    assert not any(n.startswith(("test_scope", "test_resolve", "test_lexical")) for n in outcomes)
