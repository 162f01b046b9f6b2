"""A catalogue of near neighbours: every tool "calculates", two take the same loan, outputs that
later parts name as the thing they act on.

The tools are a household-finance kit no benchmark uses. What is checked is what a user sees in the
plan: the tool the part asks for (not the one whose description lists the most words), an earlier
result used rather than found again, and no steps planned from words every tool shares.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from pydantic import Field

from pes_agent.guided.coordinated import split_lists
from pes_agent.guided.dataflow import ToolShape, implied_steps
from pes_agent.guided.grounding import text_spans
from pes_agent.guided.prompts import guided_plan_schema
from pes_agent.tools.decorators import tool


class Payment(TypedDict):
    monthly_payment: float


class Squared(TypedDict):
    squared: float


class Tip(TypedDict):
    tip_amount: float


class Interest(TypedDict):
    interest_earned: float


class Fuel(TypedDict):
    fuel_total: float


@tool
def payment_schedule(principal: float, annual_rate: float, years: int) -> Payment:
    """Calculate the monthly payment of a loan."""
    return {"monthly_payment": principal * annual_rate / 1200 + principal / (12 * years)}


@tool
def mortgage_cost(loan_amount: float, interest_rate: float, loan_term: int) -> Payment:
    """Calculate the monthly mortgage payment based on the loan amount, interest rate and loan term."""
    return {"monthly_payment": loan_amount * interest_rate / 1200 + loan_amount / (12 * loan_term)}


@tool
def square(number: float) -> Squared:
    """Calculate the square of a number."""
    return {"squared": number * number}


@tool
def tip(bill_total: float, percent: float) -> Tip:
    """Calculate the tip amount for a bill."""
    return {"tip_amount": bill_total * percent / 100}


@tool
def savings_interest(principal_amount: float, rate: float, years: int) -> Interest:
    """Calculate the interest earned on savings."""
    return {"interest_earned": principal_amount * rate * years / 100}


@tool
def fuel_cost(distance_km: float, price_per_litre: float) -> Fuel:
    """Calculate the fuel cost of a trip."""
    return {"fuel_total": distance_km * price_per_litre / 15}


class Cipher(TypedDict):
    cipher: str


class Share(TypedDict):
    share: float


@tool
def encrypt(text: str, key: str) -> Cipher:
    """Encrypt a text with a key."""
    return {"cipher": text[::-1] + key}


@tool
def split_bill(total: float, people: int) -> Share:
    """Split a bill between people."""
    return {"share": total / people}


TOOLS = [payment_schedule, mortgage_cost, square, tip, savings_interest, fuel_cost, encrypt, split_bill]
SUMMARIES = {t.name: t.summary for t in TOOLS}
SCHEMAS = {t.name: t.input_schema for t in TOOLS}
OUTPUTS = {t.name: t.output_schema for t in TOOLS if t.output_schema is not None}
SHAPES = {
    t.name: ToolShape(
        name=t.name, input_schema=t.input_schema, output_schema=t.output_schema, description=t.summary
    )
    for t in TOOLS
}


def _offered(parts: list[str]) -> list[list[str]]:
    schema = guided_plan_schema(parts, SUMMARIES, SCHEMAS, OUTPUTS)
    return [schema["properties"][p]["enum"] for p in parts]


def test_the_tool_whose_inputs_the_part_names_wins_over_a_longer_description() -> None:
    part = "Calculate the monthly payment for a principal of 10000 at an annual rate of 5% over 5 years"
    assert _offered([part]) == [["payment_schedule"]]


def test_an_earlier_result_the_part_names_is_data_not_the_tool_asked_for() -> None:
    parts = [
        "Calculate the monthly mortgage payment for a loan amount of 200000, an interest rate of 3% and a "
        "loan term of 30 years",
        "calculate the square of the monthly mortgage payment",
    ]
    assert _offered(parts)[1] == ["square"]
    steps = implied_steps("square", parts[1], parts[0], SHAPES, earlier={"mortgage_cost": "step_1"})
    assert [(s.tool, [(b.argument, b.step_id, b.path) for b in s.bindings]) for s in steps] == [
        ("square", [("number", "step_1", "monthly_payment")])
    ]


def test_words_every_tool_shares_plan_no_producers() -> None:
    # "calculate", "interest", "amount": said of many of these tools, they point to none of them
    steps = implied_steps(
        "mortgage_cost", "calculate the total interest paid over the loan term", "x", SHAPES
    )
    assert [s.tool for s in steps] == ["mortgage_cost"]


def _bound(
    goal: str, part: str, earlier: dict[str, str]
) -> list[tuple[str, list[tuple[str, str | None, str]]]]:
    steps = implied_steps(goal, part, "an earlier part", SHAPES, earlier=earlier)
    return [(s.tool, [(b.argument, b.step_id, b.path) for b in s.bindings]) for s in steps]


def test_a_number_found_before_is_the_text_a_part_names_it_as() -> None:
    assert _bound("encrypt", "encrypt the squared number with the key 'k9'", {"square": "step_1"}) == [
        ("encrypt", [("text", "step_1", "squared")])
    ]


def test_a_value_stated_beside_another_arguments_name_leaves_this_one_to_the_earlier_result() -> None:
    # 4 is the people's ("4 people"); the total is the tip found before
    assert _bound("split_bill", "split the tip amount between 4 people", {"tip": "step_1"}) == [
        ("split_bill", [("total", "step_1", "tip_amount")])
    ]


def test_names_written_in_camel_case_are_read_as_their_words() -> None:
    # a catalogue's ``SearchHotels`` says "search hotels"; a request's "YouTube" still meets
    # ``youtube_search``
    tools = {"CityGuideSearchHotels": "Hotels in a city.", "youtube_search": "Videos by keyword."}
    assert _plan_for("Find hotels in Lisbon", tools) == ["CityGuideSearchHotels"]
    assert _plan_for("Search YouTube for tram videos", tools) == ["youtube_search"]


def _plan_for(part: str, summaries: dict[str, str]) -> list[str]:
    schemas = {
        n: {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
        for n in summaries
    }
    return list(guided_plan_schema([part], summaries, schemas)["properties"][part]["enum"])


class Station(TypedDict):
    station_code: str
    name: str


class Fare(TypedDict):
    fare_eur: float


StationCode = Annotated[str, Field(pattern="^ST-[0-9]{3}$", description="A station code such as ST-123.")]


@tool
def find_station(name: str) -> Station:
    """Find a railway station by its name; returns its station code."""
    return {"station_code": "ST-" + str(len(name)).zfill(3), "name": name}


@tool
def train_fare(origin: StationCode, destination: StationCode) -> Fare:
    """What a train ticket between two stations (by station codes) costs."""
    return {"fare_eur": 12.5}


@tool
def coach_fare(
    from_code: Annotated[str, Field(description="Departure code, as returned by the Find Station API.")],
    to_code: Annotated[str, Field(description="Arrival code, as returned by the Find Station API.")],
) -> Fare:
    """What a coach ticket between two places costs."""
    return {"fare_eur": 7.0}


RAIL = {
    t.name: ToolShape(
        name=t.name, input_schema=t.input_schema, output_schema=t.output_schema, description=t.summary
    )
    for t in (find_station, train_fare, coach_fare)
}


def _rail(goal: str, part: str) -> list[tuple[str, list[tuple[str, int | None, str]]]]:
    steps = implied_steps(goal, part, "", RAIL)
    return [(s.tool, [(b.argument, b.producer, b.path) for b in s.bindings]) for s in steps]


def test_two_arguments_of_one_kind_each_get_a_lookup_of_their_own() -> None:
    assert _rail("train_fare", "What does a train from Alderley to Brinton cost?") == [
        ("find_station", []),
        ("find_station", []),
        ("train_fare", [("origin", 0, "station_code"), ("destination", 1, "station_code")]),
    ]


def test_an_argument_whose_description_names_its_tool_takes_that_tools_output() -> None:
    # the request holds place names; the descriptions say the codes come from the station lookup
    assert _rail("coach_fare", "What does a coach from Alderley to Brinton cost?") == [
        ("find_station", []),
        ("find_station", []),
        ("coach_fare", [("from_code", 0, "station_code"), ("to_code", 1, "station_code")]),
    ]


def test_lower_case_words_written_together_are_one_value() -> None:
    spans = text_spans("Check the garden shop for a lemon bush, and the label Fragile")
    assert spans.index("lemon bush") < spans.index("lemon")  # the thing first, its words after
    assert "Fragile" in spans and "label Fragile" not in spans
    # a verb of wanting between two words is no part of a thing
    assert "cactus" in text_spans("Tell me if a cactus needs sun")


def test_a_list_of_things_each_named_by_a_tool_is_one_part_per_thing() -> None:
    tools = {
        "Shop_Product_Search": "Search products by a query.",
        "Shop_Product_Offers": "Retrieve the offers for a product.",
        "Shop_Product_Reviews": "Retrieve the reviews of a product.",
        "Weather_Now": "Retrieve the weather now.",
    }
    assert split_lists(["Find the best offers and reviews for the Sony headphones"], tools) == (
        "Find the best offers for the Sony headphones",
        "Find the reviews for the Sony headphones",
    )
    # things no tool's name tells apart stay one part
    assert split_lists(["Find salt and pepper for the soup"], tools) == ("Find salt and pepper for the soup",)


@tool
def lookup_station_code(name: str) -> Station:
    """Look up a station's code by its name."""
    return {"station_code": "ST-101", "name": name}


def test_a_description_that_only_describes_its_value_names_no_source() -> None:
    # "A station code such as ST-123." says what the value is, not that lookup_station_code gives it
    shapes = {
        **RAIL,
        "lookup_station_code": ToolShape(
            name="lookup_station_code",
            input_schema=lookup_station_code.input_schema,
            output_schema=lookup_station_code.output_schema,
            description=lookup_station_code.summary,
        ),
    }
    steps = implied_steps("train_fare", "What does a train from ST-101 to ST-204 cost?", "", shapes)
    assert [s.tool for s in steps] == ["train_fare"]


class Bus(TypedDict):
    origin: str
    destination: str
    departure_time: str
    group_size: str


class Ticket(TypedDict):
    ticket_id: str


class Visit(TypedDict):
    visit_id: str


GroupSize = Annotated[Literal["1", "2", "3", "4"], Field(description="Size of the group")]


@tool
def find_bus(origin: str, destination: str, date: str) -> Bus:
    """Find a bus between two cities on a day."""
    return {"origin": origin, "destination": destination, "departure_time": "09:10", "group_size": "1"}


@tool
def buy_bus_ticket(origin: str, destination: str, departure_time: str, group_size: GroupSize) -> Ticket:
    """Buy tickets for a bus itinerary."""
    return {"ticket_id": "T-1"}


@tool
def book_doctor(doctor_name: str, appointment_time: str) -> Visit:
    """Book an appointment with a doctor."""
    return {"visit_id": "V-1"}


def test_a_later_part_takes_the_tool_the_earlier_results_feed() -> None:
    tools = (find_bus, buy_bus_ticket, book_doctor)
    schema = guided_plan_schema(
        ["Find a bus from Leeds to York on 2026-05-02", "book a ticket for me"],
        {t.name: t.summary for t in tools},
        {t.name: t.input_schema for t in tools},
        {t.name: t.output_schema for t in tools if t.output_schema is not None},
    )
    assert schema["properties"]["book a ticket for me"]["enum"] == ["buy_bus_ticket"]


def test_a_list_item_starts_at_a_word() -> None:
    tools = {
        "Shop_Printers": "Retrieve printers.",
        "Shop_Scanners": "Retrieve scanners.",
        "Weather": "Weather.",
    }
    assert split_lists(["Search 3D printers and scanners"], tools) == (
        "Search 3D printers",
        "Search 3D scanners",
    )
