"""Steps a request implies after the tool it chose: the form it wants the result in ("in euros"),
where it wants it sent ("email it to …"). The tools are a pharmacy service no benchmark uses."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any, Literal, TypedDict

from pydantic import Field

from pes_agent import create_art_instance
from pes_agent.guided.consumers import destinations
from pes_agent.guided.dataflow import ToolShape
from pes_agent.guided.replies import parse_guided_plan
from pes_agent.testing import ScriptedProvider
from pes_agent.tools.decorators import tool

Email = Annotated[str, Field(json_schema_extra={"format": "email"})]
Money = Literal["CHF", "EUR", "USD"]
PrescriptionId = Annotated[str, Field(pattern="^RX-[0-9]{4}$")]


class Pharmacy(TypedDict):
    pharmacy_id: str
    phone: str
    opening_hours: str


class Refill(TypedDict):
    price_chf: float
    ready_in_days: int


class Converted(TypedDict):
    amount: float
    currency: str


class Sent(TypedDict):
    message_id: str


class Patient(TypedDict):
    patient_id: str


@tool
def find_pharmacy(name: str, town: str) -> Pharmacy:
    """Find a pharmacy by name and town: its id, phone number and opening hours."""
    return {"pharmacy_id": "PH-12", "phone": "044 555 12 12", "opening_hours": "8-18"}


@tool
def quote_refill(prescription_id: PrescriptionId) -> Refill:
    """Quote a prescription refill: the price in Swiss francs and the days until it is ready."""
    return {"price_chf": 42.0, "ready_in_days": 2}


@tool
def convert_money(amount: float, source: Money, target: Money) -> Converted:
    """Convert an amount of money between currencies."""
    rates = {"CHF": 1.0, "EUR": 1.05, "USD": 1.12}
    return {"amount": round(amount * rates[target] / rates[source], 2), "currency": target}


@tool
def send_message(recipient: Email, body: str) -> Sent:
    """Send a message by email."""
    return {"message_id": "MSG-1"}


@tool
def lookup_patient(email: Email) -> Patient:
    """Look up a patient by their email address."""
    return {"patient_id": "P-7"}


TOOLS = [find_pharmacy, quote_refill, convert_money, send_message, lookup_patient]
SHAPES = {
    t.name: ToolShape(
        name=t.name, input_schema=t.input_schema, output_schema=t.output_schema, description=t.summary
    )
    for t in TOOLS
}
NAMES = list(SHAPES)


def _plan(part: str, choice: str, shapes: dict[str, ToolShape] = SHAPES) -> list[tuple[str, dict[str, str]]]:
    plan = parse_guided_plan(json.dumps({part: choice}), [part], list(shapes), shapes, query=part)
    return [(i.required_tools[0], dict(i.bindings)) for i in plan.items]


def test_a_price_asked_in_another_currency_is_converted_after_the_quote() -> None:
    part = "What would refilling prescription RX-2041 cost me in euros"
    assert _plan(part, "quote_refill") == [
        ("quote_refill", {}),
        ("convert_money", {"amount": "$step_1.price_chf"}),
    ]


def test_a_result_to_be_emailed_is_sent_after_it_is_found_with_the_field_the_request_names() -> None:
    part = "Get the phone number of the Linden pharmacy in Thalwil and email it to ana.frei@example.ch"
    assert _plan(part, "find_pharmacy") == [
        ("find_pharmacy", {}),
        ("send_message", {"body": "$step_1.phone"}),
    ]


def test_a_tool_the_value_only_keys_is_no_step_after_the_result() -> None:
    """The address could key a patient lookup, but that acts on nothing the pharmacy search found:
    with the message tool gone, nothing is planned after the search."""
    part = "Get the phone number of the Linden pharmacy in Thalwil and email it to ana.frei@example.ch"
    shapes = {n: s for n, s in SHAPES.items() if n != "send_message"}
    plan = parse_guided_plan(json.dumps({part: "find_pharmacy"}), [part], list(shapes), shapes, query=part)
    assert [i.required_tools[0] for i in plan.items] == ["find_pharmacy"]


def test_a_destination_the_chosen_tool_takes_plans_nothing_more() -> None:
    part = "Send the note 'ready tomorrow' to ana.frei@example.ch"
    assert _plan(part, "send_message") == [("send_message", {})]


def test_a_currency_the_request_only_states_an_amount_in_is_no_destination() -> None:
    assert destinations("Convert 40 euros for me") == []
    assert [d.forms for d in destinations("How much is that in euros?")] == [("euros", "EUR")]


def test_the_word_after_to_is_not_the_start_of_an_address() -> None:
    found = destinations("Send it to ines.duarte@harbor.test")
    assert [d.text for d in found] == ["ines.duarte@harbor.test"]


async def test_a_run_converts_the_quote_and_states_the_converted_price() -> None:
    """Whole run on the scripted provider: the quote, then the conversion with the quote's price
    and its currency from the field's name, and the run says ``success``."""
    ran: list[tuple[str, dict[str, Any]]] = []

    def recording(spec: Any) -> Any:
        def call(**kwargs: Any) -> Any:
            ran.append((spec.name, dict(kwargs)))
            return spec.fn(**kwargs)

        return dataclasses.replace(spec, fn=call)

    config = {
        "providers": {"main": {"adapter": "scripted", "structured_output": True, "guided": True}},
        "storage": {"type": "memory"},
    }
    provider = ScriptedProvider(
        ['{"amount": "$step_1.price_chf", "source": "CHF", "target": "EUR"}', "It would cost 44.1 EUR."]
    )
    tools = [recording(t) for t in TOOLS]
    async with await create_art_instance(config, tools=tools, providers={"main": provider}) as art:
        response = await art.process("What would refilling prescription RX-2041 cost me in euros?")
    assert ran == [
        ("quote_refill", {"prescription_id": "RX-2041"}),
        ("convert_money", {"amount": 42.0, "source": "CHF", "target": "EUR"}),
    ]
    assert response.status == "success"
    assert "44.1" in response.response


class Rota(TypedDict):
    summary: str
    pharmacies: int


@tool
def night_rota(town: str) -> Rota:
    """Which pharmacies are on night duty in a town."""
    return {"summary": "Linden pharmacy", "pharmacies": 1}


@tool
def yearly_refills(year: int) -> Rota:
    """How many refills were dispensed in a year."""
    return {"summary": "1200 refills", "pharmacies": 3}


@tool
def deliver_in(town: Literal["Thalwil", "Horgen"], note: str) -> Sent:
    """Arrange a home delivery in a town."""
    return {"message_id": "D-1"}


@tool
def register_patient(area: Literal["Thalwil", "Horgen"], patient_name: str) -> Sent:
    """Register a patient with the pharmacies of an area."""
    return {"message_id": "P-1"}


@tool
def text_patient(mobile: Annotated[str, Field(pattern="^[0-9]{4,12}$")], text: str) -> Sent:
    """Send a patient a text message."""
    return {"message_id": "T-1"}


def _with(*extra: Any) -> dict[str, ToolShape]:
    return {
        **SHAPES,
        **{
            t.name: ToolShape(name=t.name, input_schema=t.input_schema, output_schema=t.output_schema)
            for t in extra
        },
    }


def test_a_place_the_chosen_tool_takes_is_no_destination_for_a_tool_taking_a_place_too() -> None:
    """ "in Thalwil" is where the rota is looked up (``town``), not where a delivery goes."""
    assert _plan(
        "Which pharmacies are on night duty in Thalwil", "night_rota", _with(night_rota, deliver_in)
    ) == [("night_rota", {})]


def test_a_name_of_something_is_not_filled_by_any_text_the_result_holds() -> None:
    """A patient's name from the rota's summary would register a pharmacy as a patient."""
    shapes = _with(night_rota, register_patient)
    assert _plan("Which pharmacies are on night duty in Thalwil", "night_rota", shapes) == [
        ("night_rota", {})
    ]


def test_a_value_a_chosen_tools_typed_argument_takes_is_no_destination() -> None:
    """ "in 2024" is the year counted, though a mobile number's pattern would accept it too."""
    shapes = _with(yearly_refills, text_patient)
    assert _plan("How many refills were dispensed in 2024", "yearly_refills", shapes) == [
        ("yearly_refills", {})
    ]


def test_a_verb_after_to_is_no_destination() -> None:
    assert destinations("I want to know the phone number of the Linden pharmacy") == []
    assert [d.text for d in destinations("Translate the leaflet to Spanish")] == ["Spanish"]


def test_retrieval_that_missed_the_converter_is_completed_with_it() -> None:
    # "What does it cost in Swiss francs?" says no word of a converter: the offer gains the one tool
    # that takes the currency; a destination an offered tool already takes adds nothing
    from pes_agent.guided.consumers import needed_consumers
    from pes_agent.tools.registry import ToolRegistry

    registry = ToolRegistry(TOOLS)
    query = "What does the refill of RX-2041 cost in Swiss francs?"
    assert needed_consumers(["quote_refill"], registry.names(), registry, query) == ["convert_money"]
    assert needed_consumers(["quote_refill", "convert_money"], registry.names(), registry, query) == []
    assert needed_consumers(["quote_refill"], ["quote_refill"], registry, query) == []  # not enabled
