"""Tools for the fourth implied-steps set (``local_implied.IMPLIED_4``): courses, pharmacies, sports,
temperatures, distances, hotel rooms, populations, check-in.

Written on 2026-11-27 (session 8) with that set, before any agent change made for it, and kept unseen
by the rules until its first run. Same habits as the other implied tool sets.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from pydantic import Field

from benchmarks.implied_tools import _key
from pes_agent.errors import ToolError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

CourseId = Annotated[str, Field(pattern="^C-[0-9]{3}$", description="A course id such as C-123.")]
RxId = Annotated[str, Field(pattern="^RX-[0-9]{4}$", description="A prescription number such as RX-1234.")]
PharmacyId = Annotated[str, Field(pattern="^PH-[0-9]{2}$", description="A pharmacy id such as PH-12.")]
TeamId = Annotated[str, Field(pattern="^T-[0-9]{2}$", description="A team id such as T-12.")]
RoomId = Annotated[str, Field(pattern="^HR-[0-9]{4}$", description="A hotel room id such as HR-1234.")]
BookingRef = Annotated[str, Field(pattern="^BK-[0-9]{4}-[A-Z]{3}$", description="A booking reference.")]
Scale = Annotated[
    Literal["C", "F", "K"], Field(description="Temperature scale: C (Celsius), F (Fahrenheit), K (Kelvin).")
]

COURSES = {"data ethics": ("C-204", "B-12"), "applied statistics": ("C-117", "A-03")}
PRESCRIPTIONS = {"RX-7781": "ready for pickup"}
PHARMACIES = {"linden street": "PH-22"}
STOCK = {("PH-22", "ibuprofen"): 40, ("PH-22", "aspirin"): 0}
TEAMS = {"harbor hawks": "T-77"}
MATCHES = {"T-77": ("Harbor Hawks", "3-1")}
DISTANCES = {frozenset({"porto", "lisbon"}): 313.0}
ROOMS = {("hotel aurora", "aurora suite"): "HR-3012"}
POPULATIONS = {"lisbon": 545000, "tokyo": 13960000}


class Course(TypedDict):
    course_id: str
    title: str


class Room(TypedDict):
    course_id: str
    room: str


class Refill(TypedDict):
    status: str


class Pharmacy(TypedDict):
    pharmacy_id: str


class Stock(TypedDict):
    drug: str
    units_in_stock: int


class Team(TypedDict):
    team_id: str


class Match(TypedDict):
    winner: str
    score: str


class Temperature(TypedDict):
    value: float
    scale: str


class Distance(TypedDict):
    distance_km: float


class HotelRoom(TypedDict):
    room_id: str


class RoomBooking(TypedDict):
    confirmation: str


class Population(TypedDict):
    city: str
    population: int


class CheckIn(TypedDict):
    boarding_pass: str


@tool
def find_course(title: str) -> Course:
    """Find a university course by its title."""
    found = COURSES.get(_key(title).removesuffix(" seminar").removesuffix(" course"))
    if found is None:
        raise ToolError(f"no course titled {title!r}")
    return {"course_id": found[0], "title": title}


@tool
def course_room(course_id: CourseId) -> Room:
    """The room a course is taught in, by course id."""
    for cid, room in COURSES.values():
        if cid == course_id:
            return {"course_id": cid, "room": room}
    raise ToolError(f"no course {course_id!r}")


@tool
def refill_prescription(prescription: RxId) -> Refill:
    """Request a refill of a prescription by its number."""
    if prescription not in PRESCRIPTIONS:
        raise ToolError(f"no prescription {prescription!r}")
    return {"status": PRESCRIPTIONS[prescription]}


@tool
def find_pharmacy(name: str) -> Pharmacy:
    """Find a pharmacy branch by its name."""
    found = PHARMACIES.get(_key(name).removesuffix(" pharmacy"))
    if found is None:
        raise ToolError(f"no pharmacy named {name!r}")
    return {"pharmacy_id": found}


@tool
def stock_check(pharmacy_id: PharmacyId, drug: str) -> Stock:
    """How many units of a drug a pharmacy has in stock."""
    found = STOCK.get((pharmacy_id, _key(drug)))
    if found is None:
        raise ToolError(f"no stock record for {drug!r} at {pharmacy_id!r}")
    return {"drug": drug, "units_in_stock": found}


@tool
def team_lookup(team: str) -> Team:
    """Find a sports team's id by the team's name."""
    found = TEAMS.get(_key(team).removeprefix("the "))
    if found is None:
        raise ToolError(f"no team named {team!r}")
    return {"team_id": found}


@tool
def last_match(team_id: TeamId) -> Match:
    """The result of a team's most recent match: the winner and the score."""
    if team_id not in MATCHES:
        raise ToolError(f"no team {team_id!r}")
    winner, score = MATCHES[team_id]
    return {"winner": winner, "score": score}


@tool
def convert_temperature(value: float, from_scale: Scale, to_scale: Scale) -> Temperature:
    """Convert a temperature from one scale to another."""
    kelvin = {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[from_scale]
    out = {"C": kelvin - 273.15, "F": (kelvin - 273.15) * 9 / 5 + 32, "K": kelvin}[to_scale]
    return {"value": round(out, 1), "scale": to_scale}


@tool
def distance_between(from_city: str, to_city: str) -> Distance:
    """The road distance between two cities in kilometres."""
    found = DISTANCES.get(frozenset({_key(from_city), _key(to_city)}))
    if found is None:
        raise ToolError(f"no distance known between {from_city!r} and {to_city!r}")
    return {"distance_km": found}


@tool
def hotel_room(hotel: str, room_name: str) -> HotelRoom:
    """Find a room of a hotel by the room's name; returns its room id."""
    found = ROOMS.get((_key(hotel), _key(room_name)))
    if found is None:
        raise ToolError(f"no room {room_name!r} at {hotel!r}")
    return {"room_id": found}


@tool
def book_room(room_id: RoomId, guest: str) -> RoomBooking:
    """Book a hotel room (by room id) for a guest."""
    return {"confirmation": f"BR-{room_id[3:]}-{_key(guest)[:3].upper()}"}


@tool
def city_population(city: str) -> Population:
    """The number of people living in a city."""
    found = POPULATIONS.get(_key(city))
    if found is None:
        raise ToolError(f"no population figure for {city!r}")
    return {"city": city, "population": found}


@tool
def check_in(booking_ref: BookingRef, seat: Literal["aisle", "window", "middle"]) -> CheckIn:
    """Check in for a flight booking with a seat preference (aisle, window or middle)."""
    return {"boarding_pass": f"BP-{booking_ref[3:7]}-{seat[0].upper()}"}


IMPLIED_TOOLS_4: list[ToolSpec] = [
    find_course,
    course_room,
    refill_prescription,
    find_pharmacy,
    stock_check,
    team_lookup,
    last_match,
    convert_temperature,
    distance_between,
    hotel_room,
    book_room,
    city_population,
    check_in,
]
