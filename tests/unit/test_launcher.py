"""Pure parts of scripts/cassandra: token layout, contact points, config files (plain and
`--secure`), the secured node's connection details."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

LAUNCHER = Path(__file__).resolve().parents[2] / "scripts" / "cassandra"


@pytest.fixture(scope="module")
def launcher() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("hoprag_launcher", str(LAUNCHER))
    spec = importlib.util.spec_from_loader("hoprag_launcher", loader)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_balanced_tokens_match_ccm_layout(launcher: ModuleType) -> None:
    assert launcher.tokens(1) == [-(2**63)]
    assert launcher.tokens(3) == [
        -9223372036854775808,
        -3074457345618258603,
        3074457345618258602,
    ]


def test_node_config_has_its_own_address_dirs_and_token(
    launcher: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher, "STATE", tmp_path)
    monkeypatch.setattr(launcher, "FIRST_IP", 1)
    d = launcher.write_node_config(2, 3, fresh=True)
    yaml = (d / "conf" / "cassandra.yaml").read_text()
    assert "listen_address: 127.0.0.2" in yaml
    assert "rpc_address: 127.0.0.2" in yaml
    assert 'seeds: "127.0.0.1:7000"' in yaml
    assert "initial_token: -3074457345618258603" in yaml
    assert f"{tmp_path}/node2/data/commitlog" in yaml
    assert "system.log" in (d / "conf" / "logback.xml").read_text()


def test_first_ip_shifts_addresses_and_jmx_ports(
    launcher: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher, "FIRST_IP", 4)
    assert [launcher.node_addr(i) for i in (1, 2, 3)] == ["127.0.0.4", "127.0.0.5", "127.0.0.6"]
    assert len({launcher.jmx_port(i) for i in (1, 2, 3)} | {7100}) == 4


def test_bad_hoprag_cassandra_port_is_a_clear_error() -> None:
    r = subprocess.run(
        [sys.executable, str(LAUNCHER), "status"],
        env={"HOPRAG_CASSANDRA": "127.0.0.1:notaport", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode != 0
    assert "bad port" in r.stderr


def test_bad_heap_is_rejected_before_anything_starts() -> None:
    r = subprocess.run(
        [sys.executable, str(LAUNCHER), "up", "--heap", "lots"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode != 0
    assert "--heap" in r.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["nodetool", "compact", "ks", "t"], "node 1 of the local JVM cluster is not running"),
        (["pids"], "no local cluster is running"),
    ],
)
def test_node_commands_without_a_running_node_say_so(
    tmp_path: Path, args: list[str], says: str
) -> None:
    r = subprocess.run(
        [sys.executable, str(LAUNCHER), *args],
        env={"HOPRAG_CASSANDRA_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 3
    assert says in r.stderr
    assert r.stdout == ""


def test_secure_node_config_requires_a_password_and_client_tls(
    launcher: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher, "STATE", tmp_path)
    monkeypatch.setattr(launcher, "FIRST_IP", 9)
    (tmp_path / "tls").mkdir()
    (tmp_path / "tls" / "store-password").write_text("pw-of-the-stores\n")
    d = launcher.write_node_config(1, 1, fresh=True, secure=True)
    yaml = (d / "conf" / "cassandra.yaml").read_text()
    assert "listen_address: 127.0.0.9" in yaml
    assert "authenticator: PasswordAuthenticator" in yaml
    assert "authorizer: CassandraAuthorizer" in yaml
    block = yaml.split("client_encryption_options:\n", 1)[1]
    for line in (
        "enabled: true",
        "optional: false",
        f"keystore: {tmp_path}/tls/node.p12",
        f"truststore: {tmp_path}/tls/truststore.p12",
        "keystore_password: pw-of-the-stores",
        "store_type: PKCS12",
        "require_client_auth: true",
    ):
        assert f"  {line}\n" in block
    assert "AllowAll" not in yaml
    assert (d / "conf" / "cassandra.yaml").stat().st_mode & 0o077 == 0
    assert launcher.is_secure()
    # The same node written plain again: no authentication, no TLS, no secure marker.
    plain = (launcher.write_node_config(1, 1, fresh=False) / "conf" / "cassandra.yaml").read_text()
    assert "authenticator: AllowAllAuthenticator" in plain
    assert "client_encryption_options" not in plain
    assert not launcher.is_secure()


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["up", "--secure", "--nodes", "3"], {}),
        (["up", "--secure"], {"HOPRAG_CASSANDRA": "127.0.0.1:9042"}),
    ],
)
def test_up_secure_is_one_local_node_and_says_so_before_starting(
    tmp_path: Path, args: list[str], env: dict[str, str]
) -> None:
    r = subprocess.run(
        [sys.executable, str(LAUNCHER), *args],
        env={"HOPRAG_CASSANDRA_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 1
    assert "--secure starts one local node" in r.stderr
    assert not (tmp_path / "node1").exists()


def test_secure_info_names_the_contact_point_credentials_and_tls_files(
    launcher: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher, "STATE", tmp_path)
    monkeypatch.setattr(launcher, "FIRST_IP", 9)
    launcher.write_secure_info()
    info = json.loads((tmp_path / "secure.json").read_text())
    assert info == {
        "contact_points": "127.0.0.9:9042",
        "username": "cassandra",
        "password": "cassandra",
        "tls_ca_file": f"{tmp_path}/tls/ca.pem",
        "tls_cert_file": f"{tmp_path}/tls/client.pem",
        "tls_key_file": f"{tmp_path}/tls/client.key",
    }
    env = (tmp_path / "secure.env").read_text().splitlines()
    assert env == [
        "HOPRAG_CASSANDRA=127.0.0.9:9042",
        "HOPRAG_CASSANDRA_USERNAME=cassandra",
        "HOPRAG_CASSANDRA_PASSWORD=cassandra",
        f"HOPRAG_CASSANDRA_TLS_CA_FILE={tmp_path}/tls/ca.pem",
        f"HOPRAG_CASSANDRA_TLS_CERT_FILE={tmp_path}/tls/client.pem",
        f"HOPRAG_CASSANDRA_TLS_KEY_FILE={tmp_path}/tls/client.key",
    ]
    assert all((tmp_path / n).stat().st_mode & 0o077 == 0 for n in ("secure.json", "secure.env"))


@pytest.mark.parametrize(
    ("n", "secure", "fresh", "running", "size", "was_secure", "plan"),
    [
        (3, False, False, [], 0, False, ("start", [1, 2, 3])),
        (3, False, True, [], 3, False, ("start", [1, 2, 3])),
        (3, False, False, [1, 2, 3], 3, False, ("already", [])),
        (3, False, False, [1, 2], 3, False, ("rejoin", [3])),
        (3, False, False, [2], 3, False, ("rejoin", [1, 3])),
        (3, False, True, [1, 2], 3, False, ("refuse", [])),
        (1, False, False, [1, 2], 3, False, ("refuse", [])),
        (3, False, False, [1], 1, False, ("refuse", [])),
        (1, True, False, [1], 1, False, ("refuse", [])),
        (1, True, False, [1], 1, True, ("already", [])),
    ],
)
def test_up_starts_brings_back_the_stopped_nodes_of_the_same_cluster_or_refuses(
    launcher: ModuleType,
    n: int,
    secure: bool,
    fresh: bool,
    running: list[int],
    size: int,
    was_secure: bool,
    plan: tuple[str, list[int]],
) -> None:
    assert launcher.plan_up(n, secure, fresh, running, size, was_secure) == plan


@pytest.mark.parametrize(
    ("node", "running", "size", "says"),
    [
        (3, [1, 2], 3, None),
        (3, [1, 2, 3], 3, None),
        (1, [1], 1, None),
        (2, [], 0, "no local JVM cluster was started here"),
        (3, [1], 1, "--node must be 1..1, got 3"),
        (3, [1], 3, "node(s) 2 of the 3-node cluster are stopped too"),
    ],
)
def test_restart_runs_only_when_every_other_node_runs(
    launcher: ModuleType, node: int, running: list[int], size: int, says: str | None
) -> None:
    why = launcher.plan_restart(node, running, size)
    assert why == says if says is None else says in why


def test_readiness_after_a_restart_reads_only_the_new_log_lines(
    launcher: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restarted node appends to its system.log: the 'is now UP' lines of its first start
    must not count, and two nodes that kept running need not see each other again."""
    monkeypatch.setattr(launcher, "STATE", tmp_path)
    monkeypatch.setattr(launcher, "FIRST_IP", 4)
    first = {
        1: "INFO Node /127.0.0.5:7000 is now UP\nINFO Node /127.0.0.6:7000 is now UP\n",
        2: "INFO Node /127.0.0.4:7000 is now UP\nINFO Node /127.0.0.6:7000 is now UP\n",
        3: "INFO Node /127.0.0.4:7000 is now UP\nINFO Node /127.0.0.5:7000 is now UP\n",
    }
    for i, text in first.items():
        (tmp_path / f"node{i}" / "logs").mkdir(parents=True)
        (tmp_path / f"node{i}" / "logs" / "system.log").write_text(text)
    assert launcher.pending_sightings(3, first) == []
    since = {i: launcher.log_size(i) for i in (1, 2, 3)}
    new = {i: launcher.log_text(i, since[i]) for i in (1, 2, 3)}
    assert new == {1: "", 2: "", 3: ""}
    assert launcher.pending_sightings(3, new, fresh={3}) == [(1, 3), (2, 3), (3, 1), (3, 2)]
    with (tmp_path / "node1" / "logs" / "system.log").open("a") as f:
        f.write("INFO Node /127.0.0.6:7000 has restarted, now UP\n")
    with (tmp_path / "node3" / "logs" / "system.log").open("a") as f:
        f.write("INFO InetAddress /127.0.0.4 is now UP\n")
    new = {i: launcher.log_text(i, since[i]) for i in (1, 2, 3)}
    assert launcher.pending_sightings(3, new, fresh={3}) == [(2, 3), (3, 2)]
    assert not launcher.sees_up("Node /127.0.0.6:7000 is now DOWN", 3)


def test_superuser_setup_retries_are_paced_in_a_cluster(launcher: ModuleType) -> None:
    """A 0 ms delay between the role set-up's retries made a restarted node spin while its
    peers were still down; only a single node (nothing to wait for) gets 0."""
    assert launcher.superuser_setup_delay_ms(1) == 0
    assert launcher.superuser_setup_delay_ms(3) >= 1000


def _fake_launches(
    launcher: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[list[str]], Path]:
    """The launcher's state under `tmp_path` and its JVM launches recorded, not run: the
    command lines launched, and a jar directory to launch from."""
    monkeypatch.setattr(launcher, "STATE", tmp_path)
    launched: list[list[str]] = []

    class FakePopen:
        pid = 4242

        def __init__(self, cmd: list[str], **_: object) -> None:
            launched.append(cmd)

    monkeypatch.setattr(launcher.subprocess, "Popen", FakePopen)
    lib = tmp_path / "lib"
    lib.mkdir()
    return launched, lib


def test_a_scratch_node_is_wiped_and_skips_schema_flushes_and_a_plain_one_keeps_both(
    launcher: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launched, lib = _fake_launches(launcher, tmp_path, monkeypatch)
    d = launcher.write_node_config(1, 1, fresh=False)
    (d / "data" / "old").write_text("a table of an earlier run")
    launcher.start_node("java", lib, 1, "1G")
    d = launcher.write_node_config(1, 1, fresh=False, scratch=True)
    assert not (d / "data" / "old").exists()
    launcher.start_node("java", lib, 1, "1G")
    flag = "-Dcassandra.test.flush_local_schema_changes=false"
    assert [flag in cmd for cmd in launched] == [False, True]
    # A plain start after a scratch one is plain again.
    launcher.write_node_config(1, 1, fresh=False)
    launcher.start_node("java", lib, 1, "1G")
    assert flag not in launched[-1]


def _starts(launcher: ModuleType, monkeypatch: pytest.MonkeyPatch, tails: list[str]) -> list[int]:
    """A node whose first JVMs exit with the given log tails, each relaunch a new pid; the
    last pid stays up and answers. Returns the pids relaunched."""
    dead = set(range(100, 100 + len(tails)))
    relaunched: list[int] = []
    monkeypatch.setattr(launcher, "pid_alive", lambda pid: pid not in dead)
    monkeypatch.setattr(launcher, "tail_logs", lambda i: tails[len(relaunched)])
    monkeypatch.setattr(launcher, "log_has", lambda i, needle, since=0: True)
    monkeypatch.setattr(launcher, "port_open", lambda *a, **k: True)
    monkeypatch.setattr(launcher.time, "sleep", lambda s: None)

    def relaunch() -> int:
        relaunched.append(100 + len(relaunched) + 1)
        return relaunched[-1]

    got = launcher.wait_ready(3, 100, launcher.time.monotonic() + 60, relaunch=relaunch)
    assert got == (relaunched[-1] if relaunched else 100)
    return relaunched


def test_a_node_that_found_no_seed_answering_is_started_again(
    launcher: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gave_up = "stdout.log: java.lang.RuntimeException: Unable to gossip with any peers"
    assert _starts(launcher, monkeypatch, [gave_up, gave_up]) == [101, 102]
    assert "starting it again (attempt 3 of 3)" in capsys.readouterr().out
    # A third time is too many; any other exit is not retried.
    with pytest.raises(SystemExit):
        _starts(launcher, monkeypatch, [gave_up, gave_up, gave_up])
    assert "exited during start-up" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _starts(launcher, monkeypatch, ["stdout.log: OutOfMemoryError", ""])
    assert "OutOfMemoryError" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("cassandra.sai.max_materialized_keys", "must look like cassandra.NAME=VALUE"),
        ("sai.max_materialized_keys=2000", "NAME must be a Cassandra system property"),
        ("cassandra.=2000", "NAME must be a Cassandra system property"),
        ("cassandra.a-b=1", "NAME must be a Cassandra system property"),
        ("cassandra.sai.vector_search.max_materialized_keys=", "VALUE must be non-empty"),
        ("cassandra.sai.vector_search.max_materialized_keys=2 000", "without whitespace"),
        ("cassandra.config=file:///etc/cassandra.yaml", "sets cassandra.config itself"),
    ],
)
def test_a_bad_jvm_property_is_refused(launcher: ModuleType, text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        launcher.parse_jvm_property(text)


def test_a_bad_jvm_property_exits_2_before_anything_starts(tmp_path: Path) -> None:
    state = tmp_path / "state"
    for cmd in (["up"], ["restart", "--node", "1"]):
        r = subprocess.run(
            [sys.executable, str(LAUNCHER), *cmd, "--jvm-property", "cassandra.x=a b"],
            env={"HOPRAG_CASSANDRA_HOME": str(state), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=False,
        )
        assert r.returncode == 2, r.stderr
        assert "--jvm-property 'cassandra.x=a b'" in r.stderr
    assert not state.exists()


def test_jvm_properties_reach_the_jvm_and_a_restart_keeps_or_replaces_them(
    launcher: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launched, lib = _fake_launches(launcher, tmp_path, monkeypatch)
    monkeypatch.setattr(launcher, "java_cmd", lambda: "java")
    monkeypatch.setattr(launcher, "resolve_jars", lambda: (lib, 0.0))
    monkeypatch.setattr(launcher, "port_open", lambda *a, **k: False)
    monkeypatch.setattr(launcher, "wait_ready", lambda i, pid, *a, **k: pid)
    monkeypatch.setattr(launcher, "wait_cluster", lambda *a, **k: None)
    mmk = "cassandra.sai.vector_search.max_materialized_keys"
    props = launcher.jvm_properties([f"{mmk}=500", "cassandra.a.b=x", f"{mmk}=2000"])
    assert props == [f"{mmk}=2000", "cassandra.a.b=x"]
    assert launcher.jvm_properties(None) is None
    launcher.write_node_config(1, 1, fresh=True)
    launcher.start_node("java", lib, 1, "4G", 1, props)
    assert {f"-D{mmk}=2000", "-Dcassandra.a.b=x"} <= set(launched[-1])
    # Main class last; the properties before it, among the JVM's options.
    assert launched[-1].index(f"-D{mmk}=2000") < launched[-1].index("-cp")
    launcher.rejoin(1, [1], None, False)  # restart without --jvm-property: the same ones
    assert f"-D{mmk}=2000" in launched[-1] and "-Xmx4G" in launched[-1]
    launcher.rejoin(1, [1], None, False, [f"{mmk}=500"])  # replaced
    assert f"-D{mmk}=500" in launched[-1] and "-Dcassandra.a.b=x" not in launched[-1]
    launcher.rejoin(1, [1], None, False)
    assert f"-D{mmk}=500" in launched[-1]
    launcher.rejoin(1, [1], None, False, [])  # --no-jvm-properties
    assert not [a for a in launched[-1] if a.startswith(f"-D{mmk}")]
    launcher.rejoin(1, [1], None, False)
    assert not [a for a in launched[-1] if a.startswith(f"-D{mmk}")]
