"""`scripts/soak` refuses bad arguments and a cluster it must not touch before it starts
anything, and its full schedule runs every level with every fault."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SOAK = REPO / "scripts" / "soak.py"


def _soak_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak_script", SOAK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "HOPRAG_CASSANDRA"} | env
    return subprocess.run(
        [sys.executable, str(SOAK), *args],
        capture_output=True,
        text=True,
        env=environ,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--levels", "0"], "--levels must be ints in 1..1024"),
        (["--levels", "a,b"], "--levels must be comma-separated ints"),
        (["--faults", "none,flood"], "--faults must be a comma-separated list of none, kill"),
        (["--seconds", "1"], "--seconds must be in 2..3600"),
        (["--write-rate", "-1"], "--write-rate must be in 0..10000"),
        (["--docs", "5"], "--docs must be in 10..20000"),
        (["--traversal-timeout", "0"], "--traversal-timeout must be in 1..3600"),
    ],
)
def test_bad_arguments_exit_2_naming_the_flag(args: list[str], message: str) -> None:
    r = _run(*args)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_a_named_cluster_is_refused_because_the_soak_kills_nodes() -> None:
    r = _run("--quick", HOPRAG_CASSANDRA="10.0.0.1:9042")
    assert r.returncode == 2
    assert "does not use HOPRAG_CASSANDRA" in r.stdout


def test_the_full_schedule_runs_every_level_with_every_fault_and_quick_one_each() -> None:
    soak = _soak_module()
    full = soak.plan([16, 64, 256], ["none", "kill", "delay"], 60.0, quick=False)
    assert [(p.in_flight, p.fault) for p in full] == [
        (n, f) for n in (16, 64, 256) for f in ("none", "kill", "delay")
    ]
    quick = soak.plan([16, 64, 256], ["none", "kill", "delay"], 10.0, quick=True)
    assert [(p.in_flight, p.fault) for p in quick] == [(16, "none"), (64, "kill"), (256, "delay")]
    assert {p.seconds for p in full} == {60.0}


def test_a_miss_at_one_and_a_cured_timeout_are_expected_and_a_miss_at_quorum_is_a_problem() -> None:
    soak = _soak_module()
    phase = soak.PhaseResult(in_flight=16, fault="none", label="all nodes up", completed=1)
    phase.probes = {"ONE": {"ok": 3, "missing": 1}, "QUORUM": {"ok": 4}, "ALL": {"ok": 4}}
    clean = {"missing": 0, "corrupted": 0, "unreadable": 0, "examples": []}
    assert soak.verdict([phase], clean) == []
    phase.probes["ONE"] = {"ok": 3, "ReadTimeout": 1}
    assert soak.verdict([phase], clean) == [
        "16 in flight, all nodes up: probes at ONE: {'ReadTimeout': 1}"
    ]
    phase.probes["ONE"] = {"ok": 3}
    phase.probes["QUORUM"] = {"ok": 3, soak.RETRIED_OK: 1}
    assert soak.verdict([phase], clean) == []
    phase.probes["QUORUM"] = {"ok": 3, "missing": 1}
    assert soak.verdict([phase], clean) == [
        "16 in flight, all nodes up: probes at QUORUM: {'missing': 1}"
    ]
    killed = soak.PhaseResult(in_flight=16, fault="kill", label="killed", completed=1)
    killed.probes = {"ALL": {"ok": 1, "Unavailable": 5, "ReadTimeout": 2}}
    assert soak.verdict([killed], clean) == []
    killed.probes = {"ALL": {"missing": 1}}
    assert soak.verdict([killed], clean) == ["16 in flight, killed: probes at ALL: {'missing': 1}"]
    assert soak.verdict([], clean | {"corrupted": 1, "examples": ["x"]}) == [
        "1 acknowledged documents corrupted at ALL: ['x']"
    ]


def test_a_failed_traversal_is_a_problem_that_shows_what_it_raised() -> None:
    soak = _soak_module()
    phase = soak.PhaseResult(in_flight=64, fault="kill", label="killed", completed=9, failed=1)
    phase.failures = {"StoreError": 1}
    phase.failure_examples = ["StoreError: adjacent query on soak.t: the replicas did not answer"]
    clean = {"missing": 0, "corrupted": 0, "unreadable": 0, "examples": []}
    [line] = soak.verdict([phase], clean)
    assert line.startswith("64 in flight, killed: 1 traversals failed: {'StoreError': 1}")
    assert "the replicas did not answer" in line


class _Session:
    """Answers the probe's reads from a script: an exception to raise or the rows to return."""

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.reads = 0

    def execute(self, stmt: object, values: object, timeout: float) -> list[object]:
        self.reads += 1
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        assert isinstance(answer, list)
        return answer


@pytest.mark.parametrize(
    ("level", "answers", "counted", "reads"),
    [
        ("QUORUM", [[("d1",)]], "ok", 1),
        ("QUORUM", ["timeout", [("d1",)]], "ReadTimeout, then ok", 2),
        ("QUORUM", ["timeout", []], "missing", 2),
        ("QUORUM", ["timeout", "timeout", "timeout", "timeout"], "ReadTimeout", 4),
        ("ONE", ["timeout", [("d1",)]], "ReadTimeout, then ok", 2),
        ("ONE", ["timeout", "timeout", "timeout", [("d1",)]], "ReadTimeout, then ok", 4),
        ("ONE", ["timeout", "timeout", []], "missing", 3),
        ("ALL", ["timeout"], "ReadTimeout", 1),
    ],
)
def test_a_probe_retries_a_server_timeout_up_to_three_times_below_all(
    monkeypatch: pytest.MonkeyPatch, level: str, answers: list, counted: str, reads: int
) -> None:
    from cassandra import ConsistencyLevel, ReadTimeout
    from cassandra.query import SimpleStatement

    soak = _soak_module()
    monkeypatch.setattr(soak.time, "sleep", lambda s: None)
    session = _Session(*[ReadTimeout("timed out") if a == "timeout" else a for a in answers])
    probe = soak.Soak.__new__(soak.Soak)
    probe.session = session
    stmt = SimpleStatement("SELECT id", consistency_level=getattr(ConsistencyLevel, level))
    assert probe._probe(stmt, "d1") == counted
    assert session.reads == reads


class _Clock:
    """A monotonic clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


class _Host:
    def __init__(self, address: str) -> None:
        self.address = address


class _ThreeNodes:
    """A driver session whose three nodes answer reads at ALL: `d2` is Unavailable through
    every coordinator until `passes` holds more than `failing_passes` rounds."""

    def __init__(self, passes: list[list[str]], failing_passes: int) -> None:
        self.passes = passes
        self.failing = failing_passes
        self.hosts = [_Host(f"127.0.0.3{n}") for n in (1, 2, 3)]
        self.cluster = types.SimpleNamespace(
            metadata=types.SimpleNamespace(all_hosts=lambda: list(self.hosts))
        )
        self.coordinators: list[str] = []

    def answer(self, doc_id: str) -> tuple[bool, object]:
        from cassandra import Unavailable

        down = len(self.passes) <= self.failing
        return (False, Unavailable("a replica is down")) if doc_id == "d2" and down else (
            True, [(doc_id,)])  # fmt: skip

    def execute(self, stmt: object, params: tuple, host: _Host) -> list:
        self.passes.append([params[0]])
        self.coordinators.append(host.address)
        ok, out = self.answer(params[0])
        if not ok:
            raise out  # type: ignore[misc]
        return out  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("failing_passes", "unreadable"),
    [(0, 0), (1, 0), (6, 0), (100, 1)],  # six passes outlast the old five retries
)
def test_the_final_check_reads_a_failed_read_at_all_again_until_its_time_is_up(
    monkeypatch: pytest.MonkeyPatch, failing_passes: int, unreadable: int
) -> None:
    import asyncio

    import cassandra.concurrent

    soak = _soak_module()
    clock = _Clock()
    monkeypatch.setattr(soak.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(soak.asyncio, "sleep", clock.sleep)
    passes: list[list[str]] = []
    session = _ThreeNodes(passes, failing_passes)

    def execute(session_: object, stmt: object, params: list, **kw: object) -> list:
        passes.append([p[0] for p in params])
        return [session.answer(p[0]) for p in params]

    monkeypatch.setattr(cassandra.concurrent, "execute_concurrent_with_args", execute)
    check = soak.Soak.__new__(soak.Soak)
    check.session = session
    check.retry_answers = {}
    answers, retries, waited = asyncio.run(check._read_all_at_all("stmt", ["d1", "d2", "d3"]))
    assert passes[0] == ["d1", "d2", "d3"] and all(p == ["d2"] for p in passes[1:])
    assert [i for i, (ok, _) in answers.items() if not ok] == ["d2"][:unreadable]
    assert retries == len(passes) - 1
    assert waited <= soak.VERIFY_WITHIN
    # Each retry round sends the read through the next node as coordinator.
    assert session.coordinators == [f"127.0.0.3{1 + k % 3}" for k in range(retries)]
    assert sum(check.retry_answers.values()) == retries
    if unreadable:  # it gave up only when the next pause would pass the deadline
        assert clock.now > soak.VERIFY_WITHIN - 30
