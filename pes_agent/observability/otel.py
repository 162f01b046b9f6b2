"""OpenTelemetry spans for pes-agent runs, following the GenAI semantic conventions.

Needs the ``otel`` extra (``pip install 'pes-agent[otel]'``); importing this module imports
opentelemetry, which is why nothing else in pes-agent imports it at load time.

One ``invoke_agent pes-agent`` span per run; inside it one span per phase (``planning`` or
``refinement``, ``execute_step <id>`` per todo item, ``synthesis``); inside those one ``chat
<model>`` span per model call (kind CLIENT) and one ``execute_tool <tool>`` span per tool call. The
agent's generic attribute keys become the conventional ``gen_ai.*`` names; what the conventions do
not cover stays under ``pes_agent.*``. Prompt and reply text are recorded only with
``capture_content=True`` (as ``gen_ai.system_instructions``, ``gen_ai.input.messages`` and
``gen_ai.output.messages``, JSON in the conventions' parts format).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from pes_agent.observability.tracing import Span

SCOPE = "pes_agent"
"""The instrumentation scope name of every span."""

AGENT_NAME = "pes-agent"

_OPERATIONS = {"run": "invoke_agent", "llm": "chat", "tool": "execute_tool"}

_RENAMED = {
    "provider": "gen_ai.provider.name",
    "model": "gen_ai.request.model",
    "response.model": "gen_ai.response.model",
    "usage.prompt_tokens": "gen_ai.usage.input_tokens",
    "usage.completion_tokens": "gen_ai.usage.output_tokens",
    "tool_name": "gen_ai.tool.name",
    "call_id": "gen_ai.tool.call.id",
    "thread_id": "gen_ai.conversation.id",
    "error_code": "error.type",
}
"""Generic keys with a GenAI convention; any other key becomes ``pes_agent.<key>``."""

_CONTENT_KEYS = frozenset({"input.messages", "output.text"})
_FAILED = frozenset({"error", "refused"})
"""``status`` values that mark a run or tool span as failed."""


def _value(value: Any) -> Any:
    """An attribute value OpenTelemetry accepts: primitives and lists of strings pass, the rest is text."""
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return str(value)


def _text_parts(content: str) -> list[dict[str, str]]:
    return [{"type": "text", "content": content}]


def _role_and_content(message: Any) -> tuple[str, str]:
    if isinstance(message, Mapping):
        return str(message.get("role", "user")), str(message.get("content", ""))
    return str(message.role), str(message.content)


class OTelSpan:
    """One OpenTelemetry span seen through pes-agent's `Span` hook."""

    def __init__(self, span: trace.Span, kind: str, *, capture_content: bool) -> None:
        self._span = span
        self._kind = kind
        self._capture = capture_content
        self._finish_reason: str | None = None
        self._error_type: str | None = None

    def set_attribute(self, key: str, value: Any) -> None:
        if value is None:
            return
        if key in _CONTENT_KEYS:
            if self._capture:
                self._set_content(key, value)
            return
        if key == "finish_reason":
            self._finish_reason = str(value)
            self._span.set_attribute("gen_ai.response.finish_reasons", [str(value)])
            return
        name = _RENAMED.get(key, f"pes_agent.{key}")
        if name == "error.type":
            self._error_type = str(value)
        self._span.set_attribute(name, _value(value))
        if key == "status" and value in _FAILED and self._kind in ("run", "tool"):
            self._fail(self._error_type or ("_OTHER" if self._kind == "run" else f"tool_{value}"))

    def record_error(self, error: BaseException) -> None:
        self._span.record_exception(error)
        self._fail(type(error).__qualname__, str(error) or None)

    def _fail(self, error_type: str, description: str | None = None) -> None:
        self._error_type = error_type
        self._span.set_attribute("error.type", error_type)
        self._span.set_status(Status(StatusCode.ERROR, description))

    def _set_content(self, key: str, value: Any) -> None:
        if key == "output.text":
            message = {
                "role": "assistant",
                "parts": _text_parts(str(value)),
                "finish_reason": self._finish_reason or "stop",
            }
            self._span.set_attribute("gen_ai.output.messages", json.dumps([message]))
            return
        system: list[dict[str, str]] = []
        others: list[dict[str, Any]] = []
        for message in value if isinstance(value, Sequence) else ():
            role, content = _role_and_content(message)
            if role == "system":
                system.extend(_text_parts(content))
            else:
                others.append({"role": role, "parts": _text_parts(content)})
        if system:
            self._span.set_attribute("gen_ai.system_instructions", json.dumps(system))
        self._span.set_attribute("gen_ai.input.messages", json.dumps(others))


class OTelTracer:
    """A pes-agent `Tracer` that emits OpenTelemetry spans.

    ``tracer_provider`` defaults to the global one (whatever the application configured); pass an
    SDK ``TracerProvider`` to send pes-agent's spans somewhere of their own. ``capture_content``
    puts prompt and reply text on model-call spans; leave it off where prompts may hold personal
    data.
    """

    def __init__(
        self, tracer_provider: trace.TracerProvider | None = None, *, capture_content: bool = False
    ) -> None:
        self.provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        self._tracer = self.provider.get_tracer(SCOPE)
        self._capture = capture_content

    @property
    def capture_content(self) -> bool:
        return self._capture

    @contextmanager
    def span(self, kind: str, name: str, attributes: Mapping[str, Any]) -> Iterator[Span]:
        span_kind = SpanKind.CLIENT if kind == "llm" else SpanKind.INTERNAL
        with self._tracer.start_as_current_span(
            name, kind=span_kind, record_exception=False, set_status_on_exception=False
        ) as raw:
            span = OTelSpan(raw, kind, capture_content=self._capture)
            if kind in _OPERATIONS:
                raw.set_attribute("gen_ai.operation.name", _OPERATIONS[kind])
            if kind == "run":
                raw.set_attribute("gen_ai.agent.name", AGENT_NAME)
            for key, value in attributes.items():
                span.set_attribute(key, value)
            try:
                yield span
            except BaseException as exc:
                span.record_error(exc)
                raise


def tracer_for_service(service_name: str, *, capture_content: bool = False) -> OTelTracer:
    """The tracer ``observability.otel: true`` builds.

    When the application has configured OpenTelemetry (an SDK provider is global), spans go there
    and its resource names the service. Otherwise pes-agent makes an SDK provider of its own whose
    resource says ``service.name`` = ``service_name`` (``OTEL_SERVICE_NAME`` still wins), without
    touching the global one; add exporters with ``art.tracer.provider.add_span_processor(...)``.
    """
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return OTelTracer(current, capture_content=capture_content)
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": service_name}
    own = TracerProvider(resource=Resource.create(named))
    return OTelTracer(own, capture_content=capture_content)
