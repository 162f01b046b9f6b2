"""Tools: definition (`@tool`), registry rendering, argument validation, execution, loading."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from pes_agent.errors import ConfigError, ToolDefinitionError, ToolError
from pes_agent.tools.decorators import tool, tool_from_schema
from pes_agent.tools.executor import ToolExecutor
from pes_agent.tools.loading import load_tools
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.spec import ToolCall, ToolContext, ToolResult, ToolSpec

CTX = ToolContext(thread_id="t1", trace_id="tr1", step_id="step_1", call_id="c1", user_id="u1")

URLS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "urls": {
            "type": "array",
            "items": {"type": "string", "format": "uri"},
            "minItems": 1,
            "description": "URLs of the pages to extract.",
        }
    },
    "required": ["urls"],
}


class Address(BaseModel):
    street: str
    city: str = "Paris"


@tool
async def search(
    query: str,
    context: ToolContext,
    title: str,
    limit: int = 5,
    mode: Literal["fast", "slow"] = "fast",
    tags: list[str] | None = None,
    note: Annotated[str, Field(description="From Annotated.")] = "",
) -> dict[str, Any]:
    """Search the web for pages.

    Results are ranked by relevance.

    Args:
        query: The search query,
            written as keywords.
        title: A title to filter on.
        limit (int): How many results to return.
        note: From the docstring (Annotated wins).
    """
    return {"query": query, "context": context, "limit": limit}


@tool
def ship(address: Address) -> str:
    """Ship to an address."""
    return f"{type(address).__name__}:{address.street}"


def walk_keys(node: Any, parent: str | None = None) -> Iterator[tuple[str | None, str]]:
    """(parent key, key) for every dict key in a schema."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield parent, key
            yield from walk_keys(value, key)
    elif isinstance(node, list):
        for value in node:
            yield from walk_keys(value, parent)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []


def recording_tool(
    name: str, recorder: Recorder, schema: dict[str, Any] | None = None, **options: Any
) -> ToolSpec:
    def run(**kwargs: Any) -> str:
        recorder.calls.append(kwargs)
        return f"{name} ran"

    return tool_from_schema(name, f"The {name} tool.", schema or URLS_SCHEMA, run, **options)


def call(tool_name: str, arguments: dict[str, Any], call_id: str = "call_1") -> ToolCall:
    return ToolCall(call_id=call_id, tool_name=tool_name, arguments=arguments)


# --- @tool: schema derivation ------------------------------------------------------------------


def test_bare_tool_derives_a_compact_schema_from_the_signature() -> None:
    schema = search.input_schema
    props = schema["properties"]
    assert schema["type"] == "object"
    assert list(props) == ["query", "title", "limit", "mode", "tags", "note"]
    assert schema["required"] == ["query", "title"]
    assert props["query"] == {"type": "string", "description": "The search query, written as keywords."}
    assert props["limit"] == {"type": "integer", "default": 5, "description": "How many results to return."}
    assert props["mode"]["enum"] == ["fast", "slow"] and props["mode"]["default"] == "fast"
    assert {"type": "array", "items": {"type": "string"}} in props["tags"]["anyOf"]
    assert {"type": "null"} in props["tags"]["anyOf"]
    assert props["tags"]["default"] is None
    assert props["note"]["description"] == "From Annotated."
    # No pydantic `title` noise anywhere, but a parameter *named* title stays a property.
    assert [parent for parent, key in walk_keys(schema) if key == "title"] == ["properties"]


def test_bare_tool_description_and_name_come_from_the_function() -> None:
    assert search.name == "search"
    assert search.description == "Search the web for pages.\n\nResults are ranked by relevance."
    assert "Args" not in search.description
    assert search.summary == "Search the web for pages."


def test_context_parameter_is_left_out_of_the_schema_and_recorded() -> None:
    assert search.context_param == "context"
    assert "context" not in search.input_schema["properties"]


async def test_context_parameter_is_passed_by_the_executor() -> None:
    executor = ToolExecutor(ToolRegistry([search]))
    result = await executor.execute(
        call("search", {"query": "q", "title": "t"}), allowed={"search"}, context=CTX
    )
    assert result.status == "success"
    assert result.output["context"] is CTX
    assert result.output["limit"] == 5  # defaults come from the function, not the schema


async def test_model_parameters_arrive_as_the_declared_type() -> None:
    assert ship.input_schema["$defs"]["Address"]["required"] == ["street"]
    executor = ToolExecutor(ToolRegistry([ship]))
    result = await executor.execute(
        call("ship", {"address": {"street": "Rue X"}}), allowed={"ship"}, context=CTX
    )
    assert result.output == "Address:Rue X"


def test_explicit_schema_form_uses_the_schema_as_given() -> None:
    @tool(
        name="webExtract",
        description="Fetch pages and return their text.",
        input_schema=URLS_SCHEMA,
        capabilities=["web", "read"],
        timeout=5,
        execution_mode="blocking",
        aliases={"links": "urls"},
    )
    def extract(urls: list[str]) -> list[str]:
        return urls

    assert isinstance(extract, ToolSpec)
    assert extract.name == "webExtract"
    assert extract.input_schema == URLS_SCHEMA
    assert extract.capabilities == ("web", "read")
    assert (extract.timeout, extract.execution_mode, extract.aliases) == (5, "blocking", {"links": "urls"})
    assert extract.fn(urls=["a"]) == ["a"]


async def test_explicit_schema_form_accepts_a_loose_signature_and_passes_context() -> None:
    @tool(name="send", description="Send a message.", input_schema=URLS_SCHEMA)
    def send(ctx: ToolContext, **arguments: Any) -> dict[str, Any]:
        return {"ctx": ctx, **arguments}

    assert send.context_param == "ctx"
    result = await ToolExecutor(ToolRegistry([send])).execute(
        call("send", {"urls": ["u"]}), allowed={"send"}, context=CTX
    )
    assert result.output == {"ctx": CTX, "urls": ["u"]}


def test_tool_from_schema_builds_a_catalogue_tool() -> None:
    spec = tool_from_schema("webExtract", "Fetch pages.", URLS_SCHEMA, lambda urls: urls, idempotent=True)
    assert spec.name == "webExtract" and spec.idempotent
    assert spec.input_schema == URLS_SCHEMA


def test_missing_annotation_names_the_parameter() -> None:
    def bad(query: str, limit) -> str:  # type: ignore[no-untyped-def]
        """Bad."""
        return query

    with pytest.raises(ToolDefinitionError, match=r"'bad'.*'limit'.*no type annotation"):
        tool(bad)


def test_var_args_are_refused_with_the_parameter_named() -> None:
    def bad(*items: str) -> None:
        """Bad."""

    with pytest.raises(ToolDefinitionError, match=r"parameter 'items'.*\*args"):
        tool(bad)


def test_invalid_explicit_schema_is_refused() -> None:
    with pytest.raises(ToolDefinitionError, match=r"'broken'.*not a valid JSON Schema"):
        tool_from_schema(
            "broken", "Broken.", {"type": "object", "properties": {"a": {"type": "strnig"}}}, print
        )
    with pytest.raises(ToolDefinitionError, match=r"'listy'.*\"type\": \"object\""):
        tool_from_schema("listy", "Listy.", {"type": "array"}, print)


def test_tool_without_description_is_refused() -> None:
    def quiet(a: int) -> int:
        return a

    with pytest.raises(ToolDefinitionError, match=r"'quiet' has no description"):
        tool(quiet)


def test_unknown_tool_option_is_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="timeout_s"):
        tool(timeout_s=3)  # type: ignore[call-overload]


# --- registry ---------------------------------------------------------------------------------


def make_registry() -> ToolRegistry:
    rec = Recorder()
    return ToolRegistry(
        [
            recording_tool("webExtract", rec, capabilities=("web", "read")),
            tool_from_schema(
                "webSearch",
                "Search the web. Returns a ranked list.",
                {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
                lambda query: query,
            ),
        ]
    )


def test_registry_refuses_duplicates_and_bad_names() -> None:
    registry = make_registry()
    with pytest.raises(ToolDefinitionError, match="'webSearch' is registered twice"):
        registry.register(make_registry().get("webSearch"))  # type: ignore[arg-type]
    bad = tool_from_schema("ok", "Ok.", URLS_SCHEMA, print)
    object.__setattr__(bad, "name", "has space")
    with pytest.raises(ToolDefinitionError, match="'has space' is not allowed"):
        registry.register(bad)
    assert registry.names() == ["webExtract", "webSearch"]


def test_manifesto_is_one_minimal_line_per_tool_without_schemas() -> None:
    lines = make_registry().manifesto_lines(["webSearch", "missing", "webExtract"])
    assert lines == [
        "- webSearch: Search the web.",
        "- webExtract: The webExtract tool. [capabilities: web, read]",
    ]
    assert lines == make_registry().manifesto_lines(["webSearch", "missing", "webExtract"])


def test_schema_block_renders_full_contracts_compactly_and_deterministically() -> None:
    block = make_registry().schema_block(["webSearch"])
    assert block == (
        '{"name":"webSearch","description":"Search the web. Returns a ranked list.",'
        '"input_schema":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}'
    )
    both = make_registry().schema_block(["webExtract", "webSearch"]).splitlines()
    assert [json.loads(line)["name"] for line in both] == ["webExtract", "webSearch"]
    assert json.loads(both[0])["input_schema"] == URLS_SCHEMA


# --- validation -------------------------------------------------------------------------------


VALIDATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "count": {"type": "integer"},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "urls": {"type": "array", "items": {"type": "string", "format": "uri"}, "minItems": 1},
        "to": {"type": "string", "x-target": True, "x-semantic": True},
    },
    "required": ["query"],
}


def problems(arguments: Any) -> list[str]:
    registry = ToolRegistry([tool_from_schema("t", "T.", VALIDATION_SCHEMA, print)])
    return [p.message for p in registry.validator("t").validate(arguments)]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, ["`query` is required"]),
        ({"query": "q", "urls": []}, ["`urls` must have at least 1 item"]),
        ({"query": "q", "count": "3"}, ["`count` must be an integer"]),
        ({"query": "q", "mode": "medium"}, ["`mode` must be one of: fast, slow"]),
        ({"query": "q", "urls": [3]}, ["`urls[0]` must be a string"]),
    ],
)
def test_validation_problems_read_plainly(arguments: dict[str, Any], expected: list[str]) -> None:
    assert problems(arguments) == expected


STRICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "to": {"type": "string"},
        "cc": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "legacy": False,
    },
    "additionalProperties": False,
    "dependentRequired": {"cc": ["to"]},
}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"to": "a", "colour": "red"}, ["`colour` is not an accepted argument"]),
        ({"to": "a", "legacy": 1}, ["`legacy` must not be given"]),
        ({"to": "a", "cc": "b"}, ["`cc` must be an array or null"]),
        ({"to": "a", "cc": ["b", 2]}, ["`cc[1]` must be a string"]),
        ({"cc": ["b"]}, ["`to` is required when `cc` is given"]),
    ],
)
def test_validation_problems_for_stricter_schemas(arguments: dict[str, Any], expected: list[str]) -> None:
    validator = ToolRegistry([tool_from_schema("t", "T.", STRICT_SCHEMA, print)]).validator("t")
    assert [p.message for p in validator.validate(arguments)] == expected


def test_problem_records_field_path_and_rule() -> None:
    registry = ToolRegistry([tool_from_schema("t", "T.", VALIDATION_SCHEMA, print)])
    (problem,) = registry.validator("t").validate({"query": "q", "urls": [3]})
    assert (problem.field, problem.path, problem.rule) == ("urls", "urls[0]", "type")


def test_format_and_unknown_keywords_are_annotations_only() -> None:
    assert problems({"query": "q", "urls": ["not a uri at all"], "to": "someone"}) == []


def test_messages_never_dump_huge_values() -> None:
    (message,) = problems({"query": "q", "count": "9" * 5000})
    assert len(message) < 100


# --- executor ---------------------------------------------------------------------------------


async def test_invalid_arguments_never_reach_the_function() -> None:
    rec = Recorder()
    executor = ToolExecutor(ToolRegistry([recording_tool("webExtract", rec)]))
    result = await executor.execute(call("webExtract", {"urls": []}), allowed={"webExtract"}, context=CTX)
    assert rec.calls == []
    assert (result.status, result.call_id, result.tool_name) == ("error", "call_1", "webExtract")
    assert result.error == "`urls` must have at least 1 item"
    assert result.metadata["problems"] == [
        {"field": "urls", "path": "urls", "rule": "minItems", "message": "`urls` must have at least 1 item"}
    ]


async def test_valid_call_succeeds_with_the_return_value() -> None:
    rec = Recorder()
    executor = ToolExecutor(ToolRegistry([recording_tool("webExtract", rec)]))
    result = await executor.execute(call("webExtract", {"urls": ["u"]}), allowed={"webExtract"}, context=CTX)
    assert (result.status, result.output) == ("success", "webExtract ran")
    assert rec.calls == [{"urls": ["u"]}]


@pytest.mark.parametrize("name", ["webSearch", "searchTheWeb"])
async def test_not_allowed_or_unknown_tools_are_refused_with_the_allowed_list(name: str) -> None:
    rec = Recorder()
    executor = ToolExecutor(
        ToolRegistry([recording_tool("webExtract", rec), recording_tool("webSearch", rec)])
    )
    allowed = {"webExtract", "searchTheWeb", "alpha"}
    result = await executor.execute(call(name, {"urls": ["u"]}), allowed=allowed, context=CTX)
    assert result.status == "refused"
    assert result.tool_name == name
    assert result.error is not None and repr(name) in result.error
    assert result.error.endswith("allowed tools: alpha, searchTheWeb, webExtract")
    assert rec.calls == []


async def test_tool_error_becomes_an_error_result_with_its_message() -> None:
    def fail(**_: Any) -> None:
        raise ToolError("no pages found for that query")

    executor = ToolExecutor(ToolRegistry([tool_from_schema("f", "F.", URLS_SCHEMA, fail)]))
    result = await executor.execute(call("f", {"urls": ["u"]}), allowed={"f"}, context=CTX)
    assert (result.status, result.error) == ("error", "no pages found for that query")


async def test_crash_becomes_an_error_result_without_traceback() -> None:
    async def crash(**_: Any) -> None:
        raise ValueError("boom")

    executor = ToolExecutor(ToolRegistry([tool_from_schema("c", "C.", URLS_SCHEMA, crash)]))
    result = await executor.execute(call("c", {"urls": ["u"]}), allowed={"c"}, context=CTX)
    assert (result.status, result.error) == ("error", "ValueError: boom")


async def test_timeout_becomes_an_error_naming_the_tool() -> None:
    never = asyncio.Event()

    async def hang(**_: Any) -> None:
        await never.wait()

    spec = tool_from_schema("hang", "Hangs.", URLS_SCHEMA, hang, timeout=0.01)
    result = await ToolExecutor(ToolRegistry([spec])).execute(
        call("hang", {"urls": ["u"]}), allowed={"hang"}, context=CTX
    )
    assert result.status == "error"
    assert result.error == "tool 'hang' timed out after 0.01s"


async def test_sync_tools_run_in_a_worker_thread() -> None:
    def where(**_: Any) -> int:
        return threading.get_ident()

    spec = tool_from_schema("where", "Where.", URLS_SCHEMA, where)
    result = await ToolExecutor(ToolRegistry([spec])).execute(
        call("where", {"urls": ["u"]}), allowed={"where"}, context=CTX
    )
    assert result.status == "success"
    assert result.output != threading.get_ident()


def approval_registry(rec: Recorder) -> ToolRegistry:
    def send(**kwargs: Any) -> ToolResult:
        rec.calls.append(kwargs)
        return ToolResult.suspended("Send this email?", preview={"to": "a@b.c"})

    return ToolRegistry(
        [
            tool_from_schema(
                "send", "Send.", URLS_SCHEMA, send, execution_mode="blocking", requires_approval=True
            ),
            recording_tool("webExtract", rec),
        ]
    )


async def test_suspended_result_passes_through_bound_to_the_call() -> None:
    rec = Recorder()
    executor = ToolExecutor(approval_registry(rec))
    result = await executor.execute(call("send", {"urls": ["u"]}, "c9"), allowed={"send"}, context=CTX)
    assert (result.status, result.call_id, result.tool_name) == ("suspended", "c9", "send")
    assert result.output == {"message": "Send this email?", "preview": {"to": "a@b.c"}}
    assert rec.calls == [{"urls": ["u"]}]


async def test_batch_stops_after_the_first_suspended_result() -> None:
    rec = Recorder()
    executor = ToolExecutor(approval_registry(rec))
    calls = [
        call("webExtract", {"urls": ["1"]}, "c1"),
        call("send", {"urls": ["2"]}, "c2"),
        call("webExtract", {"urls": ["3"]}, "c3"),
    ]
    contexts: list[str] = []

    def context_for(c: ToolCall) -> ToolContext:
        contexts.append(c.call_id)
        return CTX

    results = await executor.execute_batch(calls, allowed={"send", "webExtract"}, context_for=context_for)
    assert [(r.call_id, r.status) for r in results] == [("c1", "success"), ("c2", "suspended")]
    assert rec.calls == [{"urls": ["1"]}, {"urls": ["2"]}]
    assert contexts == ["c1", "c2"]


# --- loading ----------------------------------------------------------------------------------


@pytest.fixture
def loadable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))


@pytest.mark.usefixtures("loadable")
def test_load_tools_accepts_specs_lists_and_plain_functions() -> None:
    specs = load_tools(["tools_for_loading:echo", "tools_for_loading:BOTH", "tools_for_loading:plain_add"])
    assert [s.name for s in specs] == ["echo", "echo", "shout", "plain_add"]
    add = specs[-1]
    assert add.input_schema["required"] == ["a"]
    assert add.fn(a=2) == 3


@pytest.mark.usefixtures("loadable")
@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tools_for_loading.echo", "is not an import path"),
        ("no_such_module_for_pes:thing", "module 'no_such_module_for_pes' was not found"),
        ("tools_for_loading:nope", "has no attribute 'nope'"),
        ("tools_for_loading:NOT_A_TOOL", "found int"),
        ("tools_for_loading:untyped", "parameter 'a' has no type annotation"),
    ],
)
def test_load_tools_reports_bad_paths_with_their_key(path: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_tools(["tools_for_loading:echo", path], source="agent.yaml")
    assert info.value.key_path == "tools[1]"
    assert str(info.value).startswith("agent.yaml: `tools[1]`: ")
    assert expected in str(info.value)


A_SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}
B_SCHEMA = {"type": "object", "properties": {"b": {"type": "integer"}}}


def test_registry_replace_and_unregister_keep_renderings_and_version_current() -> None:
    """A remote tool set changes while the instance runs (MCP's tools/list_changed)."""
    first = tool_from_schema("probe", "Old words.", A_SCHEMA, str)
    registry = ToolRegistry([first])
    start = registry.version
    assert registry.manifesto_lines(["probe"]) == ["- probe: Old words."]
    assert '"a"' in registry.schema_block(["probe"])
    newer = tool_from_schema("probe", "New words.", B_SCHEMA, str)
    registry.replace(newer)
    assert registry.get("probe") is newer and registry.version == start + 1
    assert registry.manifesto_lines(["probe"]) == ["- probe: New words."]
    assert '"b"' in registry.schema_block(["probe"]) and '"a"' not in registry.schema_block(["probe"])
    assert registry.validator("probe").validate({"b": "x"})  # the new schema is the one checked
    registry.unregister("probe")
    registry.unregister("probe")  # unknown names are ignored
    assert "probe" not in registry and registry.version == start + 2
    with pytest.raises(KeyError):
        registry.replace(newer)
    registry.register(first)  # the name is free again
    assert registry.manifesto_lines(["probe"]) == ["- probe: Old words."]
