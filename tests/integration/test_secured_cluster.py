"""A secured node (`scripts/cassandra up --secure`: PasswordAuthenticator, CassandraAuthorizer,
client TLS required with a client certificate) refuses a wrong password and a plain-text client
with one clear line each, and serves `hoprag load` / `hoprag query` and `CassandraStore` to the
right credentials over TLS. The node runs beside the suite's own, on 127.0.0.9 with its own
state directory; this module starts it once and stops it at the end, also when a test fails."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hoprag import Eager, traverse
from hoprag.embeddings import HashEmbedding
from hoprag.errors import AuthenticationError, StoreUnavailableError
from hoprag.stores.cassandra.connection import ConnectionOptions
from hoprag.stores.cassandra.session import connect
from hoprag.stores.cassandra.store import CassandraStore
from launcher_run import alive, run_launcher
from shared_data import graph_documents, write_articles_jsonl

ADDR = "127.0.0.9"
POINT = f"{ADDR}:9042"
USER = "hoprag_tester"
PASSWORD = "Pw-7f3c9a1e-never-shown"
"""The password of a login role the module creates: distinctive, so that a leak is found."""
WRONG = "Wrong-5d2b8e40-never-shown"


@dataclass
class Secured:
    env: dict[str, str]
    state: Path
    up: subprocess.CompletedProcess[str]
    info: dict[str, str]

    def tls(self, **overrides: Any) -> ConnectionOptions:
        """Options with the launcher's CA and client certificate, as `USER`."""
        values: dict[str, Any] = {
            "username": USER,
            "password": PASSWORD,
            "tls_ca_file": self.info["tls_ca_file"],
            "tls_cert_file": self.info["tls_cert_file"],
            "tls_key_file": self.info["tls_key_file"],
        }
        return ConnectionOptions(**(values | overrides))

    def hoprag(
        self, *args: str, password: str | None = PASSWORD, tls: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """The CLI as a user runs it: the password in HOPRAG_CASSANDRA_PASSWORD (never a
        flag), the TLS files as flags; stdin is not a terminal, so nothing prompts."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("HOPRAG_CASSANDRA")}
        if password is not None:
            env["HOPRAG_CASSANDRA_PASSWORD"] = password
        flags = ["--contact-points", POINT, "--username", USER]
        if tls:
            flags += ["--tls-ca-file", self.info["tls_ca_file"],
                      "--tls-cert-file", self.info["tls_cert_file"],
                      "--tls-key-file", self.info["tls_key_file"]]  # fmt: skip
        argv = [sys.executable, "-m", "hoprag.cli", *args, *flags]
        assert PASSWORD not in " ".join(argv) and WRONG not in " ".join(argv)
        return subprocess.run(
            argv, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
            timeout=600, check=False,
        )  # fmt: skip


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    state = tmp_path_factory.mktemp("secure") / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPRAG_CASSANDRA")}
    env |= {
        "HOPRAG_CASSANDRA_HOME": str(state),
        "HOPRAG_CASSANDRA_FIRST_IP": "9",
        "HOPRAG_NO_DOCKER": "1",
    }
    up = run_launcher(env, "up", "--secure", "--heap", "768M")
    try:
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-3000:]
        info = json.loads((state / "secure.json").read_text())
        node = Secured(env, state, up, info)
        _create_role(node)
        yield node
    finally:
        run_launcher(env, "down")
        _kill_leftover(state)


def _create_role(node: Secured) -> None:
    """A login role with its own password, made by the superuser the launcher reports, with
    what hoprag needs: every permission on every keyspace, and SELECT on the virtual keyspace
    system_views (not part of ALL KEYSPACES), where a store checks that its indexes are
    queryable."""
    admin = node.tls(username=node.info["username"], password=node.info["password"])
    session = _first_login(admin)
    try:
        session.execute(
            f"CREATE ROLE IF NOT EXISTS {USER} WITH PASSWORD = %s AND LOGIN = true", (PASSWORD,)
        )
        session.execute(f"GRANT ALL PERMISSIONS ON ALL KEYSPACES TO {USER}")
        session.execute(f"GRANT SELECT ON KEYSPACE system_views TO {USER}")
    finally:
        session.cluster.shutdown()


def _first_login(admin: ConnectionOptions) -> Any:
    """The superuser's session. The first TLS login to a node that has just started (a cold
    JVM: TLS handshake, bcrypt of the password) can outlast the 10 s connect timeout on a loaded
    2-core machine, so this one login gets 30 s and three tries; a refused login is not
    retried. Every test then logs in with the defaults."""
    for attempt in range(3):
        try:
            return connect(POINT, connection=admin, connect_timeout=30.0)
        except StoreUnavailableError:
            if attempt == 2:
                raise
            time.sleep(5)
    raise AssertionError("unreachable")


def _kill_leftover(state: Path) -> None:
    """Whatever `down` left running of this module's node is killed (it should be nothing)."""
    for pid_file in state.glob("node*/pid"):
        pid = int(pid_file.read_text())
        if alive(pid):
            os.killpg(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)


def test_up_secure_reports_where_to_connect_and_the_node_runs_secured(secured: Secured) -> None:
    assert secured.up.stdout.strip().splitlines()[-1] == POINT
    assert "secure.json" in secured.up.stdout
    info = secured.info
    assert info["contact_points"] == POINT
    assert all(Path(info[k]).is_file() for k in ("tls_ca_file", "tls_cert_file", "tls_key_file"))
    env_file = (secured.state / "secure.env").read_text()
    assert f"HOPRAG_CASSANDRA={POINT}\n" in env_file
    assert f"HOPRAG_CASSANDRA_TLS_CA_FILE={info['tls_ca_file']}\n" in env_file
    status = run_launcher(secured.env, "status")
    assert status.returncode == 0 and "secured" in status.stdout and POINT in status.stdout
    # What the running node says of itself (its settings virtual table), as our role.
    session = connect(POINT, connection=secured.tls())
    try:
        rows = session.execute("SELECT name, value FROM system_views.settings")
        settings = {r.name: r.value for r in rows}
    finally:
        session.cluster.shutdown()
    assert settings["authenticator"].endswith("PasswordAuthenticator")
    assert settings["authorizer"].endswith("CassandraAuthorizer")
    tls = "client_encryption_options"
    assert settings[f"{tls}.enabled"] == "true"
    assert settings[f"{tls}.optional"] == "false"
    assert settings[f"{tls}.require_client_auth"] == "true"
    assert settings[f"{tls}.store_type"] == "PKCS12"
    assert settings[f"{tls}.keystore_password"] == "<REDACTED>"


def test_a_wrong_password_is_refused_with_one_line_naming_the_user(secured: Secured) -> None:
    with pytest.raises(AuthenticationError) as caught:
        connect(POINT, connection=secured.tls(password=WRONG))
    message = str(caught.value)
    assert message.startswith(f"authentication failed for user '{USER}' at {POINT}")
    assert "\n" not in message
    shown = [message, repr(caught.value), str(caught.value.__cause__)]
    assert not any(WRONG in text for text in shown)

    r = secured.hoprag("stats", password=WRONG)
    assert r.returncode == 1, r.stdout + r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"hoprag: error: authentication failed for user '{USER}'")
    assert WRONG not in r.stdout + r.stderr


def test_a_plain_text_client_is_refused_with_one_line_saying_tls_is_required(
    secured: Secured,
) -> None:
    plain = ConnectionOptions(username=USER, password=PASSWORD)
    with pytest.raises(StoreUnavailableError) as caught:
        connect(POINT, connection=plain)
    assert not isinstance(caught.value, AuthenticationError)
    message = str(caught.value)
    assert "requires TLS" in message and POINT in message and "\n" not in message
    assert PASSWORD not in message

    r = secured.hoprag("stats", tls=False)
    assert r.returncode == 1, r.stdout + r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("hoprag: error: ") and "requires TLS" in line
    assert PASSWORD not in r.stdout + r.stderr


def test_tls_without_the_client_certificate_is_refused_saying_one_is_required(
    secured: Secured,
) -> None:
    with pytest.raises(StoreUnavailableError, match="client certificate") as caught:
        connect(POINT, connection=secured.tls(tls_cert_file=None, tls_key_file=None))
    assert "\n" not in str(caught.value)


def test_a_cli_without_a_password_is_told_how_to_give_one(secured: Secured) -> None:
    r = secured.hoprag("stats", password=None)
    assert r.returncode == 2, r.stdout + r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert "HOPRAG_CASSANDRA_PASSWORD" in line and USER in line


def test_cli_load_and_query_work_over_tls_with_the_password_from_the_environment(
    secured: Secured, tmp_path: Path
) -> None:
    f = tmp_path / "articles.jsonl"
    ids = write_articles_jsonl(f, 120)
    load = secured.hoprag("load", "jsonl", "--path", str(f), "--table", "arts",
                          "--embedding", "hash:32", "--keyspace", "secured_cli")  # fmt: skip
    assert load.returncode == 0, load.stdout + load.stderr
    assert "loaded 120 documents into secured_cli.arts" in load.stdout
    q = secured.hoprag("query", "article 5 on topic 5", "--table", "arts", "--keyspace",
                       "secured_cli", "--edges", "references:$id,keywords:keywords",
                       "--select-k", "10", "--json")  # fmt: skip
    assert q.returncode == 0, q.stderr
    nodes = json.loads(q.stdout)["nodes"]
    assert len(nodes) == 10 and {n["id"] for n in nodes} <= set(ids)
    assert any(n["depth"] >= 1 for n in nodes)
    for r in (load, q):
        assert PASSWORD not in r.stdout + r.stderr


def test_cassandra_store_adds_and_traverses_over_tls(secured: Secured) -> None:
    docs = graph_documents(80, 16, seed=3)
    store = CassandraStore(
        HashEmbedding(16),
        keyspace="secured_lib",
        table="docs",
        contact_points=POINT,
        connection=secured.tls(),
    )
    try:
        store.add(docs)
        got = traverse(
            "content 7",
            store=store,
            edges=[("keywords", "keywords"), ("cites", "$id")],
            strategy=Eager(select_k=8, start_k=2, adjacent_k=10, max_depth=3),
        )
        (count,) = store.session.execute("SELECT count(*) FROM secured_lib.docs").one()
    finally:
        store.close()
    assert count == 80
    assert len(got) == 8 and {n.id for n in got} <= {d.id for d in docs}
    assert any(n.depth >= 1 for n in got)
    assert PASSWORD not in repr(store)
