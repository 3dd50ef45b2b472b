"""OpenTelemetry traces and metrics of hoprag's retrievals, when the application wants them.

With the OpenTelemetry API installed (hoprag's otel extra, README's Install: the API only; the
application installs and configures the SDK and its exporters), every traversal and search
emits a retrieval span (`gen_ai.operation.name` "retrieval"), each of its rounds a child span
(`hoprag hop N`), and each CQL request a CassandraStore sends a client span following the
database conventions (`db.system.name` "cassandra", `db.namespace`, `db.collection.name`,
`db.operation.name`, `db.query.summary`, `db.query.text` with `?` for every value), started
before the request is handed to the driver and ended when the node's answer (or error)
arrives. A tool call (`SearchTool.arun`) is an `execute_tool` span around its searches.
Beside them, three instruments of the meter "hoprag": `hoprag.retrieval.queries` and
`hoprag.retrieval.rounds` (counters) and `hoprag.retrieval.duration` (a histogram, seconds).

The query text (`gen_ai.retrieval.query.text`) and the documents found
(`gen_ai.retrieval.documents`, ids and scores as JSON) are recorded only when the
application opts in: `configure(capture_query_text=True, capture_documents=True)` or the
environment variable HOPRAG_OTEL_CAPTURE_CONTENT=true. `configure(enabled=False)` (or
HOPRAG_OTEL=off) turns everything off; without the API installed nothing is emitted and every
call here is a no-op.

Spans are made with explicit parents and attached to the context only around awaits that do
not yield (a traversal is an async generator, and a context attached across a `yield` would
leak into the consumer).

Telemetry never changes an answer: an exception raised by the application's tracer or meter
provider, span processor or exporter inside any of these calls is logged once (per call site
and exception type, logger "hoprag.telemetry") and swallowed, and the retrieval goes on
without that span or figure."""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from hoprag.errors import invalid

__all__ = [
    "ClientSpan",
    "Settings",
    "attached",
    "configure",
    "end_hop",
    "end_retrieval",
    "settings",
    "start_client",
    "start_hop",
    "start_retrieval",
    "start_tool",
]

SCOPE = "hoprag"
"""The instrumentation scope (tracer and meter name)."""

_TRUE = {"1", "true", "yes", "on"}


@dataclass(slots=True)
class Settings:
    """What is traced: `enabled` (everything), and the opt-in content: the query text and the
    documents found. `tracer_provider` / `meter_provider`: the providers to use (default: the
    global ones the application set)."""

    enabled: bool = True
    capture_query_text: bool = False
    capture_documents: bool = False
    tracer_provider: Any = None
    meter_provider: Any = None


def _from_environment() -> Settings:
    content = os.environ.get("HOPRAG_OTEL_CAPTURE_CONTENT", "").strip().lower() in _TRUE
    off = os.environ.get("HOPRAG_OTEL", "").strip().lower() in {"0", "false", "off", "no"}
    return Settings(enabled=not off, capture_query_text=content, capture_documents=content)


_settings = _from_environment()
_instruments: dict[str, Any] = {}


def settings() -> Settings:
    """The settings in force (a copy)."""
    s = _settings
    return Settings(
        s.enabled, s.capture_query_text, s.capture_documents, s.tracer_provider, s.meter_provider
    )


def configure(
    *,
    enabled: bool | None = None,
    capture_query_text: bool | None = None,
    capture_documents: bool | None = None,
    tracer_provider: Any = None,
    meter_provider: Any = None,
) -> Settings:
    """Change what is traced (the arguments not given keep their value; a provider given
    replaces the global one for hoprag's spans or metrics) and return the previous settings,
    which `restore` puts back."""
    global _settings
    flags = {
        "enabled": enabled,
        "capture_query_text": capture_query_text,
        "capture_documents": capture_documents,
    }
    for name, value in flags.items():
        if value is not None and not isinstance(value, bool):
            raise invalid(name, value, "True, False or None (keep the current setting)")
    _check_provider("tracer_provider", tracer_provider, "get_tracer")
    _check_provider("meter_provider", meter_provider, "get_meter")
    previous = settings()
    s = settings()
    for name, value in flags.items():
        if value is not None:
            setattr(s, name, value)
    if tracer_provider is not None:
        s.tracer_provider = tracer_provider
    if meter_provider is not None:
        s.meter_provider = meter_provider
    _settings = s
    _instruments.clear()
    return previous


def _check_provider(name: str, provider: Any, method: str) -> None:
    """InvalidInputError unless `provider` is None or has `method` (an OpenTelemetry
    provider)."""
    if provider is not None and not callable(getattr(provider, method, None)):
        raise invalid(name, provider, f"an OpenTelemetry provider (with {method}()) or None")


def restore(previous: Settings) -> None:
    """Put back settings `configure` returned."""
    global _settings
    _settings = previous
    _instruments.clear()


# --- errors of the application's providers -------------------------------------------------------

_log = logging.getLogger("hoprag.telemetry")
_reported: set[tuple[str, str]] = set()
_F = TypeVar("_F", bound=Callable[..., Any])


def _swallow(where: str, error: Exception) -> None:
    """Log `error` from telemetry call `where`, the first time for its type there."""
    key = (where, type(error).__qualname__)
    if key in _reported:
        return
    _reported.add(key)
    _log.warning(
        "telemetry failed in %s (%s: %s); retrievals go on without it (said once)",
        where, type(error).__qualname__, error,
    )  # fmt: skip


def _guarded(fn: _F) -> _F:
    """`fn`, with any Exception it raises logged once and swallowed (None returned)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            _swallow(fn.__qualname__, error)
            return None

    return call  # type: ignore[return-value]


@lru_cache(maxsize=1)
def _api() -> tuple[Any, Any] | None:
    """The OpenTelemetry `trace` and `metrics` API modules, or None when not installed."""
    try:
        from opentelemetry import metrics, trace
    except ImportError:
        return None
    return trace, metrics


def _tracer() -> Any:
    """The tracer for hoprag's spans, or None when tracing is off, the API is missing or no
    tracer provider has been set (the API's own default makes only no-op spans)."""
    if not _settings.enabled:
        return None
    api = _api()
    if api is None:
        return None
    trace = api[0]
    provider = _settings.tracer_provider or trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None  # no SDK set up (yet): every span would be a no-op, so make none
    cached = _instruments.get("tracer")
    if cached is None or cached[0] is not provider:
        cached = _instruments["tracer"] = (provider, provider.get_tracer(SCOPE))
    return cached[1]


def _context_of(parent: Any) -> Any:
    """The context whose current span is `parent` (None: the current context)."""
    if parent is None:
        return None
    api = _api()
    assert api is not None
    return api[0].set_span_in_context(parent)


@contextmanager
def attached(span: Any) -> Iterator[None]:
    """`span` as the current span while the block runs (nothing when it is None, or when
    the provider fails to attach it). The block must not yield from a generator; its own
    exceptions pass through."""
    entered = None if span is None else _enter(span)
    try:
        yield
    except BaseException as error:
        if entered is not None:
            _leave(entered, error)
        raise
    if entered is not None:
        _leave(entered, None)


@_guarded
def _enter(span: Any) -> AbstractContextManager[Any]:
    """`span` made current (the entered context of `use_span`)."""
    api = _api()
    assert api is not None
    context: AbstractContextManager[Any] = api[0].use_span(
        span, end_on_exit=False, record_exception=False
    )
    context.__enter__()
    return context


@_guarded
def _leave(context: AbstractContextManager[Any], error: BaseException | None) -> None:
    """Leave a context `_enter` entered."""
    if error is None:
        context.__exit__(None, None, None)
    else:
        context.__exit__(type(error), error, error.__traceback__)


def _fail(span: Any, error: BaseException) -> None:
    """Record `error` on `span` with the ERROR status and `error.type`."""
    api = _api()
    assert api is not None
    span.record_exception(error)
    span.set_attribute("error.type", type(error).__qualname__)
    span.set_status(api[0].Status(api[0].StatusCode.ERROR, str(error)[:500]))


# --- retrievals ---------------------------------------------------------------------------------


@_guarded
def start_retrieval(
    operation: str,
    *,
    query: str | None,
    top_k: int | None,
    strategy: str | None = None,
    store: Any = None,
) -> Any:
    """A retrieval span for a traversal or a search (`operation`: "traversal" or "search"),
    child of the current span; None when tracing is off. The query text only when opted in."""
    tracer = _tracer()
    if tracer is None:
        return None
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "retrieval",
        "hoprag.operation": operation,
    }
    if top_k is not None:
        attributes["gen_ai.request.top_k"] = top_k
    if strategy is not None:
        attributes["hoprag.strategy"] = strategy
    if store is not None:
        attributes["gen_ai.data_source.id"] = type(store).__name__
    if query is not None and _settings.capture_query_text:
        attributes["gen_ai.retrieval.query.text"] = query
    name = f"retrieval hoprag.{operation}"
    return tracer.start_span(name, attributes=attributes)


@_guarded
def end_retrieval(
    span: Any,
    stats: Any,
    documents: Sequence[tuple[str, float]] | None,
    error: BaseException | None = None,
) -> None:
    """End a retrieval span with the run's figures (rounds, queries, rows, results; the
    documents as ids and scores when opted in) and record the run's metrics."""
    if span is None:
        return
    if error is not None:
        _fail(span, error)
    figures = {"rounds": stats.rounds, "queries": stats.total_queries, "rows": stats.total_rows}
    span.set_attributes({f"hoprag.{k}": v for k, v in figures.items()})
    if stats.plan is not None:
        span.set_attribute("hoprag.plan", stats.plan)
    if documents is not None:
        span.set_attribute("hoprag.results", len(documents))
        if _settings.capture_documents:
            shown = [{"id": i, "score": _finite(s)} for i, s in documents]
            span.set_attribute("gen_ai.retrieval.documents", json.dumps(shown))
    _record_metrics(span, stats, error)
    span.end()


def _finite(score: float) -> float | None:
    return score if score == score and abs(score) != float("inf") else None


@_guarded
def _record_metrics(span: Any, stats: Any, error: BaseException | None) -> None:
    """Add the run's queries and rounds to the counters and its duration to the histogram."""
    meters = _meters()
    if meters is None:
        return
    recorded = getattr(span, "attributes", None) or {}  # an SDK span's; others may have none
    attributes = {"hoprag.operation": recorded.get("hoprag.operation", "")}
    if error is not None:
        attributes["error.type"] = type(error).__qualname__
    meters["queries"].add(stats.total_queries, attributes)
    meters["rounds"].add(stats.rounds, attributes)
    meters["duration"].record(stats.seconds, attributes)


def _meters() -> dict[str, Any] | None:
    """The three instruments (made once per settings), or None when off."""
    if not _settings.enabled:
        return None
    if "duration" in _instruments:
        return _instruments
    api = _api()
    if api is None:
        return None
    metrics = api[1]
    provider = _settings.meter_provider or metrics.get_meter_provider()
    meter = provider.get_meter(SCOPE)
    _instruments["queries"] = meter.create_counter(
        "hoprag.retrieval.queries", unit="{query}", description="Store queries of retrievals"
    )
    _instruments["rounds"] = meter.create_counter(
        "hoprag.retrieval.rounds", unit="{round}", description="Sequential rounds of retrievals"
    )
    _instruments["duration"] = meter.create_histogram(
        "hoprag.retrieval.duration", unit="s", description="Wall time of retrievals"
    )
    return _instruments


# --- hops ---------------------------------------------------------------------------------------


@_guarded
def start_hop(parent: Any, depth: int) -> Any:
    """A span for one round of a retrieval (child of `parent`, or of the current span when
    `parent` is None); None when tracing is off."""
    tracer = _tracer()
    if tracer is None:
        return None
    return tracer.start_span(f"hoprag hop {depth}", context=_context_of(parent))


@_guarded
def end_hop(span: Any, hop: Any, error: BaseException | None = None) -> None:
    """End a hop span with the hop's figures (`HopStats`): sequential rounds, edges asked,
    queries by kind, rows, candidates, admitted nodes, speculative edges, and the edges by
    plan where a store planned them (`plans.<plan>`)."""
    if span is None:
        return
    if error is not None:
        _fail(span, error)
    figures = {
        "depth": hop.depth,
        "rounds": hop.rounds,
        "edges": hop.edges,
        "rows": hop.rows,
        "candidates": hop.candidates,
        "admitted": hop.kept,
        **{f"queries.{kind}": n for kind, n in hop.queries.items()},
    }
    if hop.notes.get("speculative_edges"):
        figures["speculative_edges"] = hop.notes["speculative_edges"]
    for plan in hop.plans:
        figures[f"plans.{plan.plan}"] = figures.get(f"plans.{plan.plan}", 0) + 1
    span.set_attributes({f"hoprag.hop.{k}": v for k, v in figures.items()})
    span.end()


# --- tool calls ---------------------------------------------------------------------------------


@_guarded
def start_tool(name: str) -> Any:
    """An `execute_tool` span for one call of an agents' tool; None when off."""
    tracer = _tracer()
    if tracer is None:
        return None
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    return tracer.start_span(f"execute_tool {name}", attributes=attributes)


@_guarded
def end_span(span: Any, error: BaseException | None = None) -> None:
    """End `span` (recording `error` when given); nothing when it is None."""
    if span is None:
        return
    if error is not None:
        _fail(span, error)
    span.end()


def traced(span: Any) -> Any:
    """`attached(span)` or, for None, a null context (for `with` statements)."""
    return nullcontext() if span is None else attached(span)


# --- CQL requests -------------------------------------------------------------------------------

_STATEMENT = re.compile(
    r"^\s*(SELECT|INSERT\s+INTO|UPDATE|DELETE|BEGIN\s+\w*\s*BATCH)\b"
    r"(?:.*?\bFROM\b)?\s*(?:\"?(\w+)\"?\.)?\"?(\w+)\"?",
    re.IGNORECASE | re.DOTALL,
)


@lru_cache(maxsize=512)
def _describe(text: str) -> tuple[str, str | None, str | None]:
    """The operation, keyspace and table a CQL text names (the texts are hoprag's own, a few
    dozen per store, so the cache stays small)."""
    m = _STATEMENT.match(text)
    if m is None:
        return text.split(None, 1)[0].upper() if text.strip() else "CQL", None, None
    operation = " ".join(m.group(1).upper().split())
    if operation.startswith("INSERT"):
        operation = "INSERT"
    elif operation.endswith("BATCH"):
        return "BATCH", None, None
    return operation, m.group(2), m.group(3)


class ClientSpan:
    """The span of one CQL request, ended once: on its answer (the driver's IO thread), its
    error, or when the caller abandons it (the event loop's thread)."""

    __slots__ = ("_lock", "_span")

    def __init__(self, span: Any) -> None:
        self._span = span
        self._lock = threading.Lock()

    @_guarded
    def end(self, error: BaseException | None = None) -> None:
        """End the span (recording `error`), the first time only."""
        with self._lock:
            span, self._span = self._span, None
        if span is None:
            return
        if error is not None:
            _fail(span, error)
        span.end(end_time=time.time_ns())


@_guarded
def start_client(statement: Any, keyspace: str | None) -> ClientSpan | None:
    """A client span for one CQL request of `statement` (a prepared or bound statement, or
    a query text), child of the current span; None when tracing is off."""
    tracer = _tracer()
    if tracer is None:
        return None
    api = _api()
    assert api is not None
    span = tracer.start_span("CQL", kind=api[0].SpanKind.CLIENT)
    if span.is_recording():
        span.update_name(_describe_client(span, statement, keyspace))
    return ClientSpan(span)


def _describe_client(span: Any, statement: Any, keyspace: str | None) -> str:
    """Set the database attributes of a client span; its name (`db.query.summary`)."""
    prepared = getattr(statement, "prepared_statement", statement)
    text = getattr(prepared, "query_string", None) or str(statement)
    operation, named_keyspace, table = _describe(text)
    namespace = named_keyspace or getattr(prepared, "keyspace", None) or keyspace
    summary = f"{operation} {table}" if table else operation
    attributes: dict[str, Any] = {
        "db.system.name": "cassandra",
        "db.operation.name": operation,
        "db.query.summary": summary,
        "db.query.text": text,
    }
    if namespace:
        attributes["db.namespace"] = namespace
    if table:
        attributes["db.collection.name"] = table
    span.set_attributes(attributes)
    return summary
