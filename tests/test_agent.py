"""The agent's behaviour through the public API: limits, statuses, errors, history, events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pes_agent import (
    ArtInstance,
    EventType,
    InvalidInputError,
    ThreadBusyError,
    ThreadConfig,
    ToolError,
    create_art_instance,
    tool,
)
from pes_agent.errors import ProviderError
from pes_agent.testing import ScriptedProvider, ScriptedReply

CALLS: list[tuple[str, dict[str, Any]]] = []


@tool
def lookup(city: str) -> dict[str, Any]:
    """Look up the population of a city."""
    CALLS.append(("lookup", {"city": city}))
    if city == "Atlantis":
        raise ToolError("no such city: Atlantis")
    return {"city": city, "population": 9_750_000}


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    CALLS.clear()


def plan(*steps: dict[str, Any]) -> str:
    body = {"title": "t", "intent": "i", "plan": "p", "todoList": list(steps)}
    return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"


def tool_step(step_id: str = "step_1", deps: list[str] | None = None) -> dict[str, Any]:
    return {
        "id": step_id,
        "description": "look up Lima",
        "stepType": "tool",
        "requiredTools": ["lookup"],
        "dependencies": deps or [],
    }


def call(city: str = "Lima") -> str:
    return (
        "```json\n"
        + json.dumps({"toolCalls": [{"toolName": "lookup", "arguments": {"city": city}}]})
        + "\n```"
    )


def content(text: str) -> str:
    return "```json\n" + json.dumps({"content": text, "nextStepDecision": "complete_item"}) + "\n```"


ANSWER = "<mainContent>Lima has about 9.75 million people.</mainContent>"


async def make(
    replies: list[Any], config: dict[str, Any] | None = None
) -> tuple[ArtInstance, ScriptedProvider]:
    provider = ScriptedProvider(replies)
    cfg = {"storage": {"type": "memory"}, **(config or {})}
    art = await create_art_instance(cfg, tools=[lookup], providers={"scripted": provider})
    return art, provider


async def test_happy_path_runs_tool_and_answers() -> None:
    art, provider = await make([plan(tool_step()), call(), content("Lima: 9.75M"), ANSWER])
    response = await art.process("How many people live in Lima?")
    assert response.status == "success"
    assert response.response == "Lima has about 9.75 million people."
    assert CALLS == [("lookup", {"city": "Lima"})]
    assert [c.phase for c in provider.calls] == ["planning", "execution", "execution", "synthesis"]
    assert response.usage.llm_calls == 4 and response.usage.tool_calls == 1
    assert response.usage.phases["execution"].llm_calls == 2
    provider.assert_complete()


async def test_instance_level_taef_retries_zero_is_honoured() -> None:
    """The original ignores instance-level execution limits; we don't."""
    art, provider = await make(
        [plan(tool_step()), "I think I know the answer already.", ANSWER],
        {"execution": {"taefMaxRetries": 0}},
    )
    response = await art.process("How many people live in Lima?")
    assert [c.phase for c in provider.calls] == ["planning", "execution", "synthesis"]
    assert response.status == "partial"
    item = response.todo_list[0]
    assert item.status.value == "failed" and item.validation_status == "failed"
    assert "lookup" in (item.error or "")
    assert CALLS == []


@pytest.mark.parametrize(
    ("instance", "thread", "call_level", "enforcements"),
    [(0, None, None, 0), (0, 1, None, 1), (0, 1, 2, 2), (2, None, 1, 1), (None, None, None, 2)],
)
async def test_limits_resolve_call_then_thread_then_instance(
    instance: int | None, thread: int | None, call_level: int | None, enforcements: int
) -> None:
    prose = "Let me think about it."
    config = {"execution": {"taefMaxRetries": instance}} if instance is not None else {}
    art, provider = await make([plan(tool_step()), *[prose] * (enforcements + 1), ANSWER], config)
    if thread is not None:
        await art.set_thread_config("t", {"execution": {"taefMaxRetries": thread}})
    options = {"execution": {"taefMaxRetries": call_level}} if call_level is not None else None
    response = await art.process("Population of Lima?", thread_id="t", options=options)
    phases = [c.phase for c in provider.calls]
    assert phases.count("enforcement") == enforcements
    assert response.status == "partial"
    provider.assert_complete()


async def test_max_iterations_from_instance_config() -> None:
    art, provider = await make(
        [plan(tool_step()), call("Atlantis"), call("Atlantis"), ANSWER], {"execution": {"maxIterations": 2}}
    )
    response = await art.process("Population of Atlantis?")
    assert len([c for c in provider.calls if c.step_id == "step_1"]) == 2
    assert response.todo_list[0].status.value == "failed"
    assert response.status == "partial"


async def test_tool_error_goes_back_to_the_model_as_an_error() -> None:
    art, provider = await make(
        [plan(tool_step()), call("Atlantis"), call("Lima"), content("Lima: 9.75M"), ANSWER]
    )
    response = await art.process("Population of Atlantis, or Lima if that fails?")
    assert response.status == "success"
    turn = provider.calls[2].text
    assert "no such city: Atlantis" in turn and "failed" in turn
    assert CALLS == [("lookup", {"city": "Atlantis"}), ("lookup", {"city": "Lima"})]


async def test_invalid_arguments_never_run() -> None:
    bad = (
        "```json\n" + json.dumps({"toolCalls": [{"toolName": "lookup", "arguments": {"town": 3}}]}) + "\n```"
    )
    art, provider = await make([plan(tool_step()), bad, call(), content("ok"), ANSWER])
    response = await art.process("Population of Lima?")
    assert CALLS == [("lookup", {"city": "Lima"})]  # `town` stripped, `city` asked for, never run without it
    assert provider.calls[2].phase == "arg_fill" and "city" in provider.calls[2].text
    assert response.status == "success"


async def test_invalid_arguments_never_run_without_the_gate() -> None:
    bad = (
        "```json\n" + json.dumps({"toolCalls": [{"toolName": "lookup", "arguments": {"town": 3}}]}) + "\n```"
    )
    art, provider = await make(
        [plan(tool_step()), bad, call(), content("ok"), ANSWER], {"gate": {"enabled": False}}
    )
    response = await art.process("Population of Lima?")
    assert CALLS == [("lookup", {"city": "Lima"})]
    assert "`city` is required" in provider.calls[2].text
    assert response.status == "success"


async def test_unparseable_plan_is_an_error_not_an_empty_success() -> None:
    art, provider = await make(["I would search the web and then summarise."])
    response = await art.process("Population of Lima?")
    assert response.status == "error"
    assert response.error is not None and response.error.phase == "planning"
    assert response.error.code == "unparseable_plan"
    assert len(provider.calls) == 1
    events = await art.get_observations(response.thread_id, types=[EventType.ERROR])
    assert [e.data["phase"] for e in events] == ["planning"]


@pytest.mark.parametrize("failing_call", [0, 1, 3])
async def test_provider_failure_is_an_error_status_with_its_phase(failing_call: int) -> None:
    replies: list[Any] = [plan(tool_step()), call(), content("ok"), ANSWER]
    replies[failing_call] = ProviderError("upstream 503", status=503)
    art, _ = await make(replies[: failing_call + 1])
    response = await art.process("Population of Lima?")
    assert response.status == "error"
    assert response.error is not None
    assert response.error.phase == {0: "planning", 1: "execution", 3: "synthesis"}[failing_call]
    assert "upstream 503" in response.error.message


async def test_items_not_reached_make_the_run_partial() -> None:
    steps = [tool_step("step_1"), {**tool_step("step_2", ["step_1"]), "description": "again"}]
    art, _ = await make([plan(*steps), "no tool for me", "still no", "nope", ANSWER])
    response = await art.process("Population of Lima twice?")
    statuses = {i.id: i.status.value for i in response.todo_list}
    assert statuses == {"step_1": "failed", "step_2": "pending"}
    assert response.status == "partial"


async def test_synthesis_lists_failed_and_unreached_steps() -> None:
    steps = [tool_step("step_1"), {**tool_step("step_2", ["step_1"]), "description": "again"}]
    art, provider = await make([plan(*steps), "no", "no", "no", ANSWER])
    await art.process("Population of Lima twice?")
    synthesis = provider.calls[-1]
    assert synthesis.phase == "synthesis"
    assert "Failed steps" in synthesis.text and "Steps not reached" in synthesis.text


async def test_history_holds_query_and_answer_and_reaches_the_follow_up() -> None:
    art, provider = await make([plan(tool_step()), call(), content("ok"), ANSWER, plan(), ANSWER])
    await art.process("Population of Lima?", thread_id="t1")
    await art.process("And in words?", thread_id="t1")
    messages = await art.store.messages("t1")
    assert [(m.role, m.content) for m in messages] == [
        ("user", "Population of Lima?"),
        ("assistant", "Lima has about 9.75 million people."),
        ("user", "And in words?"),
        ("assistant", "Lima has about 9.75 million people."),
    ]
    follow_up = provider.calls[4]
    assert follow_up.phase == "refinement" and "Population of Lima?" in follow_up.text


async def test_subscriptions_filter_by_thread_and_type() -> None:
    art, _ = await make([plan(tool_step()), call(), content("ok"), ANSWER] * 2)
    seen_a: list[Any] = []
    seen_tools: list[Any] = []
    art.subscribe(seen_a.append, thread_id="a")
    art.subscribe(seen_tools.append, types=[EventType.TOOL_EXECUTION])
    await art.process("Population of Lima?", thread_id="a")
    await art.process("Population of Lima?", thread_id="b")
    assert seen_a and {e.thread_id for e in seen_a} == {"a"}
    assert {e.type for e in seen_tools} == {EventType.TOOL_EXECUTION}
    assert {e.thread_id for e in seen_tools} == {"a", "b"}
    stored = await art.get_observations("a", types=["ITEM_STATUS"])
    assert stored and {e.type for e in stored} == {EventType.ITEM_STATUS}


async def test_state_is_saved_after_every_step() -> None:
    """Each state change reaches the store before the run moves on (crash-safe by construction)."""
    from pes_agent.state.memory import MemoryStore

    saved: list[tuple[str, int]] = []

    class RecordingStore(MemoryStore):
        def note(self, state: Any) -> None:
            item = state.todo_list[0] if state.todo_list else None
            saved.append((item.status.value, len(item.tool_results)) if item else ("no-plan", 0))

        async def save(self, thread_id: str, state: Any, expected_version: int) -> int:
            self.note(state)
            return await super().save(thread_id, state, expected_version)

        async def finish_calls_and_save(
            self, thread_id: str, state: Any, expected_version: int, finished: Any
        ) -> int:
            self.note(state)
            return await super().finish_calls_and_save(thread_id, state, expected_version, finished)

    provider = ScriptedProvider([plan(tool_step()), call(), content("ok"), ANSWER])
    art = await create_art_instance(
        {"storage": {"type": "memory"}},
        tools=[lookup],
        providers={"scripted": provider},
        store=RecordingStore(),
    )
    await art.process("Population of Lima?", thread_id="s")
    # The lease claim, the plan (before any item runs), the tool result, the step's end, and the run's
    # end with the lease given back. A step's start rides on its first durable change.
    assert saved == [("no-plan", 0), ("pending", 0), ("in_progress", 1), ("completed", 1), ("completed", 1)]
    state = await art.get_thread_state("s")
    assert state is not None and state.todo_list[0].tool_results[0].output["population"] == 9_750_000
    assert state.lease is None


async def test_concurrent_runs_on_one_thread_are_refused() -> None:
    gate = asyncio.Event()

    async def slow_plan(_: Any) -> str:
        await gate.wait()
        return plan()

    art, _ = await make([slow_plan, ANSWER])
    first = asyncio.ensure_future(art.process("q1", thread_id="busy"))
    await asyncio.sleep(0)
    with pytest.raises(ThreadBusyError, match="busy"):
        await art.process("q2", thread_id="busy")
    gate.set()
    assert (await first).status == "success"


async def test_empty_query_is_refused() -> None:
    art, _ = await make([])
    with pytest.raises(InvalidInputError):
        await art.process("   ")


async def test_disabled_tool_is_not_offered_to_the_planner() -> None:
    art, provider = await make([plan(), ANSWER])
    await art.disable_tools_for_thread("t", ["lookup"])
    await art.process("Population of Lima?", thread_id="t")
    assert "lookup" not in provider.calls[0].text
    cfg = await art.get_thread_config("t")
    assert isinstance(cfg, ThreadConfig) and cfg.enabled_tools == []


async def test_thinking_becomes_thoughts_not_answer() -> None:
    art, _ = await make([plan(), ScriptedReply(text=ANSWER, thinking="counting people")])
    response = await art.process("Population of Lima?", thread_id="th")
    assert "counting" not in response.response
    thoughts = await art.get_observations("th", types=[EventType.THOUGHTS])
    assert [e.data["text"] for e in thoughts] == ["counting people"]


async def test_process_stream_yields_events_then_the_response() -> None:
    art, _ = await make([plan(tool_step()), call(), content("ok"), ANSWER])
    items = [x async for x in art.process_stream("Population of Lima?", thread_id="st")]
    *events, final = items
    assert final.status == "success"
    assert any(e.type is EventType.TOKEN for e in events)  # the iterator listens, so tokens stream
    types = [e.type for e in events if e.type is not EventType.TOKEN]
    assert types[0] == EventType.PLAN and types[-1] == EventType.FINAL_RESPONSE
    assert EventType.TOOL_EXECUTION in types


async def test_close_step_on_tool_success_skips_the_closing_turn() -> None:
    art, provider = await make(
        [plan(tool_step()), call(), ANSWER], {"execution": {"closeStepOnToolSuccess": True}}
    )
    response = await art.process("How many people live in Lima?")
    assert [c.phase for c in provider.calls] == ["planning", "execution", "synthesis"]
    assert response.status == "success"
    assert "9750000" in str(response.todo_list[0].result)
    provider.assert_complete()


async def test_close_step_on_tool_success_waits_when_a_call_failed() -> None:
    art, provider = await make(
        [plan(tool_step()), call("Atlantis"), call("Lima"), ANSWER],
        {"execution": {"closeStepOnToolSuccess": True}},
    )
    response = await art.process("Population of Atlantis or Lima?")
    assert [c.phase for c in provider.calls] == ["planning", "execution", "execution", "synthesis"]
    assert response.status == "success"


async def test_execution_template_override_from_config_replaces_the_built_in() -> None:
    """Declared but never read in the original; here the config's execution prompt is the one sent."""
    custom = "DO STEP $step_id: $description using $allowed_tools.\n$schemas\n$previous"
    art, provider = await make(
        [plan(tool_step()), call(), content("ok"), ANSWER], {"prompts": {"execution": custom}}
    )
    await art.process("Population of Lima?")
    step_prompt = provider.calls[1].messages[1]["content"]
    assert step_prompt.startswith("DO STEP step_1: look up Lima using lookup.")
    assert "Take argument values" not in step_prompt


async def test_template_override_with_unknown_variable_fails_at_load() -> None:
    from pes_agent import ConfigError

    with pytest.raises(ConfigError, match=r"\$nonsense"):
        await make([], {"prompts": {"planning": "Plan $query with $nonsense"}})
