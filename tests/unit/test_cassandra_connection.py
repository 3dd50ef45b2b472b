"""`ConnectionOptions` (credentials and TLS of a Cassandra connection): the password never shows,
inputs are checked before connecting with errors naming the option, the CLI takes the password
from the environment or a prompt, and refusals reported by the driver become one clear line.
(tests/integration/test_secured_cluster.py proves the same against a real secured node.)"""

from __future__ import annotations

import pickle
import ssl
import subprocess
from pathlib import Path

import pytest
from cassandra import AuthenticationFailed
from cassandra.cluster import NoHostAvailable

from hoprag.cli import main
from hoprag.errors import AuthenticationError, InvalidInputError, StoreUnavailableError
from hoprag.stores.cassandra.connection import ConnectionOptions, cli_options, refusal

SECRET = "S3cret-a81f-never-shown"


@pytest.fixture(scope="module")
def pem(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A self-signed certificate (for 127.0.0.1) and its unencrypted key, made by openssl."""
    d = tmp_path_factory.mktemp("pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    (d / "garbage.pem").write_text("not a certificate\n")
    return {name: str(d / f"{name}.pem") for name in ("cert", "key", "garbage")}


def test_repr_and_str_show_the_user_but_never_the_password(pem: dict[str, str]) -> None:
    opts = ConnectionOptions(
        username="alice", password=SECRET, tls_ca_file=pem["cert"], tls_cert_file=pem["cert"],
        tls_key_file=pem["key"],
    )  # fmt: skip
    for text in (repr(opts), str(opts), f"{opts}", repr([opts])):
        assert SECRET not in text
        assert "alice" in text and "password=<hidden>" in text
    assert opts.has_password and not hasattr(opts, "password")
    assert SECRET not in repr(vars(type(opts)))
    with pytest.raises(TypeError, match="not pickled"):
        pickle.dumps(opts)
    with pytest.raises(AttributeError, match="immutable"):
        opts.username = "mallory"  # type: ignore[misc]


def test_credentials_become_a_plain_text_auth_provider_and_tls_a_checked_context(
    pem: dict[str, str],
) -> None:
    opts = ConnectionOptions(
        username="alice", password=SECRET, tls_ca_file=pem["cert"], tls_cert_file=pem["cert"],
        tls_key_file=pem["key"],
    )  # fmt: skip
    provider = opts.auth_provider()
    assert provider.username == "alice" and provider.password == SECRET
    ctx = opts.ssl_context()
    assert ctx is not None and ctx.check_hostname and ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.minimum_version >= ssl.TLSVersion.TLSv1_2
    off = ConnectionOptions(tls_ca_file=pem["cert"], tls_check_hostname=False).ssl_context()
    assert off is not None and not off.check_hostname
    plain = ConnectionOptions()
    assert plain.auth_provider() is None and plain.ssl_context() is None and not plain.uses_tls
    assert ConnectionOptions(tls=True).uses_tls  # the system's CAs


@pytest.mark.parametrize(
    ("kwargs", "argument", "says"),
    [
        ({"username": "", "password": SECRET}, "username", "non-empty user name"),
        ({"username": "   ", "password": SECRET}, "username", "non-empty user name"),
        ({"username": "alice"}, "password", "needed with username 'alice'"),
        ({"password": SECRET}, "username", "without username"),
        ({"username": "alice", "password": 12345}, "password", "must be a string"),
        ({"tls_ca_file": "/nonexistent/ca.pem"}, "tls_ca_file", "an existing file"),
        ({"tls_cert_file": "/nonexistent/c.pem"}, "tls_cert_file", "an existing file"),
        ({"tls": "yes"}, "tls", "True or False"),
        ({"tls_check_hostname": 0}, "tls_check_hostname", "True or False"),
    ],
)
def test_bad_options_are_rejected_naming_the_option(
    kwargs: dict[str, object], argument: str, says: str
) -> None:
    with pytest.raises(InvalidInputError, match=says) as caught:
        ConnectionOptions(**kwargs)  # type: ignore[arg-type]
    assert caught.value.argument == argument
    assert SECRET not in str(caught.value) and "12345" not in str(caught.value)


def test_malformed_tls_files_are_rejected_before_connecting(pem: dict[str, str]) -> None:
    with pytest.raises(InvalidInputError, match="PEM CA certificate") as caught:
        ConnectionOptions(tls_ca_file=pem["garbage"])
    assert caught.value.argument == "tls_ca_file"
    with pytest.raises(InvalidInputError, match="client certificate") as caught:
        ConnectionOptions(tls_cert_file=pem["cert"], tls_key_file=pem["garbage"])
    assert caught.value.argument == "tls_cert_file"
    with pytest.raises(InvalidInputError, match="given with tls_cert_file") as caught:
        ConnectionOptions(tls_key_file=pem["key"])
    assert caught.value.argument == "tls_key_file"


def test_options_from_the_environment_name_the_variable_in_errors(pem: dict[str, str]) -> None:
    env = {
        "HOPRAG_CASSANDRA_USERNAME": "bob",
        "HOPRAG_CASSANDRA_PASSWORD": SECRET,
        "HOPRAG_CASSANDRA_TLS_CA_FILE": pem["cert"],
        "HOPRAG_CASSANDRA_TLS_CERT_FILE": "",  # empty: not given
    }
    opts = ConnectionOptions.from_env(env)
    assert opts.username == "bob" and opts.has_password and opts.tls_ca_file == pem["cert"]
    assert opts.tls_cert_file is None
    assert not ConnectionOptions.from_env({}).uses_tls
    with pytest.raises(InvalidInputError, match="HOPRAG_CASSANDRA_TLS_CA_FILE must be"):
        ConnectionOptions.from_env({"HOPRAG_CASSANDRA_TLS_CA_FILE": "/nonexistent"})
    with pytest.raises(InvalidInputError, match="HOPRAG_CASSANDRA_PASSWORD is needed"):
        ConnectionOptions.from_env({"HOPRAG_CASSANDRA_USERNAME": "bob"})


def test_cli_password_comes_from_the_environment_else_a_prompt_never_a_flag() -> None:
    asked: list[str] = []

    def prompt(text: str) -> str:
        asked.append(text)
        return SECRET

    env = {"HOPRAG_CASSANDRA_PASSWORD": SECRET}
    from_env = cli_options("alice", None, None, None, environ=env, prompt=prompt)
    assert from_env.has_password and asked == []
    prompted = cli_options("alice", None, None, None, environ={}, prompt=prompt,
                           interactive=True)  # fmt: skip
    assert prompted.has_password and asked == ["Password for Cassandra user 'alice': "]
    with pytest.raises(InvalidInputError, match="set HOPRAG_CASSANDRA_PASSWORD"):
        cli_options("alice", None, None, None, environ={}, prompt=prompt, interactive=False)
    assert not cli_options(None, None, None, None, environ={}).has_password
    with pytest.raises(InvalidInputError, match="--tls-ca-file must be an existing file"):
        cli_options(None, "/nonexistent/ca.pem", None, None, environ={})


def test_cli_with_a_username_and_no_password_says_how_to_give_it_before_connecting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HOPRAG_CASSANDRA_PASSWORD", raising=False)
    # Port 1 of a loopback address answers nothing: the error comes before any connection.
    code = main(["stats", "--username", "alice", "--contact-points", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("hoprag: error: --username 'alice' needs a password")


def _refused(error: Exception) -> NoHostAvailable:
    return NoHostAvailable("Unable to connect to any servers", {"127.0.0.9:9042": error})


@pytest.mark.parametrize(
    ("error", "tls", "kind", "says"),
    [
        (
            AuthenticationFailed(
                "Failed to authenticate to 127.0.0.9:9042: Error from server: code=0100 "
                '[Bad credentials] message="Provided username alice and/or password are '
                'incorrect"'
            ),
            True,
            AuthenticationError,
            "authentication failed for user 'alice' at 127.0.0.9:9042 (Provided username",
        ),
        (
            AuthenticationFailed("Remote end requires authentication"),
            True,
            AuthenticationError,
            "requires a username and password",
        ),
        (ConnectionResetError(104, "Connection reset by peer"), False, StoreUnavailableError,
         "requires TLS"),
        (ssl.SSLError(1, "[SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED] tlsv13 alert certificate "
                         "required (_ssl.c:2580)"), True, StoreUnavailableError,
         "requires a client certificate"),
        (PermissionError(1, "Last error: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify "
                            "failed: self-signed certificate in certificate chain (_ssl.c:1006)"),
         True, StoreUnavailableError, "TLS certificate is not trusted (self-signed"),
        (ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number"), True,
         StoreUnavailableError, "does not speak TLS"),
    ],
)  # fmt: skip
def test_driver_refusals_become_one_line_saying_why(
    pem: dict[str, str], error: Exception, tls: bool, kind: type[Exception], says: str
) -> None:
    files = {"tls_ca_file": pem["cert"], "tls_cert_file": pem["cert"], "tls_key_file": pem["key"]}
    opts = ConnectionOptions(username="alice", password=SECRET, **(files if tls else {}))
    got = refusal(_refused(error), "127.0.0.9:9042", opts)
    assert type(got) is kind
    assert says in str(got) and "\n" not in str(got)


def test_a_refusal_never_repeats_the_password_even_if_the_server_does(
    pem: dict[str, str],
) -> None:
    opts = ConnectionOptions(username="alice", password=SECRET, tls_ca_file=pem["cert"])
    echo = AuthenticationFailed(f'Error from server: message="bad password {SECRET}"')
    got = refusal(_refused(echo), "127.0.0.9:9042", opts)
    assert isinstance(got, AuthenticationError)
    assert SECRET not in str(got) and "***" in str(got)


def test_an_unrelated_failure_is_not_called_a_refusal() -> None:
    opts = ConnectionOptions()
    assert refusal(_refused(TimeoutError("timed out")), "127.0.0.9:9042", opts) is None
    assert refusal(_refused(OSError(111, "Connection refused")), "h:1", opts) is None


def test_ssl_context_does_not_prompt_for_an_encrypted_key(tmp_path: Path) -> None:
    key, cert = tmp_path / "enc.key", tmp_path / "enc.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-days", "1", "-subj", "/CN=x",
         "-passout", "pass:topsecret", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    with pytest.raises(InvalidInputError, match="unencrypted key"):
        ConnectionOptions(tls_cert_file=str(cert), tls_key_file=str(key))


def test_a_store_rejects_connection_options_beside_a_session_without_showing_the_password() -> None:
    from hoprag.embeddings import HashEmbedding
    from hoprag.stores.cassandra.store import CassandraStore

    opts = ConnectionOptions(username="alice", password=SECRET)
    with pytest.raises(InvalidInputError, match="None when a session is given") as caught:
        CassandraStore(HashEmbedding(8), keyspace="k", table="t", session=object(),
                       connection=opts)  # fmt: skip
    assert caught.value.argument == "connection" and SECRET not in str(caught.value)
    with pytest.raises(InvalidInputError, match="a ConnectionOptions or None"):
        CassandraStore(HashEmbedding(8), keyspace="k", table="t",
                       connection={"username": "alice"})  # type: ignore[arg-type]  # fmt: skip


# --- Astra: the session's consistency and the secure-connect bundle (#54) -----------------------


def test_a_session_runs_at_the_consistency_it_is_given_else_the_environments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cassandra import ConsistencyLevel

    from hoprag.stores.cassandra.session import CONSISTENCY_ENV, default_consistency

    monkeypatch.delenv(CONSISTENCY_ENV, raising=False)
    assert default_consistency(None) is None  # the driver's own default (LOCAL_ONE)
    monkeypatch.setenv(CONSISTENCY_ENV, "local_quorum")
    assert default_consistency(None) == ConsistencyLevel.LOCAL_QUORUM
    assert default_consistency("each_quorum") == ConsistencyLevel.EACH_QUORUM
    monkeypatch.setenv(CONSISTENCY_ENV, "SOMETIMES")
    with pytest.raises(InvalidInputError, match=CONSISTENCY_ENV) as caught:
        default_consistency(None)
    assert caught.value.argument == CONSISTENCY_ENV
    with pytest.raises(InvalidInputError, match="consistency must be one of"):
        default_consistency("SOMETIMES")


def test_from_astra_takes_a_database_id_or_a_bundle_never_both_nor_neither(
    tmp_path: Path,
) -> None:
    from hoprag.embeddings import HashEmbedding
    from hoprag.stores.cassandra.store import CassandraStore

    zip_path = tmp_path / "secure-connect.zip"
    zip_path.write_bytes(b"not a zip")
    for extra in ({}, {"database_id": "db", "secure_connect_bundle": str(zip_path)}):
        with pytest.raises(InvalidInputError, match="one of the two"):
            CassandraStore.from_astra(HashEmbedding(4), token=SECRET, keyspace="ks", table="t",
                                      **extra)  # fmt: skip
    with pytest.raises(InvalidInputError, match="the path of a bundle zip"):
        CassandraStore.from_astra(HashEmbedding(4), token=SECRET, keyspace="ks", table="t",
                                  secure_connect_bundle=str(tmp_path / "missing.zip"))  # fmt: skip
    with pytest.raises(InvalidInputError, match="a secure-connect bundle") as caught:
        CassandraStore.from_astra(HashEmbedding(4), token=SECRET, keyspace="ks", table="t",
                                  secure_connect_bundle=str(zip_path))  # fmt: skip
    assert SECRET not in str(caught.value)


def test_a_bundle_whose_metadata_service_does_not_answer_says_so_without_the_token(
    tmp_path: Path, pem: dict[str, str]
) -> None:
    import json
    import zipfile

    from hoprag.stores.cassandra.session import connect_bundle

    bundle = tmp_path / "secure-connect.zip"
    with zipfile.ZipFile(bundle, "w") as z:
        z.writestr("config.json", json.dumps({"host": "127.0.0.1", "port": 1}))
        z.write(pem["cert"], "ca.crt")
        z.write(pem["cert"], "cert")
        z.write(pem["key"], "key")
    with pytest.raises(StoreUnavailableError, match="metadata service") as caught:
        connect_bundle(bundle, SECRET, connect_timeout=2.0)
    assert SECRET not in str(caught.value) and "secure-connect.zip" in str(caught.value)
