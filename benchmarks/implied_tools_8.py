"""Tools for the eighth implied-steps set (``local_implied_8.IMPLIED_8``): rail seat reservations, a
translation agency, a bakery's celebration cakes, a babysitting agency, self-storage units and a
passport office.

Written on 2026-11-28 by a helper who had not read the guided rules, with that set, before its first
run. Same habits as the other implied tool sets (ids with patterns, enums with their words in the
description, ``TypedDict`` outputs, deterministic data, a ``ToolError`` for an unknown key), plus what
booking and ordering services have: a ``format: date-time`` field with one spelling
(``search_trains.depart_after``, ``book_babysitter.start``), units the customer says differently
(``weight_g`` where people say kilograms, ``duration_minutes`` where they say hours, ``months`` where
they say "a year"), a ``multipleOf`` (cakes come in 250 g steps), a service level
(``passport_fee.service``), ids with a space or a date inside (``IC 718``, ``JR-20260503-ICE18``),
a list output to choose from (``search_trains``), names with accents and hyphens kept as written
(``Köln Hbf``, ``Ana-Lucía Gómez``), near-duplicate pairs that price or do (``price_cake`` or
``order_cake``, ``quote_storage_unit`` or ``rent_storage_unit``, ``quote_translation`` or
``order_translation``; ``search_trains`` finds departures, ``get_train`` describes one train) and
optional arguments with defaults (``travel_class``, ``seat``, ``turnaround``, ``inscription``,
``children``, ``months``, ``service``).
"""

from __future__ import annotations

import datetime as dt
import zlib
from typing import Annotated, Literal, TypedDict

from pydantic import Field

from benchmarks.implied_tools import Email, IsoDay, _key
from pes_agent.errors import ToolError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

StationCode = Annotated[
    str,
    Field(pattern="^[A-Z]{5}$", description="A rail station code: country then station, such as CHZRH."),
]
LocalDateTime = Annotated[
    str,
    Field(
        pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:00$",
        json_schema_extra={"format": "date-time"},
        description="A local date and time such as 2026-04-30T14:30:00.",
    ),
]
TrainId = Annotated[
    str, Field(pattern="^[A-Z]{2,3} [0-9]{1,4}$", description="A train number such as ICE 14 or IC 722.")
]
JourneyId = Annotated[
    str,
    Field(
        pattern="^JR-[0-9]{8}-[A-Z]{2,3}[0-9]{1,4}$",
        description="One train on one day, as search_trains returns it, e.g. JR-20260430-IC722.",
    ),
]
TravelClass = Annotated[
    Literal["standard", "first"],
    Field(description="standard (second class) or first (first class, 1.6 times the standard fare)."),
]
SeatChoice = Annotated[
    Literal["window", "aisle", "table"],
    Field(description="window, aisle, or table (a seat facing others across a table)."),
]
Language = Annotated[
    Literal["de", "fr", "es", "pt-BR", "pt-PT", "ja"],
    Field(
        description="The language to translate into: de (German), fr (French), es (Spanish), "
        "pt-BR (Portuguese as written in Brazil), pt-PT (Portuguese as written in Portugal), ja (Japanese)."
    ),
]
Turnaround = Annotated[
    Literal["standard", "express", "rush"],
    Field(
        description="standard (within 5 working days), express (2 working days, 1.5 times the price) "
        "or rush (next working day, twice the price)."
    ),
]
QuoteId = Annotated[
    str,
    Field(
        pattern="^TQ-[0-9]{1,6}-[A-Z]{2,4}-[SER]$",
        description="A translation quote id such as TQ-250-FR-S, as quote_translation returns it.",
    ),
]
Flavour = Annotated[
    Literal["chocolate", "lemon", "carrot", "red_velvet"],
    Field(
        description="chocolate (dark chocolate sponge with ganache), lemon (lemon drizzle sponge with curd), "
        "carrot (spiced carrot cake with cream-cheese frosting) or red_velvet (cocoa sponge, vanilla cream)."
    ),
]
CakeWeight = Annotated[
    int,
    Field(ge=500, le=5000, multiple_of=250, description="The cake's weight in grams, in steps of 250 g."),
]
SitterId = Annotated[str, Field(pattern="^BS-[0-9]{4}$", description="A babysitter id such as BS-1234.")]
SiteId = Annotated[str, Field(pattern="^SS-[0-9]{2}$", description="A self-storage site id such as SS-12.")]
UnitSize = Annotated[
    Literal["locker", "small", "medium", "large"],
    Field(
        description="locker (15 sq ft: a few boxes or a bike), small (35 sq ft: a studio flat's contents), "
        "medium (75 sq ft: a one-bedroom flat) or large (150 sq ft: a three-bedroom house)."
    ),
]
Application = Annotated[
    Literal["adult_first", "adult_renewal", "child", "lost_or_stolen"],
    Field(
        description="adult_first (16 or over, never had a passport), adult_renewal (16 or over, replacing "
        "an expiring or expired passport), child (under 16) or lost_or_stolen (replacing a lost or "
        "stolen passport)."
    ),
]
PassportService = Annotated[
    Literal["standard", "fast_track"],
    Field(
        description="standard (by post, three to six weeks) or fast_track (one week, at a higher fee; "
        "not for a first adult passport)."
    ),
]
PassportRef = Annotated[
    str, Field(pattern="^PEX[0-9]{9}$", description="A passport application reference such as PEX123456789.")
]

STATIONS = {
    "köln hbf": ("DEKOL", "Köln Hbf", "Germany"),
    "bruxelles-midi": ("BEBMI", "Bruxelles-Midi", "Belgium"),
    "zürich hb": ("CHZRH", "Zürich HB", "Switzerland"),
    "genève-cornavin": ("CHGVA", "Genève-Cornavin", "Switzerland"),
}
TIMETABLE = {
    ("DEKOL", "BEBMI"): (
        ("ICE 14", "08:43", "10:35", 59.9),
        ("ICE 16", "10:43", "12:35", 44.9),
        ("ICE 18", "12:43", "14:35", 39.9),
        ("ICE 10", "16:43", "18:35", 49.9),
    ),
    ("CHZRH", "CHGVA"): (
        ("IC 718", "07:32", "10:16", 68.0),
        ("IC 722", "09:32", "12:16", 54.0),
        ("IC 726", "11:32", "14:16", 54.0),
    ),
}
"""Daily departures: train, departs, arrives, standard fare in euros."""
PLATFORMS = {
    "ICE 14": "4",
    "ICE 16": "4",
    "ICE 18": "5",
    "ICE 10": "4",
    "IC 718": "43",
    "IC 722": "31",
    "IC 726": "33",
}
RATE_PER_WORD_EUR = {"de": 0.12, "fr": 0.11, "es": 0.10, "pt-BR": 0.12, "pt-PT": 0.12, "ja": 0.18}
SPEED = {"standard": ("S", 1.0, 5), "express": ("E", 1.5, 2), "rush": ("R", 2.0, 1)}
CAKE_GBP_PER_KG = {"chocolate": 28.0, "lemon": 24.0, "carrot": 26.0, "red_velvet": 30.0}
SITTERS = {
    "ana-lucía gómez": ("BS-0417", "Ana-Lucía Gómez", 14.0, "555-0172"),
    "tom beck": ("BS-0208", "Tom Beck", 12.5, "555-0135"),
}
"""Id, name, hourly rate in pounds for one child (2 pounds more an hour for each other child), phone."""
STORAGE_SITES = {
    "bury st edmunds": ("SS-31", "Bury St Edmunds (Moreton Hall)"),
    "llandudno": ("SS-07", "Llandudno Junction"),
}
UNIT_GBP_MONTH = {"locker": 19.0, "small": 45.0, "medium": 79.0, "large": 139.0}
PASSPORT_FEES = {
    "adult_first": (88.5, 6, None),
    "adult_renewal": (88.5, 3, 178.0),
    "child": (57.5, 3, 147.5),
    "lost_or_stolen": (88.5, 3, 178.0),
}
"""Fee in pounds, weeks to deliver, fast-track fee (one week; none for a first passport)."""
APPLICATIONS = {
    "PEX204518733": ("approved, being printed", "2026-04-14", "2026-04-21"),
    "PEX311870452": ("waiting for supporting documents", "2026-04-02", ""),
}


class Station(TypedDict):
    station_code: str
    name: str
    country: str


class Departure(TypedDict):
    journey_id: str
    train_id: str
    departs: str
    arrives: str
    fare_eur: float


class Departures(TypedDict):
    origin: str
    destination: str
    trains: list[Departure]


class Train(TypedDict):
    train_id: str
    origin: str
    destination: str
    departs: str
    platform: str


class SeatReservation(TypedDict):
    reservation_id: str
    journey_id: str
    coach: int
    seat_number: int
    fare_eur: float


class TranslationQuote(TypedDict):
    quote_id: str
    words: int
    price_eur: float
    working_days: int


class TranslationOrder(TypedDict):
    order_id: str
    price_eur: float
    working_days: int
    invoice_to: str


class CakePrice(TypedDict):
    flavour: str
    weight_g: int
    price_gbp: float


class CakeOrder(TypedDict):
    order_id: str
    pickup_date: str
    inscription: str
    price_gbp: float


class Sitter(TypedDict):
    sitter_id: str
    name: str
    hourly_rate_gbp: float
    phone: str


class SitterBooking(TypedDict):
    booking_id: str
    start: str
    ends: str
    cost_gbp: float


class StorageSite(TypedDict):
    site_id: str
    name: str


class StorageQuote(TypedDict):
    site_id: str
    size: str
    months: int
    monthly_gbp: float
    total_gbp: float


class StorageRental(TypedDict):
    rental_id: str
    unit_number: str
    start_date: str
    end_date: str
    monthly_gbp: float


class PassportFee(TypedDict):
    application: str
    fee_gbp: float
    weeks: int


class ApplicationStatus(TypedDict):
    reference: str
    stage: str
    updated: str
    expected_delivery: str


@tool
def find_rail_station(name: str) -> Station:
    """Find a rail station by its name; returns its station code."""
    found = STATIONS.get(_key(name))
    if found is None:
        raise ToolError(f"no station called {name!r}")
    return {"station_code": found[0], "name": found[1], "country": found[2]}


@tool
def search_trains(origin: StationCode, destination: StationCode, depart_after: LocalDateTime) -> Departures:
    """List the direct trains between two stations (by station code) leaving at or after a date and
    time, each with its journey id and standard fare in euros."""
    day, time = depart_after.split("T")
    try:
        dt.date.fromisoformat(day)
    except ValueError as exc:
        raise ToolError(f"{depart_after!r} is not a calendar date") from exc
    trains = [t for t in TIMETABLE.get((origin, destination), ()) if t[1] >= time[:5]]
    if not trains:
        raise ToolError(f"no direct train from {origin!r} to {destination!r} after {depart_after}")
    return {
        "origin": origin,
        "destination": destination,
        "trains": [
            {
                "journey_id": f"JR-{day.replace('-', '')}-{train.replace(' ', '')}",
                "train_id": train,
                "departs": f"{day}T{departs}:00",
                "arrives": f"{day}T{arrives}:00",
                "fare_eur": fare,
            }
            for train, departs, arrives, fare in trains
        ],
    }


def _service(train_id: str) -> tuple[str, str, str, float, str, str]:
    for (origin, destination), trains in TIMETABLE.items():
        for train, departs, arrives, fare in trains:
            if train == train_id:
                return train, departs, arrives, fare, origin, destination
    raise ToolError(f"no train {train_id!r}")


@tool
def get_train(train_id: TrainId) -> Train:
    """Get one train's daily departure (by train number): where it runs, its time and its platform."""
    train, departs, _, _, origin, destination = _service(train_id)
    names = {code: name for code, name, _ in STATIONS.values()}
    return {
        "train_id": train,
        "origin": names[origin],
        "destination": names[destination],
        "departs": departs,
        "platform": PLATFORMS[train],
    }


@tool
def reserve_seat(
    journey_id: JourneyId,
    passenger_name: str,
    email: Email,
    travel_class: TravelClass = "standard",
    seat: SeatChoice = "window",
) -> SeatReservation:
    """Reserve a seat for a passenger on one train journey (by journey id); the ticket goes to the email."""
    day, code = journey_id[3:11], journey_id[12:]
    train = next((t for t in PLATFORMS if t.replace(" ", "") == code), None)
    if train is None:
        raise ToolError(f"no train {code!r} in journey {journey_id!r}")
    fare = _service(train)[3] * (1.6 if travel_class == "first" else 1.0)
    seat_number = zlib.crc32(f"{journey_id}|{passenger_name}|{seat}".encode()) % 80 + 1
    return {
        "reservation_id": f"SR-{day[4:]}-{seat_number:02d}{travel_class[0].upper()}",
        "journey_id": journey_id,
        "coach": 1 if travel_class == "first" else 7,
        "seat_number": seat_number,
        "fare_eur": round(fare, 2),
    }


@tool
def quote_translation(
    word_count: Annotated[int, Field(ge=1, description="How many words the source text has.")],
    target_language: Language,
    turnaround: Turnaround = "standard",
) -> TranslationQuote:
    """Quote a professional translation of a text of some length into a language, without ordering it."""
    letter, factor, days = SPEED[turnaround]
    code = target_language.replace("-", "").upper()
    return {
        "quote_id": f"TQ-{word_count}-{code}-{letter}",
        "words": word_count,
        "price_eur": round(word_count * RATE_PER_WORD_EUR[target_language] * factor, 2),
        "working_days": days,
    }


@tool
def order_translation(quote_id: QuoteId, email: Email) -> TranslationOrder:
    """Order the translation a quote (by quote id) describes; the invoice goes to the email address."""
    _, words, code, letter = quote_id.split("-")
    language = next((lang for lang in RATE_PER_WORD_EUR if lang.replace("-", "").upper() == code), None)
    if language is None:
        raise ToolError(f"quote {quote_id!r} is for no language we translate into")
    factor, days = next((f, d) for lt, f, d in SPEED.values() if lt == letter)
    return {
        "order_id": f"TO-{zlib.crc32(quote_id.encode()) % 100000:05d}",
        "price_eur": round(int(words) * RATE_PER_WORD_EUR[language] * factor, 2),
        "working_days": days,
        "invoice_to": email,
    }


@tool
def price_cake(flavour: Flavour, weight_g: CakeWeight) -> CakePrice:
    """Price a celebration cake of a flavour and weight, without ordering it."""
    return {
        "flavour": flavour,
        "weight_g": weight_g,
        "price_gbp": round(CAKE_GBP_PER_KG[flavour] * weight_g / 1000, 2),
    }


@tool
def order_cake(
    flavour: Flavour, weight_g: CakeWeight, pickup_date: IsoDay, email: Email, inscription: str = ""
) -> CakeOrder:
    """Order a celebration cake to collect from the bakery on a day, with an optional inscription piped
    on top; the confirmation goes to the email address."""
    if dt.date.fromisoformat(pickup_date).weekday() == 6:
        raise ToolError(f"the bakery is closed on Sundays ({pickup_date})")
    return {
        "order_id": f"CK-{pickup_date[5:7]}{pickup_date[8:]}-{weight_g}{flavour[0].upper()}",
        "pickup_date": pickup_date,
        "inscription": inscription,
        "price_gbp": round(CAKE_GBP_PER_KG[flavour] * weight_g / 1000, 2),
    }


@tool
def find_babysitter(name: str) -> Sitter:
    """Find one of the agency's babysitters by name: their id, hourly rate and phone number."""
    found = SITTERS.get(_key(name))
    if found is None:
        raise ToolError(f"no babysitter called {name!r}")
    return {"sitter_id": found[0], "name": found[1], "hourly_rate_gbp": found[2], "phone": found[3]}


@tool
def book_babysitter(
    sitter_id: SitterId,
    start: LocalDateTime,
    duration_minutes: Annotated[
        int, Field(ge=60, le=720, description="How long the sitter stays, in minutes.")
    ],
    parent_email: Email,
    children: Annotated[int, Field(ge=1, le=4)] = 1,
) -> SitterBooking:
    """Book a babysitter (by sitter id) from a date and time for a while; the confirmation goes to the
    parent's email."""
    rate = next((s[2] for s in SITTERS.values() if s[0] == sitter_id), None)
    if rate is None:
        raise ToolError(f"no babysitter {sitter_id!r}")
    ends = dt.datetime.fromisoformat(start) + dt.timedelta(minutes=duration_minutes)
    return {
        "booking_id": f"BB-{sitter_id[3:]}-{start[5:7]}{start[8:10]}",
        "start": start,
        "ends": ends.isoformat(),
        "cost_gbp": round((rate + 2 * (children - 1)) * duration_minutes / 60, 2),
    }


@tool
def find_storage_site(town: str) -> StorageSite:
    """Find the self-storage site in a town; returns its site id."""
    found = STORAGE_SITES.get(_key(town))
    if found is None:
        raise ToolError(f"no storage site in {town!r}")
    return {"site_id": found[0], "name": found[1]}


def _monthly(site_id: str, size: str, months: int) -> float:
    if not any(s[0] == site_id for s in STORAGE_SITES.values()):
        raise ToolError(f"no storage site {site_id!r}")
    return round(UNIT_GBP_MONTH[size] * (0.9 if months >= 12 else 1.0), 2)


@tool
def quote_storage_unit(
    site_id: SiteId, size: UnitSize, months: Annotated[int, Field(ge=1, le=36)] = 1
) -> StorageQuote:
    """Quote a storage unit of a size at a site (by site id) for some months, without renting it;
    12 months or more are 10 % off."""
    monthly = _monthly(site_id, size, months)
    return {
        "site_id": site_id,
        "size": size,
        "months": months,
        "monthly_gbp": monthly,
        "total_gbp": round(monthly * months, 2),
    }


@tool
def rent_storage_unit(
    site_id: SiteId,
    size: UnitSize,
    start_date: IsoDay,
    months: Annotated[int, Field(ge=1, le=36)],
    email: Email,
) -> StorageRental:
    """Rent a storage unit of a size at a site (by site id) from a day for some months; the agreement
    goes to the email address."""
    monthly = _monthly(site_id, size, months)
    first = dt.date.fromisoformat(start_date)
    month = first.month - 1 + months
    end = dt.date(first.year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)
    return {
        "rental_id": f"ST-{site_id[3:]}-{start_date[5:7]}{start_date[8:]}-{size[0].upper()}{months}",
        "unit_number": f"{size[0].upper()}-{100 + months * 7}",
        "start_date": start_date,
        "end_date": end.isoformat(),
        "monthly_gbp": monthly,
    }


@tool
def passport_fee(application: Application, service: PassportService = "standard") -> PassportFee:
    """The fee and delivery time of a passport application, by the standard or the fast-track service."""
    fee, weeks, fast = PASSPORT_FEES[application]
    if service == "fast_track":
        if fast is None:
            raise ToolError(
                f"{application!r} cannot be fast-tracked; the standard service takes {weeks} weeks"
            )
        fee, weeks = fast, 1
    return {"application": application, "fee_gbp": fee, "weeks": weeks}


@tool
def application_status(reference: PassportRef) -> ApplicationStatus:
    """Where a passport application (by reference) has got to, and when the passport should arrive."""
    found = APPLICATIONS.get(reference)
    if found is None:
        raise ToolError(f"no passport application {reference!r}")
    return {"reference": reference, "stage": found[0], "updated": found[1], "expected_delivery": found[2]}


IMPLIED_TOOLS_8: list[ToolSpec] = [
    find_rail_station,
    search_trains,
    get_train,
    reserve_seat,
    quote_translation,
    order_translation,
    price_cake,
    order_cake,
    find_babysitter,
    book_babysitter,
    find_storage_site,
    quote_storage_unit,
    rent_storage_unit,
    passport_fee,
    application_status,
]
