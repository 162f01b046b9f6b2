"""Tools for the sixth implied-steps set (``local_implied_6.IMPLIED_6``): a ferry timetable, a plant
nursery, a bike-share scheme, a parcel locker, text encryption and text messages.

Written on 2026-11-28 by a helper who had not read the guided rules, with that set, before its first
run. Same habits as the other implied tool sets (ids with patterns, enums with their words in the
description, flat ``TypedDict`` outputs, deterministic data, a ``ToolError`` for an unknown key), plus
what a real catalogue has and those sets mostly lack: near-duplicate names (``search_sailings`` finds a
sailing, ``get_sailing`` describes one; ``search_plants`` finds a plant, ``get_plant`` gives its care
sheet), a price-or-do pair (``calculate_ferry_fare`` or ``book_ferry``), and verbs many descriptions
share (four begin with "Get", two with "Calculate", beside the demo ``calculator``).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal, TypedDict

from pydantic import Field

from benchmarks.implied_tools import IsoDay, _key
from pes_agent.errors import ToolError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

PortId = Annotated[str, Field(pattern="^FP-[0-9]{3}$", description="A ferry port id such as FP-123.")]
SailingId = Annotated[str, Field(pattern="^SL-[0-9]{4}$", description="A sailing id such as SL-1234.")]
PlantId = Annotated[str, Field(pattern="^PL-[0-9]{4}$", description="A plant id such as PL-1234.")]
DockId = Annotated[str, Field(pattern="^BD-[0-9]{3}$", description="A bike-share dock id such as BD-123.")]
RiderId = Annotated[str, Field(pattern="^R-[0-9]{5}$", description="A bike-share rider id such as R-12345.")]
ParcelCode = Annotated[str, Field(pattern="^PX-[0-9]{6}$", description="A parcel code such as PX-123456.")]
Phone = Annotated[str, Field(pattern="^[0-9]{3}-[0-9]{4}$", description="A phone number such as 555-0123.")]
Key = Annotated[
    str, Field(pattern="^[A-Za-z0-9]{2,16}$", description="An encryption key of letters and digits.")
]
Clock = Annotated[
    str, Field(pattern="^([01][0-9]|2[0-3]):[0-5][0-9]$", description="A 24-hour clock time such as 18:45.")
]
Vehicle = Annotated[
    Literal["none", "bicycle", "car", "van"],
    Field(description="The vehicle taken along: none (foot passengers only), bicycle, car or van."),
]
Pot = Annotated[
    Literal["none", "small", "medium", "large"],
    Field(
        description="A pot for each plant: none (bare root), small (12 cm), medium (20 cm) or large (35 cm)."
    ),
]
BikeType = Annotated[
    Literal["classic", "electric"],
    Field(description="The kind of bike: classic (pedal) or electric (e-bike)."),
]

PORTS = {"harwick": "FP-101", "stenby": "FP-204", "orlo island": "FP-317"}
SAILINGS = {
    ("FP-101", "FP-204", "2026-05-14"): [("SL-5521", "07:40"), ("SL-5523", "12:15"), ("SL-5527", "18:30")],
    ("FP-204", "FP-317", "2026-05-15"): [("SL-6610", "10:00")],
}
SAILING_INFO = {
    "SL-5521": ("MV Kittiwake", "07:40", "delayed 20 min", 12),
    "SL-5523": ("MV Tern", "12:15", "on time", 46),
    "SL-5527": ("MV Tern", "18:30", "on time", 80),
    "SL-6610": ("MV Puffin", "10:00", "cancelled", 0),
}
PASSENGER_EUR = 18.5
VEHICLE_EUR = {"none": 0.0, "bicycle": 6.0, "car": 42.0, "van": 65.0}
PLANTS = {
    "monstera": ("PL-3307", 24.9, 12, "partial shade", 7, 300),
    "olive tree": ("PL-4410", 59.0, 3, "full sun", 10, 400),
    "lavender": ("PL-1188", 6.5, 40, "full sun", 14, 60),
}
POT_EUR = {"none": 0.0, "small": 3.0, "medium": 7.5, "large": 14.0}
DOCKS = {"harbour square": ("BD-042", 5, 2, 9), "museum quarter": ("BD-017", 0, 4, 11)}
RIDE_EUR = {"classic": (1.0, 0.15), "electric": (1.0, 0.30)}
"""Unlock fee and price per minute."""
PARCELS = {"PX-448120": ("LK-12", "Harbour Square", "B4", "739104", "2026-05-20")}
HOLD_EUR_PER_DAY = 1.5
_CIPHER = "abcdefghijklmnopqrstuvwxyz0123456789"


class Port(TypedDict):
    port_id: str
    name: str


class Sailing(TypedDict):
    sailing_id: str
    departs: str


class SailingDetails(TypedDict):
    sailing_id: str
    vessel: str
    departs: str
    status: str
    seats_left: int


class Fare(TypedDict):
    sailing_id: str
    fare_eur: float


class FerryBooking(TypedDict):
    booking_ref: str
    total_eur: float


class PlantHit(TypedDict):
    plant_id: str
    name: str
    price_eur: float
    in_stock: int


class CareSheet(TypedDict):
    plant_id: str
    light: str
    water_every_days: int
    max_height_cm: int


class PlantOrder(TypedDict):
    order_id: str
    total_eur: float


class Dock(TypedDict):
    dock_id: str
    place: str


class DockStatus(TypedDict):
    dock_id: str
    classic_bikes: int
    e_bikes: int
    free_slots: int


class Ride(TypedDict):
    ride_id: str
    unlock_code: str


class RideCost(TypedDict):
    minutes: int
    cost_eur: float


class LockerPickup(TypedDict):
    locker_id: str
    location: str
    compartment: str
    pickup_pin: str
    hold_until: str


class Hold(TypedDict):
    parcel_code: str
    hold_until: str
    fee_eur: float


class Cipher(TypedDict):
    ciphertext: str


class Sms(TypedDict):
    message_id: str
    to: str


@tool
def find_port(name: str) -> Port:
    """Find a ferry port by its name; returns its port id."""
    found = PORTS.get(_key(name).removeprefix("port of ").removesuffix(" port"))
    if found is None:
        raise ToolError(f"no ferry port named {name!r}")
    return {"port_id": found, "name": name}


@tool
def search_sailings(origin: PortId, destination: PortId, date: IsoDay, after: Clock = "00:00") -> Sailing:
    """Search the ferry timetable for the first sailing from one port to another (by port ids) on a day,
    leaving at or after a time."""
    for sailing_id, departs in SAILINGS.get((origin, destination, date), []):
        if departs >= after:
            return {"sailing_id": sailing_id, "departs": departs}
    raise ToolError(f"no sailing from {origin!r} to {destination!r} on {date!r} after {after!r}")


def _sailing(sailing_id: str) -> tuple[str, str, str, int]:
    found = SAILING_INFO.get(sailing_id)
    if found is None:
        raise ToolError(f"no sailing {sailing_id!r}")
    return found


@tool
def get_sailing(sailing_id: SailingId) -> SailingDetails:
    """Get the details of one sailing by its sailing id: vessel, departure time, status and seats left."""
    vessel, departs, status, seats = _sailing(sailing_id)
    return {
        "sailing_id": sailing_id,
        "vessel": vessel,
        "departs": departs,
        "status": status,
        "seats_left": seats,
    }


@tool
def calculate_ferry_fare(sailing_id: SailingId, passengers: int, vehicle: Vehicle = "none") -> Fare:
    """Calculate what a sailing (by sailing id) would cost for a number of passengers and a vehicle,
    without booking it."""
    _sailing(sailing_id)
    return {"sailing_id": sailing_id, "fare_eur": PASSENGER_EUR * passengers + VEHICLE_EUR[vehicle]}


@tool
def book_ferry(sailing_id: SailingId, passengers: int, vehicle: Vehicle = "none") -> FerryBooking:
    """Book a sailing (by sailing id) for a number of passengers and a vehicle."""
    if _sailing(sailing_id)[3] < passengers:
        raise ToolError(f"not enough seats left on {sailing_id!r}")
    ref = f"FB-{sailing_id[3:]}-{passengers}{vehicle[0].upper() if vehicle != 'none' else 'P'}"
    return {"booking_ref": ref, "total_eur": PASSENGER_EUR * passengers + VEHICLE_EUR[vehicle]}


@tool
def search_plants(name: str) -> PlantHit:
    """Search the plant nursery's catalogue by a plant's name; returns its plant id, price and stock."""
    found = PLANTS.get(_key(name).removesuffix("s").removesuffix(" plant"))
    if found is None:
        raise ToolError(f"no plant called {name!r} in the catalogue")
    return {"plant_id": found[0], "name": name, "price_eur": found[1], "in_stock": found[2]}


def _plant(plant_id: str) -> tuple[str, float, int, str, int, int]:
    found = next((p for p in PLANTS.values() if p[0] == plant_id), None)
    if found is None:
        raise ToolError(f"no plant {plant_id!r}")
    return found


@tool
def get_plant(plant_id: PlantId) -> CareSheet:
    """Get a plant's care sheet by its plant id: light, how often to water and its height when grown."""
    _, _, _, light, water, height = _plant(plant_id)
    return {"plant_id": plant_id, "light": light, "water_every_days": water, "max_height_cm": height}


@tool
def order_plants(plant_id: PlantId, quantity: int, pot: Pot = "none") -> PlantOrder:
    """Order a number of plants (by plant id) from the nursery, each in a pot of a size or bare root."""
    _, price, stock, _, _, _ = _plant(plant_id)
    if quantity > stock:
        raise ToolError(f"only {stock} of {plant_id!r} in stock")
    order_id = f"PO-{plant_id[3:]}-{quantity}{pot[0].upper() if pot != 'none' else 'B'}"
    return {"order_id": order_id, "total_eur": round((price + POT_EUR[pot]) * quantity, 2)}


@tool
def find_dock(near: str) -> Dock:
    """Find the bike-share dock at a street or place; returns its dock id."""
    place = _key(near).removeprefix("the ").removesuffix(" dock")
    found = DOCKS.get(place)
    if found is None:
        raise ToolError(f"no bike-share dock at {near!r}")
    return {"dock_id": found[0], "place": near}


def _dock(dock_id: str) -> tuple[str, int, int, int]:
    found = next((d for d in DOCKS.values() if d[0] == dock_id), None)
    if found is None:
        raise ToolError(f"no dock {dock_id!r}")
    return found


@tool
def get_dock_status(dock_id: DockId) -> DockStatus:
    """Get how many classic bikes, e-bikes and free slots a bike-share dock (by dock id) has right now."""
    _, classic, electric, free = _dock(dock_id)
    return {"dock_id": dock_id, "classic_bikes": classic, "e_bikes": electric, "free_slots": free}


@tool
def unlock_bike(dock_id: DockId, rider_id: RiderId, bike_type: BikeType = "classic") -> Ride:
    """Unlock a bike of a kind at a dock (by dock id) for a rider (by rider id); returns the ride id and
    the code to unlock it with."""
    _, classic, electric, _ = _dock(dock_id)
    if (classic if bike_type == "classic" else electric) == 0:
        raise ToolError(f"no {bike_type} bike free at {dock_id!r}")
    code = f"{(int(rider_id[2:]) * 7 + int(dock_id[3:])) % 10000:04d}"
    return {"ride_id": f"RD-{dock_id[3:]}-{bike_type[0].upper()}", "unlock_code": code}


@tool
def calculate_ride_cost(minutes: int, bike_type: BikeType = "classic") -> RideCost:
    """Calculate what a bike-share ride of a number of minutes costs, by kind of bike."""
    unlock, per_minute = RIDE_EUR[bike_type]
    return {"minutes": minutes, "cost_eur": round(unlock + per_minute * minutes, 2)}


@tool
def locker_pickup(parcel_code: ParcelCode) -> LockerPickup:
    """Get where and how to collect a parcel from a parcel locker: the locker, compartment, pickup PIN
    and the last day it is held."""
    found = PARCELS.get(parcel_code)
    if found is None:
        raise ToolError(f"no parcel {parcel_code!r} in a locker")
    locker, location, compartment, pin, until = found
    return {
        "locker_id": locker,
        "location": location,
        "compartment": compartment,
        "pickup_pin": pin,
        "hold_until": until,
    }


@tool
def extend_hold(parcel_code: ParcelCode, until: IsoDay) -> Hold:
    """Keep a parcel in its locker longer, up to a new last day (at most 7 days more), for a fee per day."""
    found = PARCELS.get(parcel_code)
    if found is None:
        raise ToolError(f"no parcel {parcel_code!r} in a locker")
    extra = (dt.date.fromisoformat(until) - dt.date.fromisoformat(found[4])).days
    if not 0 < extra <= 7:
        raise ToolError(f"{until!r} must be 1 to 7 days after the current last day {found[4]}")
    return {"parcel_code": parcel_code, "hold_until": until, "fee_eur": HOLD_EUR_PER_DAY * extra}


@tool
def encrypt_text(text: str, key: Key) -> Cipher:
    """Encrypt a text with a key; returns the ciphertext."""
    shifts = [_CIPHER.index(c) for c in key.casefold()]
    out, i = [], 0
    for char in text.casefold():
        if char in _CIPHER:
            char = _CIPHER[(_CIPHER.index(char) + shifts[i % len(shifts)]) % len(_CIPHER)]
            i += 1
        out.append(char)
    return {"ciphertext": "".join(out)}


@tool
def send_sms(phone: Phone, message: Annotated[str, Field(max_length=160)]) -> Sms:
    """Send a text message (SMS) to a phone number."""
    return {"message_id": f"SMS-{phone[4:]}-{len(message)}", "to": phone}


IMPLIED_TOOLS_6: list[ToolSpec] = [
    find_port,
    search_sailings,
    get_sailing,
    calculate_ferry_fare,
    book_ferry,
    search_plants,
    get_plant,
    order_plants,
    find_dock,
    get_dock_status,
    unlock_bike,
    calculate_ride_cost,
    locker_pickup,
    extend_hold,
    encrypt_text,
    send_sms,
]
