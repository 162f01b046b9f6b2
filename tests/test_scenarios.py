"""Parity: the original's recorded scenarios replayed through create_art_instance + ScriptedProvider,
checked against the pes-agent column of each scenario's `expected`."""

from __future__ import annotations

from typing import Any

import pytest

from pes_agent import EventType
from tests.replay import Replay, data_matches, new_messages, start_replay

SCENARIOS = ["S1", "S2", "S3", "S4", "S5", "S7", "S8"]


def _phase_ok(actual: str, wanted: str | list[str]) -> bool:
    return actual in wanted if isinstance(wanted, list) else actual == wanted


def _when_holds(replay: Replay, when: dict[str, Any] | None) -> bool:
    if not when:
        return True
    return replay.provider.calls[when["call"]].phase == when["phase"]


async def _run(name: str) -> tuple[Replay, Any]:
    replay = await start_replay(name)
    response = await replay.art.process(replay.query, thread_id=replay.thread_id)
    return replay, response


@pytest.mark.parametrize("name", SCENARIOS)
async def test_call_sequence_by_phase_and_step(name: str) -> None:
    replay, _ = await _run(name)
    expected = replay.expected["calls"]
    actual = replay.provider.calls
    assert len(actual) == len(expected), replay.provider.phases()
    for i, (call, want) in enumerate(zip(actual, expected, strict=False)):
        assert _phase_ok(call.phase, want["phase"]), (i, call.phase, want)
        assert call.step_id == want["stepId"], (i, call.step_id, want)
    replay.provider.assert_complete()


@pytest.mark.parametrize("name", SCENARIOS)
async def test_tools_run_exactly_as_expected(name: str) -> None:
    replay, _ = await _run(name)
    wanted = [(t["tool"], t["arguments"]) for t in replay.expected["toolExecutions"]]
    assert replay.log.calls == wanted
    for never in replay.expected["notExecuted"]:
        assert (never["tool"], never["arguments"]) not in replay.log.calls


@pytest.mark.parametrize("name", SCENARIOS)
async def test_items_status_and_answer(name: str) -> None:
    replay, response = await _run(name)
    exp = replay.expected
    assert response.status == exp["status"], response.error
    statuses = {item.id: item.status.value for item in response.todo_list}
    assert statuses == {i["id"]: i["status"] for i in exp["items"]}
    assert response.response.strip() == exp["answer"].strip()
    for text in exp.get("answerContains", []):
        assert text in response.response
    for text in exp.get("answerNotContains", []):
        assert text not in response.response
    assert response.ui_metadata == exp.get("uiMetadata")
    results = {item.id: str(item.result) for item in response.todo_list}
    for item_id, texts in exp.get("itemResultContains", {}).items():
        for text in texts:
            assert text in results[item_id], (item_id, text)
    for item_id, texts in exp.get("itemResultNotContains", {}).items():
        for text in texts:
            assert text not in results[item_id], (item_id, text)


@pytest.mark.parametrize("name", SCENARIOS)
async def test_events_and_requests(name: str) -> None:
    replay, _ = await _run(name)
    exp = replay.expected
    events = await replay.art.get_observations(replay.thread_id)
    for want in exp.get("events", []):
        if not _when_holds(replay, want.get("when")):
            continue
        found = [
            e
            for e in events
            if e.type == EventType(want["type"])
            and data_matches(e.data, want.get("data", {}))
            and ("step_id" not in want or e.step_id == want["step_id"])
            and want.get("dataTextContains", "") in str(e.data.get("text", ""))
        ]
        assert found, f"no {want['type']} event with {want}"
    for absent in exp.get("eventsAbsent", []):
        assert not [
            e for e in events if e.type == EventType(absent["type"]) and data_matches(e.data, absent["data"])
        ]
    calls = replay.provider.calls
    for check in exp.get("requestChecks", []):
        if not _when_holds(replay, check.get("when")):
            continue
        idx = check["call"]
        msgs = calls[idx].messages if check["scope"] == "request" else new_messages(calls, idx)
        text = "\n".join(m["content"] for m in msgs)
        for must in check.get("mustMention", []):
            assert must in text, (idx, must)
        for must_not in check.get("mustNotMention", []):
            assert must_not not in text, (idx, must_not)


async def test_plan_update_keeps_current_item_and_diffs_by_id() -> None:
    replay, _response = await _run("S8")
    exp = replay.expected
    updates = await replay.art.get_observations(replay.thread_id, types=[EventType.PLAN_UPDATE])
    assert [u.data["diff"] for u in updates] == [exp["planUpdateDiff"]]
    state = await replay.art.get_thread_state(replay.thread_id)
    assert state is not None
    for key, value in exp["stateAfter"].items():
        assert getattr(state, key) == value
