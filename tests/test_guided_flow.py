"""Which earlier values and which of the request's values an argument is offered: what a user sees
as the right value reaching the right argument."""

from __future__ import annotations

import json
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import Field

from pes_agent.guided.arguments import EarlierResult, guided_arguments_schema
from pes_agent.guided.dataflow import ToolShape
from pes_agent.guided.replies import parse_guided_plan
from pes_agent.tools.decorators import tool
from tests.offered import offered


def test_a_word_of_the_tool_s_name_does_not_name_an_earlier_result() -> None:
    station = EarlierResult(
        step_id="s1",
        description="look up the station York",
        output={"station_id": "ST-9", "trainTypes": "regional"},
        text="",
    )
    schema = {"type": "object", "properties": {"station": {"type": "string"}}, "required": ["station"]}
    part = "show the train timetable for that station"
    got = guided_arguments_schema(schema, part, part, [station], tool_names=("TrainTimetable",))
    assert "ST-9" in offered(got, "station")


def test_a_lookup_made_beside_this_one_for_the_same_part_gives_it_nothing() -> None:
    part = "Find buses from Ashby to Crewe on 3 June 2026"
    first = EarlierResult(
        step_id="s1",
        description=part,
        output={"stop_id": "BS-1"},
        text="",
        direct=False,
        inputs={"name": "Ashby"},
    )
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Name of the town"}},
        "required": ["name"],
    }
    got = offered(guided_arguments_schema(schema, part, part, [first]), "name")
    assert got[0] == "Crewe"
    assert "BS-1" not in got


def test_a_name_or_place_is_offered_no_date() -> None:
    schema = {
        "type": "object",
        "properties": {"town": {"type": "string", "description": "Name of the town"}},
        "required": ["town"],
    }
    part = "What will the weather be in Lyon on 12 May 2026?"
    got = offered(guided_arguments_schema(schema, part, part, []), "town")
    assert "Lyon" in got
    assert not {"12 May 2026", "2026-05-12"} & set(got)


def test_an_argument_about_when_still_takes_a_date() -> None:
    schema = {
        "type": "object",
        "properties": {"when": {"type": "string", "description": "Day of the appointment"}},
        "required": ["when"],
    }
    part = "Book the vet in Lyon on 12 May 2026"
    assert "12 May 2026" in offered(guided_arguments_schema(schema, part, part, []), "when")


class _Stop(TypedDict):
    stop_id: str


class _Trip(TypedDict):
    trip_id: str


@tool
def find_stop(name: str) -> _Stop:
    """Find a bus stop by its name."""
    return {"stop_id": "BS-1"}


@tool
def bus_trips(
    from_stop: Annotated[str, Field(pattern="^BS-[0-9]+$", description="Stop the trip leaves from")],
    to_stop: Annotated[str, Field(pattern="^BS-[0-9]+$", description="Stop the trip arrives at")],
) -> _Trip:
    """List the bus trips between two stops."""
    return {"trip_id": "T-1"}


def test_two_lookups_a_part_implies_do_not_depend_on_each_other() -> None:
    shapes = {
        s.name: ToolShape(
            name=s.name, input_schema=s.input_schema, output_schema=s.output_schema, description=s.summary
        )
        for s in (find_stop, bus_trips)
    }
    part = "List the bus trips from Ashby to Crewe"
    plan = parse_guided_plan(json.dumps({part: "bus_trips"}), [part], list(shapes), shapes, part)
    assert [i.required_tools[0] for i in plan.items] == ["find_stop", "find_stop", "bus_trips"]
    first, second, trips = plan.items
    assert first.id not in second.dependencies
    assert trips.dependencies and dict(trips.bindings) == {
        "from_stop": f"${first.id}.stop_id",
        "to_stop": f"${second.id}.stop_id",
    }


def test_a_value_the_description_names_and_the_request_says_is_the_one_offered() -> None:
    schema = {
        "type": "object",
        "properties": {
            "covering": {
                "type": "string",
                "description": "Floor covering e.g. Oak parquet, Vinyl tiles etc.",
            },
            "rooms": {"type": "integer"},
        },
        "required": ["covering", "rooms"],
    }
    part = "Quote 3 rooms of vinyl tile flooring for the Harbourside flat"
    assert offered(guided_arguments_schema(schema, part, part, []), "covering") == ["Vinyl tiles"]


def test_a_description_s_example_the_request_does_not_say_changes_nothing() -> None:
    schema = {
        "type": "object",
        "properties": {"town": {"type": "string", "description": "A town, e.g. Lyon"}},
        "required": ["town"],
    }
    part = "What is the weather in Porto"
    assert offered(guided_arguments_schema(schema, part, part, []), "town")[0] == "Porto"


WEATHER = {
    "type": "object",
    "properties": {"where": {"type": "string", "description": "The town and country, e.g. Ghent, Belgium"}},
    "required": ["where"],
}


def test_a_place_written_with_its_region_stays_whole_where_the_tool_asks_so() -> None:
    part = "I'm in Tartu, Estonia today; how cold is it?"
    assert offered(guided_arguments_schema(WEATHER, part, part, []), "where") == ["Tartu, Estonia"]


def test_a_list_of_places_is_not_read_as_one_place_with_its_region() -> None:
    part = "How cold is it in Tartu, Narva and Parnu?"
    assert "Tartu, Narva" not in offered(guided_arguments_schema(WEATHER, part, part, []), "where")


def test_a_number_set_by_the_argument_s_name_is_that_argument_s() -> None:
    schema = {
        "type": "object",
        "properties": {n: {"type": "number"} for n in ("p", "q", "r")},
        "required": ["p", "q", "r"],
    }
    part = "Evaluate the cubic with p = 4, q=-2 and r: 7."
    got = guided_arguments_schema(schema, part, part, [])
    assert [offered(got, n) for n in ("p", "q", "r")] == [[4], [-2], [7]]


def test_numbered_arguments_take_the_numbers_of_their_unit_in_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "volume1": {"type": "number"},
            "volume2": {"type": "number"},
            "minutes": {"type": "integer"},
        },
        "required": ["volume1", "volume2", "minutes"],
    }
    part = "Mix 250 ml of syrup with 750 ml of water for 3 minutes"
    got = guided_arguments_schema(schema, part, part, [])
    assert (offered(got, "volume1"), offered(got, "volume2")) == ([250], [750])


def test_ordinal_arguments_are_numbered_too() -> None:
    schema = {
        "type": "object",
        "properties": {"first_speed": {"type": "number"}, "second_speed": {"type": "number"}},
        "required": ["first_speed", "second_speed"],
    }
    part = "Compare a cyclist at 18 kmh with a runner at 11 kmh"
    got = guided_arguments_schema(schema, part, part, [])
    assert (offered(got, "first_speed"), offered(got, "second_speed")) == ([18], [11])


@pytest.mark.parametrize(
    ("description", "fraction"),
    [
        ("Yearly growth rate in decimal form.", True),
        ("Yearly growth, e.g. 3% is 0.03", True),
        ("Yearly growth rate in percent.", False),  # the tool takes percent: the number as written
    ],
)
def test_a_percentage_goes_as_a_fraction_where_the_rate_is_taken_in_decimal_form(
    description: str, fraction: bool
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "growth": {"type": "number", "description": description},
            "years": {"type": "integer"},
        },
        "required": ["growth", "years"],
    }
    part = "Project a town of 12000 growing 4% a year for 6 years"
    options = offered(guided_arguments_schema(schema, part, part, []), "growth")
    assert options == [0.04] if fraction else (4 in options and 0.04 not in options)


def test_numbered_list_arguments_take_the_lists_in_the_order_written() -> None:
    schema = {
        "type": "object",
        "properties": {
            "before_B": {"type": "array", "items": {"type": "number"}},
            "before_A": {"type": "array", "items": {"type": "number"}},
        },
        "required": ["before_B", "before_A"],
    }
    part = "Compare the yields of field one [4.1, 3.9, 4.4] with field two [5.0, 5.2, 4.8, 5.1]"
    got = guided_arguments_schema(schema, part, part, [])
    assert offered(got, "before_A") == [[4.1, 3.9, 4.4]]
    assert offered(got, "before_B") == [[5.0, 5.2, 4.8, 5.1]]


class _Venue(TypedDict):
    venue_id: str
    lat: float
    lng: float


class _Reviews(TypedDict):
    review_text: str


class _Post(TypedDict):
    lat: float
    lng: float


@tool
def venue_search(query: str, lat: float, lng: float) -> _Venue:
    """Search venues by a query near a point."""
    raise NotImplementedError


@tool
def venue_reviews(venue_id: str, limit: int = 20) -> _Reviews:
    """Reviews of a venue."""
    raise NotImplementedError


@tool
def photo_post(handle: str) -> _Post:
    """A photo post, with where it was taken."""
    raise NotImplementedError


def _planned(part: str, choice: str, tools: list[Any]) -> list[str]:
    shapes = {
        t.name: ToolShape(
            name=t.name, input_schema=t.input_schema, output_schema=t.output_schema, description=t.summary
        )
        for t in tools
    }
    plan = parse_guided_plan(json.dumps({part: choice}), [part], list(shapes), shapes, query=part)
    return [i.required_tools[0] for i in plan.items]


def test_a_name_is_no_id_so_the_search_giving_the_id_comes_first() -> None:
    """ "Las Vegas" is no venue id and "100" is the limit's: the search that gives an id is planned,
    and its own coordinates are left to the request (no photo post looked up for them)."""
    part = "Find open jazz venues in Las Vegas with limit 100 and show their reviews"
    assert _planned(part, "venue_reviews", [venue_search, venue_reviews, photo_post]) == [
        "venue_search",
        "venue_reviews",
    ]


def test_an_id_the_request_writes_needs_no_search() -> None:
    part = "Show the reviews of venue VN-2231"
    assert _planned(part, "venue_reviews", [venue_search, venue_reviews, photo_post]) == ["venue_reviews"]


@tool
def roundtrip_search(
    origin_city: Annotated[str, Field(description="Starting city for the trip")],
    departure_date: Annotated[str, Field(description="Start date for the trip")],
) -> _Reviews:
    """Search round-trip flights."""
    raise NotImplementedError


def test_a_city_named_so_takes_no_date_and_a_date_named_so_only_dates() -> None:
    """The description's "Starting" is no reason to offer a city a date: the name says city."""
    part = "Book a round trip flight from New York to Los Angeles that departs on July 5, 2024"
    got = guided_arguments_schema(roundtrip_search.input_schema, part, part, [], tool_text="roundtrip search")
    assert "July 5, 2024" not in offered(got, "origin_city") and "New York" in offered(got, "origin_city")
    assert offered(got, "departure_date") and "New York" not in offered(got, "departure_date")


@tool
def museum_price(
    museum: str, adults: int, children: Annotated[int, Field(description="Children under 16.")] = 0
) -> _Reviews:
    """Price a museum visit."""
    raise NotImplementedError


def test_counts_in_words_are_values_and_an_optional_count_the_request_names_is_given() -> None:
    part = "What would two adults and three children pay at the 'Halden' museum"
    got = guided_arguments_schema(museum_price.input_schema, part, part, [], tool_text="museum price")
    assert offered(got, "adults") == [2] and offered(got, "children") == [3]


def test_a_count_written_twice_counts_the_word_after_each_writing() -> None:
    """The second "two" counts the children, not the adults again: the optional children are 2."""
    part = "Price it for two adults, two children and three seniors at the 'Halden' museum"
    got = guided_arguments_schema(museum_price.input_schema, part, part, [], tool_text="museum price")
    assert offered(got, "adults") == [2] and offered(got, "children") == [2]


def test_an_option_written_with_an_underscore_is_named_by_its_words() -> None:
    from pes_agent.guided.choices import can_ground

    schema = {
        "type": "object",
        "properties": {"service": {"type": "string", "enum": ["oil_change", "brakes"]}},
        "required": ["service"],
    }
    assert can_ground(schema, "Quote an oil change for my van", "")


def test_a_count_that_only_counts_is_not_held_to_a_call() -> None:
    from pes_agent.guided.accounting import stated_values

    assert [s.text for s in stated_values("the lengths of the other two sides are 4 and 5")] == ["4", "5"]


class _Sales(TypedDict):
    total: float


class _Product(TypedDict):
    product_id: str


@tool
def sales_report(start_date: str, end_date: str, product_type: str) -> _Sales:
    """Analyze sales data of a type of product over a period."""
    raise NotImplementedError


@tool
def product_search(query: str) -> _Product:
    """Search products by a query."""
    raise NotImplementedError


def test_a_kind_given_in_plain_words_is_not_looked_up() -> None:
    """ "laptops" is no stated name, but it is the product type: no product search is planned to
    give one (its id would stand in for the type)."""
    part = "analyze the sales data for laptops from 2023-01-01 to 2023-01-31"
    assert _planned(part, "sales_report", [sales_report, product_search]) == ["sales_report"]


def test_a_plain_word_of_one_argument_s_name_gives_it_the_value_beside_it() -> None:
    # "key" says nothing of a value in general, but of encrypt_data's two arguments only one has it
    schema = {
        "type": "object",
        "properties": {"data": {"type": "string"}, "encryption_key": {"type": "string"}},
        "required": ["data", "encryption_key"],
    }
    part = "encrypt the BMI using the key 'abc123'"
    bmi = EarlierResult(
        step_id="step_1", description="Calculate the BMI", output={"BMI": 25.95}, text="25.95"
    )
    got = guided_arguments_schema(schema, part, part, [bmi])
    assert offered(got, "encryption_key") == ["abc123"]
    assert "abc123" not in offered(got, "data")
    # beside another argument's word it is not this one's: "key with tempo 120" gives the tempo
    music = {
        "type": "object",
        "properties": {"key": {"type": "string"}, "tempo": {"type": "integer"}},
        "required": ["key", "tempo"],
    }
    request = "Generate a tune in C major key with tempo 120"
    assert offered(guided_arguments_schema(music, request, request, []), "tempo") == [120]
    assert "120" not in offered(guided_arguments_schema(music, request, request, []), "key")


def test_an_argument_named_for_a_direction_takes_the_value_sent_that_way() -> None:
    schema = {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "source_language": {"type": "string"},
            "target_language": {"type": "string"},
        },
        "required": ["text", "source_language", "target_language"],
    }
    part = "translate 'discount' from English to Spanish"
    got = guided_arguments_schema(schema, part, part, [])
    assert offered(got, "source_language") == ["English"]
    assert offered(got, "target_language") == ["Spanish"]
    assert offered(got, "text")[0] == "discount"
    # an email's bare ``to`` is the address its description asks for, not the name written after "to"
    email = {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}
    request = "Send an email to John Doe at john.doe@example.com"
    assert "john.doe@example.com" in offered(guided_arguments_schema(email, request, request, []), "to")
    # a word after "to" that is no name is a verb, not where anything goes
    assert "know" not in offered(
        guided_arguments_schema(schema, "I want to know", "I want to know", []), "target_language"
    )


def test_a_pronoun_is_never_offered_as_a_value() -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    part = "translate them to French"
    assert "them" not in offered(guided_arguments_schema(schema, part, part, []), "text")


def test_a_direction_inside_an_argument_s_name_is_no_direction() -> None:
    # ``text_to_translate`` is the text: "to" relates its words, it does not say where it goes
    schema = {
        "type": "object",
        "properties": {"text_to_translate": {"type": "string"}, "target_language": {"type": "string"}},
        "required": ["text_to_translate", "target_language"],
    }
    part = "Translate 'hello' to French"
    got = guided_arguments_schema(schema, part, part, [])
    assert offered(got, "text_to_translate") == ["hello"]
    assert offered(got, "target_language") == ["French"]
    # the value sent is read where it is sent, not where it first shows
    text = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "target_language": {"type": "string"}},
        "required": ["text", "target_language"],
    }
    request = "Translate 'English muffins' from French to English"
    assert offered(guided_arguments_schema(text, request, request, []), "target_language") == ["English"]


def test_a_plain_word_another_noun_modifies_names_that_noun_s_value() -> None:
    # "user name" is the user's name, not the file's: file_name is not given one
    schema = {
        "type": "object",
        "properties": {"file_name": {"type": "string"}, "content": {"type": "string"}},
        "required": ["file_name", "content"],
    }
    part = "Write 'hello world' into a file; my user name is 'bob'"
    assert offered(guided_arguments_schema(schema, part, part, []), "file_name") != ["bob"]
    named = "Write 'hi' to the file named 'a.txt'"
    assert offered(guided_arguments_schema(schema, named, named, []), "file_name") == ["a.txt"]


def test_an_id_named_for_a_direction_is_not_given_the_place_written_after_to() -> None:
    schema = {
        "type": "object",
        "properties": {"originSkyId": {"type": "string"}, "destinationSkyId": {"type": "string"}},
        "required": ["originSkyId", "destinationSkyId"],
    }
    part = "Find flights from Boston to New York"
    airport = EarlierResult(step_id="step_2", description="New York", output={"skyId": "NYCA"}, text="NYCA")
    got = guided_arguments_schema(schema, part, part, [airport])
    assert offered(got, "destinationSkyId") != ["New York"]
