"""Presets (groq, deepseek, openrouter, ollama) through the OpenAI adapter against a loopback server:
the service's key variable is the one sent, and no other service's key ever is."""

from __future__ import annotations

import pytest

from pes_agent.config import ProviderConfig
from pes_agent.errors import ProviderError
from pes_agent.llm.openai import OpenAIProvider
from pes_agent.llm.types import CallOptions, Message, PromptRequest
from pes_agent.testing.fake_openai import FakeOpenAIServer

OPENAI_KEY = "sk-openai-must-stay-home"
REQUEST = PromptRequest(phase="synthesis", step_id=None, messages=(Message(role="user", content="hi"),))
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@pytest.fixture(autouse=True)
def _openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    for name in ("GROQ_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)


async def call(config: ProviderConfig, request: PromptRequest = REQUEST) -> FakeOpenAIServer:
    async with FakeOpenAIServer(['{"ok": true}']) as server:
        cfg = config.model_copy(update={"base_url": server.base_url})
        async with OpenAIProvider("p", cfg) as provider:
            await provider.complete(request, CallOptions())
    return server


@pytest.mark.parametrize(
    ("preset", "variable"),
    [("groq", "GROQ_API_KEY"), ("deepseek", "DEEPSEEK_API_KEY"), ("openrouter", "OPENROUTER_API_KEY")],
)
async def test_a_preset_sends_its_services_key(
    monkeypatch: pytest.MonkeyPatch, preset: str, variable: str
) -> None:
    monkeypatch.setenv(variable, f"key-of-{preset}")
    server = await call(ProviderConfig.model_validate({"adapter": preset, "model": "m"}))
    assert server.requests[0].headers["authorization"] == f"Bearer key-of-{preset}"


async def test_a_preset_without_its_key_fails_naming_the_variable_and_sends_nothing() -> None:
    config = ProviderConfig.model_validate({"adapter": "groq", "model": "m"})
    async with OpenAIProvider("p", config) as provider:
        with pytest.raises(ProviderError) as caught:
            await provider.complete(REQUEST, CallOptions())
    assert "GROQ_API_KEY" in str(caught.value) and "api.groq.com" in str(caught.value)
    assert OPENAI_KEY not in str(caught.value)


async def test_ollama_takes_no_key_and_never_gets_the_openai_one() -> None:
    server = await call(ProviderConfig.model_validate({"adapter": "ollama", "model": "qwen2.5"}))
    assert OPENAI_KEY not in server.requests[0].headers["authorization"]


async def test_a_preset_key_variable_can_be_renamed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAM_GROQ", "team-key")
    server = await call(
        ProviderConfig.model_validate({"adapter": "groq", "model": "m", "apiKeyEnv": "TEAM_GROQ"})
    )
    assert server.requests[0].headers["authorization"] == "Bearer team-key"


@pytest.mark.parametrize(("preset", "field"), [("deepseek", "response_format"), ("groq", "response_format")])
async def test_a_preset_sends_the_schema_in_its_services_dialect(
    monkeypatch: pytest.MonkeyPatch, preset: str, field: str
) -> None:
    monkeypatch.setenv(f"{preset.upper()}_API_KEY", "k")
    config = ProviderConfig.model_validate({"adapter": preset, "model": "m", "structured_output": True})
    request = PromptRequest(phase="planning", step_id=None, messages=REQUEST.messages, response_schema=SCHEMA)
    server = await call(config, request)
    (sent,) = server.chat_requests  # the dialect is the preset's: no probe
    expected = "json_object" if preset == "deepseek" else "json_schema"
    assert sent[field]["type"] == expected
