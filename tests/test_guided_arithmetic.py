"""A guided step's expression offers only the operation its words name, in the order they give.

Before this, the grammar let the small model pick any operator between two grounded numbers; it
picked ``42 + 3`` for "multiply the result by 3" and ``77*32`` for "subtract 32 from that", and
each run reported success with a wrong answer (``benchmarks/local_model.py``: 4 of 24 tasks).
"""

from __future__ import annotations

import re

import pytest

from pes_agent.demo.text_tools import LOCAL_TOOLS
from pes_agent.guided.arguments import EarlierResult, guided_arguments_schema
from pes_agent.guided.arithmetic import Operation, named_operation, operation_words
from pes_agent.guided.choices import tool_choices
from pes_agent.llm.gbnf import schema_to_gbnf

CALCULATOR = next(spec for spec in LOCAL_TOOLS if spec.name == "calculator").input_schema


@pytest.mark.parametrize(
    ("clause", "operation"),
    [
        ("multiply the result by 3", Operation("*")),
        ("What is 9 times 6", Operation("*")),
        ("Compute 12 * 7", Operation("*")),
        ("Calculate 45 x 24", Operation("*")),
        ("Add 15 and 27", Operation("+")),
        ("what is 7 plus 8", Operation("+")),
        ("subtract 32 from that", Operation("-", right=("32",))),
        ("Subtract 19 from 100", Operation("-", left=("100",), right=("19",))),
        ("subtract the result from 100", Operation("-", left=("100",))),
        ("Take 15 away from 40", Operation("-", left=("40",), right=("15",))),
        ("subtract 100 from the sum", Operation("-", right=("100",))),  # "the sum": an earlier result
        ("multiply the sum by 2", Operation("*")),
        ("the sum of 3 and 4", Operation("+")),
        ("divide the result by 3", Operation("/", right=("3",))),
        ("Divide 100 by 4", Operation("/", left=("100",), right=("4",))),
        ("what is 10 - 4", Operation("-")),
        ("take 5 off it", Operation("-", right=("5",))),
        # words that carry their operand: offered as if said; not where they are everyday English
        ("Double 21", Operation("*", implied=("2",))),
        ("halve the result", Operation("/", right=("2",), implied=("2",))),
        ("triple that", Operation("*", implied=("3",))),
    ],
)
def test_a_clause_names_its_operation_and_for_minus_and_divide_the_order(
    clause: str, operation: Operation
) -> None:
    assert named_operation(clause) == operation


@pytest.mark.parametrize(
    ("clause", "operation"),
    [
        ("convert 5 kilometers to miles", None),  # no operation at all
        ("book a double room for 2 nights", None),
        ("wait half an hour", None),
        ("add the days to 2025-01-15", Operation("+")),  # a date's hyphens are not minus signs
        ("add the product of the two prices", Operation("+*")),  # several named: those, in no order
        ("divide the remainder by 5", Operation("/", right=("5",))),  # "the remainder": an earlier result
        ("the remainder of 17 divided by 5", Operation("/%")),
    ],
)
def test_a_clause_naming_several_operations_keeps_those_and_none_keeps_all(
    clause: str, operation: Operation | None
) -> None:
    assert named_operation(clause) == operation


def _grammar(part: str, earlier: list[EarlierResult]) -> str:
    schema = guided_arguments_schema(CALCULATOR, part, "q", earlier)
    return schema_to_gbnf(schema)


def _pairs(grammar: str) -> set[tuple[str, str]]:
    return set(re.findall(r'"([\d.]+)" operator\d* "([\d.]+)"', grammar))


def _operators(grammar: str) -> str:
    (body,) = re.findall(r"^operator\d* ::= (.*)$", grammar, re.MULTILINE)
    return body


def test_multiply_offers_only_times_between_the_grounded_numbers() -> None:
    earlier = [EarlierResult(step_id="step_1", description="Add 15 and 27", output=42, text="42")]
    grammar = _grammar("multiply the result by 3", earlier)
    assert _operators(grammar) == '" "? ("*") " "?'
    assert ("42", "3") in _pairs(grammar)


def test_subtract_from_that_puts_the_named_number_on_the_right() -> None:
    earlier = [
        EarlierResult(
            step_id="step_1", description="convert", output={"value": 77, "unit": "fahrenheit"}, text=""
        )
    ]
    grammar = _grammar("subtract 32 from that", earlier)
    assert _operators(grammar) == '" "? ("-") " "?'
    assert _pairs(grammar) == {("77", "32")}  # never 32 - 77, never 77 * 32


def test_a_part_without_an_operation_word_keeps_every_operator_and_both_orders() -> None:
    earlier = [EarlierResult(step_id="step_1", description="d", output=42, text="42")]
    grammar = _grammar("then 3 with the result", earlier)
    assert _operators(grammar) == '" "? [-+*/^%] " "?'
    assert {("42", "3"), ("3", "42")} <= _pairs(grammar)


def test_operation_words_inside_quoted_text_are_data_not_the_request() -> None:
    grammar = _grammar("count 4 and 9 in 'times table'", [])
    assert _operators(grammar) == '" "? [-+*/^%] " "?'


def test_a_number_said_twice_may_stand_on_both_sides_and_others_only_once() -> None:
    grammar = _grammar("Multiply 11 by 11", [])
    assert _pairs(grammar) == {("11", "11")}
    earlier = [EarlierResult(step_id="step_1", description="d", output=42, text="42")]
    assert ("42", "42") not in _pairs(_grammar("multiply the result by 3", earlier))


def test_a_part_that_names_arithmetic_in_other_words_plans_the_tool_that_says_it_computes() -> None:
    summaries = {spec.name: spec.summary for spec in LOCAL_TOOLS}
    summaries["product_price"] = "Look up the price of a product in US dollars."
    assert tool_choices("take 2.5 away from it", summaries) == ["calculator"]
    assert tool_choices("Compute 12 * 7", summaries) == ["calculator"]
    assert tool_choices("look up the price of a lamp", summaries) == ["product_price"]


def test_it_means_what_the_earlier_step_was_asked_for_not_what_it_was_given() -> None:
    facts = {"country": "Canada", "capital": "Ottawa", "population_millions": 40.1}
    earlier = [
        EarlierResult(step_id="step_1", description="Look up the capital of Canada", output=facts, text="")
    ]
    transform = next(spec for spec in LOCAL_TOOLS if spec.name == "transform_text").input_schema
    text = guided_arguments_schema(transform, "convert it to upper case", "q", earlier)["properties"]["text"]
    assert "Ottawa" in text["enum"] and "Canada" not in text["enum"]
    earlier = [EarlierResult(step_id="step_1", description="Look up Canada", output=facts, text="")]
    text = guided_arguments_schema(transform, "convert it to upper case", "q", earlier)["properties"]["text"]
    assert {"Ottawa", "Canada"} <= set(text["enum"])  # asked for nothing in particular: every value


def test_the_plain_verb_is_added_only_where_the_clause_does_not_say_it() -> None:
    assert operation_words("Compute 12 * 7") == ["multiply"]
    assert operation_words("take 2.5 away from it") == ["subtract"]
    assert operation_words("Add 20 and 5") == []  # "add" twice would outweigh the clause's other words
    assert operation_words("convert 5 km to miles") == []


@pytest.mark.parametrize(
    "clause",
    [
        "find hotels in Paris costing less than 200 euros",  # a comparison, not a subtraction
        "check the weather three times a day",  # how often, not a product
        "find a less expensive hotel",
    ],
)
def test_everyday_less_and_times_name_no_arithmetic_and_do_not_offer_the_calculator(clause: str) -> None:
    assert named_operation(clause) is None
    summaries = {spec.name: spec.summary for spec in LOCAL_TOOLS}
    summaries["search_hotels"] = "Search hotels in a city by price, or the weather there."
    assert "calculator" not in tool_choices(clause, summaries)


@pytest.mark.parametrize(
    ("clause", "operation"),
    [
        ("100 less 5", Operation("-", right=("5",))),
        ("the total less the discount", Operation("-")),
        ("5 times the result", Operation("*")),
        ("take 100 and subtract 5", Operation("-", right=("5",))),  # "take 100": where it starts
        ("take 10 and divide it by 2", Operation("/", right=("2",))),
        ("take 6 away from 10", Operation("-", left=("10",), right=("6",))),
    ],
)
def test_less_times_and_take_keep_their_arithmetic_meaning(clause: str, operation: Operation) -> None:
    assert named_operation(clause) == operation


def test_take_a_number_then_subtract_offers_only_that_order() -> None:
    assert _pairs(_grammar("take 100 and subtract 5", [])) == {("100", "5")}


def test_a_us_date_is_no_division_but_a_fraction_still_is() -> None:
    assert named_operation("book a table for 4 on 11/26/2026") is None
    assert named_operation("what is 12/4") == Operation("/")


def test_a_number_the_words_carry_is_an_operand_of_the_expression() -> None:
    """ "Double 21, then add 8" composed "21" alone: the 2 was never written, and the run reported
    success with 29."""
    expression = guided_arguments_schema(CALCULATOR, "Double 21", "q", [])["properties"]["expression"]
    assert sorted(expression["x-composed-of"]) == ["2", "21"] and expression["x-composed-ops"] == "*"
    earlier = [EarlierResult(step_id="step_1", description="d", output=42, text="42")]
    expression = guided_arguments_schema(CALCULATOR, "halve it", "q", earlier)["properties"]["expression"]
    assert expression["x-composed-right"] == ["2"] and "42" in expression["x-composed-of"]
