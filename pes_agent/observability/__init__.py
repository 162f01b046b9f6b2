"""Observability: the tracer protocol and its spans (``tracing``), structured logging at the same
hook points, and OpenTelemetry beside them (``otel``, the ``otel`` extra, imported only when
``observability.otel`` is on; `pes_agent.factory` chooses it). ``otel`` stands on ``tracing``,
never the reverse; this module hands on the names of ``tracing`` and never imports ``otel``.
"""

from pes_agent.observability.tracing import (
    LOGGER,
    NOOP_TRACER,
    LoggingTracer,
    NoopTracer,
    Span,
    Tracer,
)

__all__ = ["LOGGER", "NOOP_TRACER", "LoggingTracer", "NoopTracer", "Span", "Tracer"]
