"""An application's OpenTelemetry set-up that fails: a span processor raising on every span's
start and end, and a meter provider whose meters cannot be made (issue #50, defect 14)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

from hoprag import telemetry


class RaisingProcessor(SpanProcessor):
    """Raises on every span's start and end, as a broken exporter's processor may."""

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        raise RuntimeError("span processor broke on start")

    def on_end(self, span: Any) -> None:
        raise RuntimeError("span processor broke on end")


class RaisingMeterProvider(MeterProvider):
    """A meter provider whose `get_meter` raises."""

    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("meter provider broke")


@contextmanager
def failing_telemetry(spans: bool = True, meters: bool = True) -> Iterator[None]:
    """hoprag's telemetry on while the block runs, with a span processor that raises
    (`spans`) and a meter provider that raises (`meters`); working ones otherwise."""
    tracer_provider = TracerProvider()
    if spans:
        tracer_provider.add_span_processor(RaisingProcessor())
    meter_provider = RaisingMeterProvider() if meters else MeterProvider()
    previous = telemetry.configure(
        enabled=True, tracer_provider=tracer_provider, meter_provider=meter_provider
    )
    try:
        yield
    finally:
        telemetry.restore(previous)
