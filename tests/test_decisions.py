"""A person's decision is a `Decision`: a wrong one is refused naming the field, before anything is
applied, and the same pause can then be decided properly (issue 27)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pes_agent import (
    ArtInstance,
    Decision,
    InvalidDecisionError,
    InvalidInputError,
    create_art_instance,
    tool,
)
from pes_agent.testing import ScriptedProvider

RAN: list[tuple[str, dict[str, Any]]] = []


@tool(requires_approval=True, side_effects=True)
def schedule(title: str, count: int) -> dict[str, Any]:
    """Schedule `count` reminders titled `title`."""
    RAN.append(("schedule", {"title": title, "count": count}))
    return {"scheduled": count}


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    RAN.append(("multiply", {"a": a, "b": b}))
    return a * b


def _plan(tool_name: str) -> str:
    body = {
        "title": "t",
        "intent": "i",
        "plan": "p",
        "todoList": [
            {"id": "step_1", "description": "do it", "stepType": "tool", "requiredTools": [tool_name]}
        ],
    }
    return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"


def _call(tool_name: str, arguments: dict[str, Any]) -> str:
    return (
        "```json\n" + json.dumps({"toolCalls": [{"toolName": tool_name, "arguments": arguments}]}) + "\n```"
    )


def _done(text: str) -> str:
    return "```json\n" + json.dumps({"content": text}) + "\n```"


FINISH = [_done("done"), "<mainContent>ok</mainContent>"]


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


async def _paused(replies: list[Any]) -> tuple[ArtInstance, ScriptedProvider, str]:
    provider = ScriptedProvider(replies)
    art = await create_art_instance(
        {"storage": {"type": "memory"}}, tools=[schedule, multiply], providers={"s": provider}
    )
    first = await art.process("Schedule 2 reminders titled Standup", thread_id="t")
    assert first.status in ("suspended", "needs_input"), first
    assert first.suspension is not None
    return art, provider, str(first.suspension["id"])


async def _snapshot(art: ArtInstance) -> tuple[dict[str, Any], int]:
    state, version = await art.store.load("t")
    assert state is not None
    return state.model_dump(mode="json"), version


APPROVAL = [_plan("schedule"), _call("schedule", {"title": "Standup", "count": 2})]


@pytest.mark.parametrize(
    ("decision", "field", "words"),
    [
        ({"approved": "false"}, "approved", "must be true or false (a JSON boolean), not a string"),
        ({"approved": 1}, "approved", "not a number"),
        ({"approved": True, "modified_args": "oops"}, "modified_args", "must be an object of argument names"),
        ({"approved": True, "modified_args": ["count", 3]}, "modified_args", "not a list"),
        ({}, "approved", "needs `approved`"),
        ({"reason": "fine"}, "approved", "needs `approved`"),
        ({"aproved": True}, "aproved", "'aproved', which is not a field of a decision"),
        ({"approved": True, "reason": 5}, "reason", "must be text"),
        ({"approved": False, "modified_args": {"count": 3}}, "modified_args", "only applies to an approval"),
        ({"values": {"count": 3}}, "values", "waits for approval of `schedule`"),
        ({"approved": True, "modified_args": {"count": "many"}}, "modified_args.count", "is refused"),
        ({"approved": True, "modified_args": {"title": None}}, "modified_args.title", ""),
    ],
    ids=[
        "string-approved",
        "number-approved",
        "string-modified-args",
        "list-modified-args",
        "empty",
        "reason-only",
        "unknown-key",
        "number-reason",
        "modified-args-with-rejection",
        "values-for-an-approval",
        "schema-refuses-modified-value",
        "modified-args-clear-a-required-field",
    ],
)
async def test_a_bad_decision_is_refused_and_the_pause_stands_until_a_proper_one(
    decision: dict[str, Any], field: str, words: str
) -> None:
    art, provider, suspension_id = await _paused([*APPROVAL, *FINISH])
    before = await _snapshot(art)

    with pytest.raises(InvalidDecisionError, match="nothing was decided") as refused:
        await art.resume("t", suspension_id, decision)

    assert refused.value.field == field and words in str(refused.value)
    assert isinstance(refused.value, InvalidInputError)  # a service answers it as it answers bad input
    assert await _snapshot(art) == before  # suspension, step and thread as they were, not even re-saved
    assert RAN == [] and len(provider.calls) == len(APPROVAL)
    final = await art.resume("t", suspension_id, {"approved": True})  # the same suspension, decided properly
    assert final.status == "success"
    assert RAN == [("schedule", {"title": "Standup", "count": 2})]  # once


async def test_a_string_false_is_never_read_as_an_approval_and_false_rejects() -> None:
    art, _, suspension_id = await _paused([*APPROVAL, *FINISH])
    with pytest.raises(InvalidDecisionError):
        await art.resume("t", suspension_id, {"approved": "false"})
    final = await art.resume("t", suspension_id, Decision.reject("not today"))
    assert final.status == "success" and RAN == []
    assert final.todo_list[0].tool_results[0].decision == {"approved": False, "reason": "not today"}


async def test_modified_args_go_through_the_gate_as_a_models_call_would() -> None:
    art, _, suspension_id = await _paused([*APPROVAL, *FINISH])
    final = await art.resume("t", suspension_id, Decision.approve(modified_args={"count": "3"}))
    assert final.status == "success"
    assert RAN == [("schedule", {"title": "Standup", "count": 3})]  # "3" coerced, as for a model
    events = await art.get_observations("t", types=["ARG_REPAIR"])
    assert [(e.data["field"], e.data["to"]) for e in events] == [("count", 3)]


async def test_check_decision_says_what_resume_would_without_applying_it() -> None:
    art, _, suspension_id = await _paused([*APPROVAL, *FINISH])
    before = await _snapshot(art)
    assert await art.check_decision("t", suspension_id, {"approved": True}) == Decision(approved=True)
    with pytest.raises(InvalidDecisionError, match="modified_args.count"):
        await art.check_decision("t", suspension_id, {"approved": True, "modified_args": {"count": "many"}})
    assert await _snapshot(art) == before and RAN == []


CLARIFY = [_plan("multiply"), _call("multiply", {}), '{"a": null, "b": null}']
"""multiply called without its arguments, arg-fill cannot supply them: the user is asked."""


async def test_clarification_values_are_checked_by_the_gate_too() -> None:
    art, provider, suspension_id = await _paused([*CLARIFY, *FINISH])
    before = await _snapshot(art)
    for decision, field in [
        ({"values": {"a": "four", "b": 5}}, "values.a"),
        ({"values": "4 and 5"}, "values"),
        ({"approved": True}, "approved"),
    ]:
        with pytest.raises(InvalidDecisionError) as refused:
            await art.resume("t", suspension_id, decision)
        assert refused.value.field == field
    assert await _snapshot(art) == before and RAN == [] and len(provider.calls) == len(CLARIFY)
    final = await art.resume("t", suspension_id, Decision.answer({"a": 4, "b": "5"}))
    assert final.status == "success" and RAN == [("multiply", {"a": 4, "b": 5})]


def test_a_decision_is_checked_when_built_not_only_when_parsed() -> None:
    with pytest.raises(InvalidDecisionError, match="`decision.approved` must be true or false"):
        Decision(approved="yes")  # type: ignore[arg-type]
    decision = Decision.from_mapping({"approved": True, "modifiedArgs": {"count": 3}, "reason": None})
    assert decision == Decision.approve(modified_args={"count": 3})
    assert decision.to_dict() == {"approved": True, "modified_args": {"count": 3}}
    with pytest.raises(TypeError):
        decision.modified_args["count"] = 4  # type: ignore[index]  # frozen all the way down
