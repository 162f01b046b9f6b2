"""Human in the loop: S9 replayed (blocking tool suspends, approval resumes), rejection, and
tools that require approval before they run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pes_agent import EventType, ThreadSuspendedError, UnknownSuspensionError, create_art_instance, tool
from pes_agent.testing import ScriptedProvider
from tests.replay import data_matches, new_messages, start_replay


async def test_s9_suspend_then_approve() -> None:
    replay = await start_replay("S9")
    exp = replay.expected
    runs: dict[str, Any] = {}
    for entry in exp["runs"]:
        runs.setdefault(entry["kind"], entry)  # the first of each kind
    art, provider = replay.art, replay.provider

    first = await art.process(replay.query, thread_id=replay.thread_id)
    want = runs["process"]
    assert first.status == "suspended"
    assert first.suspension is not None
    susp = first.suspension
    assert isinstance(susp["id"], str) and susp["id"]
    assert (susp["kind"], susp["tool"], susp["call_id"], susp["step_id"]) == (
        want["suspension"]["kind"],
        want["suspension"]["tool"],
        want["suspension"]["call_id"],
        want["suspension"]["stepId"],
    )
    assert want["suspension"]["messageContains"] in susp["message"]
    statuses = {i.id: i.status.value for i in first.todo_list}
    assert statuses["step_1"] == "completed" and statuses["step_2"] in ("in_progress", "waiting")
    assert [c.phase for c in provider.calls].count("synthesis") == 0
    history = await art.store.messages(replay.thread_id)
    assert [m.content for m in history if m.role == "user"] == [replay.query]

    pending = await art.check_for_suspended_state(replay.thread_id)
    assert pending is not None and pending["suspension_id"] == susp["id"]
    assert pending["tool"] == "confirmPublish" and pending["step_id"] == "step_2"
    assert pending["arguments"] == runs["check_for_suspended_state"]["returns"]["arguments"]

    calls_before = len(provider.calls)
    with pytest.raises(ThreadSuspendedError, match=susp["id"]):
        await art.process("Actually, do something else", thread_id=replay.thread_id)
    assert len(provider.calls) == calls_before
    assert (await art.check_for_suspended_state(replay.thread_id)) is not None

    with pytest.raises(UnknownSuspensionError):
        await art.resume(replay.thread_id, "susp_wrong", {"approved": True})

    decision = replay.scenario["config"]["resume"]["decision"]
    final = await art.resume(replay.thread_id, susp["id"], decision)
    assert final.status == exp["status"] == "success"
    assert final.response.strip() == exp["answer"]
    resumed_calls = provider.calls[calls_before:]
    assert [(c.phase, c.step_id) for c in resumed_calls] == [("execution", "step_2"), ("synthesis", None)]
    assert replay.log.calls.count(("confirmPublish", pending["arguments"])) == 1
    assert [name for name, _ in replay.log.calls] == ["webSearch", "confirmPublish"]
    assert await art.check_for_suspended_state(replay.thread_id) is None
    assert {i.id: i.status.value for i in final.todo_list} == {"step_1": "completed", "step_2": "completed"}
    assert "The user approved the post; it has been published." in str(final.todo_list[1].result)

    all_calls = provider.calls
    assert "Looks good, publish it." in "\n".join(m["content"] for m in new_messages(all_calls, 4))
    assert replay.query in all_calls[5].text
    events = await art.get_observations(replay.thread_id)
    for want_event in exp["events"]:
        assert any(
            e.type == EventType(want_event["type"]) and data_matches(e.data, want_event["data"])
            for e in events
        ), want_event
    provider.assert_complete()


PUBLISHED: list[dict[str, Any]] = []


@tool(requires_approval=True, side_effects=True)
def publish(title: str) -> dict[str, Any]:
    """Publish a post with the given title."""
    PUBLISHED.append({"title": title})
    return {"published": title}


def _plan() -> str:
    body = {
        "title": "t",
        "intent": "i",
        "plan": "p",
        "todoList": [
            {"id": "step_1", "description": "publish", "stepType": "tool", "requiredTools": ["publish"]}
        ],
    }
    return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"


def _call(title: str) -> str:
    return (
        "```json\n"
        + json.dumps({"toolCalls": [{"toolName": "publish", "arguments": {"title": title}}]})
        + "\n```"
    )


def _done(text: str) -> str:
    return "```json\n" + json.dumps({"content": text}) + "\n```"


@pytest.fixture(autouse=True)
def _clear() -> None:
    PUBLISHED.clear()


async def _approval_run(replies: list[str]) -> tuple[Any, ScriptedProvider, Any]:
    provider = ScriptedProvider(replies)
    art = await create_art_instance(
        {"storage": {"type": "memory"}}, tools=[publish], providers={"s": provider}
    )
    first = await art.process("Publish 'Hello'", thread_id="p")
    return art, provider, first


async def test_requires_approval_pauses_before_running_and_runs_once_approved() -> None:
    art, _provider, first = await _approval_run(
        [_plan(), _call("Hello"), _done("published"), "<mainContent>ok</mainContent>"]
    )
    assert first.status == "suspended" and PUBLISHED == []
    final = await art.resume(
        "p", first.suspension["id"], {"approved": True, "modified_args": {"title": "Hello!"}}
    )
    assert PUBLISHED == [{"title": "Hello!"}]
    assert final.status == "success"


async def test_rejection_never_runs_the_tool_and_tells_the_model_why() -> None:
    art, provider, first = await _approval_run(
        [
            _plan(),
            _call("Hello"),
            _call("Hello"),
            _done("not published, the user said no"),
            "<mainContent>no</mainContent>",
        ]
    )
    final = await art.resume("p", first.suspension["id"], {"approved": False, "reason": "wrong title"})
    assert PUBLISHED == []
    after_resume = provider.calls[2]
    assert "rejected" in after_resume.text and "wrong title" in after_resume.text
    # the model tried again: answered as already decided, not run, not asked again
    assert "already rejected" in provider.calls[3].text
    assert final.status == "success"
    item = final.todo_list[0]
    assert [r.status for r in item.tool_results] == ["error", "success"]
    assert item.tool_results[1].output["already_done"] is True


@tool(execution_mode="blocking")
def post_note(text: str) -> dict[str, Any]:
    """Post a note (needs approval)."""
    PUBLISHED.append({"note": text})
    return {"draft": text}


async def test_blocking_tool_returning_plain_data_pauses_and_runs_once() -> None:
    body = {
        "title": "t",
        "intent": "i",
        "plan": "p",
        "todoList": [
            {"id": "step_1", "description": "post", "stepType": "tool", "requiredTools": ["post_note"]}
        ],
    }
    plan_text = f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"
    call = (
        "```json\n"
        + json.dumps({"toolCalls": [{"toolName": "post_note", "arguments": {"text": "hi"}}]})
        + "\n```"
    )
    provider = ScriptedProvider([plan_text, call, _done("posted"), "<mainContent>ok</mainContent>"])
    art = await create_art_instance(
        {"storage": {"type": "memory"}}, tools=[post_note], providers={"s": provider}
    )
    first = await art.process("Post 'hi'", thread_id="b")
    assert first.status == "suspended" and first.suspension["tool"] == "post_note"
    final = await art.resume("b", first.suspension["id"], {"approved": True})
    assert final.status == "success"
    assert PUBLISHED == [{"note": "hi"}]  # the function ran once, to prepare the request
