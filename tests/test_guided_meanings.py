"""Planning by data flow when the request's words are not the tools' words, and when no word points
to the producer at all.

The tools are a garage's and a travel desk's, used by no benchmark: a vehicle search that gives a VIN,
a service booking that needs one, a price list in euros and a currency exchange, a landmark finder
and a weather tool that echoes its city.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, TypedDict

import pytest
from pydantic import Field

from pes_agent.guided.dataflow import ToolShape, implied_steps
from pes_agent.guided.grounding import Candidate, grounded_property, text_spans
from pes_agent.guided.language import language
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec
from tests.offered import planned_tools

Vin = Annotated[str, Field(pattern="^[A-HJ-NPR-Z0-9]{17}$", description="A 17-character VIN.")]
Money = Annotated[Literal["EUR", "USD"], Field(description="EUR (euros) or USD (US dollars).")]


class Vehicle(TypedDict):
    vin: str
    owner: str


class Slot(TypedDict):
    slot_id: str


class Listing(TypedDict):
    item: str
    price_eur: float


class Exchanged(TypedDict):
    amount: float


class Place(TypedDict):
    city: str


class Weather(TypedDict):
    city: str
    celsius: float


@tool
def vehicle_search(model: str) -> Vehicle:
    """Search the garage's customer cars by model name."""
    raise NotImplementedError


@tool
def book_service(vin: Vin, day: str) -> Slot:
    """Book a workshop service slot for a car on a day."""
    raise NotImplementedError


@tool
def spare_parts(item: str) -> Listing:
    """The spare-parts list: an item's listing with its price in euros."""
    raise NotImplementedError


@tool
def exchange(amount: float, source: Money, target: Money) -> Exchanged:
    """Change an amount of money from one currency into another."""
    raise NotImplementedError


@tool
def landmark_place(landmark: str) -> Place:
    """The city a landmark is in."""
    raise NotImplementedError


@tool
def weather_now(city: str) -> Weather:
    """Current weather in a city."""
    raise NotImplementedError


def _shapes(tools: list[ToolSpec]) -> dict[str, ToolShape]:
    return {
        t.name: ToolShape(
            name=t.name, input_schema=t.input_schema, output_schema=t.output_schema, description=t.summary
        )
        for t in tools
    }


def _chain(tools: list[ToolSpec], chosen: str, part: str) -> list[tuple[str, dict[str, str]]]:
    steps = implied_steps(chosen, part, "", _shapes(tools))
    return [(s.tool, {b.argument: f"{b.producer}:{b.path}" for b in s.bindings}) for s in steps]


def test_an_id_only_one_tool_gives_is_looked_up_there_though_no_word_points_to_it() -> None:
    garage = [vehicle_search, book_service, spare_parts]
    part = "Book a service for the Corolla on Friday"
    assert _chain(garage, "book_service", part) == [
        ("vehicle_search", {}),
        ("book_service", {"vin": "0:vin"}),
    ]
    assert planned_tools(garage, part) == ["book_service"]


def test_an_id_two_tools_could_give_is_not_guessed() -> None:
    @tool
    def recall_lookup(campaign: str) -> Vehicle:
        """Cars called back by a recall campaign."""
        raise NotImplementedError

    garage = [vehicle_search, recall_lookup, book_service]
    assert _chain(garage, "book_service", "Book a service for the Corolla on Friday") == [
        ("book_service", {})
    ]


def test_a_field_that_echoes_the_tools_own_input_produces_nothing() -> None:
    travel = [landmark_place, weather_now]
    part = "What is the weather in the city where the Colosseum stands"
    # the weather tool's `city` output is the city it was given: only the landmark finder gives one
    assert _chain(travel, "weather_now", part) == [
        ("landmark_place", {}),
        ("weather_now", {"city": "0:city"}),
    ]
    assert _chain(travel, "weather_now", "What is the weather in Rome") == [("weather_now", {})]


def test_a_word_no_tool_uses_is_read_as_the_tool_word_it_means() -> None:
    pytest.importorskip("numpy", reason="the meaning table needs numpy (the `retrieval` extra)")
    shop = [spare_parts, exchange, vehicle_search]
    part = "What does a brake disc cost in US dollars"
    # "cost" is no tool's word; it means the listing's price, which the exchange takes as its amount
    assert _chain(shop, "exchange", part) == [("spare_parts", {}), ("exchange", {"amount": "0:price_eur"})]
    assert planned_tools(shop, part) == ["exchange"]
    assert language().similar(["cost"], ["price", "colour", "engine"]) == {"cost": ("price",)}


def test_a_free_string_whose_examples_have_a_shape_takes_only_values_of_that_shape() -> None:
    zone = {"type": "string", "description": "An IANA time zone, e.g. Europe/Rome."}
    spans = [Candidate(value=v, source="step") for v in ("Rome", "Europe/Rome", "Friday")]
    assert grounded_property(zone, spans) == {"description": zone["description"], "enum": ["Europe/Rome"]}
    plain = {"type": "string", "description": "A city, such as Rome."}  # a word shows no shape
    assert grounded_property(plain, spans) == {
        "description": plain["description"],
        "enum": ["Rome", "Europe/Rome", "Friday"],
    }


# --- a call's arguments read together -------------------------------------------------------------


def _step_schema(spec: ToolSpec, part: str, **kwargs: Any) -> dict[str, Any]:
    from pes_agent.guided.arguments import guided_arguments_schema

    kwargs.setdefault("earlier", [])
    schema = guided_arguments_schema(
        spec.input_schema, part, part, tool_text=f"{spec.name} {spec.summary}", **kwargs
    )
    return {name: prop.get("enum") for name, prop in schema["properties"].items()}


Unit = Annotated[Literal["kelvin", "celsius", "rankine"], Field(description="A temperature scale.")]


class Converted(TypedDict):
    value: float


@tool
def rescale(value: float, from_scale: Unit, to_scale: Unit) -> Converted:
    """Convert a temperature between scales."""
    raise NotImplementedError


@tool
def reserve_table(restaurant: str, guest: str) -> Slot:
    """Reserve a table at a restaurant for a guest."""
    raise NotImplementedError


def test_the_unit_a_request_names_is_the_target_and_the_source_is_the_one_the_flowing_field_abbreviates() -> (
    None
):
    from pes_agent.guided.arguments import EarlierResult

    found = EarlierResult(
        step_id="step_1", description="x", output={"reading_k": 300.0}, text="reading_k: 300"
    )
    options = _step_schema(
        rescale, "the oven temperature in celsius", earlier=[found], bindings={"value": "$step_1.reading_k"}
    )
    # never celsius to celsius; the reading's field ends in k: kelvin
    assert options == {"value": ["$step_1.reading_k"], "from_scale": ["kelvin"], "to_scale": ["celsius"]}


def test_a_value_that_names_its_argument_is_that_arguments_and_no_other() -> None:
    options = _step_schema(reserve_table, "Reserve at Restaurant Aurora for Lee Park")
    assert options["restaurant"] == ["Restaurant Aurora"]
    assert "Restaurant Aurora" not in options["guest"] and "Lee Park" in options["guest"]


def test_the_key_an_earlier_step_looked_up_is_not_offered_again() -> None:
    from pes_agent.guided.arguments import EarlierResult

    part = "Book a service for the Corolla on Friday"
    looked_up = EarlierResult(
        step_id="step_1",
        description=part,
        output={"vin": "JT2AE92E0J3000001"},
        text="",
        inputs={"model": "Corolla"},
    )
    options = _step_schema(book_service, part, earlier=[looked_up], bindings={"vin": "$step_1.vin"})
    assert options == {"vin": ["$step_1.vin"], "day": ["Friday"]}  # one option each: no model call


class Member(TypedDict):
    member_id: str
    email: str


@tool
def member_by_name(name: str) -> Member:
    """Find a club member by name."""
    raise NotImplementedError


@tool
def send_invite(
    member_email: Annotated[str, Field(json_schema_extra={"format": "email"})], event: str
) -> Slot:
    """Invite a member to an event."""
    raise NotImplementedError


@tool
def resize_batch(batch_id: str, portions: int) -> Slot:
    """Resize a kitchen batch to a number of portions."""
    raise NotImplementedError


def test_an_argument_with_a_format_takes_the_field_named_for_it_not_its_neighbour() -> None:
    # member_id and email both share a word with member_email; only one is an email
    assert _chain([member_by_name, send_invite], "send_invite", "Invite Ada Byron to the gala") == [
        ("member_by_name", {}),
        ("send_invite", {"member_email": "0:email"}),
    ]


def test_the_number_stated_beside_an_arguments_name_is_its_value() -> None:
    from pes_agent.guided.arguments import EarlierResult

    part = "Resize batch B7 to 12 portions"
    earlier = EarlierResult(step_id="step_1", description="x", output={"portions": 4}, text="portions: 4")
    assert _step_schema(resize_batch, part, earlier=[earlier])["portions"] == [12]


def test_a_context_sentence_names_nothing_to_look_up_and_a_format_picks_its_field() -> None:
    # "My member" states who the member is; the email is the field named for the argument's format
    part = "My member is Ada Byron. Invite her to the gala"
    assert _chain([member_by_name, send_invite], "send_invite", part) == [
        ("member_by_name", {}),
        ("send_invite", {"member_email": "0:email"}),
    ]


def test_an_answer_must_state_the_field_the_question_asks_for_not_its_neighbour() -> None:
    from pes_agent.guided.answer import findings, unstated
    from pes_agent.state.models import ItemStatus, TodoItem, ToolCallRecord

    item = TodoItem(
        id="step_1",
        description="How many calories are in one serving of pad thai",
        step_type="tool",
        required_tools=["dish_facts"],
        status=ItemStatus.COMPLETED,
        tool_results=[
            ToolCallRecord(
                call_id="c1",
                tool_name="dish_facts",
                arguments={"dish": "pad thai"},
                status="success",
                output={"dish_id": "D-9", "calories_per_serving": 520, "servings": 2},
            )
        ],
    )
    [found] = findings([item])
    assert found.text == "520"  # the asked field, not the dish's servings
    assert unstated("It serves 2.", [found]) == [found] and unstated("About 520 calories.", [found]) == []
    # an instruction's words are its action, not the fields it wants: every finding stays
    ordered = item.model_copy(update={"description": "Order the calories per serving of pad thai"})
    assert findings([ordered])[0].text == "dish_id: D-9, calories_per_serving: 520, servings: 2"


@tool
def split_fare(fare_total: float, tip_percent: float, riders: int) -> Slot:
    """Split a taxi fare between riders, tip included."""
    raise NotImplementedError


@tool
def print_label(caption: str, color: str) -> Slot:
    """Print a shipping label."""
    raise NotImplementedError


@tool
def lock_locker(passcode: str) -> Slot:
    """Lock a parcel locker."""
    raise NotImplementedError


def test_a_number_given_after_an_arguments_name_is_its_own_and_no_other_arguments() -> None:
    options = _step_schema(split_fare, "Split a fare total of $1,240.50 between 3 riders with a tip of 15%")
    assert options["fare_total"] == [1240.5] and options["tip_percent"] == [15] and options["riders"] == [3]
    # a number named for no argument is offered to each, but one named for another is not
    options = _step_schema(split_fare, "Split the fare: total 64, 3 riders, 10 as tip")
    assert options["fare_total"] == [64] and 64 not in options["tip_percent"]


def test_quoted_text_after_an_arguments_name_is_that_arguments() -> None:
    options = _step_schema(print_label, "Print a label in the color 'teal' with the caption 'Fragile: glass'")
    assert options == {"caption": ["Fragile: glass"], "color": ["teal"]}


def test_an_apostrophe_opens_no_quotation() -> None:
    options = _step_schema(lock_locker, "Lock the courier's locker with the passcode 'K9-22'")
    assert options == {"passcode": ["K9-22"]}


def test_a_word_of_the_arguments_own_name_is_not_its_value() -> None:
    options = _step_schema(print_label, "Print the caption Fragile on a label")
    assert "caption" not in [o.casefold() for o in options["caption"]] and "Fragile" in options["caption"]


def test_and_before_a_verb_a_tool_begins_with_is_a_new_part() -> None:
    from pes_agent.guided.parts import action_words, query_parts

    actions = action_words(["Find ferries between two ports.", "Reserve seats on a ferry."])
    assert query_parts("Find a ferry from Split to Hvar and reserve two seats for us", actions) == (
        "Find a ferry from Split to Hvar",
        "reserve two seats for us",
    )
    assert query_parts("Find ferries between Split and Hvar, Korcula and Vis", actions) == (
        "Find ferries between Split and Hvar, Korcula and Vis",
    )
    assert query_parts("Find a ferry from Split to Hvar and reserve two seats") != query_parts(
        "Find a ferry from Split to Hvar and reserve two seats", actions
    )  # without the tools, no verb is known


@tool
def push_deadline(deadline: str, days: int) -> Slot:
    """Move a deadline later by a number of days."""
    raise NotImplementedError


def test_a_date_beside_an_arguments_name_gives_it_no_number() -> None:
    from pes_agent.guided.arguments import EarlierResult

    earlier = EarlierResult(step_id="step_1", description="x", output={"gap": 12}, text="gap: 12")
    options = _step_schema(push_deadline, "Push that many days to 2026-03-01", earlier=[earlier])
    assert 2026 not in options["days"] and 12 in options["days"]


def test_a_version_number_is_text_and_breaks_nothing() -> None:
    # "6.3.1" reads like a number to the number pattern; it was float()-ed and raised out of process
    candidates = [Candidate(value="6.3.1", source="query"), Candidate(value="7", source="query")]
    assert grounded_property({"type": "number"}, candidates) == {"enum": [7]}
    assert grounded_property({"type": "string"}, candidates[:1]) == {"enum": ["6.3.1"]}


def test_an_instruction_no_tool_serves_is_the_context_of_the_next_part_and_a_question_stays() -> None:
    from pes_agent.guided.parts import joined_unserved

    parts = ("Pick the Blue Ferry", "tell me its fare in euros", "What is the meaning of life?", "book it")
    assert joined_unserved(parts, [False, True, False, True]) == (
        "Pick the Blue Ferry and tell me its fare in euros",
        "What is the meaning of life?",
        "book it",
    )


@tool
def harbour_forecast(
    harbour: str,
    scale: Literal["celsius", "fahrenheit"] = "fahrenheit",
    detailed: bool = False,
    radius_km: float = 5,
    date: str | None = None,
) -> Slot:
    """Forecast the weather at a harbour."""
    raise NotImplementedError


def test_optional_arguments_the_request_names_with_their_value_are_given() -> None:
    options = _step_schema(
        harbour_forecast,
        "Forecast Bergen harbour in Celsius, detailed, within a radius of 12 km on 2026-05-01",
    )
    assert options == {
        "harbour": options["harbour"],
        "scale": ["celsius"],
        "detailed": [True],
        "radius_km": [12],
        "date": ["2026-05-01"],
    }
    # named nowhere, or negated: left to their defaults
    assert set(_step_schema(harbour_forecast, "Forecast Bergen harbour without detail")) == {"harbour"}


@tool
def plan_route(stops: list[str], readings: list[float] | None = None) -> Slot:
    """Plan a delivery route through stops."""
    raise NotImplementedError


def test_a_list_the_request_writes_out_is_offered_whole() -> None:
    options = _step_schema(plan_route, "Plan a route through 'Leeds', 'York', and 'Hull St. Marys'")
    assert options["stops"] == [["Leeds", "York", "Hull St. Marys"]]
    options = _step_schema(
        plan_route, "Plan a route through Leeds, York and Hull with readings -4.5, 10, 22.25, 7"
    )
    assert options["stops"] == [["Leeds", "York", "Hull"]]


@tool
def case_file(case_name: str) -> Slot:
    """Open the file of a court case."""
    raise NotImplementedError


def test_a_name_with_a_particle_or_initials_stays_whole() -> None:
    assert _step_schema(case_file, "Open the file of R vs Adams")["case_name"][0] == "R vs Adams"
    assert (
        _step_schema(case_file, "Open the case of Washington D.C. now")["case_name"][0] == "Washington D.C."
    )


class Poem(TypedDict):
    poem_text: str
    poet: str


class Anthology(TypedDict):
    anthology_id: str
    poem_text: str


@tool
def poem_by_title(title: str, poet: str) -> Poem:
    """Get the text of a poem by its title and poet."""
    raise NotImplementedError


@tool
def anthology_search(query: str) -> Anthology:
    """Search anthologies."""
    raise NotImplementedError


@tool
def render_braille(text: str, grade: str) -> Slot:
    """Render a text in braille."""
    raise NotImplementedError


def test_a_tool_that_gives_what_the_part_asks_for_is_chosen_over_one_fed_by_it() -> None:
    part = "Get the poem text of 'Ozymandias' by 'Shelley'"
    # the search won on "poem text" only through the poem lookup it would be fed by
    assert planned_tools([poem_by_title, anthology_search], part) == ["poem_by_title"]
    assert _chain([poem_by_title, anthology_search], "poem_by_title", part) == [("poem_by_title", {})]


def test_the_thing_a_part_names_fills_one_argument_of_the_call() -> None:
    part = "Render the poem text in braille"
    chain = _chain([poem_by_title, anthology_search, render_braille], "render_braille", part)
    bound = [args for _, args in chain if args]
    assert len(bound) == 1 and list(bound[0]) == ["text"]  # not the grade too, from a second lookup


@tool
def print_badge(data: str) -> Slot:
    """Print a badge with a barcode."""
    raise NotImplementedError


def test_a_word_that_names_an_earlier_field_means_its_value_not_the_word() -> None:
    from pes_agent.guided.arguments import EarlierResult

    found = EarlierResult(step_id="step_1", description="x", output={"gcd": 12}, text="gcd: 12")
    options = _step_schema(print_badge, "Print a badge using the GCD value as the data", earlier=[found])
    assert "GCD" not in options["data"] and "12" in options["data"]


class Levy(TypedDict):
    levy: float


class Span(TypedDict):
    converted_span: float


@tool
def compute_levy(amount: float, rate: float) -> Levy:
    """Compute the levy on a purchase."""
    raise NotImplementedError


@tool
def convert_span(span: float, source: str, target: str) -> Span:
    """Convert a span from one unit to another."""
    raise NotImplementedError


@tool
def convert_money(amount: float, source: str, target: str) -> Slot:
    """Convert currency from one unit to another."""
    raise NotImplementedError


def test_the_words_of_the_chosen_tools_work_name_no_value_to_look_up() -> None:
    shapes = _shapes([compute_levy, convert_span, convert_money])
    part, before = "convert the levy amount from USD to EUR", "Compute the levy on a $200 purchase at 0.08"
    steps = implied_steps("convert_money", part, before, shapes, {"compute_levy": "step_1"})
    # "convert" names the work; the levy found before is the amount, not a converted span
    assert [(s.tool, [(b.argument, b.step_id, b.path) for b in s.bindings]) for s in steps] == [
        ("convert_money", [("amount", "step_1", "levy")])
    ]


def test_one_calls_request_said_in_two_sentences_is_one_step_and_calls_in_turn_stay_apart() -> None:
    from pes_agent.guided.replies import parse_guided_plan

    def steps(query: str, parts: tuple[str, str]) -> list[str]:
        reply = json.dumps({p: "plan_route" for p in parts})
        plan = parse_guided_plan(reply, parts=parts, tool_names=["plan_route"], query=query)
        return [item.description for item in plan.items]

    query = "I have the stops Leeds, York and Hull. Also, the readings are 4.5, 10 and 7."
    said_twice = ("I have the stops Leeds, York and Hull", "the readings are 4.5, 10 and 7")
    assert steps(query, said_twice) == [
        "I have the stops Leeds, York and Hull. the readings are 4.5, 10 and 7"
    ]
    query = "Plan a route through Leeds and York, then plan one through Hull and Bath"
    in_turn = ("Plan a route through Leeds and York", "plan one through Hull and Bath")
    assert steps(query, in_turn) == list(in_turn)


@tool
def berth_search(harbour: str, radius_km: float = 10, hull: Literal["sail", "motor", "rib"] = "sail") -> Slot:
    """Search free berths near a harbour."""
    raise NotImplementedError


def test_a_short_unit_of_the_name_and_a_short_option_name_their_optional_argument() -> None:
    options = _step_schema(berth_search, "Search berths within 3 km of Hvar for a rib")
    assert options["radius_km"] == [3] and options["hull"] == ["rib"] and options["harbour"][0] == "Hvar"


@tool
def berth_services(harbour: str, services: list[Literal["water", "power", "fuel", "wifi"]]) -> Slot:
    """Book services at a berth."""
    raise NotImplementedError


def test_a_list_of_choices_is_the_options_the_part_names_in_its_order() -> None:
    part = "Book wifi, water and power at my berth in Hvar"
    assert planned_tools([berth_search, berth_services], part) == ["berth_services"]  # it can be grounded
    assert _step_schema(berth_services, part)["services"] == [["wifi", "water", "power"]]


@tool
def enrol(course_name: str, student: str) -> Slot:
    """Enrol a student on a course."""
    raise NotImplementedError


def test_a_value_right_before_its_arguments_name_is_that_arguments() -> None:
    options = _step_schema(enrol, "Put student S-2048 on the 'Night Painting' course")
    assert options["course_name"] == ["Night Painting"] and "Night Painting" not in options["student"]


@tool
def berth_zone(quay: str) -> Slot:
    """The berth zone of a quay."""
    raise NotImplementedError


def test_a_name_in_an_earlier_sentence_claims_no_value_of_the_next() -> None:
    # "Quay" ends the context sentence; the 2 after it is the hours', not the quay's
    options = _step_schema(berth_zone, "I'm moored at Fisher Quay. Pay 2 hours for boat B-12")
    assert options["quay"][0] == "Fisher Quay" and "2" not in options["quay"]


@tool
def berth_invoice(berth_address: str, month: Annotated[str, Field(pattern="^[0-9]{4}-[0-9]{2}$")]) -> Slot:
    """The invoice of a berth for a month."""
    raise NotImplementedError


def test_a_month_in_words_fits_a_month_field_and_an_address_keeps_its_number() -> None:
    options = _step_schema(berth_invoice, "The invoice for 12 Harbour Road for March 2026")
    assert options["month"] == ["2026-03"] and "12 Harbour Road" in options["berth_address"]


def test_a_tool_marking_nothing_required_takes_an_earlier_field_of_its_arguments_name() -> None:
    found = {"full_name": {"type": "string"}, "photo_url": {"type": "string"}, "handle": {"type": "string"}}
    search = ToolShape(
        name="sailor_search",
        input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        output_schema={"type": "object", "properties": found},
        description="Search sailors.",
    )
    wanted = {"handle_or_url": {"type": "string"}, "amount": {"type": "number", "description": "Followers"}}
    followers = ToolShape(
        name="sailor_followers",
        input_schema={"type": "object", "properties": wanted},
        output_schema={"type": "object", "properties": {"followers": {"type": "array"}}},
        description="The followers of a sailor.",
    )
    shapes = {s.name: s for s in (search, followers)}
    steps = implied_steps(
        "sailor_followers", "list her followers", "Search sailor Ada", shapes, {"sailor_search": "step_1"}
    )
    # the handle (not the photo url, not a count of followers the part only names)
    assert [(b.argument, b.path) for s in steps for b in s.bindings] == [("handle_or_url", "handle")]


@tool
def record_clip(duration: Annotated[int, Field(description="Length of the clip in seconds.")]) -> Slot:
    """Record a sound clip."""
    raise NotImplementedError


def test_a_quantity_stated_in_another_unit_is_given_in_the_unit_the_argument_asks_for() -> None:
    assert _step_schema(record_clip, "Record a clip for 2 minutes")["duration"] == [120]
    assert _step_schema(record_clip, "Record a clip for 45 seconds")["duration"] == [45]


@tool
def rent_locker(months: int, deposit_cents: int) -> Slot:
    """Rent a locker."""
    raise NotImplementedError


@tool
def book_sitter(minutes: Annotated[int, Field(description="How long, in minutes.")]) -> Slot:
    """Book a sitter."""
    raise NotImplementedError


@tool
def hold_parcel(days: int) -> Slot:
    """Hold a parcel at the depot."""
    raise NotImplementedError


@pytest.mark.parametrize(
    ("tool_", "request_", "argument", "value"),
    [
        (rent_locker, "Rent a locker for a year with a $40.50 deposit", "months", 12),  # counted in words
        (rent_locker, "Rent a locker for a year with a $40.50 deposit", "deposit_cents", 4050),  # a symbol
        (rent_locker, "Rent a locker for two years, deposit 30 euros", "months", 24),
        (book_sitter, "Book a sitter for three hours", "minutes", 180),
        (hold_parcel, "Hold my parcel for two weeks", "days", 14),
    ],
)
def test_counts_in_words_calendar_units_and_money_in_cents_convert_too(
    tool_: Any, request_: str, argument: str, value: int
) -> None:
    assert _step_schema(tool_, request_)[argument] == [value]


def test_an_amount_converted_to_a_whole_number_of_cents_is_offered_as_a_whole_number() -> None:
    """$19.99 is 1998.9999… cents in floating point: the option is 1999, not 1999.0."""
    assert json.dumps(_step_schema(rent_locker, "Rent a locker, deposit $19.99")["deposit_cents"]) == "[1999]"


@tool
def parcel_record(address: str, parcel: str) -> Slot:
    """The land registry record of a parcel."""
    raise NotImplementedError


def test_a_street_address_is_one_value_and_a_sentences_first_word_is_none() -> None:
    options = _step_schema(parcel_record, "Show the record of my house at 123 main street, parcel 1234567890")
    assert options["address"][0] == "123 main street" and "Show" not in options["address"]


@tool
def latest_headlines(topic: str, count: int) -> Slot:
    """The latest headlines on a topic."""
    raise NotImplementedError


def test_a_kind_of_thing_is_never_a_bare_number() -> None:
    options = _step_schema(latest_headlines, "Get 5 latest headlines on Bitcoin")
    assert "5" not in options["topic"] and 5 not in options["topic"] and "Bitcoin" in options["topic"]


@tool
def humidity_outlook(city: str, days: int, min_humidity: int = 0, season: str | None = None) -> Slot:
    """Forecast the humidity of a city."""
    raise NotImplementedError


def test_a_name_opening_with_min_asks_for_no_minutes_and_a_season_of_two_years_stays_whole() -> None:
    options = _step_schema(humidity_outlook, "Humidity in Split for the upcoming 7 days")
    assert "min_humidity" not in options  # "min" is minimum here: 7 days are no 10080 minutes
    assert "2019-2020" in text_spans("Stats of the 2019-2020 season")


def test_a_number_written_in_dashed_groups_is_one_value() -> None:
    # a candidate number or a phone number is a code, not a subtraction nor its pieces
    assert text_spans("What score did candidate 0412-88317 get?")[0] == "0412-88317"
    assert text_spans("Text it to 991-898-8887.")[0] == "991-898-8887"
    assert text_spans("candidate 0412-88317, please")[0] == "0412-88317"  # a comma ends it


def test_a_day_and_a_time_written_apart_hold_a_value_for_an_argument_taking_both() -> None:
    from pes_agent.guided.choices import can_ground

    start = {
        "type": "string",
        "format": "date-time",
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:00$",
    }
    schema = {"type": "object", "properties": {"start": start}, "required": ["start"]}
    assert can_ground(schema, "Can you book him on Thursday the 13th of August 2026 at 4 pm?", "")
    assert can_ground(schema, "a table on 2024-04-22 at half past seven in the evening", "")
    assert not can_ground(schema, "a table at 7 PM", "")  # a time with no day


def test_the_choices_a_list_takes_are_words_of_its_tool() -> None:
    from pes_agent.guided.choices import tool_options

    assert {"wifi", "water", "power"} <= set(tool_options({"s": berth_services.input_schema})["s"].split())


@tool
def footprint(daily_miles: int, meat_meals_per_week: int) -> Slot:
    """Estimate a lifestyle's carbon footprint."""
    raise NotImplementedError


def test_a_rate_s_unit_is_no_quantity_to_convert() -> None:
    options = _step_schema(footprint, "I drive 20 miles a day and eat 3 meat meals a week")
    assert options["meat_meals_per_week"] == [3]
