"""hoprag held to Astra DB Serverless's rules on a real node (#54): `scripts/cassandra up
--astra` starts a node whose guardrails refuse what Astra refuses (writes at ONE, LOCAL_ONE or
ANY, user-defined functions, list updates by index, a 51st table, an 11th index on a table;
another compaction than UCS is ignored with a warning), logged in as an ordinary role named
`token`, as Astra's CQL users are. On it the CLI (with the launcher's astra.env) loads with the
lexical index, queries, deletes and shows stats; a store in Astra mode writes, searches in
scopes and keeps views apart, and passes the compliance suite's write, delete and lexical
contracts; a schema past Astra's table limit is refused before anything is created; and
`CassandraStore.from_astra` takes a copied table and traverses it through a secure-connect bundle
made for the node, served the way the driver reaches Astra (a metadata service over TLS, an
SNI proxy: HAProxy). The node runs beside the suite's own on 127.0.0.22 with its own state;
this module starts it once and stops it (and the proxy) at the end, also when a test fails."""

from __future__ import annotations

import asyncio
import http.server
import itertools
import json
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from hoprag import Document, Eager, atraverse
from hoprag.datasets.films import load_films
from hoprag.embeddings import HashEmbedding
from hoprag.errors import InvalidInputError, StoreUnavailableError
from hoprag.stores.cassandra import astra
from hoprag.stores.cassandra.connection import ConnectionOptions
from hoprag.stores.cassandra.session import connect
from hoprag.stores.cassandra.store import CassandraStore
from hoprag.stores.memory import MemoryStore
from hoprag.testing.compliance import (
    DeleteCompliance,
    LexicalCompliance,
    StoreFactory,
    WriteCompliance,
)
from hoprag.tools import film_search_tool
from launcher_run import alive, run_launcher
from shared_data import graph_documents, write_articles_jsonl
from view_checks import DECLARED, check_view, check_writes_through_a_view_stay_out_of_other_views
from view_checks import corpus as view_corpus

ADDR = "127.0.0.22"
POINT = f"{ADDR}:9042"
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"


@dataclass
class AstraNode:
    env: dict[str, str]
    state: Path
    up: subprocess.CompletedProcess[str]
    info: dict[str, Any]

    def options(self, *, admin: bool = False) -> ConnectionOptions:
        """The `token` role's login (or the superuser's) with the launcher's TLS files."""
        user, password = (
            (self.info["superuser"], self.info["superuser_password"])
            if admin
            else (self.info["username"], self.info["password"])
        )
        return ConnectionOptions(
            username=user,
            password=password,
            tls_ca_file=self.info["tls_ca_file"],
            tls_cert_file=self.info["tls_cert_file"],
            tls_key_file=self.info["tls_key_file"],
        )

    def session(self, *, admin: bool = False) -> Any:
        """A session as the `token` role (or the superuser) whose statements run at
        LOCAL_QUORUM unless they say otherwise, 30 s to connect."""
        return connect(POINT, connection=self.options(admin=admin), connect_timeout=30.0,
                       consistency="LOCAL_QUORUM")  # fmt: skip

    def hoprag(self, *args: str, consistency: bool = True) -> subprocess.CompletedProcess[str]:
        """The CLI as a user runs it after `set -a; . <state>/astra.env`: every connection
        detail from the environment (without HOPRAG_CASSANDRA_CONSISTENCY when not
        `consistency`); stdin is not a terminal."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("HOPRAG_")}
        for line in (self.state / "astra.env").read_text().splitlines():
            name, _, value = line.partition("=")
            env[name] = value
        if not consistency:
            del env["HOPRAG_CASSANDRA_CONSISTENCY"]
        return subprocess.run(
            [sys.executable, "-m", "hoprag.cli", *args], env=env, capture_output=True,
            text=True, stdin=subprocess.DEVNULL, timeout=600, check=False,
        )  # fmt: skip


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AstraNode]:
    state = tmp_path_factory.mktemp("astra") / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPRAG_CASSANDRA")}
    env |= {
        "HOPRAG_CASSANDRA_HOME": str(state),
        "HOPRAG_CASSANDRA_FIRST_IP": "22",
        "HOPRAG_NO_DOCKER": "1",
    }
    up = run_launcher(env, "up", "--astra", "--scratch", "--heap", "768M")
    try:
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-3000:]
        info = json.loads((state / "astra.json").read_text())
        yield AstraNode(env, state, up, info)
    finally:
        run_launcher(env, "down", "--astra")
        _kill_leftover(state)


def _kill_leftover(state: Path) -> None:
    """Whatever `down` left running of this module's node is killed (it should be nothing)."""
    for pid_file in state.glob("node*/pid"):
        pid = int(pid_file.read_text())
        if alive(pid):
            os.killpg(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)


def _refusal(session: Any, statement: Any, *params: Any) -> str:
    """The node's message refusing `statement` ('' when it ran)."""
    try:
        session.execute(statement, params or None)
    except Exception as exc:
        return str(exc)
    return ""


# --- the node refuses what Astra refuses -------------------------------------------------------


def test_up_astra_reports_its_address_role_and_env_and_the_node_runs_astras_rules(
    node: AstraNode,
) -> None:
    assert node.up.stdout.strip().splitlines()[-1] == POINT
    assert node.info["username"] == "token" and node.info["password"].startswith("AstraCS:")
    env = run_launcher(node.env, "env", "--astra")
    assert env.returncode == 0, env.stderr
    assert f"HOPRAG_CASSANDRA={POINT}\n" in env.stdout
    assert "HOPRAG_CASSANDRA_USERNAME=token\n" in env.stdout
    assert "HOPRAG_CASSANDRA_CONSISTENCY=LOCAL_QUORUM\n" in env.stdout
    status = run_launcher(node.env, "status", "--astra")
    assert status.returncode == 0 and "Astra" in status.stdout and POINT in status.stdout
    session = node.session()
    try:
        settings = {r.name: r.value for r in session.execute("SELECT * FROM system_views.settings")}
    finally:
        session.cluster.shutdown()
    assert settings["tables_fail_threshold"] == str(astra.MAX_TABLES)
    assert settings["secondary_indexes_per_table_fail_threshold"] == str(astra.MAX_SAI_PER_TABLE)
    assert settings["user_defined_functions_enabled"] == "false"
    assert settings["read_before_write_list_operations_enabled"] == "false"
    assert settings["native_transport_max_requests_per_second"] == str(astra.OPS_PER_SECOND)
    assert set(settings["write_consistency_levels_disallowed"].strip("[]").split(", ")) == set(
        astra.REFUSED_WRITE_CONSISTENCY
    )


def test_the_node_refuses_writes_at_one_local_one_and_any_and_takes_local_quorum(
    node: AstraNode,
) -> None:
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    session = node.session()
    try:
        session.execute("CREATE TABLE IF NOT EXISTS hoprag.levels (id text PRIMARY KEY, n int)")
        insert = "INSERT INTO hoprag.levels (id, n) VALUES (%s, %s)"
        for name in astra.REFUSED_WRITE_CONSISTENCY:
            stmt = SimpleStatement(insert, consistency_level=getattr(ConsistencyLevel, name))
            why = _refusal(session, stmt, name, 1)
            assert "Guardrail write_consistency_levels violated" in why and name in why
        for name in ("LOCAL_QUORUM", "QUORUM"):
            stmt = SimpleStatement(insert, consistency_level=getattr(ConsistencyLevel, name))
            assert _refusal(session, stmt, name, 1) == ""
        read = SimpleStatement(
            "SELECT id FROM hoprag.levels", consistency_level=ConsistencyLevel.ONE
        )
        assert sorted(r.id for r in session.execute(read)) == ["LOCAL_QUORUM", "QUORUM"]
    finally:
        session.cluster.shutdown()


def test_the_node_refuses_user_defined_functions_and_list_updates_by_index(
    node: AstraNode,
) -> None:
    session = node.session()
    try:
        why = _refusal(
            session,
            "CREATE FUNCTION hoprag.twice (x int) RETURNS NULL ON NULL INPUT RETURNS int "
            "LANGUAGE java AS 'return x * 2;'",
        )
        assert "User-defined functions are disabled" in why
        session.execute(
            "CREATE TABLE IF NOT EXISTS hoprag.lists (id text PRIMARY KEY, l list<int>)"
        )
        session.execute("INSERT INTO hoprag.lists (id, l) VALUES ('a', [1, 2, 3])")
        why = _refusal(session, "UPDATE hoprag.lists SET l[0] = 5 WHERE id = 'a'")
        assert "Guardrail read_before_write_list_operations violated" in why
        why = _refusal(session, "DELETE l[0] FROM hoprag.lists WHERE id = 'a'")
        assert "Guardrail read_before_write_list_operations violated" in why
        session.execute("UPDATE hoprag.lists SET l = l + [4] WHERE id = 'a'")  # no read: fine
        assert session.execute("SELECT l FROM hoprag.lists WHERE id = 'a'").one().l == [1, 2, 3, 4]
    finally:
        session.cluster.shutdown()


def test_a_table_asking_for_another_compaction_gets_ucs_and_a_warning(node: AstraNode) -> None:
    session = node.session()
    try:
        result = session.execute(
            "CREATE TABLE IF NOT EXISTS hoprag.stcs (id text PRIMARY KEY) "
            "WITH compaction = {'class': 'SizeTieredCompactionStrategy'}"
        )
        warnings = result.response_future.warnings or []
        row = session.execute(
            "SELECT compaction FROM system_schema.tables WHERE keyspace_name = 'hoprag' "
            "AND table_name = 'stcs'"
        ).one()
    finally:
        session.cluster.shutdown()
    assert any("Ignoring provided values [compaction]" in w for w in warnings), warnings
    assert row.compaction["class"].endswith("UnifiedCompactionStrategy")


# --- hoprag on it --------------------------------------------------------------------------------


def test_the_cli_loads_with_the_lexical_index_queries_deletes_and_shows_stats(
    node: AstraNode, tmp_path: Path
) -> None:
    f = tmp_path / "articles.jsonl"
    ids = write_articles_jsonl(f, 120)
    refused = node.hoprag("load", "jsonl", "--path", str(f), "--table", "refused",
                          "--embedding", "hash:32", consistency=False)  # fmt: skip
    assert refused.returncode != 0
    assert "Guardrail write_consistency_levels violated" in refused.stderr
    load = node.hoprag("load", "jsonl", "--path", str(f), "--table", "arts", "--embedding",
                       "hash:32", "--lexical")  # fmt: skip
    assert load.returncode == 0, load.stdout + load.stderr
    assert "loaded 120 documents into hoprag.arts" in load.stdout
    q = node.hoprag("query", "article 5 on topic 5", "--table", "arts", "--edges",
                    "references:$id,keywords:keywords", "--select-k", "10", "--json")  # fmt: skip
    assert q.returncode == 0, q.stderr
    nodes = json.loads(q.stdout)["nodes"]
    assert len(nodes) == 10 and {n["id"] for n in nodes} <= set(ids)
    assert any(n["depth"] >= 1 for n in nodes)
    gone = node.hoprag("delete", "--table", "arts", "--id", ids[0], "--id", ids[1])
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert "deleted 2 document(s) from hoprag.arts" in gone.stdout
    stats = node.hoprag("stats", "--table", "arts", "--json")
    assert stats.returncode == 0, stats.stderr
    (entry,) = json.loads(stats.stdout)
    assert entry["table"] == "hoprag.arts" and entry["documents"] == 118


def test_the_cli_links_a_table_in_place_and_the_agent_tool_answers_as_on_memorystore(
    node: AstraNode,
) -> None:
    records = [
        {"id": "quokka", "title": "Quokka", "text": "The quokka lives on Rottnest."},
        {"id": "rottnest", "title": "Rottnest", "text": "Rottnest lies off Perth."},
        {"id": "perth", "title": "Perth", "text": "Perth is a city."},
    ]
    f = node.state.parent / "places.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    load = node.hoprag("load", "jsonl", "--path", str(f), "--table", "places", "--embedding",
                       "hash:32", "--lexical")  # fmt: skip
    assert load.returncode == 0, load.stdout + load.stderr
    link = node.hoprag("link", "--table", "places")
    assert link.returncode == 0, link.stdout + link.stderr
    assert "linked hoprag.places: 2 of 3 documents linked, 2 links" in link.stdout
    q = node.hoprag("query", "island", "--table", "places", "--edges", "mentions:$id", "--root",
                    "quokka", "--start-k", "0", "--max-depth", "3", "--json")  # fmt: skip
    assert q.returncode == 0, q.stderr
    depths = {n["id"]: n["depth"] for n in json.loads(q.stdout)["nodes"]}
    assert depths == {"quokka": 0, "rottnest": 1, "perth": 2}

    films = node.hoprag("load", "films", "--limit", "400", "--table", "films", "--embedding",
                        "hash:32")  # fmt: skip
    assert films.returncode == 0, films.stdout + films.stderr
    args = {"topic": "drama", "year_from": 1930, "year_to": 1960, "limit": 10}
    flags = [x for k, v in args.items() for x in (f"--{k.replace('_', '-')}", str(v))]
    asked = node.hoprag("ask", "--table", "films", *flags, "--json")
    assert asked.returncode == 0, asked.stderr
    ids = [row["id"] for row in json.loads(asked.stdout)["results"]]
    memory = MemoryStore(HashEmbedding(32))
    memory.add(load_films(limit=400))
    expected = asyncio.run(film_search_tool(memory).arun(**args))
    assert ids and ids == [n.id for n in expected.nodes]


async def test_a_store_in_astra_mode_searches_traverses_in_scopes_and_keeps_views_apart(
    node: AstraNode,
) -> None:
    docs = view_corpus(17)
    store = CassandraStore(
        HashEmbedding(16), keyspace="hoprag", table="stories", contact_points=POINT,
        connection=node.options(), astra=True, fields=DECLARED, lexical=True,
    )  # fmt: skip
    try:
        assert store.config.write_consistency == "LOCAL_QUORUM"
        await store.aadd(docs)
        await check_view(store, docs, seed=17, rounds=1)  # ids, search, traversal, scope, ...
        await check_writes_through_a_view_stay_out_of_other_views(store)
        assert await store.adelete([docs[0].id]) == 1
        assert await store.aget([docs[0].id]) == []
    finally:
        await store.aclose()


def test_a_schema_past_astras_table_limit_is_refused_before_anything_is_created(
    node: AstraNode,
) -> None:
    admin = node.session(admin=True)
    session = node.session()
    try:
        admin.execute(
            "CREATE KEYSPACE IF NOT EXISTS crowded WITH replication = "
            "{'class': 'NetworkTopologyStrategy', 'datacenter1': 1}"
        )
        admin.execute("GRANT ALL PERMISSIONS ON KEYSPACE crowded TO 'token'")
        held = astra.holdings(admin)
        room = 3  # the lexical store below needs 4 tables: its own and 3 of the keyspace's
        for i in range(astra.MAX_TABLES - room - len(held.tables)):
            admin.execute(f"CREATE TABLE crowded.filler{i} (id text PRIMARY KEY)")
        before = astra.holdings(admin)
        assert len(before.tables) == astra.MAX_TABLES - room
        with pytest.raises(InvalidInputError) as caught:
            CassandraStore(
                HashEmbedding(16), keyspace="crowded", table="docs", contact_points=POINT,
                connection=node.options(), astra=True, lexical=True,
            )  # fmt: skip
        message = str(caught.value)
        assert f"at most {astra.MAX_TABLES} tables per database" in message
        assert f"holds {astra.MAX_TABLES - room}" in message and "3 would fit" in message
        assert "crowded.docs" in message and "crowded.hoprag_postings" in message
        assert astra.holdings(admin) == before  # nothing was created
        # The node itself refuses the 51st table to the same role.
        for i in range(room):
            session.execute(f"CREATE TABLE crowded.last{i} (id text PRIMARY KEY)")
        why = _refusal(session, "CREATE TABLE crowded.one_too_many (id text PRIMARY KEY)")
        assert "Guardrail tables violated" in why
    finally:
        admin.execute("DROP KEYSPACE IF EXISTS crowded", timeout=120)
        session.cluster.shutdown()
        admin.cluster.shutdown()


# --- a subset of the store compliance suite in Astra mode --------------------------------------

RANGE_FIELDS = {"n": "number", "flag": "number", "type": "number", "keywords": "number",
                "pid": "number", "pids": "number", "on": "date", "shown": "date"}  # fmt: skip
"""The fields the suite's range filters use, declared as test_cassandra_store_compliance.py
declares them: with the two indexes of every table, 10 SAI indexes, Astra's limit per table."""


SUITE_TABLES = itertools.count()
"""Numbers of the suite's tables: never one name twice, since a dropped table's declared
fields and postings stay in the keyspace's shared tables (`hoprag_fields`, the lexical
index's), keyed by its name."""


@pytest.fixture(scope="module")
def token_session(node: AstraNode) -> Iterator[Any]:
    """One session as the `token` role (statements at LOCAL_QUORUM) for the suite's stores."""
    session = node.session()
    yield session
    session.cluster.shutdown()


@pytest.fixture
def store_factory(token_session: Any) -> Iterator[StoreFactory]:
    """Stores in Astra mode over new tables of keyspace `hoprag` (the role may create no
    keyspace), each with the range fields declared and the lexical index; the tables (and
    their values catalogues) are dropped after the test, so that the suite stays inside
    Astra's 50 tables."""
    made: list[str] = []

    async def make(
        embedding: Any, documents: list[Document], fields: Mapping[str, str] | None = None
    ) -> CassandraStore:
        table = f"suite_{next(SUITE_TABLES)}"
        made.append(table)
        store = CassandraStore(embedding, keyspace="hoprag", table=table, session=token_session,
                               fields=RANGE_FIELDS | dict(fields or {}), lexical=True,
                               astra=True, wait_indexes=True)  # fmt: skip
        await store.aadd(documents, concurrency=1)
        return store

    yield make
    time.sleep(1.0)  # let reads the test gave up on end before their table goes
    for table in made:
        for name in (table, f"{table}_values"):
            token_session.execute(f"DROP TABLE IF EXISTS hoprag.{name}", timeout=120)


class TestAstraModeWritesDeletesAndLexicalCompliance(
    WriteCompliance, DeleteCompliance, LexicalCompliance
):
    """A store in Astra mode on the `--astra` node passes the suite's write, delete (checked
    through every read path) and lexical contracts with no deviation."""

    deviations: ClassVar[dict[str, str]] = {}


# --- the secure-connect-bundle path --------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((ADDR, 0))
        return int(s.getsockname()[1])


@dataclass
class Bundle:
    path: Path
    proxy_port: int
    host_id: str


@pytest.fixture(scope="module")
def bundle(node: AstraNode, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bundle]:
    """A secure-connect bundle for the node (config.json naming the metadata service, the test
    CA as ca.crt, the client certificate and key), its metadata service (HTTPS with the node's
    certificate, the client certificate required) and an SNI proxy (HAProxy: TLS connections
    whose server name is the node's host id go to the node; any other name goes nowhere)."""
    work = tmp_path_factory.mktemp("bundle")
    tls = node.state / "tls"
    password = (tls / "store-password").read_text().strip()
    key = work / "node.key"
    subprocess.run(
        ["openssl", "pkcs12", "-in", str(tls / "node.p12"), "-nocerts", "-nodes", "-passin",
         "env:HOPRAG_STORE_PASSWORD", "-out", str(key)],
        env={**os.environ, "HOPRAG_STORE_PASSWORD": password}, check=True, capture_output=True,
    )  # fmt: skip
    admin = node.session(admin=True)
    try:
        host_id = str(admin.execute("SELECT host_id FROM system.local").one().host_id)
    finally:
        admin.cluster.shutdown()
    proxy_port, meta_port = _free_port(), _free_port()
    metadata = {
        "version": 1,
        "region": "local",
        "contact_info": {
            "type": "sni_proxy",
            "local_dc": "datacenter1",
            "contact_points": [host_id],
            "sni_proxy_address": f"{ADDR}:{proxy_port}",
        },
    }
    server = _metadata_server(meta_port, metadata, tls, key)
    cfg = work / "haproxy.cfg"
    cfg.write_text(
        "defaults\n  mode tcp\n  timeout connect 5s\n  timeout client 2m\n  timeout server 2m\n"
        f"frontend sni\n  bind {ADDR}:{proxy_port}\n  tcp-request inspect-delay 5s\n"
        "  tcp-request content accept if { req_ssl_hello_type 1 }\n"
        f"  use_backend node if {{ req.ssl_sni -m str {host_id} }}\n"
        f"backend node\n  server n1 {ADDR}:9042\n"
    )
    log = (work / "haproxy.log").open("wb")
    proxy = subprocess.Popen([HAPROXY, "-db", "-f", str(cfg)], stdout=log,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while not _answers(proxy_port) and time.monotonic() < deadline:
            assert proxy.poll() is None, (work / "haproxy.log").read_text()
            time.sleep(0.1)
        path = work / "secure-connect-local.zip"
        with zipfile.ZipFile(path, "w") as z:
            config = {"host": ADDR, "port": meta_port, "keyspace": "hoprag",
                      "localDC": "datacenter1"}  # fmt: skip
            z.writestr("config.json", json.dumps(config))
            z.write(tls / "ca.pem", "ca.crt")
            z.write(tls / "client.pem", "cert")
            z.write(tls / "client.key", "key")
        yield Bundle(path, proxy_port, host_id)
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)
        log.close()
        server.shutdown()
        server.server_close()


def _answers(port: int) -> bool:
    try:
        with socket.create_connection((ADDR, port), timeout=0.5):
            return True
    except OSError:
        return False


def _metadata_server(port: int, metadata: dict[str, Any], tls: Path, key: Path) -> Any:
    """Astra's metadata service for the bundle: GET /metadata over TLS (the node's certificate,
    the bundle's client certificate required), answered from a thread."""
    body = json.dumps(metadata).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/metadata" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer((ADDR, port), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(tls / "node.pem"), str(key))
    ctx.load_verify_locations(str(tls / "ca.pem"))
    ctx.verify_mode = ssl.CERT_REQUIRED
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def _copy(source: CassandraStore, target: CassandraStore) -> int:
    """docs/astra.md's recipe for moving a table: every document of `source`, a page at a time,
    with its embedding (so nothing is embedded again), added to `target`; how many."""
    copied = 0
    async for page in source.adocuments():
        hits = await source.aget([d.id for d in page], include_embeddings=True)
        await target.aadd([h.document for h in hits])
        copied += len(hits)
    return copied


async def test_from_astra_takes_a_copied_table_and_traverses_it_through_a_bundle(
    node: AstraNode, bundle: Bundle
) -> None:
    """A table loaded over a direct connection is copied (docs/astra.md's recipe) into a store
    that `from_astra` opened through the secure-connect bundle, which then traverses it."""
    docs = graph_documents(80, 16, seed=3)
    local = CassandraStore(
        HashEmbedding(16), keyspace="hoprag", table="local_docs", contact_points=POINT,
        connection=node.options(), astra=True,
    )  # fmt: skip
    store = CassandraStore.from_astra(
        HashEmbedding(16), secure_connect_bundle=str(bundle.path), token=node.info["password"],
        keyspace="hoprag", table="bundled", wait_indexes=True,
    )  # fmt: skip
    try:
        assert store.config.astra and store.config.write_consistency == "LOCAL_QUORUM"
        (host,) = store.session.cluster.metadata.all_hosts()
        # Reached through the proxy, by the host id as the TLS server name.
        assert str(host.endpoint) == f"{ADDR}:{bundle.proxy_port}:{bundle.host_id}"
        await local.aadd(docs)
        assert await _copy(local, store) == 80
        got = await atraverse(
            "content 7",
            store=store,
            edges=[("keywords", "keywords"), ("cites", "$id")],
            strategy=Eager(select_k=8, start_k=2, adjacent_k=10, max_depth=3),
        )
        copied = await store.aget([d.id for d in docs], include_embeddings=True)
        session = store.session
    finally:
        await local.aclose()
        await store.aclose()
    assert [(h.id, h.document.content, h.document.metadata) for h in copied] == [
        (d.id, d.content, d.metadata) for d in docs
    ]
    for hit, doc in zip(copied, docs, strict=True):  # the embeddings came along (float32)
        assert np.allclose(hit.document.embedding, doc.embedding, atol=1e-6)
    assert len(got) == 8 and {n.id for n in got} <= {d.id for d in docs}
    assert any(n.depth >= 1 for n in got)
    assert session.is_shutdown  # the bundle's session is the store's: close() ended it


def test_a_bundle_with_a_wrong_token_is_refused_and_the_token_is_not_shown(
    node: AstraNode, bundle: Bundle
) -> None:
    wrong = f"AstraCS:local:{random.Random(5).getrandbits(128):032x}"
    with pytest.raises(StoreUnavailableError) as caught:
        CassandraStore.from_astra(
            HashEmbedding(16), secure_connect_bundle=str(bundle.path), token=wrong,
            keyspace="hoprag", table="bundled",
        )  # fmt: skip
    assert "secure-connect" in str(caught.value) and wrong not in str(caught.value)
