"""The `grammar` dialect (pes-agent's own GBNF over the wire), what a server speaks remembered per base
URL, and reply schemas cut to what each server's converter takes.

FakeOpenAIServer stands in for the servers (test_openai_dialects.py says how it mimics them); the real
llama-cpp-python server is exercised in test_openai_real_server.py.
"""

from __future__ import annotations

import logging
from typing import Any

import jsonschema
import pytest

from pes_agent.config import ProviderConfig
from pes_agent.errors import ProviderError
from pes_agent.llm.composition import COMPOSED_OF, COMPOSED_OPS
from pes_agent.llm.dialects import remembered_dialect
from pes_agent.llm.openai import OpenAIProvider
from pes_agent.llm.reply_grammar import grammar_for
from pes_agent.llm.server_schemas import for_server
from pes_agent.llm.types import CallOptions, Message, PromptRequest
from pes_agent.testing.fake_openai import FakeOpenAIServer
from tests.test_openai_dialects import API_KEY, OK, Sleeps, probes, sent_as, serving, warnings_of

DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}
CODE = {"type": "string", "pattern": "^[A-Z]{3}$"}
LOOSE = {"type": "string", "pattern": "[a-z]+"}
NOTE = {"type": "string", "maxLength": 300, "minLength": 1}
EXPRESSION = {"type": "string", COMPOSED_OF: ["12", "7"], COMPOSED_OPS: "*"}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"date": DATE, "code": CODE, "word": LOOSE, "note": NOTE, "expression": EXPRESSION},
    "required": ["date", "code"],
}
REQUEST = PromptRequest(
    phase="execution",
    step_id="step_1",
    messages=(Message(role="user", content="hello world"),),
    response_schema=SCHEMA,
)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def sent_schema(body: dict[str, Any]) -> dict[str, Any]:
    if "format" in body:
        return dict(body["format"])
    response_format = body["response_format"]
    schema = response_format.get("schema") or response_format["json_schema"]["schema"]
    return dict(schema)


# --- the grammar dialect ---------------------------------------------------------------------------


async def test_a_configured_grammar_is_pes_agents_own_sent_without_a_probe(sleeps: Sleeps) -> None:
    async with serving(
        ['{"date": "2024-01-15", "code": "EUR"}'],
        sleeps,
        mimic="llama-cpp-python",
        structured_output_dialect="grammar",
        max_tokens=300,
        temperature=0.2,
    ) as (server, provider):
        await provider.complete(REQUEST, CallOptions(extra={"grammar": 'root ::= "x"', "top_k": 5}))
    (body,) = server.chat_requests
    assert body["grammar"] == grammar_for(SCHEMA, "execution", 300), "llm_params cannot replace it"
    assert body["temperature"] == 0.2 and body["max_tokens"] == 300, "the provider's settings win"
    assert body["top_k"] == 5 and body["repeat_penalty"] == 1.0 and body["cache_prompt"] is True
    assert "response_format" not in body and "format" not in body
    server.assert_complete()


async def test_a_schema_no_grammar_can_express_is_refused_before_any_request(sleeps: Sleeps) -> None:
    empty_enum = PromptRequest(
        phase="execution",
        step_id="s",
        messages=REQUEST.messages,
        response_schema={"type": "object", "properties": {"x": {"enum": []}}, "required": ["x"]},
    )
    async with serving([], sleeps, structured_output_dialect="grammar") as (server, provider):
        with pytest.raises(ProviderError) as info:
            await provider.complete(empty_enum, CallOptions())
    assert server.request_count == 0 and info.value.retryable is False
    assert "cannot be turned into a grammar" in str(info.value)


async def test_a_grammar_counts_only_when_the_reply_is_the_one_it_allows(sleeps: Sleeps) -> None:
    """A server that takes `grammar` without a word and ignores it (as Ollama and vLLM do)."""

    def handler(body: dict[str, Any]) -> str:
        if body["messages"][0]["content"] == "Say hello.":
            return OK if "response_format" in body else '{"ok": true}'
        return '{"date": "2024-01-15", "code": "EUR"}'

    async with serving([], sleeps, handler=handler, ignores=("grammar",)) as (server, provider):
        await provider.complete(REQUEST, CallOptions())
    assert probes(server) == ["grammar", "json_schema"]
    assert sent_as(server.chat_requests[-1]) == "json_schema"


async def test_what_a_server_speaks_is_remembered_per_base_url_across_providers(sleeps: Sleeps) -> None:
    async with FakeOpenAIServer(["{}", "{}", "{}"], mimic="llama-cpp-python") as server:
        settings = {"model": "m", "api_key": API_KEY, "structured_output": True, "guided": True}
        for name in ("first", "second"):  # as a service that builds an instance per request
            config = ProviderConfig(base_url=server.base_url + "/", **settings)
            async with OpenAIProvider(name, config, sleep=sleeps) as provider:
                await provider.complete(REQUEST, CallOptions())
        async with FakeOpenAIServer([OK, "{}"], mimic="openai") as other:
            config = ProviderConfig(base_url=other.base_url, **settings)
            async with OpenAIProvider("third", config, sleep=sleeps) as provider:
                await provider.complete(REQUEST, CallOptions())
    assert probes(server) == ["grammar"], "one probe for the server, not one per provider"
    assert [sent_as(b) for b in server.chat_requests] == ["grammar"] * 3
    assert probes(other) == ["grammar", "json_schema"], "another server is probed for itself"
    assert remembered_dialect(server.base_url) == "grammar"
    assert remembered_dialect(other.base_url) == "json_schema"


async def test_openais_own_api_is_not_asked_about_grammars() -> None:
    from pes_agent.llm.dialects import DialectChooser

    asked: list[str] = []

    async def probe(dialect: Any) -> Any:
        from pes_agent.llm.streaming import Completion

        asked.append(dialect)
        return Completion(text=OK, thinking=None, finish_reason="stop", model=None, usage=None)

    chooser = DialectChooser("openai", "auto", "https://api.openai.com/v1")
    assert await chooser.dialect(probe, "here") == "json_schema" and asked == ["json_schema"]


# --- schemas cut to each server's converter ----------------------------------------------------------


def test_llama_cpp_pythons_converter_gets_no_pattern_and_no_max_length() -> None:
    cut = for_server("json_object", SCHEMA)
    properties = cut.schema["properties"]
    assert properties["date"] == {"type": "string"} and properties["code"] == {"type": "string"}
    assert properties["note"] == {"type": "string", "minLength": 1}
    assert properties["expression"] == {"type": "string", "enum": ["12 * 7", "7 * 12"]}
    assert any("`pattern`" in c for c in cut.changes) and any("`maxLength`" in c for c in cut.changes)
    assert for_server("json_object", {"type": "object", "properties": {"any": {}}}).schema["properties"][
        "any"
    ]["type"] == ["string", "number", "boolean", "array", "object", "null"], "`{}` is no object there"


def test_llama_cpps_converter_keeps_anchored_patterns_without_escapes() -> None:
    for dialect in ("json_schema", "ollama"):
        properties = for_server(dialect, SCHEMA).schema["properties"]
        assert properties["code"] == CODE and properties["note"] == NOTE
        assert properties["date"] == {"type": "string"} and properties["word"] == {"type": "string"}
        assert properties["expression"]["enum"] == ["12 * 7", "7 * 12"]


def test_a_cut_schema_only_loosens_what_the_full_one_allows() -> None:
    reply = {"date": "2024-01-15", "code": "EUR", "word": "abc", "note": "n", "expression": "12 * 7"}
    jsonschema.validate(reply, SCHEMA)
    for dialect in ("json_schema", "json_object", "ollama"):
        jsonschema.validate(reply, for_server(dialect, SCHEMA).schema)
    assert for_server("json_schema", {"type": "string", "enum": ["a"]}).changes == ()


async def test_the_cut_schema_is_sent_and_said_once_per_kind(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    replies = ['{"date": "x", "code": "EUR"}'] * 3
    with caplog.at_level(logging.WARNING, logger="pes_agent"):
        async with serving(replies, sleeps, structured_output_dialect="json_object") as (server, provider):
            for _ in range(3):
                await provider.complete(REQUEST, CallOptions())
    assert all(sent_schema(b) == for_server("json_object", SCHEMA).schema for b in server.chat_requests)
    (warning,) = warnings_of(caplog)
    assert "provider 'local'" in warning and "with no `pattern`" in warning and "`maxLength`" in warning
    assert "validated against the full schema" in warning and "structured_output_dialect: grammar" in warning
