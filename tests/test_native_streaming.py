"""The native adapters stream a run as the openai one does (tests/test_streaming.py's conversation):
the same TOKEN events by phase, step and kind, thinking apart from the answer, and no thinking in the
answer, the todo results or the thread's state."""

from __future__ import annotations

import pytest

from pes_agent import create_art_instance
from tests.native_servers import NATIVE, fake_for, needs_sdk
from tests.test_streaming import (
    EXPECTED,
    EXPECTED_SHAPE,
    PLAN_THOUGHT,
    QUERY,
    STEP_THOUGHT,
    SYNTHESIS_THOUGHT,
    assert_tokens_are_not_stored_and_thoughts_are_one_per_call,
    calls_of,
    fake_replies,
    listen,
    lookup,
    milestones,
    weather,
)

THOUGHTS = (PLAN_THOUGHT, STEP_THOUGHT, SYNTHESIS_THOUGHT)


@pytest.mark.parametrize("adapter", NATIVE)
@pytest.mark.parametrize("chunk_chars", [3, 16])
async def test_a_native_adapter_streams_tokens_by_phase_step_and_kind(adapter: str, chunk_chars: int) -> None:
    needs_sdk(adapter)
    async with fake_for(adapter, fake_replies(chunk_chars)) as server:
        settings = {
            "adapter": adapter,
            "base_url": server.base_url,
            "model": "fake-model",
            "api_key": "sk-stream-0123",
            "max_retries": 0,
        }
        config = {"storage": {"type": "memory"}, "providers": {"fake": settings}}
        async with await create_art_instance(config, tools=[lookup, weather]) as art:
            seen = listen(art, "n1")
            response = await art.process(QUERY, thread_id="n1")
            assert response.status == "success", response.error
            assert response.response == "Lima has about 9.75 million people."
            assert calls_of(seen) == EXPECTED
            assert milestones(seen) == EXPECTED_SHAPE
            assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (400, 40)
            await assert_tokens_are_not_stored_and_thoughts_are_one_per_call(art, "n1")
            state = await art.get_thread_state("n1")
            assert state is not None
            kept = (
                state.model_dump_json()
                + str([item.result for item in response.todo_list])
                + response.response
            )
            assert [t for t in THOUGHTS if t in kept] == [], (
                "thinking reached the answer, a result or the state"
            )
        server.assert_complete()
    assert all(r.json.get("stream") is True or "stream" in r.path.lower() for r in server.requests)
