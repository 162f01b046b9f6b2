"""A code only one tool's pattern takes names that tool, and a fragment giving an address joins the
ask it serves: "Could you book room LR-2204 …? It's for our circle. Confirmation to …" is one
booking, not a driving lesson, a rental branch and a dentist."""

from __future__ import annotations

from typing import Annotated, TypedDict

from pydantic import Field

from pes_agent.guided.codes import coded
from pes_agent.guided.parts import action_words, query_parts
from pes_agent.guided.prompts import guided_plan_schema
from pes_agent.tools.decorators import tool

RoomId = Annotated[str, Field(pattern="^LR-[0-9]{4}$")]
Day = Annotated[str, Field(pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
Clock = Annotated[str, Field(pattern="^([01][0-9]|2[0-3]):[0-5][0-9]$", description="A 24-hour time.")]


class Booking(TypedDict):
    booking_id: str


@tool
def book_room(room_id: RoomId, date: Day, start: Clock, hours: int, email: str) -> Booking:
    """Book a library room (by room id) on a day from a start time; the confirmation goes to the email."""
    return {"booking_id": "B-1"}


@tool
def book_lesson(instructor: str, date: Day, start: Clock, hours: int, email: str) -> Booking:
    """Book a driving lesson on a Saturday or any day for one, two or three hours at a start time."""
    return {"booking_id": "B-2"}


@tool
def local_time(city: str) -> str:
    """The local time in a city."""
    return "10:00"


TOOLS = [book_room, book_lesson, local_time]
SUMMARIES = {t.name: t.summary for t in TOOLS}
SCHEMAS = {t.name: t.input_schema for t in TOOLS}
OUTPUTS = {t.name: t.output_schema for t in TOOLS if t.output_schema is not None}
QUERY = (
    "Could you book room LR-2204 for Saturday the 7th of November 2026, 10 am for three hours? "
    "It's for our Irish conversation circle. Confirmation to ciorcal.comhra@gmail.com."
)


def test_a_code_only_one_tools_pattern_takes_counts_for_that_tool() -> None:
    assert coded(QUERY, SCHEMAS) == {"book_room": 1}


def test_a_date_every_tool_takes_names_no_tool() -> None:
    assert coded("Book anything for 2026-11-07", SCHEMAS) == {}


def test_the_request_is_one_ask_and_the_code_chooses_its_tool() -> None:
    parts = query_parts(QUERY, action_words(SUMMARIES.values()))
    assert len(parts) == 1  # "It's for …" states, "Confirmation to <address>" gives the address
    schema = guided_plan_schema(parts, SUMMARIES, SCHEMAS, OUTPUTS)
    assert schema["properties"][parts[0]]["enum"] == ["book_room"]


def test_an_imperative_with_an_address_stays_an_ask() -> None:
    actions = action_words([*SUMMARIES.values(), "Send an email to an address."])
    parts = query_parts("Book room LR-2204 for 2026-11-07. Send the confirmation to a@b.com.", actions)
    assert len(parts) == 2


def test_a_pattern_taking_any_word_names_no_tool_and_a_long_code_is_not_read() -> None:
    schemas = {
        **SCHEMAS,
        "get_user": {"properties": {"username": {"type": "string", "pattern": "^[A-Za-z0-9_]{3,20}$"}}},
    }
    assert coded("What is the weather at 3pm in Oslo", schemas) == {}
    slow = {"t": {"properties": {"code": {"type": "string", "pattern": "^([a-z0-9]+)+$"}}}}
    assert coded("code " + "a" * 60 + "1-", slow) == {}  # never tried: no backtracking on request text


def test_a_tool_without_a_schema_does_not_break_planning() -> None:
    schema = guided_plan_schema(
        ["Book room LR-2204"], {**SUMMARIES, "weather": "Get the weather."}, SCHEMAS, OUTPUTS
    )
    assert "Book room LR-2204" in schema["properties"]
