"""The lookup an offered tool needs is offered with it, though no word of the request names it: a
clinic's details take a clinic id that only the health directory's search gives."""

from __future__ import annotations

import importlib.util
import json
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import Field

from benchmarks.first_option import first_option
from benchmarks.tool_catalogue import catalogue
from pes_agent import EventType, create_art_instance
from pes_agent.guided.producers import needed_producers
from pes_agent.testing import ScriptedProvider
from pes_agent.testing.scripted import ScriptedCall
from pes_agent.tools.decorators import tool
from pes_agent.tools.registry import ToolRegistry

needs_bm25s = pytest.mark.skipif(
    importlib.util.find_spec("bm25s") is None, reason="the `retrieval` extra is not installed"
)

ClinicId = Annotated[str, Field(pattern="^CL-[0-9]{3}$")]


class Listing(TypedDict):
    clinic_id: str
    district: str


class Details(TypedDict):
    phone: str
    opening_hours: str


class Vet(TypedDict):
    clinic_id: str


@tool
def directory_search(text: str) -> Listing:
    """Search the regional health directory by free text."""
    return {"clinic_id": "CL-204", "district": "North"}


@tool
def animal_hospitals(town: str) -> Vet:
    """List veterinary hospitals in a town."""
    return {"clinic_id": "CL-900"}


@tool
def clinic_details(clinic_id: ClinicId) -> Details:
    """The phone number and opening hours of a clinic."""
    return {"phone": "01632 960 204", "opening_hours": "8-18"}


TOOLS = [directory_search, animal_hospitals, clinic_details]


def test_the_tool_giving_an_id_the_request_lacks_is_offered_with_the_tool_that_needs_it() -> None:
    registry = ToolRegistry(TOOLS)
    query = "Get the phone number of the Birchwood health clinic"
    found = needed_producers(["clinic_details"], registry.names(), registry, query)
    assert found == ["directory_search"]  # of two tools giving clinic ids, the one the words fit


def test_an_id_the_request_holds_needs_no_lookup() -> None:
    registry = ToolRegistry(TOOLS)
    assert needed_producers(["clinic_details"], registry.names(), registry, "Phone of clinic CL-204?") == []


def test_a_producer_not_enabled_is_not_offered() -> None:
    registry = ToolRegistry(TOOLS)
    enabled = ["clinic_details", "animal_hospitals"]
    assert needed_producers(["clinic_details"], enabled, registry, "Phone of the Birchwood clinic?") == [
        "animal_hospitals"
    ]


@needs_bm25s
async def test_a_guided_run_offers_plans_and_calls_the_lookup_no_word_named() -> None:
    def reply(call: ScriptedCall) -> str:
        return (
            json.dumps(first_option(call.request.response_schema)) if call.request.response_schema else "ok"
        )

    ran: list[str] = []
    config = {
        "storage": {"type": "memory"},
        "providers": {"scripted": {"adapter": "scripted", "structured_output": True, "guided": True}},
        "retrieval": {"threshold": 0, "k": 3},
    }
    tools = [*TOOLS, *catalogue()[:200]]
    art = await create_art_instance(
        config, tools=tools, providers={"scripted": ScriptedProvider([reply] * 8)}
    )
    events: list[Any] = []
    art.subscribe(events.append)
    art.subscribe(lambda e: ran.append(e.data["tool_name"]), types=[EventType.TOOL_EXECUTION])
    async with art:
        await art.process("Get the phone number of the Birchwood clinic.")
    offered = next(e.data for e in events if e.type is EventType.TOOLS_OFFERED)
    assert offered["producers"] == ["directory_search"]
    assert ran == ["directory_search", "clinic_details"]


def test_a_lookup_on_offer_serves_unless_another_fits_the_words_better() -> None:
    registry = ToolRegistry(TOOLS)
    offered = ["clinic_details", "animal_hospitals"]
    assert needed_producers(offered, registry.names(), registry, "Phone of the Birchwood clinic?") == []
    assert needed_producers(offered, registry.names(), registry, "Phone of the Birchwood health clinic?") == [
        "directory_search"
    ]
