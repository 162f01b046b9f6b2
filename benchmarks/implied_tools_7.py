"""Tools for the seventh implied-steps set (``local_implied_7.IMPLIED_7``): restaurant tables, a car
garage, home broadband support, a streaming subscription, splitting a bill and museum visits.

Written on 2026-11-28 by a helper who had not read the guided rules, with that set, before its first
run. Same habits as the other implied tool sets (ids with patterns, enums with their words in the
description, flat ``TypedDict`` outputs, deterministic data, a ``ToolError`` for an unknown key), plus
what customer-support catalogues have: lookups keyed by a ``format: email`` address
(``find_account``, ``get_subscription``), an email field inside a booking (``reserve_table``,
``book_service``), a month written ``YYYY-MM`` (``get_invoice``), an amount asked in cents
(``split_bill``), names with accents kept as written (``Casa Lúcia``, ``São Paulo``), near-duplicate
names (``search_restaurants`` finds a restaurant, ``get_restaurant`` describes one; ``quote_service``
prices a job, ``book_service`` books it) and optional arguments with defaults (``city``, ``seating``,
``slot``, ``tip_percent``, ``children``).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from pydantic import Field

from benchmarks.implied_tools import Email, IsoDay, _key
from pes_agent.errors import ToolError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

RestaurantId = Annotated[str, Field(pattern="^RS-[0-9]{4}$", description="A restaurant id such as RS-1234.")]
VehicleId = Annotated[
    str, Field(pattern="^VH-[0-9]{5}$", description="A garage vehicle id such as VH-12345.")
]
Plate = Annotated[
    str,
    Field(pattern="^[A-Za-z]{2}[0-9]{2} ?[A-Za-z]{3}$", description="A UK number plate such as AB12 CDE."),
]
AccountId = Annotated[
    str, Field(pattern="^AC-[0-9]{6}$", description="A broadband account id such as AC-123456.")
]
Postcode = Annotated[
    str,
    Field(pattern="^[A-Z]{1,2}[0-9][A-Z0-9]? [0-9][A-Z]{2}$", description="A UK postcode such as LS1 4AP."),
]
Month = Annotated[
    str, Field(pattern="^[0-9]{4}-(0[1-9]|1[0-2])$", description="A billing month as YYYY-MM, e.g. 2025-07.")
]
SubscriptionId = Annotated[
    str, Field(pattern="^SUB-[0-9]{5}$", description="A streaming subscription id such as SUB-12345.")
]
MuseumId = Annotated[str, Field(pattern="^MU-[0-9]{3}$", description="A museum id such as MU-123.")]
Clock = Annotated[
    str, Field(pattern="^([01][0-9]|2[0-3]):[0-5][0-9]$", description="A 24-hour time such as 19:30.")
]
Seating = Annotated[
    Literal["indoor", "terrace", "bar"],
    Field(description="Where to sit: indoor (dining room), terrace (outside) or bar (counter seats)."),
]
Service = Annotated[
    Literal["oil_change", "brakes", "tyres", "mot"],
    Field(
        description="The job: oil_change (engine oil and filter), brakes (front pads and discs), "
        "tyres (four new tyres fitted and balanced) or mot (the yearly roadworthiness test)."
    ),
]
Slot = Annotated[
    Literal["morning", "afternoon", "evening"],
    Field(description="When the technician arrives: morning (8-12), afternoon (12-17) or evening (17-20)."),
]
StreamPlan = Annotated[
    Literal["basic", "standard", "premium"],
    Field(
        description="basic (one screen at a time, HD), standard (two screens, full HD) or "
        "premium (four screens at once, 4K and spatial audio)."
    ),
]

RESTAURANTS = {
    ("casa lúcia", "são paulo"): "RS-2201",
    ("copper pot", "leeds"): "RS-1180",
    ("osteria bellini", "manchester"): "RS-3307",
}
RESTAURANT_INFO = {
    "RS-2201": ("Casa Lúcia", "+55 11 3061 2214", "Rua Oscar Freire 540", "Brazilian", "23:30"),
    "RS-1180": ("The Copper Pot", "0113 496 0321", "14 Call Lane", "British", "22:30"),
    "RS-3307": ("Osteria Bellini", "0161 496 0772", "9 King Street", "Italian", "23:00"),
}
VEHICLES = {
    "KX19LMP": ("VH-40712", "Ford", "Focus", 61250),
    "LR21XWD": ("VH-52290", "Ford", "Transit", 88400),
}
SERVICE_GBP = {"oil_change": (89.0, 1.0), "brakes": (180.0, 2.5), "tyres": (340.0, 1.5), "mot": (54.85, 1.0)}
"""Price in pounds and hours in the workshop."""
ACCOUNTS = {
    "priya.nair@fastmail.com": ("AC-300514", "LS6 2QT", "Fibre 500"),
    "tom.okafor@gmail.com": ("AC-118203", "M14 5RB", "Fibre 150"),
}
OUTAGES = {"LS6 2QT": ("fibre cut", "18:00")}
WINDOWS = {"morning": "08:00-12:00", "afternoon": "12:00-17:00", "evening": "17:00-20:00"}
INVOICES = {
    ("AC-118203", "2026-01"): (42.5, "2026-02-14"),
    ("AC-300514", "2026-01"): (55.0, "2026-02-14"),
    ("AC-118203", "2026-02"): (44.0, "2026-03-14"),
}
SUBSCRIPTIONS = {"lena.ortiz@example.net": ("SUB-77031", "standard", "2026-03-01")}
PLAN_USD = {"basic": 7.99, "standard": 15.49, "premium": 22.99}
MUSEUMS = {"halden maritime museum": ("MU-208", "Halden", 14.0, 6.5)}
"""Adult and child ticket in euros."""


class RestaurantHit(TypedDict):
    restaurant_id: str
    name: str
    city: str


class RestaurantInfo(TypedDict):
    restaurant_id: str
    name: str
    phone: str
    address: str
    cuisine: str
    closes: str


class Reservation(TypedDict):
    reservation_id: str
    guest_name: str
    date: str
    time: str
    party_size: int


class VehicleRecord(TypedDict):
    vehicle_id: str
    make: str
    model: str
    mileage_km: int


class ServiceQuote(TypedDict):
    vehicle_id: str
    service: str
    price_gbp: float
    hours: float


class ServiceBooking(TypedDict):
    booking_id: str
    date: str
    drop_off: str
    price_gbp: float


class Account(TypedDict):
    account_id: str
    postcode: str
    plan_name: str


class Outage(TypedDict):
    postcode: str
    outage: bool
    cause: str
    estimated_fix: str


class Visit(TypedDict):
    visit_id: str
    date: str
    window: str


class Invoice(TypedDict):
    invoice_id: str
    amount_gbp: float
    due_date: str


class Subscription(TypedDict):
    subscription_id: str
    plan: str
    monthly_usd: float
    renews_on: str


class PlanChange(TypedDict):
    subscription_id: str
    plan: str
    monthly_usd: float
    effective: str


class Split(TypedDict):
    per_person: float
    tip: float
    total_with_tip: float


class Museum(TypedDict):
    museum_id: str
    name: str
    city: str


class VisitPrice(TypedDict):
    museum_id: str
    date: str
    total_eur: float


@tool
def search_restaurants(name: str, city: str = "") -> RestaurantHit:
    """Search restaurants by name, optionally only in one city; returns the restaurant id."""
    wanted, town = _key(name).removeprefix("the "), _key(city)
    for (known, where), restaurant_id in RESTAURANTS.items():
        if known == wanted and town in ("", where):
            return {"restaurant_id": restaurant_id, "name": name, "city": city or where.title()}
    raise ToolError(f"no restaurant called {name!r}" + (f" in {city!r}" if city else ""))


def _restaurant(restaurant_id: str) -> tuple[str, str, str, str, str]:
    found = RESTAURANT_INFO.get(restaurant_id)
    if found is None:
        raise ToolError(f"no restaurant {restaurant_id!r}")
    return found


@tool
def get_restaurant(restaurant_id: RestaurantId) -> RestaurantInfo:
    """Get a restaurant's details by its restaurant id: phone number, address, cuisine and closing time."""
    name, phone, address, cuisine, closes = _restaurant(restaurant_id)
    return {
        "restaurant_id": restaurant_id,
        "name": name,
        "phone": phone,
        "address": address,
        "cuisine": cuisine,
        "closes": closes,
    }


@tool
def reserve_table(
    restaurant_id: RestaurantId,
    date: IsoDay,
    time: Clock,
    party_size: Annotated[int, Field(ge=1, le=12)],
    guest_name: str,
    email: Email,
    seating: Seating = "indoor",
) -> Reservation:
    """Reserve a table at a restaurant (by restaurant id) for a party on a day and time, under a guest's
    name; the confirmation goes to the email address."""
    if time >= _restaurant(restaurant_id)[4]:
        raise ToolError(f"{restaurant_id!r} is closed at {time}")
    return {
        "reservation_id": f"RT-{restaurant_id[3:]}-{date[5:7]}{date[8:]}-{party_size}",
        "guest_name": guest_name,
        "date": date,
        "time": time,
        "party_size": party_size,
    }


@tool
def lookup_vehicle(plate: Plate) -> VehicleRecord:
    """Look up a customer's vehicle in the garage's records by its number plate."""
    found = VEHICLES.get(plate.replace(" ", "").upper())
    if found is None:
        raise ToolError(f"no vehicle with plate {plate!r}")
    vehicle_id, make, model, mileage = found
    return {"vehicle_id": vehicle_id, "make": make, "model": model, "mileage_km": mileage}


def _vehicle(vehicle_id: str) -> None:
    if not any(v[0] == vehicle_id for v in VEHICLES.values()):
        raise ToolError(f"no vehicle {vehicle_id!r}")


@tool
def quote_service(vehicle_id: VehicleId, service: Service) -> ServiceQuote:
    """Quote the price in pounds of a garage job on a vehicle (by vehicle id), without booking it."""
    _vehicle(vehicle_id)
    price, hours = SERVICE_GBP[service]
    return {"vehicle_id": vehicle_id, "service": service, "price_gbp": price, "hours": hours}


@tool
def book_service(
    vehicle_id: VehicleId, service: Service, date: IsoDay, contact_email: Email
) -> ServiceBooking:
    """Book a garage job on a vehicle (by vehicle id) for a day; the confirmation goes to the contact
    email."""
    _vehicle(vehicle_id)
    return {
        "booking_id": f"GS-{vehicle_id[3:]}-{date[5:7]}{date[8:]}",
        "date": date,
        "drop_off": "08:30",
        "price_gbp": SERVICE_GBP[service][0],
    }


@tool
def find_account(email: Email) -> Account:
    """Find a home broadband customer's account by the email address it was opened with."""
    found = ACCOUNTS.get(_key(email))
    if found is None:
        raise ToolError(f"no broadband account for {email!r}")
    return {"account_id": found[0], "postcode": found[1], "plan_name": found[2]}


@tool
def check_outage(postcode: Postcode) -> Outage:
    """Check whether there is a broadband outage at a postcode, its cause and when it should be fixed."""
    found = OUTAGES.get(postcode)
    cause, fix = found if found is not None else ("", "")
    return {"postcode": postcode, "outage": found is not None, "cause": cause, "estimated_fix": fix}


def _account(account_id: str) -> None:
    if not any(a[0] == account_id for a in ACCOUNTS.values()):
        raise ToolError(f"no broadband account {account_id!r}")


@tool
def schedule_technician(account_id: AccountId, date: IsoDay, slot: Slot = "morning") -> Visit:
    """Schedule a broadband technician's home visit for an account (by account id) on a day."""
    _account(account_id)
    return {
        "visit_id": f"TV-{account_id[3:]}-{date[5:7]}{date[8:]}{slot[0].upper()}",
        "date": date,
        "window": WINDOWS[slot],
    }


@tool
def get_invoice(account_id: AccountId, month: Month) -> Invoice:
    """Get a broadband account's (by account id) invoice for a month: amount in pounds and due date."""
    _account(account_id)
    found = INVOICES.get((account_id, month))
    if found is None:
        raise ToolError(f"no invoice for {account_id!r} in {month!r}")
    return {
        "invoice_id": f"INV-{account_id[3:]}-{month[2:4]}{month[5:]}",
        "amount_gbp": found[0],
        "due_date": found[1],
    }


@tool
def get_subscription(email: Email) -> Subscription:
    """Get the streaming subscription registered to an email address: its id, plan and monthly price."""
    found = SUBSCRIPTIONS.get(_key(email))
    if found is None:
        raise ToolError(f"no subscription for {email!r}")
    subscription_id, plan, renews = found
    return {
        "subscription_id": subscription_id,
        "plan": plan,
        "monthly_usd": PLAN_USD[plan],
        "renews_on": renews,
    }


@tool
def change_plan(subscription_id: SubscriptionId, plan: StreamPlan) -> PlanChange:
    """Move a streaming subscription (by subscription id) to another plan from its next renewal."""
    found = next((s for s in SUBSCRIPTIONS.values() if s[0] == subscription_id), None)
    if found is None:
        raise ToolError(f"no subscription {subscription_id!r}")
    if found[1] == plan:
        raise ToolError(f"{subscription_id!r} is already on {plan!r}")
    return {
        "subscription_id": subscription_id,
        "plan": plan,
        "monthly_usd": PLAN_USD[plan],
        "effective": found[2],
    }


@tool
def split_bill(
    total_cents: Annotated[int, Field(ge=1, description="The bill's total in cents, e.g. 4599 for 45.99.")],
    people: Annotated[int, Field(ge=1)],
    tip_percent: Annotated[int, Field(ge=0, le=100)] = 15,
) -> Split:
    """Split a bill evenly between people, with a tip added; returns each person's share."""
    tip = total_cents * tip_percent / 100
    return {
        "per_person": round((total_cents + tip) / people / 100, 2),
        "tip": round(tip / 100, 2),
        "total_with_tip": round((total_cents + tip) / 100, 2),
    }


@tool
def find_museum(name: str) -> Museum:
    """Find a museum by its name; returns its museum id and city."""
    found = MUSEUMS.get(_key(name).removeprefix("the "))
    if found is None:
        raise ToolError(f"no museum called {name!r}")
    return {"museum_id": found[0], "name": name, "city": found[1]}


@tool
def price_museum_visit(
    museum_id: MuseumId,
    date: IsoDay,
    adults: Annotated[int, Field(ge=0)],
    children: Annotated[int, Field(ge=0)] = 0,
) -> VisitPrice:
    """Price the tickets for a day's visit to a museum (by museum id) for a number of adults and children."""
    found = next((m for m in MUSEUMS.values() if m[0] == museum_id), None)
    if found is None:
        raise ToolError(f"no museum {museum_id!r}")
    return {"museum_id": museum_id, "date": date, "total_eur": found[2] * adults + found[3] * children}


IMPLIED_TOOLS_7: list[ToolSpec] = [
    search_restaurants,
    get_restaurant,
    reserve_table,
    lookup_vehicle,
    quote_service,
    book_service,
    find_account,
    check_outage,
    schedule_technician,
    get_invoice,
    get_subscription,
    change_plan,
    split_bill,
    find_museum,
    price_museum_visit,
]
