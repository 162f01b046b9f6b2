"""The argument gate, one step and one hazard at a time (docs/recovery.md, "The gate, in order").

Each test builds a call the way a small model gets it wrong and checks the outcome word, the exact
arguments that would run (or that the field is left for arg-fill / the user), and the repairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

import pytest

from pes_agent.config import GateConfig
from pes_agent.gate import ArgumentGate, GateResult, Grounding, Repair
from pes_agent.gate.placeholders import PlaceholderRules
from pes_agent.gate.references import available_paths, find_references, resolve
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.spec import ToolCall, ToolSpec

DUMP_MARKERS = ("type=", "input_value", "ValidationError", "{'loc'", '{"loc"', "Traceback")


def _fn(**kwargs: Any) -> dict[str, Any]:
    return kwargs


def _tool(name: str, schema: Mapping[str, Any], **extra: Any) -> ToolSpec:
    return tool_from_schema(name, f"The {name} tool.", schema, _fn, **extra)


WEB_SEARCH = _tool(
    "webSearch",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to search for"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
            "lang": {"type": "string", "enum": ["en", "de", "fr"]},
        },
        "required": ["query"],
    },
    aliases={"q": "query", "search": "query"},
)
FETCH_PAGES = _tool(
    "fetchPages",
    {
        "type": "object",
        "properties": {
            "urls": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "description": "pages to read",
            }
        },
        "required": ["urls"],
    },
)
CREATE_TASK = _tool(
    "createTask",
    {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "what the task is"},
            "due_days": {"type": "integer", "minimum": 1},
            "priority": {"type": "string", "enum": ["low", "medium", "high"]},
            "notify": {"type": "boolean", "default": False},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["title", "due_days", "priority"],
    },
    aliases={"name": "title"},
    value_aliases={"priority": {"urgent": "high"}},
)
RUN_CODE = _tool(
    "run_code",
    {
        "type": "object",
        "properties": {
            "runtime": {"type": "string", "enum": ["python", "nodejs", "terminal", "output"]},
            "code": {"type": "string", "description": "the code to run"},
        },
        "required": ["runtime"],
        "if": {"properties": {"runtime": {"const": "output"}}},
        "else": {"required": ["code"]},
    },
    aliases={"language": "runtime", "command": "code"},
    value_aliases={"runtime": {"bash": "terminal", "sh": "terminal"}},
)
SEND_EMAIL = _tool(
    "send_email",
    {
        "type": "object",
        "properties": {
            "to": {"type": "string", "format": "email", "x-target": True, "description": "recipient address"},
            "subject": {"type": "string"},
            "body": {"type": "string"},
        },
        "required": ["to", "subject", "body"],
    },
    side_effects=True,
)
PLOT_CHART = _tool(
    "plot_chart",
    {
        "type": "object",
        "properties": {
            "metric": {"type": "string", "enum": ["revenue", "cost", "profit"], "x-semantic": True},
            "chart": {"type": "string", "enum": ["bar_chart", "line_chart"]},
        },
        "required": ["metric"],
    },
)
SET_CONFIG = _tool(
    "set_config",
    {
        "type": "object",
        "properties": {"settings": {"type": "object"}, "ratio": {"type": "number"}},
        "required": ["settings"],
    },
)
OPEN_TOOL = _tool(
    "tag_item",
    {
        "type": "object",
        "properties": {"item": {"type": "string"}},
        "required": ["item"],
        "additionalProperties": True,
    },
)
ALL = [WEB_SEARCH, FETCH_PAGES, CREATE_TASK, RUN_CODE, SEND_EMAIL, PLOT_CHART, SET_CONFIG, OPEN_TOOL]
NO_GROUNDING = Grounding(query="do the thing")


def make_gate(**config: Any) -> ArgumentGate:
    return ArgumentGate(ToolRegistry(ALL), GateConfig(**config))


def check(
    tool: str,
    args: Any,
    *,
    allowed: Sequence[str] | None = None,
    grounding: Grounding = NO_GROUNDING,
    gate: ArgumentGate | None = None,
) -> GateResult:
    gate = gate or make_gate()
    call = ToolCall(call_id="c1", tool_name=tool, arguments=args)
    return gate.check(call, allowed=list(allowed) if allowed is not None else [tool], grounding=grounding)


def rules(result: GateResult) -> list[str]:
    return [r.rule for r in result.repairs]


def repair(result: GateResult, rule: str) -> Repair:
    found = [r for r in result.repairs if r.rule == rule]
    assert len(found) == 1, f"expected one {rule!r} repair, got {result.repairs}"
    return found[0]


def assert_clean(text: str | None) -> None:
    assert text
    for marker in DUMP_MARKERS:
        assert marker not in text, f"{marker!r} leaked into: {text}"


# A valid call --------------------------------------------------------------------------------------


def test_valid_call_runs_exactly_as_sent() -> None:
    call = ToolCall(call_id="c1", tool_name="webSearch", arguments={"query": "weather in Paris", "limit": 3})
    result = make_gate().check(call, allowed=["webSearch"], grounding=NO_GROUNDING)
    assert result.outcome == "execute"
    assert result.call is call
    assert result.repairs == () and result.needs == () and result.problems == () and result.message is None


def test_rule1_valid_call_gets_every_default_as_a_safe_repair() -> None:
    """docs/recovery.md, "Rules made exact" 1: a call valid as sent runs with the complete set."""
    result = check("createTask", {"title": "t", "due_days": 2, "priority": "low"})
    assert result.outcome == "execute"
    assert dict(result.call.arguments) == {"title": "t", "due_days": 2, "priority": "low", "notify": False}
    assert result.repairs == (Repair(field="notify", from_=None, to=False, rule="default", kind="safe"),)
    assert result.needs == () and result.problems == () and result.message is None


def test_rule1_a_default_never_replaces_a_value_the_model_sent() -> None:
    result = check("webSearch", {"query": "weather", "limit": 7})
    assert result.outcome == "execute" and dict(result.call.arguments) == {"query": "weather", "limit": 7}
    assert result.repairs == ()
    sent_null = check("webSearch", {"query": "weather", "limit": None})  # taken out, not defaulted
    assert dict(sent_null.call.arguments) == {"query": "weather"} and rules(sent_null) == ["drop_null"]


def test_rule1_defaults_are_copies_per_call() -> None:
    tagged = _tool(
        "tagged",
        {
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}, "default": []}},
        },
    )
    gate = ArgumentGate(ToolRegistry([tagged]), GateConfig())
    first = check("tagged", {}, gate=gate)
    first.call.arguments["tags"].append("changed by the tool")
    assert dict(check("tagged", {}, gate=gate).call.arguments) == {"tags": []}
    assert first.repairs[0].to == []


# Step 2: tool names --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["web_search", "WebSearch", "web-search", "WEBSEARCH"])
def test_tool_name_case_and_separators(name: str) -> None:
    result = check(name, {"query": "x"}, allowed=["webSearch", "fetchPages"])
    assert result.outcome == "execute"
    assert result.call.tool_name == "webSearch"
    assert repair(result, "tool_name_case") == Repair(
        field="", from_=name, to="webSearch", rule="tool_name_case", kind="safe"
    )


@pytest.mark.parametrize(
    "name", ["`webSearch`", '"webSearch"', "**webSearch**", "<webSearch>", "webSearch()"]
)
def test_tool_name_markup_is_stripped(name: str) -> None:
    result = check(name, {"query": "x"}, allowed=["webSearch"])
    assert result.outcome == "execute" and result.call.tool_name == "webSearch"
    assert repair(result, "tool_name_markup").kind == "safe"


def test_close_tool_name_is_a_semantic_repair() -> None:
    result = check("webSerch", {"query": "x"}, allowed=["webSearch", "fetchPages"])
    assert result.outcome == "execute" and result.call.tool_name == "webSearch"
    fix = repair(result, "tool_name_fuzzy")
    assert (fix.field, fix.from_, fix.to, fix.kind) == ("", "webSerch", "webSearch", "semantic")


def test_far_tool_name_is_refused_listing_exactly_the_allowed_tools() -> None:
    assert round(SequenceMatcher(None, "searchtheweb", "websearch").ratio(), 3) == 0.571
    result = check("searchTheWeb", {"query": "x"}, allowed=["webSearch", "fetchPages"])
    assert result.outcome == "refuse_tool"
    assert (
        result.message
        == "There is no tool `searchTheWeb` in this step. Call one of: `fetchPages`, `webSearch`."
    )
    for other in ("createTask", "run_code", "send_email", "plot_chart", "set_config", "tag_item"):
        assert other not in result.message


def test_registered_tool_outside_the_step_is_refused_not_substituted() -> None:
    result = check("send_email", {"to": "a@b.io", "subject": "s", "body": "b"}, allowed=["webSearch"])
    assert result.outcome == "refuse_tool"
    assert result.message == "The tool you called may not be used in this step. Call one of: `webSearch`."


def test_refusal_never_echoes_a_name_that_contains_a_forbidden_tool() -> None:
    result = check("send_emails", {}, allowed=["webSearch", "fetchPages"])
    assert result.outcome == "refuse_tool"
    assert "send_email" not in (result.message or "")
    assert (result.message or "").endswith("Call one of: `fetchPages`, `webSearch`.")


def test_refusal_with_no_allowed_tools_says_so() -> None:
    result = check("webSearch", {"query": "x"}, allowed=[])
    assert result.outcome == "refuse_tool"
    assert result.message is not None and "No tools may be called in this step" in result.message
    assert "webSearch`." not in result.message.split("step.")[-1]


# Step 3: keys --------------------------------------------------------------------------------------


def test_declared_alias_is_renamed() -> None:
    result = check("webSearch", {"q": "rust async"})
    assert result.outcome == "execute"
    assert dict(result.call.arguments) == {"query": "rust async", "limit": 5}
    assert repair(result, "alias") == Repair(field="query", from_="q", to="query", rule="alias", kind="safe")


def test_canonical_key_wins_over_its_alias() -> None:
    result = check("webSearch", {"q": "from alias", "query": "from canonical"})
    assert result.outcome == "execute"
    assert result.call.arguments["query"] == "from canonical"
    assert "q" not in result.call.arguments
    fix = repair(result, "canonical_wins")
    assert (fix.field, fix.from_, fix.to) == ("query", "from alias", "from canonical")


def test_camel_snake_and_case_variants_of_keys() -> None:
    result = check("createTask", {"Title": "Write report", "dueDays": 3, "PRIORITY": "low"})
    assert result.outcome == "execute"
    assert dict(result.call.arguments) == {
        "title": "Write report",
        "due_days": 3,
        "priority": "low",
        "notify": False,
    }
    assert sorted(r.from_ for r in result.repairs if r.rule == "key_case") == ["PRIORITY", "Title", "dueDays"]


def test_two_aliases_with_different_values_are_ambiguous() -> None:
    result = check("webSearch", {"q": "cats", "search": "dogs"})
    assert result.outcome == "reask"
    assert_clean(result.message)
    assert "`q` and `search` both mean `query`" in (result.message or "")
    assert "query" not in result.call.arguments


def test_two_aliases_with_the_same_value_are_merged() -> None:
    result = check("webSearch", {"q": "cats", "search": "cats"})
    assert result.outcome == "execute" and result.call.arguments["query"] == "cats"


def test_unknown_keys_are_stripped_never_the_whole_call() -> None:
    result = check("webSearch", {"query": "x", "TOOL_NAME": "webSearch", "arg1": 3, "description": "d"})
    assert result.outcome == "execute"
    assert dict(result.call.arguments) == {"query": "x", "limit": 5}
    stripped = {r.field: (r.from_, r.to) for r in result.repairs if r.rule == "strip_unknown_key"}
    assert stripped == {"TOOL_NAME": ("webSearch", None), "arg1": (3, None), "description": ("d", None)}


def test_non_text_keys_are_stripped_not_fatal() -> None:
    result = check("webSearch", {1: "x", "query": "y"})
    assert result.outcome == "execute" and dict(result.call.arguments) == {"query": "y", "limit": 5}


def test_unknown_keys_rejected_by_config() -> None:
    result = check("webSearch", {"query": "x", "arg1": 3}, gate=make_gate(unknown_keys="reject"))
    assert result.outcome == "reask"
    assert_clean(result.message)
    assert "`arg1` is not an argument of `webSearch`" in (result.message or "")


def test_envelope_sent_as_the_arguments_is_unwrapped() -> None:
    result = check("webSearch", {"name": "webSearch", "arguments": {"query": "x"}})
    assert result.outcome == "execute" and dict(result.call.arguments) == {"query": "x", "limit": 5}
    assert repair(result, "unwrap_arguments").to == {"query": "x"}
    result = check("webSearch", {"query": "y", "arguments": {"query": "x"}})
    assert result.call.arguments["query"] == "y" and "unwrap_arguments" not in rules(result)


def test_schema_that_allows_extra_keys_keeps_them() -> None:
    result = check("tag_item", {"item": "a", "colour": "red"})
    assert result.outcome == "execute" and dict(result.call.arguments) == {"item": "a", "colour": "red"}


# Step 4: values ------------------------------------------------------------------------------------


def test_value_alias_and_enum_case() -> None:
    result = check("createTask", {"title": "t", "due_days": 2, "priority": "URGENT"})
    assert result.call.arguments["priority"] == "high"
    assert repair(result, "value_alias").from_ == "URGENT"
    result = check("createTask", {"title": "t", "due_days": 2, "priority": " Medium "})
    assert result.outcome == "execute" and result.call.arguments["priority"] == "medium"
    assert repair(result, "enum_case").kind == "safe"


def test_enum_separator_variant_is_a_case_repair() -> None:
    result = check("plot_chart", {"metric": "cost", "chart": "Bar Chart"})
    assert result.outcome == "execute" and result.call.arguments["chart"] == "bar_chart"
    assert repair(result, "enum_case").to == "bar_chart"


def test_fuzzy_enum_on_a_semantic_property_is_marked_semantic() -> None:
    assert SequenceMatcher(None, "revenue_total", "revenue").ratio() == pytest.approx(0.700)
    result = check("plot_chart", {"metric": "revenue_total"})
    assert result.outcome == "execute" and result.call.arguments["metric"] == "revenue"
    fix = repair(result, "enum_fuzzy")
    assert (fix.from_, fix.to, fix.kind) == ("revenue_total", "revenue", "semantic")


def test_fuzzy_enum_needs_a_margin_over_the_runner_up() -> None:
    # "chart": 0.714 to bar_chart, 0.667 to line_chart: close enough, but not 0.05 ahead.
    result = check("plot_chart", {"metric": "cost", "chart": "chart"})
    assert result.outcome == "fill"
    assert [(n.name, n.reason, n.given) for n in result.needs] == [("chart", "enum_unmapped", "chart")]
    result = check("plot_chart", {"metric": "cost", "chart": "bin_chart"})  # 0.842 vs 0.778
    assert result.outcome == "execute" and result.call.arguments["chart"] == "line_chart"
    assert repair(result, "enum_fuzzy").kind == "safe"


def test_fuzzy_enum_below_threshold_goes_to_arg_fill() -> None:
    result = check("plot_chart", {"metric": "sales"})
    assert result.outcome == "fill"
    assert [(n.name, n.reason, n.allowed) for n in result.needs] == [
        ("metric", "enum_unmapped", ("revenue", "cost", "profit"))
    ]
    assert "metric" not in result.call.arguments


@pytest.mark.parametrize(("given", "expected"), [("10", 10), (7.0, 7), ("10.0", 10), (" 4 ", 4)])
def test_lossless_integer_coercions(given: Any, expected: int) -> None:
    result = check("webSearch", {"query": "x", "limit": given})
    assert result.outcome == "execute"
    assert result.call.arguments["limit"] == expected and type(result.call.arguments["limit"]) is int
    assert repair(result, "coerce_int").from_ == given


@pytest.mark.parametrize("given", ["ten", "10.5", "1e1x", 10.5])
def test_lossy_integer_values_are_not_coerced(given: Any) -> None:
    result = check("webSearch", {"query": "x", "limit": given})
    assert result.outcome == "reask"
    assert result.call.arguments["limit"] == given
    assert not [r for r in result.repairs if r.field == "limit"]
    assert_clean(result.message)
    assert "`limit` must be an integer" in (result.message or "")


@pytest.mark.parametrize("given", [5, ["en"]])
def test_wrong_type_for_an_enum_is_reasked_not_filled(given: Any) -> None:
    result = check("webSearch", {"query": "x", "lang": given})
    assert result.outcome == "reask" and result.needs == ()
    assert "`lang` must be a string" in (result.message or "")


def test_true_is_never_accepted_as_an_integer() -> None:
    result = check("webSearch", {"query": "x", "limit": True})
    assert result.outcome == "reask"
    assert result.call.arguments["limit"] is True
    assert "(got true)" in (result.message or "")


@pytest.mark.parametrize(("given", "expected"), [("false", False), ("False", False), ("TRUE", True)])
def test_boolean_text_is_read_as_written(given: str, expected: bool) -> None:
    result = check("createTask", {"title": "t", "due_days": 1, "priority": "low", "notify": given})
    assert result.outcome == "execute"
    assert result.call.arguments["notify"] is expected


def test_yes_is_not_a_boolean() -> None:
    result = check("createTask", {"title": "t", "due_days": 1, "priority": "low", "notify": "yes"})
    assert result.outcome == "reask" and result.call.arguments["notify"] == "yes"


def test_number_text_and_json_text() -> None:
    result = check("set_config", {"settings": '{"theme": "dark", "size": 2}', "ratio": "0.25"})
    assert result.outcome == "execute"
    assert dict(result.call.arguments) == {"settings": {"theme": "dark", "size": 2}, "ratio": 0.25}
    assert sorted(rules(result)) == ["coerce_number", "parse_json"]


def test_a_number_is_its_text_where_a_string_is_wanted() -> None:
    result = check("createTask", {"title": 24.489795918367346, "due_days": 2, "priority": "low"})
    assert result.outcome == "execute" and result.call.arguments["title"] == "24.489795918367346"
    assert "number_text" in rules(result)
    flag = check("createTask", {"title": True, "due_days": 2, "priority": "low"})  # a boolean is no number
    assert flag.outcome == "reask"
    big = check("createTask", {"title": 1e20, "due_days": 2, "priority": "low"})  # every digit, no exponent
    assert big.call.arguments["title"] == "100000000000000000000"
    assert check("createTask", {"title": float("nan"), "due_days": 2, "priority": "low"}).outcome == "reask"


def test_scalar_is_wrapped_for_an_array() -> None:
    result = check("fetchPages", {"urls": "https://a.io/x"})
    assert result.outcome == "execute" and result.call.arguments["urls"] == ["https://a.io/x"]
    assert repair(result, "wrap_list").to == ["https://a.io/x"]


def test_json_text_of_a_list_is_parsed_not_wrapped() -> None:
    result = check("fetchPages", {"urls": '["https://a.io/1", "https://a.io/2"]'})
    assert result.outcome == "execute" and result.call.arguments["urls"] == [
        "https://a.io/1",
        "https://a.io/2",
    ]
    assert rules(result) == ["parse_json"]


# Constraint violations and optional values -----------------------------------------------------------


def test_minimum_violation_is_reasked_never_clamped() -> None:
    result = check("createTask", {"title": "t", "due_days": 0, "priority": "low"})
    assert result.outcome == "reask"
    assert result.call.arguments["due_days"] == 0
    assert "`due_days` must be at least 1 (got 0)" in (result.message or "")
    assert_clean(result.message)


def test_invalid_optional_value_is_not_replaced_by_its_default() -> None:
    result = check("webSearch", {"query": "x", "limit": 500})
    assert result.outcome == "reask"
    assert result.call.arguments["limit"] == 500
    assert "default" not in rules(result)
    assert "`limit` must be at most 50 (got 500)" in (result.message or "")


def test_unmapped_optional_enum_goes_to_arg_fill_not_default() -> None:
    result = check("webSearch", {"query": "x", "lang": "klingon"})
    assert result.outcome == "fill"
    assert [(n.name, n.reason, n.given) for n in result.needs] == [("lang", "enum_unmapped", "klingon")]
    assert "lang" not in result.call.arguments


def test_fill_and_reask_problems_together_reask_once() -> None:
    result = check("createTask", {"title": "t", "due_days": 0})
    assert result.outcome == "reask"
    text = result.message or ""
    assert "`due_days` must be at least 1" in text and "`priority`" in text


# Steps 6-8: defaults, missing values, placeholders, grounded enums -----------------------------------


def test_missing_required_enum_is_never_filled_with_its_first_value() -> None:
    result = check("createTask", {"title": "Write report", "due_days": 2})
    assert result.outcome == "fill"
    assert "priority" not in result.call.arguments
    (need,) = result.needs
    assert (need.name, need.reason, need.type, need.allowed) == (
        "priority",
        "missing",
        "string",
        ("low", "medium", "high"),
    )
    assert_clean(result.message)


def test_missing_required_enum_filled_when_grounded_once() -> None:
    grounding = Grounding(query="Create a high priority task to write the report in 2 days")
    result = check("createTask", {"title": "Write report", "due_days": 2}, grounding=grounding)
    assert result.outcome == "execute" and result.call.arguments["priority"] == "high"
    fix = repair(result, "grounded_enum")
    assert (fix.field, fix.from_, fix.to, fix.kind) == ("priority", None, "high", "semantic")


def test_grounded_enum_needs_exactly_one_candidate() -> None:
    grounding = Grounding(query="is this low or high priority? decide")
    result = check("createTask", {"title": "t", "due_days": 2}, grounding=grounding)
    assert result.outcome == "fill" and [n.name for n in result.needs] == ["priority"]


@pytest.mark.parametrize("value", [None, "", "   "])
def test_absent_like_required_values_are_missing(value: Any) -> None:
    result = check("webSearch", {"query": value})
    assert result.outcome == "fill"
    assert [(n.name, n.reason) for n in result.needs] == [("query", "missing")]


def test_optional_null_is_dropped_without_a_default() -> None:
    result = check("webSearch", {"query": "x", "limit": None})
    assert result.outcome == "execute"
    assert dict(result.call.arguments) == {"query": "x"}
    assert rules(result) == ["drop_null"]


def test_defaults_fill_only_unsent_optional_fields_of_a_repaired_call() -> None:
    result = check("webSearch", {"Query": "x"})
    assert dict(result.call.arguments) == {"query": "x", "limit": 5}
    assert repair(result, "default") == Repair(field="limit", from_=None, to=5, rule="default", kind="safe")


def test_empty_list_after_a_step_that_returned_urls_goes_to_arg_fill() -> None:
    grounding = Grounding(
        query="read the top results",
        step_outputs={
            "step_1": ({"results": [{"url": "https://news.site.io/a"}, {"url": "https://b.io/b"}]},)
        },
    )
    result = check("fetchPages", {"urls": []}, grounding=grounding)
    assert result.outcome == "fill"
    assert [(n.name, n.reason, n.type) for n in result.needs] == [("urls", "placeholder", "array of string")]
    assert "urls" not in result.call.arguments


@pytest.mark.parametrize("value", ["TODO", "<title>", "your title here", "N/A", "...", "{{title}}"])
def test_placeholder_values_are_missing(value: str) -> None:
    result = check("createTask", {"title": value, "due_days": 1, "priority": "low"})
    assert result.outcome == "fill"
    assert [(n.name, n.reason, n.given) for n in result.needs] == [("title", "placeholder", value)]


def test_placeholder_rules_directly() -> None:
    rules = PlaceholderRules(GateConfig().placeholders)
    for stand_in in (
        "<url>",
        "<recipient email>",
        "Your API key here",
        "user@example.org",
        "www.example.net/x",
    ):
        assert rules.matches(stand_in), stand_in
    for real in (
        "<bob@corp.io>",
        "<https://corp.io/a>",
        "https://example.company.com",
        "an example",
        "none yet",
    ):
        assert not rules.matches(real), real


def test_placeholder_test_is_on_the_whole_value_not_a_substring() -> None:
    title = "Compare example.com and TODO apps"
    result = check("createTask", {"title": title, "due_days": 1, "priority": "low"})
    assert result.outcome == "execute" and result.call.arguments["title"] == title


def test_example_domain_url_is_a_placeholder_unless_grounded() -> None:
    result = check("fetchPages", {"urls": ["https://example.com"]})
    assert result.outcome == "fill" and result.needs[0].reason == "placeholder"
    given = Grounding(query="Summarise https://example.com for me")
    result = check("fetchPages", {"urls": ["https://example.com"]}, grounding=given)
    assert result.outcome == "execute" and result.call.arguments["urls"] == ["https://example.com"]


def test_placeholder_word_written_by_the_user_is_a_value() -> None:
    grounding = Grounding(query="Create a task named TODO, due in 1 day, low priority")
    result = check("createTask", {"title": "TODO", "due_days": 1, "priority": "low"}, grounding=grounding)
    assert result.outcome == "execute" and result.call.arguments["title"] == "TODO"


def test_example_host_named_by_the_user_is_grounded_for_its_pages() -> None:
    grounding = Grounding(query="Check the docs on example.com")
    result = check("fetchPages", {"urls": ["https://example.com/docs"]}, grounding=grounding)
    assert result.outcome == "execute"


def test_example_subdomain_returned_by_an_earlier_step_flows_on() -> None:
    grounding = Grounding(
        query="read the news", step_outputs={"step_1": ({"links": ["https://news.example.com/a"]},)}
    )
    result = check("fetchPages", {"urls": ["https://news.example.com/a"]}, grounding=grounding)
    assert result.outcome == "execute"
    assert check("fetchPages", {"urls": ["https://news.example.com/a"]}).outcome == "fill"


def test_optional_placeholder_is_dropped() -> None:
    result = check("webSearch", {"query": "x", "lang": "<auto>"})
    assert result.outcome == "execute"
    assert "lang" not in result.call.arguments
    assert repair(result, "drop_placeholder").from_ == "<auto>"


# Side effects: the user is asked for an ungrounded target -------------------------------------------


def test_side_effect_target_placeholder_not_grounded_asks_the_user() -> None:
    args = {"to": "recipient@example.com", "subject": "Report", "body": "Here it is"}
    result = check("send_email", args, grounding=Grounding(query="email the report to my manager"))
    assert result.outcome == "clarify"
    assert [(n.name, n.reason) for n in result.needs] == [("to", "placeholder")]
    assert (
        result.message == "`send_email` needs more information before it can run: `to` (recipient address)."
    )


def test_side_effect_target_missing_with_address_in_query_goes_to_arg_fill() -> None:
    args = {"subject": "Report", "body": "Here it is"}
    result = check("send_email", args, grounding=Grounding(query="email the report to ana@corp.io"))
    assert result.outcome == "fill" and [n.name for n in result.needs] == ["to"]


def test_side_effect_target_missing_and_ungrounded_asks_only_for_the_target() -> None:
    """docs/recovery.md ("After the gate"): the target goes to the user; its other fields follow the ordinary
    rules."""
    result = check(
        "send_email", {"subject": "Report"}, grounding=Grounding(query="email the report to my manager")
    )
    assert result.outcome == "clarify"
    assert [n.name for n in result.needs] == ["to"]


def test_side_effect_target_given_by_the_user_runs() -> None:
    args = {"to": "bob@example.com", "subject": "Hi", "body": "Hello"}
    result = check("send_email", args, grounding=Grounding(query="say hello to bob@example.com"))
    assert result.outcome == "execute"


# Step 9: conditional requirements after normalisation -------------------------------------------------


def test_conditional_requirement_sees_normalised_values() -> None:
    result = check("run_code", {"language": "Output"})
    assert result.outcome == "execute"
    assert dict(result.call.arguments) == {"runtime": "output"}
    assert rules(result) == ["alias", "enum_case"]


@pytest.mark.parametrize(
    "args", [{"runtime": "python"}, {"runtime": "python", "code": ""}, {"runtime": "bash"}]
)
def test_conditional_requirement_missing_goes_to_arg_fill(args: dict[str, Any]) -> None:
    result = check("run_code", args)
    assert result.outcome == "fill"
    assert [(n.name, n.reason) for n in result.needs] == [("code", "missing")]
    assert "code" not in result.call.arguments


def test_conditional_requirement_met_by_a_placeholder_is_a_placeholder_need() -> None:
    result = check("run_code", {"runtime": "python", "code": "<your code>"})
    assert result.outcome == "fill"
    assert [(n.name, n.reason, n.given) for n in result.needs] == [("code", "placeholder", "<your code>")]


def test_value_alias_then_conditional_requirement_met() -> None:
    result = check("run_code", {"runtime": "bash", "command": "ls"})
    assert result.outcome == "execute"
    assert dict(result.call.arguments) == {"runtime": "terminal", "code": "ls"}


# Step 5: references --------------------------------------------------------------------------------

SEARCH_OUTPUT = {
    "query": "rust",
    "results": [{"url": "https://a.io/1", "title": "One"}, {"url": "https://b.io/2", "title": "Two"}],
    "urls": ["https://a.io/1", "https://b.io/2"],
}
REF_GROUNDING = Grounding(query="read what you found", step_outputs={"step_1": (SEARCH_OUTPUT,)})


def test_whole_value_reference_keeps_its_type() -> None:
    result = check("fetchPages", {"urls": "$step_1.urls"}, grounding=REF_GROUNDING)
    assert result.outcome == "execute"
    assert result.call.arguments["urls"] == ["https://a.io/1", "https://b.io/2"]
    fix = repair(result, "reference")
    assert (fix.field, fix.from_, fix.to) == ("urls", "$step_1.urls", ["https://a.io/1", "https://b.io/2"])


def test_references_inside_lists_and_text() -> None:
    args = {"urls": ["$step_1.results[0].url", "${step_1.results[1].url}"]}
    result = check("fetchPages", args, grounding=REF_GROUNDING)
    assert result.call.arguments["urls"] == ["https://a.io/1", "https://b.io/2"]
    result = check(
        "webSearch", {"query": "more on $step_1.results[1].title and $step_1.urls"}, grounding=REF_GROUNDING
    )
    assert result.call.arguments["query"] == 'more on Two and ["https://a.io/1","https://b.io/2"]'


def test_reference_into_one_of_several_outputs() -> None:
    grounding = Grounding(query="q", step_outputs={"step_1": ({"urls": ["x"]}, {"urls": ["https://c.io"]})})
    result = check("fetchPages", {"urls": "$step_1[1].urls"}, grounding=grounding)
    assert result.outcome == "execute" and result.call.arguments["urls"] == ["https://c.io"]


def test_unresolved_reference_is_reasked_with_paths_that_exist() -> None:
    result = check("fetchPages", {"urls": "$step_1.results[5].url"}, grounding=REF_GROUNDING)
    assert result.outcome == "reask"
    assert [(n.name, n.reason) for n in result.needs] == [("urls", "unresolved_reference")]
    text = result.message or ""
    assert_clean(text)
    assert "`$step_1.results[5].url` does not resolve" in text
    assert "`$step_1.results` has 2 items" in text
    assert "`$step_1.results[0].url`" in text and "`$step_1.urls`" in text
    assert "urls" not in result.call.arguments


def test_dollar_words_that_name_no_step_are_text() -> None:
    result = check("webSearch", {"query": "price $5 or $HOME"}, grounding=REF_GROUNDING)
    assert result.outcome == "execute" and result.call.arguments["query"] == "price $5 or $HOME"


def test_reference_to_a_step_without_results_yet_is_unresolved() -> None:
    grounding = Grounding(
        query="q", step_outputs={"step_1": (SEARCH_OUTPUT,)}, pending_steps=frozenset({"step_2"})
    )
    result = check("fetchPages", {"urls": "$step_2.urls"}, grounding=grounding)
    assert result.outcome == "reask" and "step `step_2` has no results yet" in (result.message or "")


def test_reference_module_directly() -> None:
    refs = find_references({"a": ["see $step_1.x[0] and ${s2.y}"]}, {"step_1", "s2"})
    assert [(r.step_id, r.path) for r in refs] == [("step_1", ("x", 0)), ("s2", ("y",))]
    assert available_paths(SEARCH_OUTPUT, limit=5) == ["query", "results", "urls", "results[0]", "results[1]"]
    text_output = resolve("$s.items[-1]", {"s": ('{"items": [1, 2, 3]}',)})
    assert text_output.value == 3 and not text_output.unresolved


# Events and messages --------------------------------------------------------------------------------


def test_repair_event_data() -> None:
    fix = Repair(field="limit", from_="10", to=10, rule="coerce_int", kind="safe")
    assert fix.event_data() == {
        "field": "limit",
        "from": "10",
        "to": 10,
        "rule": "coerce_int",
        "kind": "safe",
    }


def test_fill_message_names_tool_fields_and_allowed_values() -> None:
    result = check("createTask", {"title": "TODO", "due_days": 1})
    assert result.outcome == "fill"
    assert result.message == (
        "The call to `createTask` was not run: it needs real values for these arguments:\n"
        "- `title` (string): what the task is. Got a placeholder (TODO).\n"
        "- `priority` (string): missing. Allowed: low, medium, high.\n"
        "Call `createTask` again with them, taken from the request or the earlier results."
    )


def test_rule5_non_object_arguments_are_reasked_naming_the_tool_and_its_fields() -> None:
    result = check("webSearch", ["x"])
    assert result.outcome == "reask"
    text = result.message or ""
    assert text.startswith("The call to `webSearch` was not run.")
    assert (
        "the arguments must be a JSON object of named fields (`query`, `limit`, `lang`), not a list" in text
    )
    assert check("webSearch", '{"query": "x"}').outcome == "execute"  # JSON text of an object is read


def test_rule5_arguments_the_parser_found_not_to_be_an_object_are_reasked() -> None:
    call = ToolCall(
        call_id="c1", tool_name="webSearch", arguments={}, non_object_arguments="weather in Paris"
    )
    result = make_gate().check(call, allowed=["webSearch"], grounding=NO_GROUNDING)
    assert result.outcome == "reask" and "JSON object of named fields" in (result.message or "")
    assert "not text" in (result.message or "")


def test_disabled_gate_repairs_nothing() -> None:
    gate = make_gate(enabled=False)
    assert check("web_search", {"query": "x"}, allowed=["webSearch"], gate=gate).outcome == "refuse_tool"
    result = check("webSearch", {"query": "x", "limit": "10"}, gate=gate)
    assert result.outcome == "reask" and result.repairs == ()


def test_benchmark_compiles_each_schema_once_and_reports_the_target() -> None:
    from benchmarks.gate import render, run

    report = run(iterations=3)
    assert [(r.case, r.outcome) for r in report.rows] == [
        ("valid", "execute"),
        ("repaired", "execute"),
        ("failing", "fill"),
    ]
    assert (report.compiles_at_registration, report.compiles_in_gate) == (report.tools, 0)
    assert "SUMMARY valid call median" in render(report) and "compiled once per tool: yes" in render(report)


@pytest.mark.parametrize(
    ("text", "value", "grounded"),
    [
        ("Mail bob@example.com today", "bob@example.com", True),
        ("Mail bob@example.comx today", "bob@example.com", False),  # inside a longer word
        ("see example.com.", "EXAMPLE.COM", True),  # case and trailing punctuation
        ("xexample.com", "example.com", False),
        ("costs $5 now", "$5", True),  # a value starting with a non-word character
        ("a5 and then 5", "5", True),  # the second occurrence is whole
        ("über_straße", "straße", False),  # `_` joins words
        ("Zürich", "zürich", True),
        ("", "x", False),
        ("anything", "   ", False),
    ],
)
def test_a_value_is_grounded_only_where_it_occurs_whole(text: str, value: str, grounded: bool) -> None:
    assert Grounding(query=text).mentions(value) is grounded
