"""`ConnectionOptions`: how a session authenticates (username and password) and encrypts (TLS)
its connections to a secured Cassandra cluster, checked once when made.

The password is never shown: not in the options' repr or str, not in any error message hoprag
raises (also when the server's message would echo it). It comes from an argument, from
HOPRAG_CASSANDRA_PASSWORD (`ConnectionOptions.from_env`) or, in the CLI, from a prompt that does
not echo (`cli_options`). `refusal` turns the driver's report of a refused connection into one
clear line: wrong credentials, credentials missing, TLS required, client certificate required,
server certificate not trusted."""

from __future__ import annotations

import os
import ssl
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hoprag.errors import AuthenticationError, InvalidInputError, StoreUnavailableError, invalid

ENV = {
    "username": "HOPRAG_CASSANDRA_USERNAME",
    "password": "HOPRAG_CASSANDRA_PASSWORD",
    "tls_ca_file": "HOPRAG_CASSANDRA_TLS_CA_FILE",
    "tls_cert_file": "HOPRAG_CASSANDRA_TLS_CERT_FILE",
    "tls_key_file": "HOPRAG_CASSANDRA_TLS_KEY_FILE",
}
"""The environment variables `from_env` reads, by option."""

_FILES = ("tls_ca_file", "tls_cert_file", "tls_key_file")


class ConnectionOptions:
    """Credentials and TLS settings of a connection (immutable; the default is plain text
    without authentication).

    `username` and `password` go to the driver's `PlainTextAuthProvider` (SASL PLAIN, as
    Cassandra's PasswordAuthenticator expects); one needs the other. TLS is on when `tls` is
    True or any TLS file is given: the node's certificate is verified against `tls_ca_file`
    (PEM; default: the system's CAs) and, with `tls_check_hostname`, against the contact
    point's name or IP address (an IP matches an IP subject alternative name).
    `tls_cert_file` (PEM, with the key in it or in `tls_key_file`, unencrypted) is the client
    certificate a node with `require_client_auth` asks for. Bad values raise
    `InvalidInputError` naming the option; files are read here, so a missing or malformed file
    is reported before anything connects."""

    __slots__ = (
        "_labels",
        "_password",
        "tls",
        "tls_ca_file",
        "tls_cert_file",
        "tls_check_hostname",
        "tls_key_file",
        "username",
    )

    _labels: dict[str, str]
    _password: str | None
    username: str | None
    tls: bool
    tls_ca_file: str | None
    tls_cert_file: str | None
    tls_key_file: str | None
    tls_check_hostname: bool

    def __init__(
        self,
        *,
        username: str | None = None,
        password: str | None = None,
        tls: bool = False,
        tls_ca_file: str | os.PathLike[str] | None = None,
        tls_cert_file: str | os.PathLike[str] | None = None,
        tls_key_file: str | os.PathLike[str] | None = None,
        tls_check_hostname: bool = True,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        # `labels` names the options in error messages (the CLI's flags, the environment's
        # variables); by default they are named as the keyword arguments.
        set_ = object.__setattr__
        set_(self, "_labels", dict(labels or {}))
        set_(self, "username", self._check_username(username))
        set_(self, "_password", self._check_password(password, self.username))
        for name in ("tls", "tls_check_hostname"):
            value = tls if name == "tls" else tls_check_hostname
            if not isinstance(value, bool):
                raise invalid(self._label(name), value, "True or False")
            set_(self, name, value)
        for name, path in zip(_FILES, (tls_ca_file, tls_cert_file, tls_key_file), strict=True):
            set_(self, name, self._check_file(name, path))
        if self.tls_key_file and not self.tls_cert_file:
            raise invalid(
                self._label("tls_key_file"),
                self.tls_key_file,
                f"given with {self._label('tls_cert_file')} (the certificate of that key)",
            )
        self.ssl_context()  # reads the files now: a bad one is reported before connecting

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ConnectionOptions is immutable")

    def _label(self, name: str) -> str:
        return self._labels.get(name, name)

    def _check_username(self, username: Any) -> str | None:
        if username is None:
            return None
        if not isinstance(username, str) or not username.strip() or "\0" in username:
            raise invalid(self._label("username"), username, "a non-empty user name")
        return username

    def _check_password(self, password: Any, username: str | None) -> str | None:
        """The password (never part of a message: a bad one is described, not shown)."""
        if password is None:
            if username is not None:
                raise InvalidInputError(
                    f"{self._label('password')} is needed with username {username!r}",
                    argument=self._label("password"),
                    allowed="a string",
                )
            return None
        if not isinstance(password, str) or "\0" in password:
            raise InvalidInputError(
                f"{self._label('password')} must be a string without NUL characters "
                f"(got a {type(password).__name__}, not shown)",
                argument=self._label("password"),
                allowed="a string",
            )
        if username is None:
            raise InvalidInputError(
                f"{self._label('password')} was given without {self._label('username')}",
                argument=self._label("username"),
                allowed="a non-empty user name",
            )
        return password

    def _check_file(self, name: str, path: Any) -> str | None:
        if path is None:
            return None
        if not isinstance(path, str | os.PathLike) or not str(path):
            raise invalid(self._label(name), path, "the path of a PEM file")
        if not Path(path).is_file():
            raise invalid(self._label(name), str(path), "an existing file (PEM)")
        return str(path)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ConnectionOptions:
        """The options named by HOPRAG_CASSANDRA_USERNAME, HOPRAG_CASSANDRA_PASSWORD and
        HOPRAG_CASSANDRA_TLS_CA_FILE / _TLS_CERT_FILE / _TLS_KEY_FILE (unset or empty: not
        given); errors name the variable."""
        env = os.environ if environ is None else environ
        get = {name: env.get(var) or None for name, var in ENV.items()}
        return cls(
            username=get["username"],
            password=get["password"],
            tls_ca_file=get["tls_ca_file"],
            tls_cert_file=get["tls_cert_file"],
            tls_key_file=get["tls_key_file"],
            labels=ENV,
        )

    @property
    def uses_tls(self) -> bool:
        """Whether connections are encrypted."""
        return self.tls or any(getattr(self, name) for name in _FILES)

    @property
    def has_password(self) -> bool:
        """Whether a password is set (the password itself is not exposed as an attribute)."""
        return self._password is not None

    def auth_provider(self) -> Any:
        """The driver's `PlainTextAuthProvider` for the credentials, or None without them."""
        if self.username is None or self._password is None:
            return None
        from cassandra.auth import PlainTextAuthProvider

        return PlainTextAuthProvider(username=self.username, password=self._password)

    def ssl_context(self) -> ssl.SSLContext | None:
        """A client TLS context (TLS 1.2 or later) for these options, or None without TLS."""
        if not self.uses_tls:
            return None
        try:
            ctx = ssl.create_default_context(cafile=self.tls_ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise invalid(
                self._label("tls_ca_file"), self.tls_ca_file, f"a PEM CA certificate file ({exc})"
            ) from None
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.check_hostname = self.tls_check_hostname
        if self.tls_cert_file:
            try:
                # An encrypted key would make OpenSSL prompt; an empty passphrase fails instead.
                ctx.load_cert_chain(self.tls_cert_file, self.tls_key_file, password="")
            except (OSError, ssl.SSLError) as exc:
                raise invalid(
                    self._label("tls_cert_file"),
                    self.tls_cert_file,
                    "a PEM client certificate whose unencrypted key is in it or in "
                    f"{self._label('tls_key_file')} ({exc})",
                ) from None
        return ctx

    def scrub(self, text: str) -> str:
        """`text` with the password (if it appears) replaced by ***."""
        if self._password:
            return text.replace(self._password, "***")
        return text

    def __repr__(self) -> str:
        shown = [f"username={self.username!r}"] if self.username is not None else []
        if self._password is not None:
            shown.append("password=<hidden>")
        if self.uses_tls:
            shown += [f"{name}={getattr(self, name)!r}" for name in _FILES if getattr(self, name)]
            shown.append(f"tls_check_hostname={self.tls_check_hostname}")
        return f"ConnectionOptions({', '.join(shown)})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("ConnectionOptions holds a password and is not pickled")


# --- the CLI -----------------------------------------------------------------------------------


def cli_options(
    username: str | None,
    tls_ca_file: str | None,
    tls_cert_file: str | None,
    tls_key_file: str | None,
    *,
    environ: Mapping[str, str] | None = None,
    prompt: Callable[[str], str] | None = None,
    interactive: bool | None = None,
) -> ConnectionOptions:
    """The options of the CLI's --username and --tls-* flags. The password is never a flag: it
    comes from HOPRAG_CASSANDRA_PASSWORD or, when stdin is a terminal, from a prompt that does
    not echo (`getpass`); without either, InvalidInputError says how to give it."""
    env = os.environ if environ is None else environ
    password = env.get(ENV["password"]) or None
    if username is not None and password is None:
        if not (sys.stdin.isatty() if interactive is None else interactive):
            raise InvalidInputError(
                f"--username {username!r} needs a password: set {ENV['password']} (or run in "
                "a terminal to be asked for it)",
                argument="password",
                allowed="HOPRAG_CASSANDRA_PASSWORD or a terminal prompt",
            )
        if prompt is None:
            import getpass

            prompt = getpass.getpass
        password = prompt(f"Password for Cassandra user {username!r}: ")
    labels = {
        "username": "--username",
        "password": ENV["password"],
        "tls_ca_file": "--tls-ca-file",
        "tls_cert_file": "--tls-cert-file",
        "tls_key_file": "--tls-key-file",
    }
    return ConnectionOptions(
        username=username,
        password=password,
        tls_ca_file=tls_ca_file,
        tls_cert_file=tls_cert_file,
        tls_key_file=tls_key_file,
        labels=labels,
    )


# --- refused connections -----------------------------------------------------------------------


def _refused_auth(options: ConnectionOptions, detail: str, where: str) -> str:
    if "requires authentication" in detail:
        return (
            f"the node at {where} requires a username and password (PasswordAuthenticator): "
            "give username= and password= (CLI: --username and HOPRAG_CASSANDRA_PASSWORD)"
        )
    server = detail.split('message="', 1)[-1].rstrip('"') if 'message="' in detail else detail
    return f"authentication failed for user {options.username!r} at {where} ({server})"


def _has(low: str, *needles: str) -> bool:
    return any(n in low for n in needles)


def _closed(low: str) -> bool:
    return _has(low, "reset by peer", "closed", "eof occurred")


def _untrusted(detail: str) -> str:
    reason = detail.split("certificate verify failed:", 1)[-1].split("(_ssl")[0].strip()
    return (
        f"the node's TLS certificate is not trusted ({reason}): check tls_ca_file "
        "(--tls-ca-file), and that the certificate names the contact point's address"
    )


_TLS_REFUSALS: tuple[tuple[Callable[[str, ConnectionOptions], bool], Callable[[str], str]], ...] = (
    (
        lambda low, o: _has(low, "certificate required", "certificate_required"),
        lambda _: (
            "the node requires a client certificate (TLS alert: certificate required): give "
            "tls_cert_file and tls_key_file (CLI: --tls-cert-file, --tls-key-file)"
        ),
    ),
    (
        lambda low, o: _has(low, "certificate_verify_failed", "certificate verify failed"),
        _untrusted,
    ),
    (
        # The node's "certificate required" alert is not always read before the socket closes.
        lambda low, o: o.uses_tls and not o.tls_cert_file and _closed(low),
        lambda _: (
            "the node closed the TLS connection during the handshake, as a node that requires "
            "a client certificate does: give tls_cert_file and tls_key_file (CLI: "
            "--tls-cert-file, --tls-key-file)"
        ),
    ),
    (
        lambda low, o: not o.uses_tls and _closed(low),
        lambda _: (
            "the node closed the connection at the CQL handshake, as a node that requires TLS "
            "does to a plain-text client: connect with TLS (tls_ca_file=..., CLI: "
            "--tls-ca-file)"
        ),
    ),
    (
        lambda low, o: o.uses_tls and _has(low, "wrong_version_number", "wrong version number"),
        lambda _: (
            "the TLS handshake failed: the node does not speak TLS on this port (connect "
            "without TLS)"
        ),
    ),
)
"""When a refusal's text means a TLS mismatch, and what to tell the user; the first match wins."""


def _refused_tls(options: ConnectionOptions, detail: str) -> str | None:
    """What a connection refused with `detail` says about TLS, or None when nothing."""
    low = detail.lower()
    for applies, message in _TLS_REFUSALS:
        if applies(low, options):
            return message(detail)
    return None


def refusal(exc: Any, where: str, options: ConnectionOptions) -> StoreUnavailableError | None:
    """The one-line error for a `NoHostAvailable` whose nodes refused the connection for a
    security reason (an `AuthenticationError` for credentials), or None when none did."""
    from cassandra import AuthenticationFailed

    errors = getattr(exc, "errors", None) or {}
    for error in errors.values():
        detail = options.scrub(str(error))
        if isinstance(error, AuthenticationFailed):
            return AuthenticationError(_refused_auth(options, detail, where))
        message = _refused_tls(options, detail)
        if message is not None:
            return StoreUnavailableError(f"{message} ({where})")
    return None
