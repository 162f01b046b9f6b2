"""Observability: OpenTelemetry spans per the GenAI conventions, and the `pes_agent` log lines.

The span tests need the ``otel`` extra and are skipped without it; the logging tests and the
missing-extra error run everywhere.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import pytest

from pes_agent import ArtInstance, ToolError, create_art_instance, tool
from pes_agent.errors import ConfigError, ProviderError
from pes_agent.llm.types import Usage
from pes_agent.testing import ScriptedProvider, ScriptedReply

HAVE_OTEL = find_spec("opentelemetry") is not None and find_spec("opentelemetry.sdk") is not None
needs_otel = pytest.mark.skipif(
    not HAVE_OTEL, reason="OpenTelemetry is not installed: `pip install 'pes-agent[otel]'` to run span tests"
)

API_KEY = "sk-test-never-in-a-span-0123456789"
QUERY = "How many people live in Lima?"
MODEL = "gpt-test-model"


@tool
def lookup(city: str) -> dict[str, Any]:
    """Look up the population of a city."""
    if city == "Atlantis":
        raise ToolError("no such city: Atlantis")
    return {"city": city, "population": 9_750_000}


def _plan() -> str:
    step = {
        "id": "step_1",
        "description": "look up Lima",
        "stepType": "tool",
        "requiredTools": ["lookup"],
        "dependencies": [],
    }
    body = {"title": "t", "intent": "i", "plan": "p", "todoList": [step]}
    return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"


def _call(city: str = "Lima") -> str:
    return (
        "```json\n"
        + json.dumps({"toolCalls": [{"toolName": "lookup", "arguments": {"city": city}}]})
        + "\n```"
    )


def _content(text: str) -> str:
    return "```json\n" + json.dumps({"content": text, "nextStepDecision": "complete_item"}) + "\n```"


ANSWER = "<mainContent>Lima has about 9.75 million people.</mainContent>"


def _reply(text: str, prompt: int, completion: int, finish: str = "stop") -> ScriptedReply:
    return ScriptedReply(
        text=text, finish_reason=finish, usage=Usage(prompt_tokens=prompt, completion_tokens=completion)
    )


def _script(city: str = "Lima") -> list[Any]:
    return [
        _reply(_plan(), 300, 40),
        _reply(_call(city), 200, 20),
        _reply(_content("Lima: 9.75M"), 250, 15),
        _reply(ANSWER, 400, 25, finish="length"),
    ]


def _config(**observability: Any) -> dict[str, Any]:
    return {
        "storage": {"type": "memory"},
        "providers": {"main": {"adapter": "openai", "model": MODEL, "apiKey": API_KEY}},
        **({"observability": observability} if observability else {}),
    }


async def _instance(
    replies: list[Any], tracer: Any = None, **observability: Any
) -> tuple[ArtInstance, ScriptedProvider]:
    provider = ScriptedProvider(replies)
    art = await create_art_instance(
        _config(**observability), tools=[lookup], providers={"main": provider}, tracer=tracer
    )
    return art, provider


# -- spans --------------------------------------------------------------------------------------------


@pytest.fixture
def exporter() -> Iterator[Any]:
    if not HAVE_OTEL:
        pytest.skip("OpenTelemetry is not installed: `pip install 'pes-agent[otel]'` to run span tests")
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    yield InMemorySpanExporter()


def _tracer(exporter: Any, *, capture_content: bool = False) -> Any:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from pes_agent.observability.otel import OTelTracer

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OTelTracer(provider, capture_content=capture_content)


def _by_name(spans: Any) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for span in spans:
        found.setdefault(span.name, []).append(span)
    return found


def _all_attribute_text(spans: Any) -> str:
    parts: list[str] = []
    for span in spans:
        parts += [f"{k}={v}" for k, v in span.attributes.items()]
        for event in span.events:
            parts += [f"{k}={v}" for k, v in (event.attributes or {}).items()]
        parts.append(span.status.description or "")
    return "\n".join(parts)


@needs_otel
async def test_a_run_makes_run_phase_model_and_tool_spans_with_genai_attributes(exporter: Any) -> None:
    from opentelemetry.trace import SpanKind, StatusCode

    art, _ = await _instance(_script(), _tracer(exporter))
    response = await art.process(QUERY, thread_id="thread-otel-1")
    assert response.status == "success"
    spans = _by_name(exporter.get_finished_spans())

    assert set(spans) == {
        "invoke_agent pes-agent",
        "planning",
        "execute_step step_1",
        "synthesis",
        f"chat {MODEL}",
        "execute_tool lookup",
    }
    (run,) = spans["invoke_agent pes-agent"]
    assert run.kind is SpanKind.INTERNAL
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "pes-agent"
    assert run.attributes["gen_ai.conversation.id"] == "thread-otel-1"
    assert run.attributes["pes_agent.trace_id"] == response.trace_id
    assert run.attributes["pes_agent.status"] == "success"
    assert run.attributes["gen_ai.usage.input_tokens"] == 300 + 200 + 250 + 400
    assert run.attributes["gen_ai.usage.output_tokens"] == 40 + 20 + 15 + 25
    assert run.attributes["pes_agent.usage.llm_calls"] == 4
    assert run.attributes["pes_agent.usage.tool_calls"] == 1
    assert run.status.status_code is StatusCode.UNSET

    chats = spans[f"chat {MODEL}"]
    assert [c.attributes["pes_agent.phase"] for c in chats] == [
        "planning",
        "execution",
        "execution",
        "synthesis",
    ]
    first, last = chats[0], chats[-1]
    assert first.kind is SpanKind.CLIENT
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.provider.name"] == "scripted"  # the Provider object's name
    assert first.attributes["gen_ai.request.model"] == MODEL
    assert first.attributes["gen_ai.response.model"] == "scripted"
    assert first.attributes["gen_ai.usage.input_tokens"] == 300
    assert first.attributes["gen_ai.usage.output_tokens"] == 40
    assert first.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert last.attributes["gen_ai.response.finish_reasons"] == ("length",)
    assert chats[1].attributes["pes_agent.step_id"] == "step_1"

    (call,) = spans["execute_tool lookup"]
    assert call.kind is SpanKind.INTERNAL
    assert call.attributes["gen_ai.operation.name"] == "execute_tool"
    assert call.attributes["gen_ai.tool.name"] == "lookup"
    assert call.attributes["gen_ai.tool.call.id"] == response.todo_list[0].tool_results[0].call_id
    assert call.attributes["pes_agent.step_id"] == "step_1"
    assert call.attributes["pes_agent.status"] == "success"

    (step,) = spans["execute_step step_1"]
    assert step.attributes["pes_agent.phase"] == "execution"
    assert step.attributes["pes_agent.step_id"] == "step_1"


@needs_otel
async def test_model_and_tool_spans_nest_in_phase_spans_inside_the_run_span(exporter: Any) -> None:
    art, _ = await _instance(_script(), _tracer(exporter))
    await art.process(QUERY)
    finished = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in finished}

    def parent(span: Any) -> str | None:
        return by_id[span.parent.span_id].name if span.parent is not None else None

    assert len({s.context.trace_id for s in finished}) == 1
    tree = sorted((s.name, parent(s)) for s in finished)
    assert tree == sorted(
        [
            ("invoke_agent pes-agent", None),
            ("planning", "invoke_agent pes-agent"),
            ("execute_step step_1", "invoke_agent pes-agent"),
            ("synthesis", "invoke_agent pes-agent"),
            (f"chat {MODEL}", "planning"),
            (f"chat {MODEL}", "execute_step step_1"),
            (f"chat {MODEL}", "execute_step step_1"),
            ("execute_tool lookup", "execute_step step_1"),
            (f"chat {MODEL}", "synthesis"),
        ]
    )


@needs_otel
async def test_spans_carry_no_prompt_text_and_never_the_api_key(exporter: Any) -> None:
    art, provider = await _instance(_script(), _tracer(exporter))
    await art.process(QUERY)
    finished = exporter.get_finished_spans()
    text = _all_attribute_text(finished)
    assert QUERY not in text
    assert "Lima has about" not in text  # reply text
    for call in provider.calls:
        for message in call.messages:
            assert message["content"] not in text
    assert not [k for s in finished for k in s.attributes if "messages" in k or "instructions" in k]
    assert API_KEY not in text
    assert API_KEY not in json.dumps([json.loads(s.to_json()) for s in finished])


@needs_otel
async def test_capture_content_puts_prompt_and_reply_on_model_spans_only_when_enabled(exporter: Any) -> None:
    art, provider = await _instance(_script(), _tracer(exporter, capture_content=True))
    await art.process(QUERY)
    chats = _by_name(exporter.get_finished_spans())[f"chat {MODEL}"]
    planning = chats[0]
    inputs = json.loads(planning.attributes["gen_ai.input.messages"])
    assert any(QUERY in part["content"] for m in inputs for part in m["parts"])
    sent_system = [m["content"] for m in provider.calls[0].messages if m["role"] == "system"]
    if sent_system:
        assert [
            p["content"] for p in json.loads(planning.attributes["gen_ai.system_instructions"])
        ] == sent_system
    (output,) = json.loads(chats[-1].attributes["gen_ai.output.messages"])
    assert output["role"] == "assistant"
    assert output["parts"] == [{"type": "text", "content": ANSWER}]
    assert output["finish_reason"] == "length"
    assert API_KEY not in _all_attribute_text(exporter.get_finished_spans())


@needs_otel
async def test_failures_mark_spans_as_errors_with_the_error_type(exporter: Any) -> None:
    from opentelemetry.trace import StatusCode

    failing = [
        *_script("Atlantis")[:2],
        _reply(_call("Lima"), 10, 1),
        ProviderError("upstream 503", provider="main"),
    ]
    art, _ = await _instance(failing, _tracer(exporter))
    response = await art.process(QUERY)
    assert response.status == "error"
    spans = _by_name(exporter.get_finished_spans())

    atlantis, lima = spans["execute_tool lookup"]
    assert atlantis.status.status_code is StatusCode.ERROR
    assert atlantis.attributes["error.type"] == "tool_error"
    assert lima.status.status_code is StatusCode.UNSET

    failed_chat = spans[f"chat {MODEL}"][-1]
    assert failed_chat.status.status_code is StatusCode.ERROR
    assert failed_chat.attributes["error.type"] == "ProviderError"
    assert [e.name for e in failed_chat.events] == ["exception"]

    (run,) = spans["invoke_agent pes-agent"]
    assert run.status.status_code is StatusCode.ERROR
    assert response.error is not None
    assert run.attributes["error.type"] == response.error.code


@needs_otel
async def test_config_switch_builds_an_otel_tracer_with_the_service_name(
    exporter: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from pes_agent.observability.otel import OTelTracer

    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    art, _ = await _instance(_script(), None, otel=True, serviceName="svc-under-test")
    assert isinstance(art.tracer, OTelTracer)
    assert not art.tracer.capture_content
    if not isinstance(trace.get_tracer_provider(), TracerProvider):  # pes-agent made its own provider
        assert art.tracer.provider.resource.attributes["service.name"] == "svc-under-test"
    art.tracer.provider.add_span_processor(SimpleSpanProcessor(exporter))
    await art.process(QUERY)
    assert "invoke_agent pes-agent" in {s.name for s in exporter.get_finished_spans()}


async def test_otel_switch_without_the_extra_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # The import fails as if the extra were missing.
    monkeypatch.setitem(sys.modules, "pes_agent.observability.otel", None)
    with pytest.raises(ConfigError) as info:
        await _instance([], None, otel=True)
    assert "pip install 'pes-agent[otel]'" in str(info.value)
    assert "observability.otel" in str(info.value)


async def test_without_the_switch_no_otel_tracer_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pes_agent.observability.otel", None)
    art, _ = await _instance(_script())
    assert (await art.process(QUERY)).status == "success"


# -- logging ------------------------------------------------------------------------------------------


def _pes_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "pes_agent"]


async def test_logging_gives_run_lines_at_info_and_call_lines_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="pes_agent")
    art, _ = await _instance(_script())
    response = await art.process(QUERY, thread_id="thread-log-1")
    records = _pes_records(caplog)

    info = [r for r in records if r.levelno == logging.INFO]
    assert [r.getMessage().split(" thread_id=")[0] for r in info] == ["run started", "run finished"]
    end = info[-1].pes_agent  # type: ignore[attr-defined]
    assert end["thread_id"] == "thread-log-1"
    assert end["trace_id"] == response.trace_id
    assert end["status"] == "success"
    assert end["usage.llm_calls"] == 4
    assert end["usage.prompt_tokens"] == 1150
    assert end["usage.completion_tokens"] == 100
    assert "status=success" in info[-1].getMessage()

    debug = [r for r in records if r.levelno == logging.DEBUG]
    events = [r.pes_agent["event"] for r in debug]  # type: ignore[attr-defined]
    assert events.count("model call") == 4
    assert events.count("tool call") == 1
    tool_line = next(r for r in debug if r.pes_agent["event"] == "tool call")  # type: ignore[attr-defined]
    assert "tool_name=lookup" in tool_line.getMessage()
    assert "status=success" in tool_line.getMessage()

    text = "\n".join(r.getMessage() + repr(getattr(r, "pes_agent", None)) for r in records)
    assert QUERY not in text
    assert "Lima has about" not in text
    assert API_KEY not in text


async def test_info_logging_has_no_per_call_lines(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="pes_agent")
    art, _ = await _instance(_script())
    await art.process(QUERY)
    records = _pes_records(caplog)
    assert [r.pes_agent["event"] for r in records] == ["run started", "run finished"]  # type: ignore[attr-defined]


async def test_a_failed_run_logs_its_error_status(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="pes_agent")
    art, _ = await _instance([ProviderError("upstream 503", provider="main")])
    response = await art.process(QUERY)
    assert response.status == "error"
    (end,) = [r for r in _pes_records(caplog) if r.pes_agent["event"] == "run finished"]  # type: ignore[attr-defined]
    assert "status=error" in end.getMessage()
    assert "error_code=provider_error" in end.getMessage()


async def test_model_spans_carry_cached_and_thinking_tokens_when_reported(exporter: Any) -> None:
    cached = ScriptedReply(
        text=_plan(),
        usage=Usage(prompt_tokens=300, completion_tokens=40, cached_prompt_tokens=250, thinking_tokens=12),
    )
    art, _ = await _instance([cached, *_script()[1:]], tracer=_tracer(exporter))
    async with art:
        response = await art.process("How many people live in Lima?", thread_id="t-cache")
    assert response.status == "success", response.error
    models = [s for s in exporter.get_finished_spans() if s.attributes.get("gen_ai.operation.name") == "chat"]
    first, *rest = sorted(models, key=lambda s: s.start_time)
    assert (
        first.attributes["pes_agent.usage.cached_prompt_tokens"],
        first.attributes["pes_agent.usage.thinking_tokens"],
    ) == (250, 12)
    assert all("pes_agent.usage.cached_prompt_tokens" not in s.attributes for s in rest), "only when reported"
    phase = response.usage.to_dict()["phases"]["planning"]
    assert (phase["cached_prompt_tokens"], phase["thinking_tokens"]) == (250, 12)
