"""The soak: traversals under load and faults on the local 3-node RF 3 cluster, and a check that
nothing acknowledged was lost or changed. Run it as `scripts/soak` (which installs what is
needed first); `scripts/soak --help` lists the options, docs/reliability.md explains the figures.

What it does, bounded in time and in count, on loopback addresses only:

1. Uses the cluster of `scripts/cassandra up --nodes 3` (starting it when none runs, and then
   stopping it at the end unless `--keep`), creates a fresh table in keyspace `soak` (RF 3) and
   loads FOLDOC articles into it at QUORUM.
2. Runs phases one after another. In each, `in_flight` traversals run at once (each worker
   starts a new one when its last ends), a writer adds fresh documents at QUORUM, and a probe
   reads one acknowledged document by id at ONE, QUORUM and ALL every half second. A phase's
   fault is `none`, `kill` (node 3 killed with SIGKILL at the start, restarted with
   `scripts/cassandra restart --node 3` halfway, the phase ending once the driver sees it up)
   or `delay` (every message between the client and node 2 held 500 ms each way by a proxy in
   its own process, for the whole phase).
3. Checks every node a traversal returned: its content and metadata are what was written under
   its id, and it passes the traversal's filter. A node that fails either is a wrong node.
4. At the end, with every node up, reads every acknowledged document at ALL and compares a
   checksum of its content, metadata and embedding with what was written.

It prints one row per phase and writes the same figures as JSON (`--json`). It exits 1 when a
document was lost or corrupted or a traversal returned a wrong node, 2 on bad arguments or when
the cluster is not a local 3-node one."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import multiprocessing
import os
import platform
import random
import resource
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "scripts" / "cassandra"
sys.path.insert(0, str(REPO / "tests"))  # delay_proxy.py

from hoprag import Document, Eager, atraverse  # noqa: E402
from hoprag.datasets.foldoc import load_foldoc  # noqa: E402
from hoprag.embeddings import HashEmbedding  # noqa: E402
from hoprag.errors import HopragError  # noqa: E402

PORT = 9042
DIM = 64
KEYSPACE = "soak"
EDGES = [("keywords", "keywords"), ("links", "$id")]
FAULTS = ("none", "kill", "delay")
DELAY = 0.5
"""Seconds the proxy holds each message to and from node 2 in a `delay` phase (each way)."""
KILLED = 3
RETRIED_OK = "ReadTimeout, then ok"  # a probe whose retry found the document
PROBE_BACKOFF = (1.0, 2.0, 4.0)
"""Seconds before each retry of a probe's server ReadTimeout at ONE or QUORUM. One retry after
a second was not enough on a saturated machine: with node 3 killed at load average 48 (it
took 105 s to come back) a read at ONE timed out twice in a row while the coordinators still
sent it to node 3; three retries over 7 s outlast the failure detector's lag there."""
DELAYED = 2
TRAVERSAL_TIMEOUT = 60.0
WRITE_BATCH = 8
RESTART_TIMEOUT = 600.0
VERIFY_WITHIN = 240.0
"""Seconds the final check at ALL keeps sending failed reads again before they count as
unreadable. A fixed five retries over ten seconds were not enough in CI: node 3 took 72 s to
come back after its kill, and afterwards the coordinators still answered Unavailable (a replica
they saw as down) for a third of the documents through every retry."""


def say(msg: str) -> None:
    print(f"[soak] {msg}", flush=True)


class SoakError(Exception):
    """A precondition of the soak does not hold (exit 2)."""


# -- the plan ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Phase:
    in_flight: int
    fault: str
    seconds: float

    @property
    def label(self) -> str:
        return {
            "none": "all nodes up",
            "kill": f"node {KILLED} killed, restarted halfway",
            "delay": f"node {DELAYED} +{DELAY * 1000:.0f} ms each way",
        }[self.fault]


def plan(levels: Sequence[int], faults: Sequence[str], seconds: float, quick: bool) -> list[Phase]:
    """Every level with every fault, in order; `quick`: one fault per level (none at the
    first, kill at the second, delay at the third, cycling)."""
    if quick:
        return [Phase(n, faults[i % len(faults)], seconds) for i, n in enumerate(levels)]
    return [Phase(n, f, seconds) for n in levels for f in faults]


# -- figures -------------------------------------------------------------------------------------


@dataclass
class PhaseResult:
    in_flight: int
    fault: str
    label: str
    seconds: float = 0.0
    completed: int = 0
    failed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    nodes_returned: int = 0
    wrong_nodes: int = 0
    writes_acknowledged: int = 0
    writes_failed: int = 0
    probes: dict[str, dict[str, int]] = field(default_factory=dict)
    peak_traversals: int = 0
    peak_queries_in_flight: int = 0
    peak_rss_mib: float = 0.0
    peak_load: float = 0.0
    """The highest 1-minute load average of the machine seen in the phase (2 cores here: above
    2, processes waited for a core)."""
    write_failures: dict[str, int] = field(default_factory=dict)
    wrong_examples: list[str] = field(default_factory=list)
    failure_examples: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    node_pids: dict[str, dict[str, int]] = field(default_factory=dict)
    """The nodes' JVM pids (address -> pid) before and after the phase."""


@dataclass
class Run:
    """What every task of the soak records into (one event loop: no locks needed)."""

    written: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Every id ever written (acknowledged or not) -> (content, canonical metadata JSON)."""
    checksums: dict[str, str] = field(default_factory=dict)
    """Acknowledged ids -> checksum of what was written."""
    latencies: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    wrong: list[str] = field(default_factory=list)
    completed: int = 0
    nodes_returned: int = 0
    writes_acknowledged: int = 0
    writes_failed: int = 0
    write_failures: Counter[str] = field(default_factory=Counter)
    probes: dict[str, Counter[str]] = field(default_factory=dict)
    traversals_running: int = 0
    peak_traversals: int = 0
    peak_queries: int = 0
    peak_rss_mib: float = 0.0
    peak_load: float = 0.0
    failure_examples: list[str] = field(default_factory=list)
    traversals_started: int = 0


def canonical(metadata: Mapping[str, Any]) -> str:
    return json.dumps(metadata, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def checksum(content: str, metadata: Mapping[str, Any], embedding: Sequence[float]) -> str:
    """sha256 of the content, the canonical metadata JSON and the float32 embedding bytes."""
    h = hashlib.sha256()
    h.update(content.encode())
    h.update(b"\0")
    h.update(canonical(metadata).encode())
    h.update(b"\0")
    h.update(np.asarray(embedding, dtype=np.float32).tobytes())
    return h.hexdigest()


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


# -- the cluster ---------------------------------------------------------------------------------


def launcher(*args: str, timeout: float = RESTART_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """`scripts/cassandra ARGS` with this process's environment, output captured."""
    return subprocess.run(
        [sys.executable, str(LAUNCHER), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    )


def local_nodes() -> dict[str, int]:
    """The running nodes of the local JVM cluster: address -> JVM pid (empty when none)."""
    r = launcher("pids", timeout=60)
    if r.returncode != 0:
        return {}
    out = {}
    for line in r.stdout.split("\n"):
        if line.strip():
            addr, pid = line.split()
            out[addr] = int(pid)
    return out


def addresses() -> list[str]:
    """The three nodes' addresses, from `scripts/cassandra` (HOPRAG_CASSANDRA_FIRST_IP)."""
    first = int(os.environ.get("HOPRAG_CASSANDRA_FIRST_IP", "1"))
    return [f"127.0.0.{first + i}" for i in range(3)]


def ensure_cluster(start: bool) -> bool:
    """Check that the local 3-node cluster runs (start it when none runs and `start`); whether
    this call started it."""
    if os.environ.get("HOPRAG_CASSANDRA"):
        raise SoakError(
            "the soak kills and restarts nodes of the local cluster of scripts/cassandra, so it "
            "does not use HOPRAG_CASSANDRA; unset it (scripts/cassandra up --nodes 3 starts the "
            "cluster, or let the soak start it)"
        )
    nodes = local_nodes()
    if len(nodes) == 3:
        return False
    if nodes:
        raise SoakError(
            f"a local cluster of {len(nodes)} node(s) runs ({', '.join(sorted(nodes))}); the "
            "soak needs 3: `scripts/cassandra up --nodes 3` (restarts stopped nodes) or "
            "`scripts/cassandra down` first"
        )
    if not start:
        raise SoakError("no local cluster runs: start one with `scripts/cassandra up --nodes 3`")
    say("starting the 3-node cluster (scripts/cassandra up --nodes 3)")
    r = launcher("up", "--nodes", "3", "--heap", "768M")
    if r.returncode != 0:
        raise SoakError(f"scripts/cassandra up --nodes 3 failed:\n{r.stderr[-2000:]}")
    return True


def proxy_process(listen: str, target: str, delay: Any, stop: Any) -> None:
    """The delay proxy in a process of its own (so that forwarding a third of the traffic
    does not compete with the soak's event loop for the GIL): listens on `listen`:9042,
    forwards to `target`:9042, holding each message `delay.value` seconds each way."""
    from delay_proxy import DelayProxy

    with DelayProxy((listen, PORT), (target, PORT), delay=0.0) as proxy:
        while not stop.is_set():
            proxy.delay = delay.value
            time.sleep(0.05)


def connect(addrs: list[str], proxy: str) -> Any:
    """A session to the cluster that reaches node 2 only through the proxy at `proxy` (an
    AddressTranslator maps node 2's address to it; the contact points are nodes 1 and 3)."""
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import AddressTranslator, DCAwareRoundRobinPolicy, TokenAwarePolicy

    delayed = addrs[DELAYED - 1]

    class ThroughProxy(AddressTranslator):
        def translate(self, addr: str) -> str:
            return proxy if addr == delayed else addr

    profile = ExecutionProfile(
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc="datacenter1")),
        request_timeout=30,
    )
    cluster = Cluster(
        [addrs[0], addrs[2]],
        port=PORT,
        protocol_version=5,
        address_translator=ThroughProxy(),
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
    )
    return cluster.connect()


def hosts_up(session: Any) -> int:
    return sum(1 for h in session.cluster.metadata.all_hosts() if h.is_up)


async def wait_hosts_up(session: Any, want: int, within: float) -> None:
    deadline = time.monotonic() + within
    while hosts_up(session) != want:
        if time.monotonic() > deadline:
            raise SoakError(f"the driver saw {hosts_up(session)} nodes up, not {want}")
        await asyncio.sleep(0.5)


async def wait_gossip_all_up(within: float) -> dict[str, str]:
    """Wait until each node's own view (`nodetool status` on it) shows the three nodes Up and
    Normal, for up to `within` seconds: a read at ALL fails with Unavailable at a coordinator
    that still sees a replica as down, whatever the driver sees. Each node's last view (the
    count of UN lines, or the error), for the report."""
    deadline = time.monotonic() + within
    while True:
        results = await asyncio.gather(*(
            asyncio.to_thread(launcher, "nodetool", "--node", str(i), "status", timeout=120)
            for i in (1, 2, 3)
        ))  # fmt: skip
        views = {
            f"node {i}": (
                f"{sum(ln.startswith('UN') for ln in r.stdout.splitlines())} UN"
                if r.returncode == 0
                else f"error: {r.stderr.strip()[-200:]}"
            )
            for i, r in zip((1, 2, 3), results, strict=True)
        }
        if all(v == "3 UN" for v in views.values()) or time.monotonic() > deadline:
            say(f"gossip views before the check: {views}")
            return views
        await asyncio.sleep(2)


# -- the workload --------------------------------------------------------------------------------


class Soak:
    def __init__(self, args: argparse.Namespace, session: Any, table: str) -> None:
        from hoprag.stores.cassandra.store import CassandraStore

        self.args = args
        self.session = session
        self.table = table
        self.embedding = HashEmbedding(DIM)
        common: dict[str, Any] = {
            "keyspace": KEYSPACE,
            "table": table,
            "session": session,
            "dimension": DIM,
            "replication_factor": 3,
        }
        self.reads = CassandraStore(self.embedding, **common)
        self.writes = CassandraStore(self.embedding, write_consistency="QUORUM", **common)
        self.rng = random.Random(args.seed)
        self.run = Run()
        self.base: list[Document] = []
        self.keywords: list[str] = []
        self.fresh = 0
        self.started = 0
        """Traversals started in all phases so far (bounded by --max-traversals)."""

    # setup

    async def load(self) -> None:
        docs = list(load_foldoc(limit=self.args.docs))
        for d in docs:
            d.embedding = self.embedding(d.content)
        await self.writes.aadd(docs)
        for d in docs:
            self._acknowledged(d)
        self.base = docs
        counts = Counter(k for d in docs for k in d.metadata.get("keywords", []))
        self.keywords = [k for k, n in counts.most_common(20) if n >= 5]
        say(f"loaded {len(docs)} FOLDOC articles at QUORUM into {KEYSPACE}.{self.table}")
        await self.flush()

    async def flush(self) -> None:
        """Flush the table to SSTables on every node (`nodetool flush`), as a cluster that has
        run a while has done with an old load: a node killed in a phase then replays from its
        commit log what the phases wrote, not the whole initial load (replaying vector-indexed
        mutations took most of a minute of a restart on a loaded 2-core machine)."""
        results = await asyncio.gather(*(
            asyncio.to_thread(launcher, "nodetool", "--node", str(i), "flush", KEYSPACE,
                              self.table, timeout=300)
            for i in (1, 2, 3)
        ))  # fmt: skip
        failed = [i for i, r in zip((1, 2, 3), results, strict=True) if r.returncode != 0]
        if failed:
            raise SoakError(f"nodetool flush failed on node(s) {failed}: "
                            f"{results[failed[0] - 1].stderr[-1000:]}")  # fmt: skip
        say(f"flushed {KEYSPACE}.{self.table} on nodes 1-3")

    def _remember(self, doc: Document) -> None:
        self.run.written[doc.id] = (doc.content, canonical(doc.metadata))

    def _acknowledged(self, doc: Document) -> None:
        self._remember(doc)
        assert doc.embedding is not None
        self.run.checksums[doc.id] = checksum(doc.content, doc.metadata, doc.embedding)

    # traversals

    def _filter(self, n: int) -> dict[str, Any] | None:
        """None, source = foldoc (so fresh documents are excluded) or a common keyword."""
        choice = n % 3
        if choice == 0 or not self.keywords:
            return None
        if choice == 1:
            return {"source": "foldoc"}
        return {"keywords": self.rng.choice(self.keywords)}

    @staticmethod
    def _passes(metadata: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
        for key, want in (filter or {}).items():
            have = metadata.get(key)
            if not (have == want or (isinstance(have, list) and want in have)):
                return False
        return True

    def _check(self, node: Any, filter: dict[str, Any] | None) -> bool:
        written = self.run.written.get(node.id)
        return (
            written is not None
            and written == (node.content, canonical(node.metadata))
            and self._passes(node.metadata, filter)
        )

    async def traversal(self) -> None:
        run = self.run
        n = run.traversals_started
        run.traversals_started += 1
        seed = self.base[self.rng.randrange(len(self.base))]
        filter = self._filter(n)
        strategy = Eager(select_k=10, start_k=4, adjacent_k=10, max_depth=2)
        run.traversals_running += 1
        run.peak_traversals = max(run.peak_traversals, run.traversals_running)
        began = time.perf_counter()
        try:
            result = await atraverse(
                seed.metadata.get("title", seed.id),
                store=self.reads,
                edges=EDGES,
                strategy=strategy,
                filter=filter,
                timeout=self.args.traversal_timeout,
            )
        except Exception as exc:  # counted by kind (HopragError or not); the soak goes on
            run.failures[type(exc).__name__] += 1
            if len(run.failure_examples) < 5:
                run.failure_examples.append(f"{type(exc).__name__}: {str(exc)[:300]}")
            return
        finally:
            run.traversals_running -= 1
        run.latencies.append(time.perf_counter() - began)
        run.completed += 1
        for node in result:
            run.nodes_returned += 1
            if not self._check(node, filter):
                run.wrong.append(f"{node.id} (filter {filter})")

    async def traverser(self, stop: asyncio.Event) -> None:
        while not stop.is_set() and self.run.traversals_started < self.args.max_traversals:
            await self.traversal()

    # writes

    def _fresh_batch(self) -> list[Document]:
        docs = []
        for _ in range(WRITE_BATCH):
            self.fresh += 1
            anchor = self.base[self.rng.randrange(len(self.base))]
            words = " ".join(self.rng.choice(anchor.content.split() or ["soak"]) for _ in range(12))
            meta: dict[str, Any] = {
                "source": "soak",
                "title": f"fresh {self.fresh}",
                "keywords": list(anchor.metadata.get("keywords", []))[:2],
                "links": [anchor.id],
                "n": self.fresh,
            }
            content = f"fresh {self.fresh}: {words}"
            docs.append(Document(f"fresh-{self.fresh}", content, meta, self.embedding(content)))
        return docs

    async def writer(self, stop: asyncio.Event) -> None:
        """Fresh documents at QUORUM, `--write-rate` per second (a batch of WRITE_BATCH at a
        time), until the phase ends or `--max-writes` were written."""
        run = self.run
        pace = WRITE_BATCH / self.args.write_rate if self.args.write_rate else 0.0
        due = time.monotonic()
        while not stop.is_set() and self.fresh + WRITE_BATCH <= self.args.max_writes:
            due += pace
            batch = self._fresh_batch()
            for d in batch:
                self._remember(d)  # a traversal may read it before the write is acknowledged
            try:
                await self.writes.aadd(batch)
            except HopragError as exc:
                run.writes_failed += len(batch)
                run.write_failures[type(exc).__name__] += 1
                continue
            for d in batch:
                self._acknowledged(d)
            run.writes_acknowledged += len(batch)
            try:
                await asyncio.wait_for(stop.wait(), max(0.0, due - time.monotonic()))
            except TimeoutError:
                pass

    # probes and monitor

    async def prober(self, stop: asyncio.Event) -> None:
        from cassandra import ConsistencyLevel
        from cassandra.query import SimpleStatement

        query = f"SELECT id FROM {KEYSPACE}.{self.table} WHERE id = %s"
        levels = {
            name: SimpleStatement(query, consistency_level=getattr(ConsistencyLevel, name))
            for name in ("ONE", "QUORUM", "ALL")
        }
        while not stop.is_set():
            doc_id = self.rng.choice(list(self.run.checksums))
            for name, stmt in levels.items():
                counts = self.run.probes.setdefault(name, Counter())
                counts[await asyncio.to_thread(self._probe, stmt, doc_id)] += 1
            try:
                await asyncio.wait_for(stop.wait(), 0.5)
            except TimeoutError:
                pass

    def _probe(self, stmt: Any, doc_id: str) -> str:
        """One read by id: "ok", "missing", or the error's kind. A coordinator that died
        under the read (the client timed out or lost the connection) says nothing about the
        consistency level: the read goes once more, to another coordinator, and counts as
        "coordinator lost" only when that fails too. A server-side ReadTimeout at ONE or
        QUORUM (the replicas asked did not answer within the server's timeout: a node killed
        but not yet known down, or one starved on a loaded machine) is retried after
        `PROBE_BACKOFF` seconds, as an application's retry policy would, and counts as
        RETRIED_OK when a retry finds the document; the last retry's result counts
        otherwise."""
        from cassandra import ConsistencyLevel, ReadTimeout

        result = self._read(stmt, doc_id)
        if stmt.consistency_level == ConsistencyLevel.ALL:
            return result
        for pause in PROBE_BACKOFF:
            if result != ReadTimeout.__name__:
                break
            time.sleep(pause)
            result = self._read(stmt, doc_id)
            if result == "ok":
                return RETRIED_OK
        return result

    def _read(self, stmt: Any, doc_id: str) -> str:
        from cassandra import OperationTimedOut
        from cassandra.cluster import NoHostAvailable
        from cassandra.connection import ConnectionException

        lost = (OperationTimedOut, ConnectionException, NoHostAvailable)
        for attempt in range(2):
            try:
                rows = list(self.session.execute(stmt, [doc_id], timeout=10))
                return "ok" if rows else "missing"
            except lost:
                if attempt:
                    return "coordinator lost"
            except Exception as exc:  # counted by kind; the soak goes on
                return type(exc).__name__
        return "coordinator lost"

    async def monitor(self, stop: asyncio.Event) -> None:
        run = self.run
        while not stop.is_set():
            run.peak_queries = max(run.peak_queries, self.reads.in_flight + self.writes.in_flight)
            run.peak_rss_mib = max(run.peak_rss_mib, rss_mib())
            run.peak_load = max(run.peak_load, os.getloadavg()[0])
            try:
                await asyncio.wait_for(stop.wait(), 0.05)
            except TimeoutError:
                pass

    # phases

    async def phase(self, phase: Phase, delay: Any) -> PhaseResult:
        self.run = run = Run(written=self.run.written, checksums=self.run.checksums)
        run.traversals_started = self.started
        say(f"phase: {phase.in_flight} in flight, {phase.label}, {phase.seconds:.0f} s")
        stop = asyncio.Event()
        began = time.monotonic()
        self.events: list[str] = []
        pids_before = local_nodes()
        async with asyncio.TaskGroup() as tg:
            for _ in range(phase.in_flight):
                tg.create_task(self.traverser(stop))
            tg.create_task(self.writer(stop))
            tg.create_task(self.prober(stop))
            tg.create_task(self.monitor(stop))
            try:
                await self.fault(phase, delay)
            finally:
                stop.set()
        self.started = run.traversals_started
        lat = sorted(run.latencies)
        return PhaseResult(
            in_flight=phase.in_flight,
            fault=phase.fault,
            label=phase.label,
            seconds=round(time.monotonic() - began, 1),
            completed=run.completed,
            failed=sum(run.failures.values()),
            failures=dict(run.failures),
            p50_ms=_ms(percentile(lat, 50)),
            p99_ms=_ms(percentile(lat, 99)),
            max_ms=_ms(lat[-1] if lat else None),
            nodes_returned=run.nodes_returned,
            wrong_nodes=len(run.wrong),
            writes_acknowledged=run.writes_acknowledged,
            writes_failed=run.writes_failed,
            probes={k: dict(v) for k, v in run.probes.items()},
            peak_traversals=run.peak_traversals,
            peak_queries_in_flight=run.peak_queries,
            peak_rss_mib=round(run.peak_rss_mib, 1),
            peak_load=round(run.peak_load, 1),
            write_failures=dict(run.write_failures),
            wrong_examples=run.wrong[:10],
            failure_examples=run.failure_examples,
            events=self.events,
            node_pids={"before": pids_before, "after": local_nodes()},
        )

    def event(self, what: str) -> None:
        """Say what happened to the cluster, and keep it in the phase's figures."""
        say(what)
        self.events.append(what)

    async def fault(self, phase: Phase, delay: Any) -> None:
        """Run the phase's fault and return when the phase is over."""
        t = phase.seconds
        if phase.fault == "none":
            await asyncio.sleep(t)
        elif phase.fault == "delay":
            delay.value = DELAY
            self.event(f"node {DELAYED} behind {DELAY * 1000:.0f} ms each way")
            try:
                await asyncio.sleep(t)
            finally:
                delay.value = 0.0
        else:
            began = time.monotonic()
            addr = addresses()[KILLED - 1]
            pid = local_nodes().get(addr)
            if pid is None:
                raise SoakError(f"node {KILLED} ({addr}) is not running before the kill")
            os.kill(pid, signal.SIGKILL)
            self.event(f"killed node {KILLED} ({addr}, pid {pid})")
            await asyncio.sleep(t / 2)
            self.event(f"restarting node {KILLED} after {time.monotonic() - began:.0f} s")
            r = await asyncio.to_thread(launcher, "restart", "--node", str(KILLED))
            if r.returncode != 0:
                raise SoakError(f"restart --node {KILLED} failed:\n{r.stderr[-2000:]}")
            await wait_hosts_up(self.session, 3, within=120)
            self.event(f"node {KILLED} back {time.monotonic() - began:.0f} s after the kill")
            await asyncio.sleep(max(0.0, t - (time.monotonic() - began)))

    # verification

    async def _read_all_at_all(
        self, stmt: Any, ids: list[str]
    ) -> tuple[dict[str, tuple[bool, Any]], int, float]:
        """Read every id with `stmt`; the answers, how many reads were sent again and the seconds
        spent retrying. A read that fails (Unavailable while a coordinator still sees a replica
        as down, a replica slow past the server's timeout) says nothing about the data: the
        failed ones are read again, 8 at a time, each retry round sending every read to another
        node as coordinator (every node holds every row: RF 3), with a growing pause, for up to
        VERIFY_WITHIN seconds; only a read that never answers counts as unreadable. What each
        coordinator answered on the retries is kept in `self.retry_answers`."""
        from cassandra.concurrent import execute_concurrent_with_args

        answers: dict[str, tuple[bool, Any]] = {}
        todo, retries, pause, turn = ids, 0, 2.0, 0
        began = time.monotonic()
        results = await asyncio.to_thread(
            execute_concurrent_with_args, self.session, stmt, [(i,) for i in todo],
            concurrency=64, raise_on_first_error=False,
        )  # fmt: skip
        while True:
            for doc_id, (ok, rows) in zip(todo, results, strict=True):
                answers[doc_id] = (ok, rows if not ok else list(rows))
            todo = [i for i in todo if not answers[i][0]]
            waited = time.monotonic() - began if retries else 0.0
            if not todo or time.monotonic() - began + pause > VERIFY_WITHIN:
                return answers, retries, waited
            kinds = Counter(type(answers[i][1]).__name__ for i in todo)
            first = str(answers[todo[0]][1])[:300]
            say(f"  {len(todo)} reads at ALL failed ({dict(kinds)}; first: {first}); "
                f"again in {pause:.0f} s through each node in turn")  # fmt: skip
            retries += len(todo)
            await asyncio.sleep(pause)
            pause = min(pause * 2, 30.0)
            results = await self._read_through_each_node(stmt, todo, turn)
            turn += 1

    async def _read_through_each_node(
        self, stmt: Any, ids: list[str], turn: int
    ) -> list[tuple[bool, Any]]:
        """Each id read with `stmt` at another node as coordinator (`turn` rotates them), 8 at
        a time; (ok, rows or error) per id, each coordinator's answers counted."""
        hosts = sorted(self.session.cluster.metadata.all_hosts(), key=lambda h: str(h.address))
        gate = asyncio.Semaphore(8)

        async def one(k: int, doc_id: str) -> tuple[bool, Any]:
            host = hosts[(turn + k) % len(hosts)]
            async with gate:
                try:
                    rows = await asyncio.to_thread(self.session.execute, stmt, (doc_id,), host=host)
                    out: tuple[bool, Any] = (True, rows)
                except Exception as exc:
                    out = (False, exc)
            key = f"{host.address} {'ok' if out[0] else type(out[1]).__name__}"
            self.retry_answers[key] = self.retry_answers.get(key, 0) + 1
            return out

        return list(await asyncio.gather(*(one(k, i) for k, i in enumerate(ids))))

    async def verify(self) -> dict[str, Any]:
        """Read every acknowledged document at ALL and compare checksums."""
        from cassandra import ConsistencyLevel

        stmt = self.session.prepare(
            f"SELECT id, content, metadata, embedding FROM {KEYSPACE}.{self.table} WHERE id = ?"
        )
        stmt.consistency_level = ConsistencyLevel.ALL
        ids = list(self.run.checksums)
        self.retry_answers: dict[str, int] = {}
        self.gossip = await wait_gossip_all_up(within=120)
        answers, retries, waited = await self._read_all_at_all(stmt, ids)
        missing, corrupted, unreadable = [], [], []
        for doc_id in ids:
            ok, rows = answers[doc_id]
            if not ok:
                unreadable.append(f"{doc_id}: {type(rows).__name__}")
                continue
            if not rows:
                missing.append(doc_id)
                continue
            row = rows[0]
            got = checksum(row.content, json.loads(row.metadata), row.embedding)
            if got != self.run.checksums[doc_id]:
                corrupted.append(doc_id)
        return {
            "acknowledged": len(ids),
            "checked_at": "ALL",
            "missing": len(missing),
            "corrupted": len(corrupted),
            "unreadable": len(unreadable),
            "reads_retried": retries,
            "retry_seconds": round(waited, 1),
            "retry_answers": dict(sorted(self.retry_answers.items())),
            "gossip": self.gossip,
            "examples": (missing + corrupted + unreadable)[:10],
        }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


# -- the report ----------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    mem = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) // 1024
    return {
        "cpus": os.cpu_count(),
        "memory_mib": mem,
        "python": platform.python_version(),
        "system": platform.platform(),
    }


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}"


def _probe_fails(probes: Mapping[str, Mapping[str, int]], level: str) -> str:
    """Reads that did not succeed at the first try, of all reads, at `level`."""
    counts = probes.get(level, {})
    bad = sum(n for k, n in counts.items() if k != "ok")
    return f"{bad}/{sum(counts.values())}"


def table(phases: Sequence[PhaseResult]) -> str:
    head = (
        f"{'in flight':>9}  {'fault':<34} {'s':>4} {'done':>6} {'failed':>6} {'p50 ms':>7} "
        f"{'p99 ms':>7} {'wrong':>5} {'writes ok':>9} {'w.fail':>6} "
        f"{'ONE':>7} {'QUORUM':>7} {'ALL':>7} {'peak q':>6} {'RSS MiB':>7} {'load':>5}"
    )
    lines = [head, "-" * len(head)]
    for p in phases:
        lines.append(
            f"{p.in_flight:>9}  {p.label:<34} {p.seconds:>4.0f} {p.completed:>6} {p.failed:>6} "
            f"{_fmt(p.p50_ms):>7} {_fmt(p.p99_ms):>7} {p.wrong_nodes:>5} "
            f"{p.writes_acknowledged:>9} {p.writes_failed:>6} "
            f"{_probe_fails(p.probes, 'ONE'):>7} {_probe_fails(p.probes, 'QUORUM'):>7} "
            f"{_probe_fails(p.probes, 'ALL'):>7} {p.peak_queries_in_flight:>6} "
            f"{p.peak_rss_mib:>7.0f} {p.peak_load:>5.1f}"
        )
    return "\n".join(lines)


def verdict(phases: Sequence[PhaseResult], check: Mapping[str, Any]) -> list[str]:
    """What went wrong, one line each (empty: the soak passed). Expected, and not listed:
    a probe at ALL failing (ALL needs every replica to answer within the server's timeout, so
    a node down, or one slow on a loaded machine, fails it), and a probe at ONE not finding a
    document acknowledged at QUORUM (one replica of three may not have it yet: 1 + 2 is not
    more than 3; a restarted node gets the writes it missed from hints and read repair), and
    a server ReadTimeout at ONE or QUORUM whose retries found the document (RETRIED_OK).
    Everything else is a problem: a wrong node, a failed traversal, an error at ONE or QUORUM
    that a retry did not cure, a miss at QUORUM or ALL, a document lost, changed or never
    readable at the end."""
    bad = []
    for p in phases:
        where = f"{p.in_flight} in flight, {p.label}"
        if p.wrong_nodes:
            bad.append(f"{where}: {p.wrong_nodes} wrong nodes, e.g. {p.wrong_examples[:3]}")
        if p.failed:
            examples = p.failure_examples[:2]
            bad.append(f"{where}: {p.failed} traversals failed: {p.failures}, e.g. {examples}")
        for level, counts in p.probes.items():
            if level == "ALL":  # errors are expected there, a miss is not
                fails = {k: n for k, n in counts.items() if k == "missing"}
            else:
                expected = {"ok", RETRIED_OK} | ({"missing"} if level == "ONE" else set())
                fails = {k: n for k, n in counts.items() if k not in expected}
            if fails:
                bad.append(f"{where}: probes at {level}: {fails}")
    for what in ("missing", "corrupted", "unreadable"):
        if check[what]:
            bad.append(f"{check[what]} acknowledged documents {what} at ALL: {check['examples']}")
    return bad


# -- main ----------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="scripts/soak",
        description="Traversals under load and faults on the local 3-node RF 3 cluster "
        "(see docs/reliability.md).",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="one fault per level (none, kill, delay) and 10 s phases: under 3 minutes",
    )
    ap.add_argument("--levels", default="16,64,256", help="traversals in flight, per phase")
    ap.add_argument("--faults", default="none,kill,delay", help="faults, each run at every level")
    ap.add_argument(
        "--seconds", type=float, default=None, help="seconds per phase (60; --quick 10)"
    )
    ap.add_argument("--docs", type=int, default=1500, help="FOLDOC articles loaded first")
    ap.add_argument(
        "--write-rate",
        type=float,
        default=40.0,
        help="fresh documents written per second at QUORUM (default 40; 0: as fast as they go)",
    )
    ap.add_argument("--max-writes", type=int, default=20_000, help="fresh documents at most")
    ap.add_argument("--max-traversals", type=int, default=200_000, help="traversals at most")
    ap.add_argument(
        "--traversal-timeout",
        type=float,
        default=TRAVERSAL_TIMEOUT,
        help=f"seconds a traversal may take before it counts as failed (default "
        f"{TRAVERSAL_TIMEOUT:.0f})",
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", default="soak.json", help="where the figures go (default soak.json)")
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep the table, and the cluster when the soak started it",
    )
    args = ap.parse_args(argv)
    try:
        args.levels = [int(x) for x in args.levels.split(",")]
    except ValueError:
        ap.error(f"--levels must be comma-separated ints, got {args.levels!r}")
    if not args.levels or any(not 1 <= n <= 1024 for n in args.levels):
        ap.error(f"--levels must be ints in 1..1024, got {args.levels}")
    args.faults = [f.strip() for f in args.faults.split(",")]
    if not args.faults or any(f not in FAULTS for f in args.faults):
        ap.error(f"--faults must be a comma-separated list of {', '.join(FAULTS)}")
    if args.seconds is None:
        args.seconds = 10.0 if args.quick else 60.0
    if not 2 <= args.seconds <= 3600:
        ap.error(f"--seconds must be in 2..3600, got {args.seconds}")
    if not 10 <= args.docs <= 20_000:
        ap.error(f"--docs must be in 10..20000, got {args.docs}")
    if not 0 <= args.write_rate <= 10_000:
        ap.error(f"--write-rate must be in 0..10000, got {args.write_rate}")
    if not 0 <= args.max_writes <= 1_000_000:
        ap.error(f"--max-writes must be in 0..1000000, got {args.max_writes}")
    if not 1 <= args.traversal_timeout <= 3600:
        ap.error(f"--traversal-timeout must be in 1..3600, got {args.traversal_timeout}")
    if not 1 <= args.max_traversals <= 10_000_000:
        ap.error(f"--max-traversals must be in 1..10000000, got {args.max_traversals}")
    return args


async def soak(args: argparse.Namespace, session: Any, table: str, delay: Any) -> dict[str, Any]:
    s = Soak(args, session, table)
    await s.reads.asetup()
    await s.writes.asetup()
    await s.load()
    phases = [
        await s.phase(p, delay) for p in plan(args.levels, args.faults, args.seconds, args.quick)
    ]
    await wait_hosts_up(session, 3, within=120)
    say(f"checking {len(s.run.checksums)} acknowledged documents at ALL")
    check = await s.verify()
    bound = s.reads.config.max_in_flight + s.writes.config.max_in_flight
    return {"phases": phases, "verification": check, "query_bound": bound}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks
    try:
        started = ensure_cluster(start=True)
    except SoakError as exc:
        say(f"error: {exc}")
        return 2
    addrs = addresses()
    proxy = "127.0.1." + addrs[DELAYED - 1].rsplit(".", 1)[1]
    ctx = multiprocessing.get_context("spawn")
    delay, stop = ctx.Value("d", 0.0), ctx.Event()
    proc = ctx.Process(target=proxy_process, args=(proxy, addrs[DELAYED - 1], delay, stop))
    session = None
    name = "t" + time.strftime("%Y%m%d%H%M%S")
    began = time.monotonic()
    try:
        proc.start()
        session = connect(addrs, proxy)
        release = session.execute("SELECT release_version FROM system.local").one()[0]
        say(f"Cassandra {release} on {', '.join(addrs)}; node {DELAYED} through {proxy}")
        out = asyncio.run(soak(args, session, name, delay))
    except SoakError as exc:
        say(f"error: {exc}")
        return 2
    finally:
        if session is not None and not args.keep:
            try:
                session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{name}", timeout=60)
            except Exception as exc:  # clean-up: say it and go on
                say(f"could not drop {KEYSPACE}.{name}: {exc}")
        if session is not None:
            session.cluster.shutdown()
        stop.set()
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()
        if started and not args.keep:
            say("stopping the cluster this soak started")
            launcher("down")
    phases, check = out["phases"], out["verification"]
    report = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(),
        "cassandra": release,
        "arguments": {k: v for k, v in vars(args).items() if k != "json"},
        "seconds": round(time.monotonic() - began, 1),
        "query_bound": out["query_bound"],
        "phases": [asdict(p) for p in phases],
        "verification": check,
    }
    problems = verdict(phases, check)
    report["problems"] = problems
    Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(table(phases))
    print(
        f"acknowledged documents: {check['acknowledged']}, read back at ALL: "
        f"{check['missing']} missing, {check['corrupted']} corrupted, "
        f"{check['unreadable']} unreadable ({check['reads_retried']} reads sent again "
        f"over {check['retry_seconds']:.0f} s)"
    )
    if check["retry_answers"]:
        print(f"retried reads by coordinator: {check['retry_answers']}; gossip: {check['gossip']}")
    say(f"figures written to {args.json} ({report['seconds']:.0f} s in all)")
    for line in problems:
        say(f"PROBLEM: {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
