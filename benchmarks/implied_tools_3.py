"""Tools for the third implied-steps set (``local_implied.IMPLIED_3``): a library, parcels, time zones,
staff and managers, repositories, units, meetings, landmarks and hotels.

Written on 2026-11-27 (session 8) with that set, before any agent change made for it. Same habits as
``implied_tools``: free strings where a tool author would write them, ids with patterns, enums with
their words in the description, outputs declared as ``TypedDict`` return annotations. Deterministic and
offline; an unknown key is a ``ToolError``, so a wrong value shows as a failed call.
"""

from __future__ import annotations

import zlib
from typing import Annotated, Literal, TypedDict

from pydantic import Field

from benchmarks.implied_tools import Email, _key
from pes_agent.errors import ToolError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

Isbn = Annotated[str, Field(pattern="^97[89]-[0-9]{10}$", description="An ISBN-13 such as 978-0143127741.")]
MemberId = Annotated[str, Field(pattern="^M-[0-9]{4}$", description="A library member id such as M-1234.")]
OrderId = Annotated[str, Field(pattern="^O-[0-9]{5}$", description="An order number such as O-12345.")]
Tracking = Annotated[str, Field(pattern="^TRK-[0-9]{4}$", description="A parcel tracking number.")]
StaffId = Annotated[str, Field(pattern="^S-[0-9]{3}$", description="A staff id such as S-123.")]
Unit = Annotated[
    Literal["km", "mi", "m", "ft"],
    Field(description="Length unit: km (kilometres), mi (miles), m (metres), ft (feet)."),
]

BOOKS = {"the silent harbor": ("978-0143127741", 2), "a map of tides": ("978-0307277671", 0)}
ORDERS = {"O-88213": "TRK-4410", "O-90017": "TRK-5120"}
PARCELS = {"TRK-4410": ("in transit", "Leipzig"), "TRK-5120": ("delivered", "Graz")}
ZONES = {"auckland": "Pacific/Auckland", "reykjavik": "Atlantic/Reykjavik", "paris": "Europe/Paris"}
CLOCKS = {"Pacific/Auckland": "14:05", "Atlantic/Reykjavik": "01:05", "Europe/Paris": "02:05"}
STAFF = {
    "ines duarte": ("S-214", "ines.duarte@harbor.test", "S-310"),
    "kofi osei": ("S-310", "kofi.osei@harbor.test", "S-100"),
}
ISSUES = {("harbor-sync", "open"): 7, ("harbor-sync", "closed"): 41}
RIVERS = {"danube": 2850.0, "rhine": 1233.0}
PER_METRE = {"km": 1000.0, "mi": 1609.344, "m": 1.0, "ft": 0.3048}
MEETINGS = {"q3 planning": ("MT-31", "kofi.osei@harbor.test")}
LANDMARKS = {"eiffel tower": "Paris", "sky tower": "Auckland"}
FORECASTS = {"paris": (11.0, "drizzle"), "auckland": (17.5, "windy"), "reykjavik": (-2.0, "snow")}
HOTELS = {"hotel aurora": 120.0}


class Book(TypedDict):
    isbn: str
    title: str


class Availability(TypedDict):
    isbn: str
    copies_available: int


class Reservation(TypedDict):
    reservation_id: str


class OrderInfo(TypedDict):
    order_id: str
    tracking_number: str


class Parcel(TypedDict):
    status: str
    location: str


class Zone(TypedDict):
    timezone: str


class Clock(TypedDict):
    timezone: str
    local_time: str


class Staff(TypedDict):
    staff_id: str
    email: str
    manager_id: str


class IssueCount(TypedDict):
    repository: str
    count: int


class River(TypedDict):
    length_km: float


class Length(TypedDict):
    value: float
    unit: str


class Meeting(TypedDict):
    meeting_id: str
    organiser_email: str


class Place(TypedDict):
    city: str


class Forecast(TypedDict):
    city: str
    temperature_c: float
    outlook: str


class Rate(TypedDict):
    hotel: str
    nightly_rate_usd: float


class Mail(TypedDict):
    message_id: str


@tool
def find_book(title: str) -> Book:
    """Find a book in the library catalogue by its title."""
    found = BOOKS.get(_key(title).strip("'\""))
    if found is None:
        raise ToolError(f"no book titled {title!r}")
    return {"isbn": found[0], "title": title}


@tool
def book_availability(isbn: Isbn) -> Availability:
    """How many copies of a book (by ISBN) can be borrowed now."""
    copies = next((c for i, c in BOOKS.values() if i == isbn), None)
    if copies is None:
        raise ToolError(f"no book with ISBN {isbn!r}")
    return {"isbn": isbn, "copies_available": copies}


@tool
def reserve_book(isbn: Isbn, member_id: MemberId) -> Reservation:
    """Reserve a book (by ISBN) for a library member."""
    if isbn not in {i for i, _ in BOOKS.values()}:
        raise ToolError(f"no book with ISBN {isbn!r}")
    return {"reservation_id": f"RSV-{isbn[-4:]}-{member_id[2:]}"}


@tool
def order_details(order_id: OrderId) -> OrderInfo:
    """An order's details, including the tracking number of its parcel."""
    if order_id not in ORDERS:
        raise ToolError(f"no order {order_id!r}")
    return {"order_id": order_id, "tracking_number": ORDERS[order_id]}


@tool
def track_parcel(tracking_number: Tracking) -> Parcel:
    """Where a parcel is now, by its tracking number."""
    if tracking_number not in PARCELS:
        raise ToolError(f"no parcel {tracking_number!r}")
    status, location = PARCELS[tracking_number]
    return {"status": status, "location": location}


@tool
def city_timezone(city: str) -> Zone:
    """The IANA time zone a city is in."""
    found = ZONES.get(_key(city))
    if found is None:
        raise ToolError(f"no time zone known for {city!r}")
    return {"timezone": found}


@tool
def local_time(timezone: str) -> Clock:
    """The current local time in an IANA time zone such as Europe/Paris."""
    if timezone not in CLOCKS:
        raise ToolError(f"unknown time zone {timezone!r}")
    return {"timezone": timezone, "local_time": CLOCKS[timezone]}


@tool
def find_staff(name: str) -> Staff:
    """Look up a staff member by name: their id, email and their manager's staff id."""
    found = STAFF.get(_key(name))
    if found is None:
        raise ToolError(f"no staff member named {name!r}")
    return {"staff_id": found[0], "email": found[1], "manager_id": found[2]}


@tool
def staff_by_id(staff_id: StaffId) -> Staff:
    """Look up a staff member by staff id: their id, email and their manager's staff id."""
    for sid, email, manager in STAFF.values():
        if sid == staff_id:
            return {"staff_id": sid, "email": email, "manager_id": manager}
    raise ToolError(f"no staff member {staff_id!r}")


@tool
def repo_issues(repository: str, state: Literal["open", "closed"]) -> IssueCount:
    """Count a repository's issues in a state (open or closed)."""
    found = ISSUES.get((_key(repository), state))
    if found is None:
        raise ToolError(f"no repository named {repository!r}")
    return {"repository": repository, "count": found}


@tool
def river_facts(river: str) -> River:
    """Facts about a river: its length in kilometres."""
    found = RIVERS.get(_key(river).removeprefix("the "))
    if found is None:
        raise ToolError(f"no river named {river!r}")
    return {"length_km": found}


@tool
def convert_length(value: float, from_unit: Unit, to_unit: Unit) -> Length:
    """Convert a length from one unit to another."""
    return {"value": round(value * PER_METRE[from_unit] / PER_METRE[to_unit], 1), "unit": to_unit}


@tool
def find_meeting(title: str) -> Meeting:
    """Find a calendar meeting by its title: its id and the organiser's email."""
    found = MEETINGS.get(_key(title).removesuffix(" meeting"))
    if found is None:
        raise ToolError(f"no meeting titled {title!r}")
    return {"meeting_id": found[0], "organiser_email": found[1]}


@tool
def notify(recipient: Email, message: str) -> Mail:
    """Send a short message by email to one recipient."""
    return {"message_id": f"N-{zlib.crc32(f'{recipient}|{message}'.encode()) % 10000:04d}"}


@tool
def landmark_city(landmark: str) -> Place:
    """The city a famous landmark is in."""
    found = LANDMARKS.get(_key(landmark).removeprefix("the "))
    if found is None:
        raise ToolError(f"no landmark named {landmark!r}")
    return {"city": found}


@tool
def weather_forecast(city: str) -> Forecast:
    """Today's forecast for a city: temperature in Celsius and the outlook."""
    found = FORECASTS.get(_key(city))
    if found is None:
        raise ToolError(f"no forecast for {city!r}")
    return {"city": city, "temperature_c": found[0], "outlook": found[1]}


@tool
def hotel_rate(hotel: str) -> Rate:
    """A hotel's nightly room rate in US dollars."""
    found = HOTELS.get(_key(hotel))
    if found is None:
        raise ToolError(f"no hotel named {hotel!r}")
    return {"hotel": hotel, "nightly_rate_usd": found}


IMPLIED_TOOLS_3: list[ToolSpec] = [
    find_book,
    book_availability,
    reserve_book,
    order_details,
    track_parcel,
    city_timezone,
    local_time,
    find_staff,
    staff_by_id,
    repo_issues,
    river_facts,
    convert_length,
    find_meeting,
    notify,
    landmark_city,
    weather_forecast,
    hotel_rate,
]
