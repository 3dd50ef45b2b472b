"""OpenTelemetry's SDK set up for hoprag's spans and metrics in a test: an in-memory span
exporter and metric reader given to `hoprag.telemetry.configure` (not installed globally), and
helpers that read the span tree back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hoprag import telemetry


class Traces:
    """The spans and metrics hoprag emitted while a `collected()` block ran."""

    def __init__(self, exporter: InMemorySpanExporter, reader: InMemoryMetricReader) -> None:
        self.exporter = exporter
        self.reader = reader

    def spans(self) -> list[ReadableSpan]:
        """The finished spans, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        """The finished spans whose name starts with `prefix`."""
        return [s for s in self.spans() if s.name.startswith(prefix)]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        """The spans whose parent is `parent`, by start time."""
        sid = parent.context.span_id
        kids = [s for s in self.spans() if s.parent is not None and s.parent.span_id == sid]
        return sorted(kids, key=lambda s: s.start_time or 0)

    def metrics(self) -> dict[str, list[Any]]:
        """Each hoprag instrument's data points."""
        data = self.reader.get_metrics_data()
        out: dict[str, list[Any]] = {}
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out.setdefault(metric.name, []).extend(metric.data.data_points)
        return out


@contextmanager
def collected(**options: Any) -> Iterator[Traces]:
    """hoprag's tracing on, into an in-memory exporter and reader, while the block runs
    (`options` go to `hoprag.telemetry.configure`, e.g. `capture_query_text=True`)."""
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    previous = telemetry.configure(
        enabled=True,
        capture_query_text=options.pop("capture_query_text", False),
        capture_documents=options.pop("capture_documents", False),
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        **options,
    )
    try:
        yield Traces(exporter, reader)
    finally:
        telemetry.restore(previous)
        tracer_provider.shutdown()
        meter_provider.shutdown()
