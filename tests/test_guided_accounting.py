"""A guided run is held to what its request stated: a stated value no call took, or one value given
to two arguments of a call, makes the run ``partial`` and the answer says so.

The tools here are made up for the tests (no benchmark's tools); the requests are phrased freely.
"""

from __future__ import annotations

from typing import Any

from pes_agent import create_art_instance
from pes_agent.guided.accounting import (
    doubled_values,
    stated_values,
    unanswered,
    unmet,
    unran_tools,
    unused_values,
)
from pes_agent.state.models import ItemStatus, TodoItem, ToolCallRecord
from pes_agent.testing import ScriptedProvider
from pes_agent.tools.decorators import tool

TIP = {
    "type": "object",
    "properties": {
        "bill": {"type": "number", "description": "The bill before the tip."},
        "percent": {"type": "number", "description": "The tip in percent."},
        "currency": {"type": "string", "enum": ["USD", "EUR"], "default": "USD"},
        "rounding": {"type": "string", "enum": ["none", "up"], "default": "none"},
    },
    "required": ["bill", "percent"],
}


def _step(tool: str, arguments: dict[str, Any], status: str = "success") -> TodoItem:
    record = ToolCallRecord(call_id="c1", tool_name=tool, arguments=arguments, status=status)  # type: ignore[arg-type]
    return TodoItem(
        id="step_1",
        description="do it",
        step_type="tool",
        required_tools=[tool],
        status=ItemStatus.COMPLETED,
        tool_results=[record],
    )


def test_the_values_a_request_states_are_read_whole() -> None:
    stated = {
        s.text: s
        for s in stated_values("Book a table for 4 at 7 PM on March 3, 2026 with 'Ana Ruiz' in Porto")
    }
    assert set(stated) == {"Ana Ruiz", "March 3, 2026", "7 PM", "4", "Porto"}
    assert stated["March 3, 2026"].forms == ("March 3, 2026", "2026-03-03")  # one value in two forms


def test_a_number_inside_a_name_is_the_name_and_a_name_of_the_tool_is_no_data() -> None:
    query = "Show the Skyline Radio charts for COVID-19 week"
    assert [s.text for s in stated_values(query, "skyline_radio_charts")] == ["COVID-19"]
    assert [s.text for s in stated_values(query, "skyline_radio_charts: news on COVID-19")] == []


def test_a_value_counts_as_used_whole_inside_a_text_or_in_another_form() -> None:
    items = [
        _step("plan_trip", {"when": "2026-03-03", "note": "party of 4 people"}),
        _step("tip", {"bill": 80, "percent": 0.15}),
    ]
    query = "Plan a trip on March 3, 2026 for 4 people and tip 15% on $80."
    assert unused_values(query, items) == []


def test_a_value_no_call_took_is_reported_as_written() -> None:
    items = [_step("tip", {"bill": 18, "percent": 18})]
    assert unused_values("Tip 18% on a bill of $50.", items) == ["50"]


def test_a_count_in_words_is_a_value_unless_it_counts_what_the_request_writes_or_named() -> None:
    race = _step("find_race", {"name": "Bray Seafront Run"})
    query = (
        "Twelve of our members run the half marathon at the Bray Seafront Run. How much do the entries cost?"
    )
    assert unused_values(query, [race]) == ["Twelve"]  # the entries were never multiplied out
    assert unused_values(query, [race, _step("calculator", {"expression": "38 * 12"})]) == []
    # a count of the numbers that follow, or of things named before it, is no value of its own
    assert unused_values("The other two sides are 4 and 5.", [_step("hyp", {"a": 4, "b": 5})]) == []
    prices = [
        _step("price", {"item": "lamp"}),
        _step("price", {"item": "chair"}),
        _step("calc", {"e": "10 + 30"}),  # no 2 in it: "two" must be let go for what it counts
    ]
    assert unused_values("Look up the price of a lamp and of a chair, then add the two prices.", prices) == []
    assert unused_values("Price a lamp and a chair, then add the two prices together.", prices) == []
    cities = "Get the weather for three cities: Paris, London and Rome."
    assert unused_values(cities, [_step("weather", {"city": c}) for c in ("Paris", "London", "Rome")]) == []
    # a count is held as a whole number: 120 and 2012 hold no twelve
    assert unused_values(query, [race, _step("calculator", {"expression": "38 * 120"})]) == ["Twelve"]
    assert unused_values(query, [_step("find_race", {"name": "Bray Seafront Run", "year": "2012"})]) == [
        "Twelve"
    ]


def test_a_name_that_chose_an_option_by_its_description_was_taken() -> None:
    schema = {
        "properties": {
            "to": {"type": "string", "enum": ["GBP", "JPY"], "description": "GBP (British pounds), JPY (yen)"}
        }
    }
    items = [_step("convert", {"to": "GBP"})]
    assert unused_values("What is it in British pounds?", items, schemas={"convert": schema}) == []
    assert unused_values("What is it in British pounds?", items) == []  # GBP is its code too
    other = [_step("convert", {"to": "JPY"})]
    assert unused_values("What is it in British pounds?", other) == ["British pounds"]


def test_one_value_in_two_arguments_is_a_guess_unless_stated_twice_or_offered_by_the_schema() -> None:
    doubled = [_step("tip", {"bill": 18, "percent": 18, "currency": "USD"})]
    assert doubled_values("Tip 18% on a bill of $50.", doubled, {"tip": TIP}) == [
        '"18" as both bill and percent of tip'
    ]
    assert doubled_values("Tip 18% on a bill of $18.", doubled, {"tip": TIP}) == []  # said twice
    options = [_step("tip", {"bill": 50, "percent": 18, "currency": "none", "rounding": "none"})]
    assert doubled_values("Tip 18% on $50.", options, {"tip": TIP}) == []  # "none" is the schema's own


def test_a_run_without_calls_is_judged_by_its_steps_and_refused_calls_took_nothing() -> None:
    assert unmet("Tip 18% on $50.", [], {}, {}) == []
    refused = [
        _step("tip", {"bill": 50, "percent": 18}, status="refused"),
        _step("tip", {"bill": 1, "percent": 18}),
    ]
    assert unmet("Tip 18% on $50.", refused, {"tip": TIP}, {"tip": ""}) == [
        '"50" from the request was used by no step'
    ]
    # a call that failed did nothing with its values: the subject tried as a name was sent to no one
    email = "Email Omar Haddad with the subject 'Badge renewal'."
    tried = [
        _step("find_employee", {"name": "Badge renewal"}, status="error"),
        _step("find_employee", {"name": "Omar Haddad"}),
    ]
    assert unused_values(email, tried) == ["Badge renewal"]
    assert unmet(email, tried, {}, {"find_employee": ""}) == [
        '"Badge renewal" from the request was tried only in calls that failed'
    ]


# --- a whole run on the scripted provider ----------------------------------------------------------


async def test_a_run_that_left_a_stated_number_unused_is_partial_and_says_which() -> None:
    config = {
        "providers": {"main": {"adapter": "scripted", "structured_output": True, "guided": True}},
        "storage": {"type": "memory"},
        "tools": ["pes_agent.demo.text_tools:LOCAL_TOOLS"],
    }
    # the model takes 7 twice and leaves 12: the calculation ran, but not the one asked for
    provider = ScriptedProvider(['{"expression":"7 * 7"}', "It is 49."])
    async with await create_art_instance(config, providers={"main": provider}) as art:
        response = await art.process("Compute 12 * 7.", thread_id="t")
    assert response.status == "partial"
    assert response.response.endswith('Not done: "12" from the request was used by no step.')
    assert response.ui_metadata is not None
    assert response.ui_metadata["unmet"] == ['"12" from the request was used by no step']


def _found(description: str, tool: str, output: dict[str, Any]) -> TodoItem:
    item = _step(tool, {"country": "Peru"})
    item.description = description
    item.tool_results[0].output = output
    return item


def test_a_question_nothing_that_ran_speaks_of_is_unanswered() -> None:
    tools = {"country_profile": "Facts about a country.", "harbour_weather": "Current weather at a harbour."}
    facts = _found(
        "How warm is it in the capital of Peru", "country_profile", {"capital": "Lima", "area": 12}
    )
    assert unanswered([facts], tools) == ["How warm is it in the capital of Peru"]
    weather = _found(
        "What is the temperature in the capital of Peru", "harbour_weather", {"temperature_c": 19}
    )
    assert unanswered([weather], tools) == []  # "capital" is a means; "temperature" was found
    instruction = _found("Tell me the capital of Peru", "country_profile", {"capital": "Lima"})
    assert unanswered([instruction], tools) == []  # not a question


def test_a_question_opening_with_what_it_asks_of_something_asks_for_it() -> None:
    tools = {"chef_lookup": "Find a chef's id by name.", "country_profile": "Facts about a country."}
    only_id = _found("What is Sara Lind's rating on Tastebook", "chef_lookup", {"chef_id": "C-9"})
    assert unanswered([only_id], tools) == ["What is Sara Lind's rating on Tastebook"]
    capital = _found("What is the capital of Peru", "country_profile", {"capital": "Lima"})
    assert unanswered([capital], tools) == []


@tool
def nights_between(arrival: str, departure: str) -> int:
    """Count the nights of a stay between two days (YYYY-MM-DD)."""
    return 31


async def test_one_value_given_to_two_arguments_is_asked_once_more_without_it_for_the_second() -> None:
    config = {
        "providers": {"main": {"adapter": "scripted", "structured_output": True, "guided": True}},
        "storage": {"type": "memory"},
    }
    twice = '{"arrival":"2025-01-01","departure":"2025-01-01"}'
    apart = '{"arrival":"2025-01-01","departure":"2025-02-01"}'
    provider = ScriptedProvider([twice, apart, "31 nights."])
    async with await create_art_instance(config, tools=[nights_between], providers={"main": provider}) as art:
        response = await art.process("How many nights between 2025-01-01 and 2025-02-01?", thread_id="t")
    second_ask = provider.calls[1].response_schema
    assert second_ask is not None and "2025-01-01" not in second_ask["properties"]["departure"]["enum"]
    assert response.status == "success" and "31" in response.response


def test_a_name_that_is_part_of_a_stated_date_is_that_date() -> None:
    texts = [s.text for s in stated_values("We moved in February. What did we use in February 2026?")]
    assert texts == ["February 2026"]  # "February" alone is no other value to account for


@tool
def product_details(product: str) -> dict[str, Any]:
    """Retrieve a product's details."""
    return {"name": product, "weight_g": 250}


@tool
def product_offers(product: str) -> dict[str, Any]:
    """Retrieve the shops' offers for a product."""
    return {"best_price": 99.0}


def test_a_tool_the_request_names_that_never_ran_is_named_when_kin_to_one_that_ran() -> None:
    catalogue = {t.name: t.summary for t in (product_details, product_offers)}
    assert unran_tools(
        "Get me the details and offers for the Trailmaster tent", ["product_details"], catalogue
    ) == ['"offers" (product_offers)']
    assert unran_tools("Get me the details of the Trailmaster tent", ["product_details"], catalogue) == []
    # a word of an unrelated tool's name asks nothing of it
    other = {"flight_search": "Search flights.", "stock_price": "Get a stock price.", "news": "News."}
    assert unran_tools("Find the cheapest price for a flight to Oslo", ["flight_search"], other) == []


async def test_a_run_that_left_a_named_tool_unrun_is_partial() -> None:
    config = {
        "providers": {"main": {"adapter": "scripted", "structured_output": True, "guided": True}},
        "storage": {"type": "memory"},
    }
    provider = ScriptedProvider(['{"product":"Trailmaster tent"}', "It weighs 250 g."])
    tools = [product_details, product_offers]
    async with await create_art_instance(config, tools=tools, providers={"main": provider}) as art:
        response = await art.process(
            "Show me the details and the offers for the Trailmaster tent", thread_id="t"
        )
    unmet_reasons = list((response.ui_metadata or {}).get("unmet", []))
    assert response.status == "partial" and any("offers" in r for r in unmet_reasons), unmet_reasons


def test_a_currency_the_request_asks_the_answer_in_is_held_to_a_call() -> None:
    query = "What does the Bergen ferry cost for two in Swiss francs?"
    priced = [_step("ferry_fare", {"route": "Bergen", "people": 2})]
    converted = [*priced, _step("convert", {"amount": 84, "from": "NOK", "to": "CHF"})]
    assert unused_values(query, priced) == ["Swiss francs"]
    assert unused_values(query, converted) == []


def test_a_currency_an_amount_is_written_in_asks_for_nothing() -> None:
    items = [_step("split", {"total": 60, "people": 3})]
    assert unused_values("Split 60 euros between three friends", items) == []
