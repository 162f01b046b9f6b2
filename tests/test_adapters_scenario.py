"""Issue 16's "done when": the same config, with `adapter` switched between openai, anthropic, gemini and
llamacpp, runs the original's recorded scenarios with the same todo results.

Each hosted adapter talks to its loopback fake (the model's replies are the scenario's recorded ones,
served in that API's wire format); llamacpp runs in-process with a stand-in model that gives the same
replies (the real model cannot be scripted). The baseline is the ScriptedProvider replay that
tests/test_scenarios.py checks against the scenarios' expectations.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from pes_agent import create_art_instance, load_config
from pes_agent.llm.llamacpp import LlamaCppProvider
from pes_agent.llm.llamacpp_load import LoadSettings
from pes_agent.llm.types import Provider
from pes_agent.testing._server import FakeServer
from pes_agent.testing.fake_actions import FakeReply
from pes_agent.testing.fake_anthropic import FakeAnthropicServer
from pes_agent.testing.fake_gemini import FakeGeminiServer
from pes_agent.testing.fake_openai import FakeOpenAIServer
from pes_agent.testing.scripted import ScriptedReply
from tests.native_servers import needs_sdk
from tests.replay import ToolLog, load_scenario, scenario_tools, scripted_replies, start_replay

SCENARIOS = ["S1", "S2", "S3", "S4", "S5", "S7", "S8"]
ADAPTERS = ["openai", "anthropic", "gemini", "llamacpp"]
FAKES: dict[str, type[FakeServer]] = {
    "openai": FakeOpenAIServer,
    "anthropic": FakeAnthropicServer,
    "gemini": FakeGeminiServer,
}

CONFIG = """\
providers:
  main:
    adapter: {adapter}
    model: fake-model
    baseUrl: {base_url}
    apiKey: sk-scenario-0123456789
    modelPath: {gguf}
    structuredOutput: false
    guided: false
    maxRetries: 0
storage:
  type: memory
"""


class ScriptedLlama:
    """Stands in for a llama.cpp model: the scenario's replies, OpenAI-shaped as llama-cpp-python gives
    them."""

    def __init__(self, replies: list[ScriptedReply]) -> None:
        self.replies = list(replies)

    def create_chat_completion(self, **kwargs: Any) -> Any:
        reply = self.replies.pop(0)
        text = f"<think>{reply.thinking}</think>{reply.text}" if reply.thinking else reply.text
        if kwargs.get("stream"):
            delta = {"index": 0, "delta": {"content": text}, "finish_reason": "stop"}
            return iter([{"choices": [delta]}])
        return {"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}


def outcome(response: Any, log: ToolLog) -> dict[str, Any]:
    """What a user sees of a run: status, each item's status and result, the answer, the tool calls."""
    return {
        "status": response.status,
        "items": {item.id: (item.status.value, str(item.result)) for item in response.todo_list},
        "answer": response.response,
        "tool_calls": log.calls,
    }


@asynccontextmanager
async def endpoint(adapter: str, replies: list[ScriptedReply]) -> AsyncIterator[FakeServer | None]:
    if adapter == "llamacpp":
        yield None
        return
    actions = [FakeReply(text=r.text, reasoning_content=r.thinking) for r in replies]
    async with FAKES[adapter](actions) as server:
        yield server
        server.assert_complete()


async def run_on(adapter: str, name: str, tmp_path: Path) -> dict[str, Any]:
    needs_sdk(adapter)
    scenario = load_scenario(name)
    replies = scripted_replies(scenario)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    async with endpoint(adapter, replies) as server:
        base_url = server.base_url if server is not None else "http://127.0.0.1:9/v1"
        path = tmp_path / "pes.yaml"
        path.write_text(CONFIG.format(adapter=adapter, base_url=base_url, gguf=gguf), encoding="utf-8")
        config = load_config(path)
        overrides: dict[str, Provider] = {}
        if adapter == "llamacpp":
            model = ScriptedLlama(replies)

            def loader(settings: LoadSettings) -> Any:
                return model

            overrides["main"] = LlamaCppProvider("main", config.providers["main"], loader=loader)
        log = ToolLog()
        art = await create_art_instance(config, tools=scenario_tools(scenario, log), providers=overrides)
        async with art:
            response = await art.process(
                scenario["userQuery"], thread_id=scenario["config"]["processProps"]["threadId"]
            )
        if adapter == "llamacpp":
            assert model.replies == [], "the stand-in model was not asked for every reply"
    return outcome(response, log)


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("name", SCENARIOS)
async def test_a_scenario_gives_the_same_todo_results_on_every_adapter(
    name: str, adapter: str, tmp_path: Path
) -> None:
    replay = await start_replay(name)
    baseline = outcome(await replay.art.process(replay.query, thread_id=replay.thread_id), replay.log)
    await replay.art.aclose()
    assert baseline["status"] == replay.expected["status"]
    assert await run_on(adapter, name, tmp_path) == baseline
