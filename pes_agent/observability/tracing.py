"""Tracing hook points and structured logging.

The agent opens spans through a `Tracer` and never learns what is behind it: the default does
nothing, `pes_agent.observability.otel.OTelTracer` (the ``otel`` extra) exports OpenTelemetry spans,
and tests can plug in a recording tracer. Every instance wraps its tracer in a `LoggingTracer`, so
the standard ``logging`` module sees the same hook points whichever tracer is in use.

Span kinds and the generic attribute keys the agent passes (tracers map them to their own names):

- ``run``: thread_id, trace_id, resume; at the end status, error_code, usage.llm_calls,
  usage.prompt_tokens, usage.completion_tokens, usage.tool_calls.
- ``phase``: phase (planning, refinement, execution, synthesis), step_id (execution).
- ``llm``: phase, step_id, provider, model; at the end usage.prompt_tokens,
  usage.completion_tokens (and usage.cached_prompt_tokens, usage.thinking_tokens when the provider
  reported either), finish_reason, response.model. Only when the tracer's
  ``capture_content`` is true does the agent also set input.messages (the prompt's `Message`s) and
  output.text (the reply) — prompt text never reaches a tracer that did not ask for it.
- ``tool``: tool_name, call_id, step_id; at the end status.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Protocol

LOGGER = logging.getLogger("pes_agent")
"""Run start and end at INFO; each model call and tool call at DEBUG. Never prompt text or secrets."""


class Span(Protocol):
    def set_attribute(self, key: str, value: Any) -> None: ...

    def record_error(self, error: BaseException) -> None: ...


class Tracer(Protocol):
    """``kind`` is one of ``run``, ``phase``, ``llm``, ``tool``."""

    @property
    def capture_content(self) -> bool:
        """True when the tracer wants prompt and reply text on ``llm`` spans (off by default)."""
        ...

    def span(self, kind: str, name: str, attributes: Mapping[str, Any]) -> AbstractContextManager[Span]:
        """A context manager yielding a `Span`; an exception leaving it marks the span failed."""
        ...


class _NoopSpan:
    def set_attribute(self, key: str, value: Any) -> None:
        return None

    def record_error(self, error: BaseException) -> None:
        return None


_NOOP_SPAN = _NoopSpan()
_NOOP_CONTEXT: AbstractContextManager[Span] = nullcontext(_NOOP_SPAN)
"""Reusable: the default tracer hands out this one object instead of a new generator per span."""


class NoopTracer:
    capture_content = False

    def span(self, kind: str, name: str, attributes: Mapping[str, Any]) -> AbstractContextManager[Span]:
        return _NOOP_CONTEXT


NOOP_TRACER = NoopTracer()


# -- logging ----------------------------------------------------------------------------------------

_LOGGED_KEYS: dict[str, tuple[str, ...]] = {
    "run": (
        "thread_id",
        "trace_id",
        "resume",
        "status",
        "error_code",
        "usage.llm_calls",
        "usage.prompt_tokens",
        "usage.completion_tokens",
        "usage.tool_calls",
    ),
    "llm": (
        "phase",
        "step_id",
        "provider",
        "model",
        "response.model",
        "usage.prompt_tokens",
        "usage.completion_tokens",
        "usage.cached_prompt_tokens",
        "usage.thinking_tokens",
        "finish_reason",
    ),
    "tool": ("tool_name", "call_id", "step_id", "status"),
}
"""What each log line may carry: an allow-list, so content keys and anything added later stay out."""

_EVENTS = {"run": "run", "llm": "model call", "tool": "tool call"}


class _LoggedSpan:
    """Passes attributes on to the real span and keeps the allow-listed ones for the log line."""

    def __init__(self, inner: Span, kind: str, fields: dict[str, Any]) -> None:
        self._inner = inner
        self._allowed = _LOGGED_KEYS[kind]
        self.fields = fields

    def set_attribute(self, key: str, value: Any) -> None:
        if key in self._allowed:
            self.fields[key] = value
        self._inner.set_attribute(key, value)

    def record_error(self, error: BaseException) -> None:
        self.fields["error"] = type(error).__name__
        self._inner.record_error(error)


class LoggingTracer:
    """Logs at the hook points, then hands every span to ``inner``.

    The lines go to the ``pes_agent`` logger: ``run started`` / ``run finished`` at INFO (thread,
    trace, status, model calls, tokens, tool calls, duration); ``model call`` and ``tool call`` at
    DEBUG. A run that raises out of ``process`` ends with a WARNING naming the exception type. Each
    line also carries its fields as ``record.pes_agent`` (a dict) for structured handlers. When the
    logger is not enabled for a level, the span goes straight to ``inner`` at no extra cost.
    """

    def __init__(self, inner: Tracer = NOOP_TRACER, *, logger: logging.Logger = LOGGER) -> None:
        self.inner = inner
        self._logger = logger

    @property
    def capture_content(self) -> bool:
        return self.inner.capture_content

    def span(self, kind: str, name: str, attributes: Mapping[str, Any]) -> AbstractContextManager[Span]:
        level = logging.INFO if kind == "run" else logging.DEBUG
        if kind not in _LOGGED_KEYS or not self._logger.isEnabledFor(level):
            return self.inner.span(kind, name, attributes)
        return self._logged(kind, name, attributes, level)

    @contextmanager
    def _logged(self, kind: str, name: str, attributes: Mapping[str, Any], level: int) -> Iterator[Span]:
        allowed = _LOGGED_KEYS[kind]
        fields = {k: v for k, v in attributes.items() if k in allowed and v is not None}
        if kind == "run":
            self._log(level, "run started", fields)
        started = time.perf_counter()
        with self.inner.span(kind, name, attributes) as inner:
            span = _LoggedSpan(inner, kind, fields)
            try:
                yield span
            except BaseException as exc:
                fields.setdefault("error", type(exc).__name__)
                fields["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
                self._log(logging.WARNING if kind == "run" else level, f"{_EVENTS[kind]} raised", fields)
                raise
        fields["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
        self._log(level, "run finished" if kind == "run" else _EVENTS[kind], fields)

    def _log(self, level: int, event: str, fields: Mapping[str, Any]) -> None:
        text = " ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
        self._logger.log(level, "%s %s", event, text, extra={"pes_agent": {"event": event, **fields}})
