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


def _run(tmp_path: Path, cls: str, deviations: dict[str, str]) -> dict[str, str]:
    """Outcome per test name of the suite run on `cls` with `deviations`."""
    (tmp_path / "test_third_party.py").write_text(
        BROKEN_STORE.format(cls=cls, deviations=json.dumps(deviations))
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n")
    report = tmp_path / "report.txt"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA",
         f"--junitxml={report}", "test_third_party.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
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
    outcomes = _run(tmp_path, "FilterlessStore", {})
    assert outcomes["test_search_filter"] == "failed"
    assert outcomes["test_filter_on_list_and_nested_fields"] == "failed"
    assert outcomes["test_search_order_and_k"] == "passed"  # the rest still holds


def test_a_documented_deviation_must_fail_and_a_stale_one_is_reported(tmp_path: Path) -> None:
    reason = "this store cannot filter its vector searches"
    outcomes = _run(
        tmp_path,
        "FilterlessStore",
        {"test_search_filter": reason, "test_search_k_zero": "claimed but untrue"},
    )
    assert outcomes["test_search_filter"] == "xfailed"
    assert outcomes["test_search_k_zero"] == "failed"  # strict: a deviation that passes fails


def test_the_reference_store_passes_the_suite_as_a_third_party_runs_it(tmp_path: Path) -> None:
    outcomes = _run(tmp_path, "MemoryStore", {})
    assert outcomes and set(outcomes.values()) == {"passed"}
