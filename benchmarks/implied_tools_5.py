"""Tools for the fifth implied-steps set (``local_implied.IMPLIED_5``): a vet clinic, car rental,
electricity meters, recycling pickup, gym classes, a cinema and street parking.

Written on 2026-11-28 by a helper who had not read the guided rules, with that set, before its first
run. Same habits as the other implied tool sets (ids with patterns, enums with their words in the
description, ``TypedDict`` outputs, deterministic data, a ``ToolError`` for an unknown key), plus what
those sets lack: optional arguments with defaults a request may or may not state, a list argument, list
outputs, clock times, months, and one near-duplicate pair (``parking_quote`` prices a stay,
``pay_parking`` pays for one: both take a zone and hours, only the asked one is right).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from pydantic import Field

from benchmarks.implied_tools import IsoDay, _key
from pes_agent.errors import ToolError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

PetId = Annotated[str, Field(pattern="^PET-[0-9]{4}$", description="A pet id such as PET-1234.")]
BranchId = Annotated[str, Field(pattern="^RB-[0-9]{2}$", description="A rental branch id such as RB-12.")]
MeterId = Annotated[
    str, Field(pattern="^MTR-[0-9]{5}$", description="An electricity meter id such as MTR-12345.")
]
Month = Annotated[
    str, Field(pattern="^[0-9]{4}-[0-9]{2}$", description="A month as YYYY-MM, such as 2026-01.")
]
Postcode = Annotated[str, Field(pattern="^[0-9]{4}$", description="A four-digit postcode such as 1234.")]
ClassId = Annotated[str, Field(pattern="^GC-[0-9]{3}$", description="A gym class id such as GC-123.")]
GymMember = Annotated[str, Field(pattern="^GM-[0-9]{4}$", description="A gym member id such as GM-1234.")]
CinemaId = Annotated[str, Field(pattern="^CIN-[0-9]{2}$", description="A cinema id such as CIN-12.")]
ZoneId = Annotated[str, Field(pattern="^PZ-[0-9]{2}$", description="A parking zone id such as PZ-12.")]
Plate = Annotated[
    str, Field(pattern="^[A-Z]{2}-[0-9]{3}-[A-Z]$", description="A licence plate such as AB-123-C.")
]
Clock = Annotated[
    str, Field(pattern="^([01][0-9]|2[0-3]):[0-5][0-9]$", description="A 24-hour clock time such as 18:45.")
]
VisitReason = Annotated[
    Literal["checkup", "vaccination", "dental", "injury"],
    Field(description="Why the pet comes in: checkup, vaccination, dental (teeth) or injury."),
]
CarClass = Annotated[
    Literal["economy", "compact", "suv", "van"],
    Field(description="Car class: economy (small), compact, suv (sport utility vehicle) or van."),
]
Detail = Annotated[
    Literal["summary", "detailed"],
    Field(description="summary (the month's total) or detailed (with peak share and daily average)."),
]
Bin = Annotated[
    Literal["paper", "glass", "plastic", "organic", "general"],
    Field(description="A waste bin: paper, glass, plastic, organic (garden and food) or general (rest)."),
]

PETS = {"biscuit": ("PET-0412", "dog"), "mochi": ("PET-0977", "cat")}
BRANCHES = {"central station": ("RB-31", 1.8), "airport": ("RB-07", 0.4)}
DAY_RATES_EUR = {"economy": 35.0, "compact": 42.0, "suv": 79.0, "van": 95.0}
METERS = {"14 elm road": "MTR-20931", "9 mill lane": "MTR-31877"}
USAGE_KWH = {
    ("MTR-20931", "2026-01"): (412.6, 38),
    ("MTR-20931", "2026-02"): (371.0, 35),
    ("MTR-31877", "2026-02"): (288.4, 41),
}
PICKUP_DAYS = {
    "4021": {
        "paper": "Tuesday",
        "glass": "Thursday",
        "plastic": "Friday",
        "organic": "Monday",
        "general": "Monday",
    }
}
GYM_CLASSES = {("northside gym", "spin express"): ("GC-512", "Tuesday", "18:15")}
CINEMAS = {"rialto": ("CIN-07", "Harbor City")}
SHOWTIMES = {("CIN-07", "dune", "2026-03-06"): ["17:00", "19:30", "21:45"]}
TICKET_EUR = 12.5
ZONES = {"quay street": ("PZ-14", 2.4), "market square": ("PZ-03", 3.0)}


class Pet(TypedDict):
    pet_id: str
    name: str
    species: str


class VetVisit(TypedDict):
    visit_id: str
    date: str
    time: str
    reason: str


class Branch(TypedDict):
    branch_id: str
    distance_km: float


class Rental(TypedDict):
    rental_id: str
    car_class: str
    total_eur: float


class Meter(TypedDict):
    meter_id: str
    address: str


class Usage(TypedDict):
    meter_id: str
    month: str
    kwh: float
    details: str


class Pickup(TypedDict):
    bin: str
    weekday: str


class Schedule(TypedDict):
    postcode: str
    pickups: list[Pickup]


class GymClass(TypedDict):
    class_id: str
    weekday: str
    time: str


class Enrolment(TypedDict):
    enrolment_id: str


class Cinema(TypedDict):
    cinema_id: str
    city: str


class Showings(TypedDict):
    film: str
    date: str
    times: list[str]


class Tickets(TypedDict):
    order_id: str
    seats: int
    total_eur: float


class Zone(TypedDict):
    zone_id: str
    hourly_rate_eur: float


class Quote(TypedDict):
    zone_id: str
    hours: float
    price_eur: float


class Payment(TypedDict):
    permit_id: str
    paid_eur: float


@tool
def find_pet(name: str) -> Pet:
    """Find a patient of the vet clinic by the pet's name; returns its pet id and species."""
    found = PETS.get(_key(name))
    if found is None:
        raise ToolError(f"no pet named {name!r} on file")
    return {"pet_id": found[0], "name": name, "species": found[1]}


@tool
def book_vet_visit(
    pet_id: PetId, date: IsoDay, reason: VisitReason = "checkup", time: Clock = "09:00"
) -> VetVisit:
    """Book an appointment at the vet clinic for a pet (by pet id) on a day."""
    if pet_id not in {p for p, _ in PETS.values()}:
        raise ToolError(f"no pet {pet_id!r}")
    return {
        "visit_id": f"VV-{pet_id[4:]}-{date[5:7]}{date[8:]}",
        "date": date,
        "time": time,
        "reason": reason,
    }


@tool
def find_rental_branch(near: str, radius_km: float = 10.0) -> Branch:
    """The car rental branch nearest to a place, searched within a radius in kilometres."""
    found = BRANCHES.get(_key(near).removeprefix("the "))
    if found is None or found[1] > radius_km:
        raise ToolError(f"no rental branch within {radius_km} km of {near!r}")
    return {"branch_id": found[0], "distance_km": found[1]}


@tool
def rent_car(branch_id: BranchId, pickup_date: IsoDay, days: int, car_class: CarClass = "economy") -> Rental:
    """Rent a car at a rental branch (by branch id) from a pickup day for a number of days."""
    if branch_id not in {b for b, _ in BRANCHES.values()}:
        raise ToolError(f"no rental branch {branch_id!r}")
    rental_id = f"RC-{branch_id[3:]}-{pickup_date[5:7]}{pickup_date[8:]}-{car_class[0].upper()}"
    return {"rental_id": rental_id, "car_class": car_class, "total_eur": DAY_RATES_EUR[car_class] * days}


@tool
def meter_for_address(address: str) -> Meter:
    """The electricity meter installed at a street address."""
    found = METERS.get(_key(address))
    if found is None:
        raise ToolError(f"no meter registered at {address!r}")
    return {"meter_id": found, "address": address}


@tool
def meter_readings(meter_id: MeterId, month: Month, report: Detail = "summary") -> Usage:
    """Electricity used by a meter in a month, in kWh, as a summary or a detailed report."""
    found = USAGE_KWH.get((meter_id, month))
    if found is None:
        raise ToolError(f"no readings for {meter_id!r} in {month!r}")
    kwh, peak = found
    details = f"peak share {peak} %, daily average {kwh / 30:.1f} kWh" if report == "detailed" else ""
    return {"meter_id": meter_id, "month": month, "kwh": kwh, "details": details}


@tool
def collection_schedule(postcode: Postcode, bins: list[Bin]) -> Schedule:
    """The weekday each of the listed waste bins is picked up at a postcode."""
    days = PICKUP_DAYS.get(postcode)
    if days is None:
        raise ToolError(f"no collection schedule for postcode {postcode!r}")
    return {"postcode": postcode, "pickups": [{"bin": b, "weekday": days[b]} for b in bins]}


@tool
def find_gym_class(gym: str, class_name: str) -> GymClass:
    """Find a class at a gym by the class's name: its id, weekday and start time."""
    found = GYM_CLASSES.get((_key(gym), _key(class_name).strip("'\"")))
    if found is None:
        raise ToolError(f"no class {class_name!r} at {gym!r}")
    return {"class_id": found[0], "weekday": found[1], "time": found[2]}


@tool
def join_class(class_id: ClassId, member_id: GymMember) -> Enrolment:
    """Sign a gym member up for a class (by class id)."""
    if class_id not in {c for c, _, _ in GYM_CLASSES.values()}:
        raise ToolError(f"no gym class {class_id!r}")
    return {"enrolment_id": f"EN-{class_id[3:]}-{member_id[3:]}"}


@tool
def find_cinema(name: str) -> Cinema:
    """Find a cinema by its name; returns its cinema id and city."""
    found = CINEMAS.get(_key(name).removeprefix("the ").removesuffix(" cinema"))
    if found is None:
        raise ToolError(f"no cinema named {name!r}")
    return {"cinema_id": found[0], "city": found[1]}


@tool
def showtimes(cinema_id: CinemaId, film: str, date: IsoDay) -> Showings:
    """The times a film is shown at a cinema (by cinema id) on a day."""
    found = SHOWTIMES.get((cinema_id, _key(film), date))
    if found is None:
        raise ToolError(f"{film!r} is not shown at {cinema_id!r} on {date!r}")
    return {"film": film, "date": date, "times": found}


@tool
def buy_tickets(cinema_id: CinemaId, film: str, date: IsoDay, time: Clock, seats: int = 1) -> Tickets:
    """Buy cinema tickets for a showing of a film at a cinema (by cinema id), day and start time."""
    if time not in SHOWTIMES.get((cinema_id, _key(film), date), []):
        raise ToolError(f"no showing of {film!r} at {cinema_id!r} on {date!r} at {time!r}")
    order_id = f"TK-{cinema_id[4:]}-{time.replace(':', '')}-{seats}"
    return {"order_id": order_id, "seats": seats, "total_eur": TICKET_EUR * seats}


@tool
def parking_zone(street: str) -> Zone:
    """The parking zone a street belongs to, with its hourly rate in euros."""
    found = ZONES.get(_key(street))
    if found is None:
        raise ToolError(f"no parking zone for {street!r}")
    return {"zone_id": found[0], "hourly_rate_eur": found[1]}


def _rate(zone_id: str) -> float:
    rate = next((r for z, r in ZONES.values() if z == zone_id), None)
    if rate is None:
        raise ToolError(f"no parking zone {zone_id!r}")
    return rate


@tool
def parking_quote(zone_id: ZoneId, hours: float) -> Quote:
    """What parking in a zone (by zone id) for a number of hours would cost, without paying."""
    return {"zone_id": zone_id, "hours": hours, "price_eur": round(_rate(zone_id) * hours, 2)}


@tool
def pay_parking(zone_id: ZoneId, plate: Plate, hours: float) -> Payment:
    """Pay for parking a car (by licence plate) in a zone (by zone id) for a number of hours."""
    paid = round(_rate(zone_id) * hours, 2)
    return {"permit_id": f"PP-{zone_id[3:]}-{plate[3:6]}", "paid_eur": paid}


IMPLIED_TOOLS_5: list[ToolSpec] = [
    find_pet,
    book_vet_visit,
    find_rental_branch,
    rent_car,
    meter_for_address,
    meter_readings,
    collection_schedule,
    find_gym_class,
    join_class,
    find_cinema,
    showtimes,
    buy_tickets,
    parking_zone,
    parking_quote,
    pay_parking,
]
