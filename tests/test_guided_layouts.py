"""Dates and times in the layout a tool asks for: the value a user would see the tool receive."""

from __future__ import annotations

from typing import Any

import pytest

from pes_agent.guided.arguments import EarlierResult, guided_arguments_schema
from pes_agent.guided.language import language
from pes_agent.guided.layouts import assigned, laid_out, layout_of
from tests.offered import offered


@pytest.mark.parametrize(
    ("schema", "text", "values"),
    [
        ({"type": "string", "format": "date"}, "Book it for 3 February 2027.", ["2027-02-03"]),
        ({"type": "string", "description": "Day of the visit (MM/DD/YYYY)"}, "on 2027-02-03", ["02/03/2027"]),
        (
            {"type": "string", "description": "Visit day, format dd.mm.yyyy"},
            "on Feb. 3, 2027",
            ["03.02.2027"],
        ),
        (
            {"type": "string", "description": "Pickup in format YYYY-MM-DD"},
            "pickup Sept.9,2026",
            ["2026-09-09"],
        ),
        ({"type": "string", "description": "Opening time, HH:MM (24h)"}, "opens at 7:30 pm", ["19:30"]),
        (
            {"type": "string", "description": "When, as 'YYYY-MM-DDTHH:MM:SS'"},
            "Move the call to May 4, 2026 at 9am",
            ["2026-05-04T09:00:00"],
        ),
        ({"type": "string", "description": "Start, YYYY-MM-DD HH:MM"}, "on 2026-05-04", []),  # no time said
        (
            {"type": "string", "description": "e.g. 'YYYY-MM-DDTHH:MM:SSZ'"},
            "May 4, 2026 at 9am",
            ["2026-05-04T09:00:00"],
        ),
        ({"type": "string", "format": "date"}, "from June 29 to July 2, 2027", ["2027-06-29", "2027-07-02"]),
    ],
)
def test_a_date_or_time_is_offered_in_the_layout_the_schema_asks(
    schema: dict[str, Any], text: str, values: list[str]
) -> None:
    layout = layout_of(schema)
    assert layout is not None
    assert laid_out(layout, text) == values


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "description": "Comma-separated list of ids"},
        {"type": "string", "description": "Shirt size: S, M or L"},
        {"type": "integer", "description": "Minutes, MM"},
        {"type": "string", "enum": ["YYYY", "MM"]},
    ],
)
def test_a_schema_without_a_layout_asks_for_none(schema: dict[str, Any]) -> None:
    assert layout_of(schema) is None


def test_clock_times_read_on_the_24_hour_clock() -> None:
    assert [t.iso for t in language().times("at 8pm, 12 AM, 12:30 p.m. and 14:05")] == [
        "20:00",
        "00:00",
        "12:30",
        "14:05",
    ]


REPAIR = {
    "type": "object",
    "properties": {
        "drop_off": {"type": "string", "description": "Drop-off date. Format: YYYY-MM-DD"},
        "collect": {"type": "string", "description": "Collection date. Format: YYYY-MM-DD"},
        "shop_id": {"type": "string", "description": "The shop"},
    },
    "required": ["drop_off", "shop_id"],
}


def test_two_dates_go_to_the_arguments_whose_words_stand_before_them() -> None:
    text = "I'll collect it on 9 March 2027; book the drop off for 2 March 2027 at the Elm shop."
    got = assigned(REPAIR["properties"], ["drop_off", "collect"], text)
    assert got == {"drop_off": ["2027-03-02"], "collect": ["2027-03-09"]}


def test_two_dates_no_word_tells_apart_go_in_the_order_written() -> None:
    text = "Book the bike repair from 2 March 2027 until 9 March 2027 at the Elm shop."
    got = assigned(REPAIR["properties"], ["drop_off", "collect"], text)
    assert got == {"drop_off": ["2027-03-02"], "collect": ["2027-03-09"]}


def test_a_date_argument_is_offered_no_earlier_result_nor_other_words() -> None:
    part = "Book the bike repair at the shop found, dropping it off on March 2nd, 2027"
    earlier = [EarlierResult(step_id="s1", description="find the Elm shop", output={"shop": "EL-4"}, text="")]
    schema = guided_arguments_schema(REPAIR, part, part, earlier)
    assert offered(schema, "drop_off") == ["2027-03-02"]
    assert "2027-03-02" not in offered(schema, "shop_id")


def test_start_and_end_times_on_one_day_each_take_their_own() -> None:
    event = {
        "type": "object",
        "properties": {
            "begins": {"type": "string", "description": "Begins at, YYYY-MM-DD HH:MM"},
            "ends": {"type": "string", "description": "Ends at, YYYY-MM-DD HH:MM"},
        },
        "required": ["begins", "ends"],
    }
    part = "Put the choir rehearsal in the calendar on 14 June 2026 from 6 pm to 8:30 pm"
    schema = guided_arguments_schema(event, part, part, [])
    assert offered(schema, "begins") == ["2026-06-14 18:00"]
    assert offered(schema, "ends") == ["2026-06-14 20:30"]


def test_a_date_found_before_is_not_replaced_by_one_the_request_states_elsewhere() -> None:
    weekday = {
        "type": "object",
        "properties": {"day": {"type": "string", "format": "date"}},
        "required": ["day"],
    }
    query = "Move the deadline of 2027-03-01 by 12 days, then tell me the weekday of the new deadline"
    part = "tell me the weekday of the new deadline"
    moved = EarlierResult(
        step_id="s1", description="Move the deadline", output={"date": "2027-03-13"}, text=""
    )
    options = offered(guided_arguments_schema(weekday, part, query, [moved]), "day")
    assert "2027-03-13" in options
    assert "2027-03-01" not in options


@pytest.mark.parametrize(
    ("pattern", "text", "values"),
    [
        ("^([01][0-9]|2[0-3]):[0-5][0-9]$", "from 10 am for three hours", ["10:00"]),
        ("^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "on Saturday the 7th of November 2026", ["2026-11-07"]),
    ],
)
def test_a_pattern_that_takes_a_usual_layout_asks_for_it(pattern: str, text: str, values: list[str]) -> None:
    layout = layout_of({"type": "string", "pattern": pattern})
    assert layout is not None
    assert laid_out(layout, text) == values


@pytest.mark.parametrize("pattern", ["^LR-[0-9]{4}$", ".*", "^\\d+$", "([unclosed"])
def test_a_pattern_of_a_code_or_of_anything_asks_for_no_layout(pattern: str) -> None:
    assert layout_of({"type": "string", "pattern": pattern}) is None
