"""Steps a request implies, values kept whole, and answers that state only what was found.

The tools here are a small library service no benchmark uses: a book search that declares its
output fields, a reservation that needs the book's id (a pattern the request cannot hold), and an
author lookup. Whole runs go through the scripted provider in guided mode.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any, Literal, TypedDict

import pytest
from pydantic import BaseModel, Field

from pes_agent import create_art_instance
from pes_agent.events import Event, EventType
from pes_agent.guided.choices import can_ground, enum_choices, introduced_choice
from pes_agent.guided.dataflow import ToolShape, implied_steps
from pes_agent.guided.grounding import Candidate, grounded_property, text_spans
from pes_agent.guided.language import language
from pes_agent.guided.parts import query_parts
from pes_agent.guided.prompts import guided_plan_schema
from pes_agent.llm.llamacpp_load import default_threads
from pes_agent.testing import ScriptedProvider
from pes_agent.tools.decorators import tool
from pes_agent.tools.output_schema import output_schema_of
from tests.offered import planned_tools

Isbn = Annotated[str, Field(pattern="^[0-9]{13}$", description="The book's 13-digit ISBN.")]
Branch = Annotated[
    Literal["ELM", "OAK"], Field(description="Library branch: ELM (Elm Street), OAK (Oak Avenue).")
]


class Book(TypedDict):
    isbn: str
    author: str
    pages: int


class Birth(TypedDict):
    birthplace: str


class Hold(TypedDict):
    hold_id: str


CATALOGUE = {"dune": ("9780441172719", "Frank Herbert", 412), "emma": ("9780141439587", "Jane Austen", 474)}


@tool
def find_book(title: str) -> Book:
    """Find a book in the library catalogue by its title."""
    isbn, author, pages = CATALOGUE[title.casefold().strip("'\" ")]
    return {"isbn": isbn, "author": author, "pages": pages}


@tool
def reserve_book(isbn: Isbn, branch: Branch) -> Hold:
    """Reserve a book for pickup at a branch."""
    return {"hold_id": f"H-{isbn[-4:]}-{branch}"}


@tool
def author_birthplace(author: str) -> Birth:
    """The town an author was born in."""
    return {"birthplace": {"Frank Herbert": "Tacoma", "Jane Austen": "Steventon"}[author]}


TOOLS = [find_book, reserve_book, author_birthplace]
SHAPES = {
    t.name: ToolShape(name=t.name, input_schema=t.input_schema, output_schema=t.output_schema) for t in TOOLS
}


def _chain(goal: str, part: str, before: str = "") -> list[tuple[str, dict[str, str]]]:
    steps = implied_steps(goal, part, before, SHAPES)
    return [(s.tool, {b.argument: f"{b.producer}:{b.path}" for b in s.bindings}) for s in steps]


# --- output schemas from return annotations ---------------------------------------------------------


class _Model(BaseModel):
    city: str


@dataclasses.dataclass
class _Point:
    x: float


def _typed_dict() -> Book:
    raise NotImplementedError


def _model() -> _Model:
    raise NotImplementedError


def _dataclass() -> _Point:
    raise NotImplementedError


def _listed() -> list[Book]:
    raise NotImplementedError


class _Shelf(TypedDict):
    shelf: str
    books: list[Book]
    label: Annotated[str, "a note"] | None


def _nested() -> _Shelf:
    raise NotImplementedError


def _text() -> str:
    raise NotImplementedError


def _mapping() -> dict[str, float]:
    raise NotImplementedError


def _bare():  # type: ignore[no-untyped-def]  # no return annotation at all
    raise NotImplementedError


@pytest.mark.parametrize(
    ("fn", "fields"),
    [
        (_typed_dict, {"isbn", "author", "pages"}),
        (_model, {"city"}),
        (_dataclass, {"x"}),
        (_listed, {"isbn", "author", "pages"}),
        (_nested, {"shelf", "books", "label"}),  # a record holding records (Python 3.11 refused it)
    ],
)
def test_a_return_annotation_that_names_fields_is_the_tools_output_schema(fn: Any, fields: set[str]) -> None:
    schema = output_schema_of(fn)
    assert schema is not None
    properties = schema.get("properties") or schema["items"]["properties"]
    assert set(properties) == fields


@pytest.mark.parametrize("fn", [_text, _mapping, _bare])
def test_a_return_type_without_fields_promises_no_output_schema(fn: Any) -> None:
    assert output_schema_of(fn) is None


def test_the_decorator_carries_the_output_schema() -> None:
    assert find_book.output_schema is not None
    assert set(find_book.output_schema["properties"]) == {"isbn", "author", "pages"}


# --- planning by data flow ------------------------------------------------------------------------


def test_an_id_the_request_cannot_hold_comes_from_the_tool_that_outputs_it() -> None:
    assert _chain("reserve_book", "Reserve 'Dune' at the Elm branch") == [
        ("find_book", {}),
        ("reserve_book", {"isbn": "0:isbn"}),
    ]


def test_an_output_field_the_request_names_is_looked_up_before_it_is_used() -> None:
    # "Dune" would fit the free-string author; the request asks for the author *of* it
    assert _chain("author_birthplace", "Where was the author of 'Dune' born?") == [
        ("find_book", {}),
        ("author_birthplace", {"author": "0:author"}),
    ]


def test_nothing_is_implied_when_the_request_holds_the_value_and_names_no_field() -> None:
    assert _chain("author_birthplace", "Where was Jane Austen born?") == [("author_birthplace", {})]
    assert _chain("find_book", "Find 'Emma' in the catalogue") == [("find_book", {})]


class Member(TypedDict):
    member_id: str
    email: str


@tool
def find_member(name: str) -> Member:
    """Look up a club member by name: their member id and email."""
    raise NotImplementedError


@tool
def enrol(
    course: str, name: str, email: Annotated[str, Field(json_schema_extra={"format": "email"})]
) -> Hold:
    """Enrol someone on a course."""
    raise NotImplementedError


def test_a_value_the_request_gives_as_my_this_is_that_is_not_looked_up() -> None:
    # "my email is …" states the email; only "my email" alone would ask for one
    shapes = {
        t.name: ToolShape(name=t.name, input_schema=t.input_schema, output_schema=t.output_schema)
        for t in (find_member, enrol)
    }
    steps = implied_steps(
        "enrol", "Enrol me on 'Pottery'. I'm Ana Ruiz and my email is ana.ruiz@example.org", "", shapes
    )
    assert [s.tool for s in steps] == ["enrol"]


def test_a_value_an_earlier_part_produces_is_bound_to_that_step_not_planned_again() -> None:
    steps = implied_steps(
        "reserve_book", "then reserve it at Oak", "Find 'Dune'", SHAPES, {"find_book": "step_1"}
    )
    assert [(s.tool, [(b.argument, b.step_id, b.path) for b in s.bindings]) for s in steps] == [
        ("reserve_book", [("isbn", "step_1", "isbn")])
    ]


def test_the_plan_offers_the_tool_whose_implied_steps_do_the_part() -> None:
    summaries = {t.name: t.summary for t in TOOLS}
    schemas = {t.name: t.input_schema for t in TOOLS}
    outputs = {t.name: t.output_schema for t in TOOLS if t.output_schema is not None}
    part = "Reserve 'Dune' at the Elm branch"
    plan = guided_plan_schema([part], summaries, schemas, outputs)
    assert plan["properties"][part]["enum"] == ["reserve_book"]
    # without declared outputs the reservation cannot be given its id: no reservation is offered
    assert "reserve_book" not in guided_plan_schema([part], summaries, schemas)["properties"][part]["enum"]


class Area(TypedDict):
    area: float


class Cost(TypedDict):
    cost: float


class Bmi(TypedDict):
    bmi: float


class Pace(TypedDict):
    pace: float


@tool
def calculate_area(shape: str, dimensions: list[float]) -> Area:
    """Calculate the area of a shape."""
    raise NotImplementedError


@tool
def calculate_shipping_cost(weight: float, length: float) -> Cost:
    """Calculate the shipping cost."""
    raise NotImplementedError


@tool
def calculate_bmi(weight: float, height: float) -> Bmi:
    """Calculate the body mass index."""
    raise NotImplementedError


@tool
def calculate_pace(distance: float, minutes: float) -> Pace:
    """Calculate a running pace."""
    raise NotImplementedError


def test_a_tool_fed_by_the_asked_tool_does_not_take_its_place_on_shared_words() -> None:
    # "calculate" is every tool's word here, and "length" the name of one of the shipping cost's
    # inputs: fed by the area, it scored as the area did, but the part says nothing of shipping
    tools = [calculate_area, calculate_shipping_cost, calculate_bmi, calculate_pace]
    part = "Calculate the area of a rectangle with length 5 meters and width 3 meters"
    assert planned_tools(tools, part) == ["calculate_area"]


class Encrypted(TypedDict):
    encrypted_data: str


class Found(TypedDict):
    product_description: str


@tool
def encrypt_data(data: str, encryption_key: str) -> Encrypted:
    """Encrypt data with a key."""
    raise NotImplementedError


@tool
def search_product(query: str) -> Found:
    """Search for a product; gives its description."""
    raise NotImplementedError


class Todo(TypedDict):
    todo_id: str
    description: str


@tool
def create_todo(title: str, description: str) -> Todo:
    """Create a todo item."""
    raise NotImplementedError


def test_a_value_the_part_gives_an_argument_by_name_is_not_looked_up() -> None:
    shapes = {
        t.name: ToolShape(name=t.name, input_schema=t.input_schema, output_schema=t.output_schema)
        for t in (encrypt_data, search_product, create_todo)
    }
    steps = implied_steps(
        "encrypt_data",
        "Then encrypt the todo item's description using the encryption key 'abc123'",
        "Create a new todo item with the title 'Buy groceries', description 'Milk'.",
        shapes,
        {"create_todo": "step_1"},
    )
    # the key is stated beside its name: no product search gives it a product's description
    assert not any(b.argument == "encryption_key" for s in steps for b in s.bindings)
    assert [s.tool for s in steps] == ["encrypt_data"]


async def _run(
    replies: list[str], query: str, **execution: Any
) -> tuple[Any, ScriptedProvider, list[Event], list[tuple[str, dict[str, Any]]]]:
    ran: list[tuple[str, dict[str, Any]]] = []
    recorded = [dataclasses.replace(t, fn=_recording(t.name, t.fn, ran)) for t in TOOLS]
    provider = ScriptedProvider(replies)
    events: list[Event] = []
    config = {
        "providers": {"main": {"adapter": "scripted", "structured_output": True, "guided": True}},
        "storage": {"type": "memory"},
        "execution": execution,
    }
    async with await create_art_instance(config, tools=recorded, providers={"main": provider}) as art:
        art.subscribe(events.append)
        response = await art.process(query, thread_id="t")
    return response, provider, events, ran


def _recording(name: str, fn: Any, ran: list[tuple[str, dict[str, Any]]]) -> Any:
    def call(**kwargs: Any) -> Any:
        ran.append((name, dict(kwargs)))
        return fn(**kwargs)

    return call


async def test_a_run_plans_the_implied_step_and_the_later_call_takes_the_value_found() -> None:
    query = "Reserve 'Dune' at the Elm branch."
    response, provider, events, ran = await _run(
        ['{"title": "Dune"}', "Your hold is H-2719-ELM."],
        query,
    )
    plan = next(e for e in events if e.type is EventType.PLAN).data["todo_list"]
    assert [i["required_tools"] for i in plan] == [["find_book"], ["reserve_book"]]
    assert plan[1]["bindings"] == {"isbn": "$step_1.isbn"}
    # the part was offered one tool, and the reservation's every argument one option (the reference
    # to the ISBN found, the branch named): the plan and that call were written without the model
    assert [(c.phase, c.step_id) for c in provider.calls] == [("execution", "step_1"), ("synthesis", None)]
    assert ran == [
        ("find_book", {"title": "Dune"}),
        ("reserve_book", {"isbn": "9780441172719", "branch": "ELM"}),
    ]
    assert response.status == "success"
    assert response.response == "Your hold is H-2719-ELM."


# --- answers state only what was found ------------------------------------------------------------


async def test_an_answer_stating_a_number_nothing_found_is_replaced_by_the_findings() -> None:
    query = "How many pages does 'Dune' have?"
    part = "How many pages does 'Dune' have"
    response, _, _, _ = await _run(
        [json.dumps({part: "find_book"}), '{"title": "Dune"}', "Dune has 412 pages, 38 chapters."], query
    )
    assert response.ui_metadata is not None
    assert response.ui_metadata["answer_source"] == "step_outputs"
    assert response.ui_metadata["ungrounded_values"] == ["38"]
    assert "412" in response.response and "38" not in response.response


async def test_an_answer_stating_a_date_nothing_found_is_replaced_by_the_findings() -> None:
    # every number of the made-up day shows somewhere (the loan's 3 weeks, the due day's 14 and
    # 2026), the day itself nowhere: it is checked whole
    query = "My loan of 3 weeks ends on 14 March 2026. How many pages does 'Dune' have?"
    response, _, _, _ = await _run(
        ['{"title": "Dune"}', "Dune has 412 pages; it is due on 2026-03-03."], query
    )
    assert response.ui_metadata is not None
    assert response.ui_metadata["answer_source"] == "step_outputs"
    assert response.ui_metadata["ungrounded_values"] == ["2026-03-03"]
    assert "412" in response.response and "2026-03-03" not in response.response


async def test_a_question_no_tool_was_planned_for_ends_partial_and_says_so() -> None:
    query = "What is the weather in Tacoma?"
    response, provider, events, ran = await _run(
        ["It is 21 degrees."], query
    )  # no tool offered: no plan asked
    assert [c.phase for c in provider.calls] == ["synthesis"]
    assert ran == []
    assert response.status == "partial"
    assert response.ui_metadata is not None
    assert response.ui_metadata["unplanned_parts"] == ["What is the weather in Tacoma"]
    assert "21" not in response.response and "no tool can answer" in response.response
    assert next(e for e in events if e.type is EventType.PLAN).data["unplanned"] == [
        "What is the weather in Tacoma"
    ]


async def test_a_failed_step_ends_partial_with_what_was_not_found_instead_of_a_made_up_answer() -> None:
    query = "How many pages does 'Ulysses' have?"
    part = "How many pages does 'Ulysses' have"
    replies = [json.dumps({part: "find_book"})] + ['{"title": "Ulysses"}'] * 2 + ["Ulysses has 730 pages."]
    response, _, _, _ = await _run(replies, query, max_iterations=2, taef_max_retries=0)
    assert response.status == "partial"
    assert "730" not in response.response and "not found" in response.response


# --- values stay whole ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "whole", "never"),
    [
        ("Find a bus on 01/15/2024", ["01/15/2024", "2024-01-15"], ["15", "2024", "01"]),
        ("Book it for January 1st 2024", ["January 1st 2024", "2024-01-01"], ["January", "2024"]),
        ("The talk is on 18 March 2025", ["18 March 2025", "2025-03-18"], ["18", "March"]),
        ("Fly to Tel Aviv tomorrow", ["Tel Aviv"], ["Aviv", "Tel"]),
        (
            "Write to dana.whitfield@harborlane.io about it",
            ["dana.whitfield@harborlane.io"],
            ["harborlane", "dana"],
        ),
        ("When did Lena Brook's contract start?", ["Lena Brook"], ["Brook's", "Lena Brook's"]),
    ],
)
def test_values_are_offered_whole(text: str, whole: list[str], never: list[str]) -> None:
    spans = text_spans(text)
    assert all(w in spans for w in whole), spans
    assert not any(n in spans for n in never), spans


def test_a_name_opening_a_request_with_the_tools_action_word_starts_after_it() -> None:
    spans = text_spans("Email Omar Haddad the minutes", frozenset({"email", "send"}))
    assert "Omar Haddad" in spans and "Email" not in spans and "Email Omar Haddad" not in spans


def test_a_formatted_argument_takes_only_values_of_its_format() -> None:
    email = {"type": "string", "format": "email"}
    date = {"type": "string", "format": "date"}
    spans = [
        Candidate(value=s, source="step")
        for s in text_spans("Tell dashboard user 502 at ops@example.org by 18 March 2025")
    ]
    assert grounded_property(email, spans) == {"enum": ["ops@example.org"]}
    assert grounded_property(date, spans) == {"enum": ["2025-03-18"]}


def test_a_sentence_that_only_gives_context_joins_the_ask_it_serves() -> None:
    assert query_parts("A tent weighs 4 pounds. Convert that to kilograms.") == (
        "A tent weighs 4 pounds. Convert that to kilograms",
    )
    assert query_parts("Our team flies to Peru. What is the weather in its capital?") == (
        "Our team flies to Peru. What is the weather in its capital",
    )
    assert language().is_context("The office is in Lisbon") and not language().is_context("Convert 4 pounds")


def test_an_enum_of_codes_is_named_by_the_words_its_description_gives_them() -> None:
    branch = reserve_book.input_schema["properties"]["branch"]
    assert enum_choices(branch, "pick it up on Oak Avenue", []) == {**branch, "enum": ["OAK"]}


def test_an_option_is_named_by_its_gloss_and_a_compound_however_it_is_written() -> None:
    treatment = {
        "enum": ["checkup", "extraction"],
        "description": "checkup (an examination, 20 minutes) or extraction (taking a tooth out, 40 minutes).",
    }
    # the gloss before the details names the option; a compound is written closed, open or hyphenated
    assert enum_choices(treatment, "the price of taking a tooth out", [])["enum"] == ["extraction"]
    assert enum_choices(treatment, "book me a check-up", [])["enum"] == ["checkup"]
    # an option of several words is named by its words, apart; a long gloss is read too
    service = {
        "enum": ["wash_fold", "wash_iron", "delicates"],
        "description": "wash_fold (washed, tumble-dried and folded, 2.80 euros a started kilo), wash_iron "
        "(washed, dried and pressed, 4.50 euros a started kilo) or delicates (wool and silk items washed "
        "by hand in cold water, dried flat and folded, 7.00 euros a started kilo).",
    }
    assert enum_choices(service, "How much to wash and iron 6 kg of shirts?", [])["enum"] == ["wash_iron"]
    long = {
        "enum": ["standard", "delicates"],
        "description": "standard (washed and folded) or delicates (wool and silk items washed by hand in "
        "cold water and then dried flat on a rack, 7.00 euros a kilo)",
    }
    said = "my wool and silk items washed by hand in cold water and then dried flat on a rack"
    assert enum_choices(long, said, [])["enum"] == ["delicates"]
    # an option of several words is named by each of them, in order and close together
    assert enum_choices({"enum": ["1_day", "3_day", "7_day"]}, "a 3 day pass", [])["enum"] == ["3_day"]
    assert enum_choices({"enum": ["by_id", "by_name"]}, "What is the weather in Oslo?", []) is None
    drinks = {"enum": ["small_coffee", "large_coffee", "small_tea", "large_tea"]}
    assert enum_choices(drinks, "a large coffee and a small tea", [])["enum"] == ["large_coffee", "small_tea"]
    assert enum_choices({"enum": ["online", "in_store"]}, "the charge on line 4", []) is None
    size = {
        "enum": ["locker", "large"],
        "description": "locker (15 sq ft: a bike) or large (150 sq ft: a house)",
    }
    assert enum_choices(size, "to store my house's furniture", [])["enum"] == ["large"]
    # and the plan offers the tool whose option the part names by its gloss, though it names the tool
    # by no word
    schema = {"type": "object", "properties": {"treatment": treatment}, "required": ["treatment"]}
    assert can_ground(schema, "the price of taking a tooth out", "")


def test_a_source_option_is_the_one_the_flowing_fields_name_carries() -> None:
    unit = {"enum": ["USD", "EUR"], "description": "USD (US dollars), EUR (euros)"}
    assert introduced_choice(unit, "from_currency", "tell me its price in euros", "price_usd") == "USD"
    assert introduced_choice(unit, "from_currency", "tell me its price in euros") is None


def test_the_default_thread_count_leaves_half_the_cores_free() -> None:
    import os

    cores = len(os.sched_getaffinity(0))
    assert default_threads() == max(1, cores // 2)


def test_an_address_in_the_part_says_no_word_of_a_tool() -> None:
    # "outlook.com" is data: its "outlook" is not the weather outlook
    from pes_agent.guided.choices import tool_scores

    tools = {"weather_outlook": "The weather outlook for a city.", "send_email": "Send an email."}
    scores = tool_scores("Please send the minutes to ana@outlook.com", tools)
    assert scores["weather_outlook"] == 0 and scores["send_email"] > 0


class Resort(TypedDict):
    resort_id: str
    country: str
    currency: str


class PassPrice(TypedDict):
    total: float


@tool
def find_resort(name: str) -> Resort:
    """Find a ski resort by name: its resort id, country and the currency its lift passes are sold in."""
    raise NotImplementedError


@tool
def pass_price(
    resort_id: Annotated[str, Field(pattern="^SR-[A-Z]{3}$")], days: int, passes: int = 1
) -> PassPrice:
    """Price passes at a resort (by resort id)."""
    raise NotImplementedError


def test_a_question_for_an_amount_is_answered_by_a_tool_that_gives_a_number() -> None:
    # the lookup's description speaks of lift passes more than the price's does, but it gives no
    # number: the price is the part's tool, and the lookup the step it implies
    tools = [find_resort, pass_price]
    part = "What would two five-day lift passes at Snowfield Peak come to"
    assert planned_tools(tools, part) == ["pass_price"]
