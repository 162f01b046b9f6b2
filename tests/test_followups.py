"""Follow-ups: a second query on a thread refines the plan; finished work is kept, the diff is real."""

from __future__ import annotations

import json

from syrupy.assertion import SnapshotAssertion

from pes_agent import EventType
from tests.replay import start_replay
from tests.test_prompts import _request

FOLLOW_UP = "Also check what the encyclopedia article says."

REFINED = (
    "---JSON_OUTPUT_START---\n"
    + json.dumps(
        {
            "intent": "Summarize JWST findings and cross-check with the encyclopedia",
            "plan": "Keep the search and extraction; extract the encyclopedia page too.",
            "todoList": [
                {
                    "id": "step_1",
                    "description": "Search the web for recent articles about James Webb Space Telescope "
                    "discoveries",
                    "stepType": "tool",
                    "requiredTools": ["webSearch"],
                    "expectedOutcome": "A list of relevant article URLs",
                    "dependencies": [],
                    "status": "completed",
                },
                {
                    "id": "step_2",
                    "description": "Extract the content of the top two search result pages",
                    "stepType": "tool",
                    "requiredTools": ["webExtract"],
                    "expectedOutcome": "Full text of the top articles",
                    "dependencies": ["step_1"],
                },
                {
                    "id": "step_3",
                    "description": "Extract the encyclopedia result",
                    "stepType": "tool",
                    "requiredTools": ["webExtract"],
                    "expectedOutcome": "Encyclopedia text",
                    "dependencies": ["step_1"],
                },
            ],
        }
    )
    + "\n---JSON_OUTPUT_END---"
)

WIKI = "https://wiki.example.net/wiki/james-webb-space-telescope-recent-discoveries"


async def _follow_up() -> tuple:
    replay = await start_replay("S1")
    first = await replay.art.process(replay.query, thread_id=replay.thread_id)
    assert first.status == "success"
    before = {i.id: (i.status, i.result, len(i.tool_results)) for i in first.todo_list}
    replay.provider._queue.extend(
        [
            REFINED,
            "```json\n"
            + json.dumps({"toolCalls": [{"toolName": "webExtract", "arguments": {"urls": [WIKI]}}]})
            + "\n```",
            "```json\n" + json.dumps({"content": "The encyclopedia agrees."}) + "\n```",
            "<mainContent>The encyclopedia agrees with the articles.</mainContent>",
        ]
    )
    replay.scenario["toolOutputs"].append(
        {
            "tool": "webExtract",
            "arguments": {"urls": [WIKI]},
            "status": "success",
            "output": {"pages": [{"url": WIKI, "content": "Reference text."}]},
        }
    )
    second = await replay.art.process(FOLLOW_UP, thread_id=replay.thread_id)
    return replay, before, second


async def test_follow_up_keeps_finished_steps_and_diffs_only_the_added_one() -> None:
    replay, before, second = await _follow_up()
    assert second.status == "success"
    phases = [c.phase for c in replay.provider.calls[6:]]
    assert phases == ["refinement", "execution", "execution", "synthesis"]
    after = {i.id: (i.status, i.result, len(i.tool_results)) for i in second.todo_list}
    assert after["step_1"] == before["step_1"] and after["step_2"] == before["step_2"]
    assert after["step_3"][0].value == "completed"
    updates = await replay.art.get_observations(replay.thread_id, types=[EventType.PLAN_UPDATE])
    assert [u.data["diff"] for u in updates] == [{"added": ["step_3"], "modified": [], "removed": []}]
    assert [name for name, _ in replay.log.calls] == ["webSearch", "webExtract", "webExtract"]


async def test_follow_up_prompt_shows_history_and_current_plan(prompt_snapshot: SnapshotAssertion) -> None:
    replay, _, _ = await _follow_up()
    refinement = replay.provider.calls[6]
    assert replay.query in refinement.text and FOLLOW_UP in refinement.text
    assert "Found 3 relevant results" in refinement.text
    assert _request(refinement) == prompt_snapshot
