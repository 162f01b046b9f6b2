"""Tools for the eleventh implied-steps set (``local_implied_11.IMPLIED_11``): a bicycle repair
workshop, a pottery studio's courses, a tailor's alterations, a beekeeping supplier, a dog groomer and a
public library's bookable rooms.

Written on 2026-11-28 by a helper who had not read the guided rules, with that set, before its first
run. Same habits as the other implied tool sets (ids with patterns, enums with their words in the
description, flat ``TypedDict`` outputs, deterministic data, a ``ToolError`` for an unknown key), plus
what repair shops, studios and booking desks have: prices in pounds sterling where the customer pays
in euros (``alteration_quote``), a weight in kilograms where the owner knows pounds
(``book_dog_grooming.weight_kg``), a ``format: date-time`` fitting (``book_alteration_fitting``), a
clock time with a pattern (``book_library_room.start``, ``HH:MM``), an integer of hours, ``format:
date`` drop-off, grooming and booking days, enums chosen by what their description says ("gears
slipping" is not a ``full_service``, "take them up" is a ``hem``, "taking in at the sides" is
``take_in``, a wobbly wheel is ``wheel_true``), list outputs to choose from by a rule the request states
(``list_pottery_courses`` by weekday, ``search_beekeeping_supplies`` by price among those in stock,
``list_free_library_rooms`` by projector then price), names with accents, hyphens and apostrophes
(``Zoë Ó Murchú``, ``Siobhán Nic Aodha-Brennan``, ``O'Sullivan's Cycle Works``) and optional
arguments with defaults (``bike_type``, ``level``, ``kit``, ``turnaround``, ``delivery``, ``people``,
``purpose``). No argument is a boolean: the benchmark's judge compares an expected boolean as text.
"""

from __future__ import annotations

import datetime as dt
import zlib
from typing import Annotated, Literal, TypedDict

from pydantic import Field

from benchmarks.implied_tools import Email, IsoDay, _key
from benchmarks.implied_tools_8 import LocalDateTime
from pes_agent.errors import ToolError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

WorkshopId = Annotated[
    str, Field(pattern="^BW-[A-Z]{3}-[0-9]{2}$", description="A bike workshop's id such as BW-ABC-01.")
]
RepairJob = Annotated[
    Literal["puncture", "gear_tune", "brake_service", "wheel_true", "full_service"],
    Field(
        description="puncture (a flat tyre: new inner tube fitted), gear_tune (gears slipping, skipping "
        "or noisy: cables and indexing adjusted), brake_service (brakes squealing, rubbing or weak: pads "
        "and cables), wheel_true (a buckled or wobbly wheel trued and spokes tensioned) or full_service "
        "(the whole bike stripped, cleaned, re-greased, gears and brakes adjusted)."
    ),
]
BikeType = Annotated[
    Literal["standard", "e_bike", "cargo"],
    Field(
        description="standard (a road, city, hybrid, mountain or children's bike), e_bike (an electric "
        "bike; 20 euros more) or cargo (a cargo or box bike; 30 euros more)."
    ),
]
StudioId = Annotated[
    str, Field(pattern="^PS-[A-Z]{3}-[0-9]{2}$", description="A pottery studio's id such as PS-ABC-01.")
]
CourseId = Annotated[
    str, Field(pattern="^PC-[0-9]{4}$", description="A pottery course's id such as PC-1234.")
]
Level = Annotated[
    Literal["beginner", "improver", "any"],
    Field(
        description="beginner (never or hardly ever worked with clay), improver (some experience, "
        "refining technique) or any."
    ),
]
Kit = Annotated[
    Literal["none", "hire", "buy"],
    Field(
        description="none (you bring your own tools and apron), hire (a tool kit and apron for the "
        "course, 15 euros) or buy (a starter tool kit to keep, 35 euros)."
    ),
]
Garment = Annotated[
    Literal["trousers", "jeans", "skirt", "dress", "shirt", "jacket", "coat"],
    Field(
        description="trousers (suit or dress trousers, chinos), jeans, skirt, dress (a dress or gown, "
        "wedding dresses included), shirt (a shirt or blouse), jacket (a suit or sports jacket, a blazer) "
        "or coat (an overcoat or raincoat)."
    ),
]
Alteration = Annotated[
    Literal["hem", "take_in", "let_out", "sleeves", "zip"],
    Field(
        description="hem (shorten or lengthen: take up trousers, a skirt or a dress), take_in (make "
        "narrower at the waist, seat or sides), let_out (make wider where there is seam allowance), "
        "sleeves (shorten or lengthen the sleeves) or zip (replace a broken zip)."
    ),
]
Turnaround = Annotated[
    Literal["standard", "express"],
    Field(description="standard (ready in 7 days) or express (ready in 2 days, 50 % more)."),
]
Category = Annotated[
    Literal["hives", "frames", "smokers", "protective", "feed", "jars"],
    Field(
        description="hives (hive bodies, supers, roofs and floors), frames (brood and super frames, "
        "foundation), smokers (smokers and fuel), protective (bee suits, veils and gloves), feed (fondant, "
        "syrup and pollen patties) or jars (honey jars and lids)."
    ),
]
Sku = Annotated[str, Field(pattern="^BK-[0-9]{4}$", description="A supplier's item code such as BK-1234.")]
Delivery = Annotated[
    Literal["standard", "next_day", "collect"],
    Field(
        description="standard (3 to 5 working days, 6.50 euros), next_day (the next working day, 12 "
        "euros) or collect (collect from the warehouse in Ballymena, free)."
    ),
]
GroomerId = Annotated[str, Field(pattern="^DG-[0-9]{4}$", description="A dog groomer's id such as DG-1234.")]
GroomingService = Annotated[
    Literal["bath_brush", "full_groom", "nail_trim", "deshed"],
    Field(
        description="bath_brush (a bath, blow-dry and brush-out), full_groom (bath, haircut or clip, "
        "nails and ears), nail_trim (nails clipped only) or deshed (a de-shedding treatment for a moulting "
        "double coat)."
    ),
]
BranchId = Annotated[str, Field(pattern="^LB-[A-Z]{3}$", description="A library branch's id such as LB-ABC.")]
RoomId = Annotated[str, Field(pattern="^LR-[0-9]{4}$", description="A library room's id such as LR-1234.")]
ClockTime = Annotated[
    str,
    Field(pattern="^([01][0-9]|2[0-3]):[0-5][0-9]$", description="A 24-hour clock time such as 18:30."),
]
Purpose = Annotated[
    Literal["meeting", "study", "class", "event"],
    Field(
        description="meeting (a club, committee or group meeting), study (quiet study), class (a lesson, "
        "course or conversation circle) or event (a talk, screening or launch open to the public)."
    ),
]

WORKSHOPS = {
    "galway": ("BW-GWY-01", "Rothar na Gaillimhe", "12 Prospect Hill, Galway", "091 562 118", 1.0),
    "dingle": ("BW-DGL-02", "Dingle Bike Doctor", "Green Street, Dingle", "066 915 1420", 1.2),
    "killarney": ("BW-KLY-03", "O'Sullivan's Cycle Works", "New Street, Killarney", "064 663 1282", 1.1),
}
"""Town: id, name, address, phone, price factor on the list prices."""
REPAIR_EUR = {
    "puncture": 15.0,
    "gear_tune": 35.0,
    "brake_service": 30.0,
    "wheel_true": 25.0,
    "full_service": 95.0,
}
REPAIR_DAYS = {"puncture": 1, "gear_tune": 1, "brake_service": 1, "wheel_true": 2, "full_service": 3}
BIKE_EXTRA_EUR = {"standard": 0.0, "e_bike": 20.0, "cargo": 30.0}
STUDIOS = {
    "dingle": ("PS-DGL-01", "Cré na Coille Pottery", "Strand Street, Dingle"),
    "kinsale": ("PS-KNS-02", "Kinsale Clay Studio", "Pearse Street, Kinsale"),
}
"""Town: id, name, address."""
COURSES = {
    "PS-DGL-01": (
        ("PC-2101", "Wheel throwing for beginners", "beginner", "Tuesday", "19:00", "2027-01-12", 6, 210.0),
        ("PC-2104", "Wheel throwing for beginners", "beginner", "Thursday", "19:00", "2027-01-14", 6, 210.0),
        ("PC-2117", "Hand-building: coil and slab", "beginner", "Saturday", "10:30", "2027-01-16", 4, 140.0),
        ("PC-2122", "Glazing and firing", "improver", "Wednesday", "18:30", "2027-01-13", 5, 185.0),
    ),
    "PS-KNS-02": (
        ("PC-3308", "Raku weekend", "improver", "Saturday", "10:00", "2027-02-06", 2, 240.0),
        ("PC-3311", "Wheel throwing for beginners", "beginner", "Monday", "18:00", "2027-01-11", 8, 260.0),
    ),
}
"""Studio id: courses (id, title, level, weekday, time, first session, sessions, price in euros)."""
KIT_EUR = {"none": 0.0, "hire": 15.0, "buy": 35.0}
ALTERATION_GBP = {"hem": 14.0, "take_in": 22.0, "let_out": 24.0, "sleeves": 26.0, "zip": 18.0}
GARMENT_FACTOR = {
    "trousers": 1.0,
    "jeans": 1.0,
    "skirt": 1.0,
    "dress": 1.5,
    "shirt": 0.8,
    "jacket": 1.4,
    "coat": 1.6,
}
SUPPLIES = {
    "smokers": (
        ("BK-3010", "Stainless smoker 4in with heat guard", 34.50, True),
        ("BK-3015", "Mini smoker 3in", 24.00, False),
        ("BK-3022", "Copper smoker 4in, Italian made", 58.00, True),
        ("BK-3027", "Dadant smoker 4in", 29.90, True),
    ),
    "frames": (
        ("BK-4410", "National brood frames, pack of 10", 19.50, True),
        ("BK-4418", "National super frames, pack of 10", 17.00, True),
        ("BK-4425", "Wired brood foundation, pack of 10", 22.80, False),
    ),
    "protective": (
        ("BK-5102", "Full bee suit with fencing veil", 89.00, True),
        ("BK-5110", "Bee jacket with round veil", 49.00, True),
        ("BK-5118", "Nitrile gloves, box of 50", 8.50, True),
    ),
    "feed": (
        ("BK-6201", "Bakers fondant, 12.5 kg box", 31.00, True),
        ("BK-6209", "Invert syrup, 14 kg tub", 27.50, True),
    ),
    "hives": (("BK-1001", "National hive, complete, flat-packed cedar", 245.00, True),),
    "jars": (("BK-7304", "1 lb hexagonal jars with lids, tray of 24", 21.00, True),),
}
"""Category: items (code, name, price in euros, in stock)."""
DELIVERY_EUR = {"standard": 6.50, "next_day": 12.00, "collect": 0.0}
GROOMERS = {
    "tralee": ("DG-0412", "Pampered Paws Tralee", "Castle Street, Tralee", "066 712 3344"),
    "ennis": ("DG-0587", "The Scruffy Pup", "Parnell Street, Ennis", "065 684 2290"),
}
"""Town: id, name, address, phone."""
GROOMING_EUR = {
    "bath_brush": (30.0, 40.0, 55.0),
    "full_groom": (45.0, 60.0, 80.0),
    "nail_trim": (12.0, 12.0, 15.0),
    "deshed": (40.0, 55.0, 75.0),
}
"""Service: price for a small (under 10 kg), medium (10 to 25 kg) and large (over 25 kg) dog."""
BRANCHES = {
    "ballymun": ("LB-BMN", "Ballymun Library", "Ballymun Road, Dublin 9", "10:00-20:00"),
    "rathmines": ("LB-RTM", "Rathmines Library", "157 Lower Rathmines Road, Dublin 6", "10:00-20:00"),
}
"""Area: id, name, address, opening hours."""
ROOMS = {
    "LB-BMN": (
        ("LR-1102", "Study pod", 4, "no", 0.0),
        ("LR-1108", "Seminar room", 12, "yes", 15.0),
        ("LR-1115", "Reading room annexe", 10, "no", 8.0),
        ("LR-1121", "Community hall", 40, "yes", 30.0),
    ),
    "LB-RTM": (
        ("LR-2204", "Meeting room 1", 8, "no", 10.0),
        ("LR-2210", "Lecture theatre", 60, "yes", 40.0),
    ),
}
"""Branch id: rooms (id, name, seats, projector, price an hour in euros)."""


class Workshop(TypedDict):
    workshop_id: str
    name: str
    address: str
    phone: str


class RepairQuote(TypedDict):
    workshop: str
    job: str
    bike_type: str
    price_eur: float
    working_days: int


class RepairBooking(TypedDict):
    booking_ref: str
    workshop: str
    drop_off: str
    ready_by: str
    price_eur: float


class Studio(TypedDict):
    studio_id: str
    name: str
    address: str


class Course(TypedDict):
    course_id: str
    title: str
    level: str
    weekday: str
    time: str
    first_session: str
    sessions: int
    price_eur: float


class Courses(TypedDict):
    studio_id: str
    courses: list[Course]


class Enrolment(TypedDict):
    enrolment_id: str
    course: str
    first_session: str
    total_eur: float


class AlterationQuote(TypedDict):
    garment: str
    alteration: str
    turnaround: str
    price_gbp: float
    ready_in_days: int


class Fitting(TypedDict):
    fitting_ref: str
    fitting: str
    ready_by: str
    price_gbp: float


class Supply(TypedDict):
    sku: str
    name: str
    price_eur: float
    in_stock: bool


class Supplies(TypedDict):
    category: str
    items: list[Supply]


class SupplyOrder(TypedDict):
    order_id: str
    item: str
    quantity: int
    total_eur: float
    sent_to: str


class Groomer(TypedDict):
    groomer_id: str
    name: str
    address: str
    phone: str


class Grooming(TypedDict):
    appointment_id: str
    groomer: str
    day: str
    size: str
    price_eur: float


class Branch(TypedDict):
    branch_id: str
    name: str
    address: str
    opening_hours: str


class Room(TypedDict):
    room_id: str
    name: str
    seats: int
    projector: str
    price_per_hour_eur: float


class Rooms(TypedDict):
    branch_id: str
    date: str
    rooms: list[Room]


class RoomBooking(TypedDict):
    booking_ref: str
    room: str
    date: str
    start: str
    ends: str
    total_eur: float


# --- a bicycle repair workshop -----------------------------------------------------------------------


def _workshop(workshop_id: str) -> tuple[str, str, str, str, float]:
    found = next((w for w in WORKSHOPS.values() if w[0] == workshop_id), None)
    if found is None:
        raise ToolError(f"no bike workshop {workshop_id!r}")
    return found


def _repair_price(workshop_id: str, job: str, bike_type: str) -> float:
    return round(REPAIR_EUR[job] * _workshop(workshop_id)[4] + BIKE_EXTRA_EUR[bike_type], 2)


@tool
def find_bike_workshop(town: str) -> Workshop:
    """Find the bicycle repair workshop in a town: its workshop id, address and phone number."""
    found = WORKSHOPS.get(_key(town))
    if found is None:
        raise ToolError(f"no bike workshop in {town!r}")
    return {"workshop_id": found[0], "name": found[1], "address": found[2], "phone": found[3]}


@tool
def bike_repair_quote(
    workshop_id: WorkshopId, job: RepairJob, bike_type: BikeType = "standard"
) -> RepairQuote:
    """Price a repair job at a bike workshop (by workshop id), in euros, without booking it."""
    return {
        "workshop": _workshop(workshop_id)[1],
        "job": job,
        "bike_type": bike_type,
        "price_eur": _repair_price(workshop_id, job, bike_type),
        "working_days": REPAIR_DAYS[job],
    }


@tool
def book_bike_repair(
    workshop_id: WorkshopId, job: RepairJob, drop_off: IsoDay, email: Email, bike_type: BikeType = "standard"
) -> RepairBooking:
    """Book a bike in for a repair at a workshop (by workshop id), dropped off on a day from Tuesday to
    Saturday; the confirmation goes to the email."""
    day = dt.date.fromisoformat(drop_off)
    if day.weekday() in (0, 6):
        raise ToolError(f"the workshop is closed on Sundays and Mondays, and {drop_off} is a {day:%A}")
    ready, left = day, REPAIR_DAYS[job]
    while left:
        ready += dt.timedelta(days=1)
        left -= ready.weekday() not in (0, 6)
    initials = "".join(word[0] for word in job.split("_")).upper()
    return {
        "booking_ref": f"BRB-{workshop_id[3:6]}-{drop_off[5:7]}{drop_off[8:]}-{initials}",
        "workshop": _workshop(workshop_id)[1],
        "drop_off": drop_off,
        "ready_by": ready.isoformat(),
        "price_eur": _repair_price(workshop_id, job, bike_type),
    }


# --- a pottery studio --------------------------------------------------------------------------------


@tool
def find_pottery_studio(town: str) -> Studio:
    """Find the pottery studio in a town: its studio id and address."""
    found = STUDIOS.get(_key(town))
    if found is None:
        raise ToolError(f"no pottery studio in {town!r}")
    return {"studio_id": found[0], "name": found[1], "address": found[2]}


@tool
def list_pottery_courses(studio_id: StudioId, level: Level = "any") -> Courses:
    """List the courses a pottery studio (by studio id) runs next term, each with its course id, the
    weekday and time it meets, its first session, how many sessions and its price in euros."""
    courses = COURSES.get(studio_id)
    if courses is None:
        raise ToolError(f"no pottery studio {studio_id!r}")
    return {
        "studio_id": studio_id,
        "courses": [
            {
                "course_id": c[0],
                "title": c[1],
                "level": c[2],
                "weekday": c[3],
                "time": c[4],
                "first_session": c[5],
                "sessions": c[6],
                "price_eur": c[7],
            }
            for c in courses
            if level in ("any", c[2])
        ],
    }


@tool
def enrol_in_pottery_course(
    course_id: CourseId, student_name: str, email: Email, kit: Kit = "none"
) -> Enrolment:
    """Enrol a student in a pottery course (by course id); the receipt goes to the email."""
    course = next((c for cs in COURSES.values() for c in cs if c[0] == course_id), None)
    if course is None:
        raise ToolError(f"no pottery course {course_id!r}")
    serial = zlib.crc32(f"{course_id}|{student_name}|{email}".encode()) % 1000
    return {
        "enrolment_id": f"ENR-{course_id[3:]}-{serial:03d}",
        "course": f"{course[1]} ({course[3]}s at {course[4]})",
        "first_session": f"{course[5]}T{course[4]}:00",
        "total_eur": course[7] + KIT_EUR[kit],
    }


# --- a tailor's alterations --------------------------------------------------------------------------


def _alteration_price(garment: str, alteration: str, turnaround: str) -> float:
    price = ALTERATION_GBP[alteration] * GARMENT_FACTOR[garment] * (1.5 if turnaround == "express" else 1.0)
    return round(price, 2)


@tool
def alteration_quote(
    garment: Garment, alteration: Alteration, turnaround: Turnaround = "standard"
) -> AlterationQuote:
    """Price an alteration to a garment at our London shop, in pounds sterling, without booking it."""
    return {
        "garment": garment,
        "alteration": alteration,
        "turnaround": turnaround,
        "price_gbp": _alteration_price(garment, alteration, turnaround),
        "ready_in_days": 2 if turnaround == "express" else 7,
    }


@tool
def book_alteration_fitting(
    garment: Garment,
    alteration: Alteration,
    fitting: LocalDateTime,
    customer_name: str,
    email: Email,
    turnaround: Turnaround = "standard",
) -> Fitting:
    """Book a fitting for an alteration at our London shop, Monday to Saturday between 09:00 and 18:00;
    the garment is pinned at the fitting and the confirmation goes to the email."""
    when = dt.datetime.fromisoformat(fitting)
    if when.weekday() == 6 or not 9 <= when.hour < 18:
        raise ToolError(f"fittings are Monday to Saturday from 09:00 to 18:00, not at {fitting}")
    serial = zlib.crc32(f"{customer_name}|{email}".encode()) % 100
    ready = when.date() + dt.timedelta(days=2 if turnaround == "express" else 7)
    return {
        "fitting_ref": f"ALT-{fitting[5:7]}{fitting[8:10]}-{fitting[11:13]}{serial:02d}",
        "fitting": fitting,
        "ready_by": ready.isoformat(),
        "price_gbp": _alteration_price(garment, alteration, turnaround),
    }


# --- a beekeeping supplier ---------------------------------------------------------------------------


@tool
def search_beekeeping_supplies(category: Category) -> Supplies:
    """List a beekeeping supplier's items in a category, each with its item code, price in euros and
    whether it is in stock."""
    return {
        "category": category,
        "items": [
            {"sku": s[0], "name": s[1], "price_eur": s[2], "in_stock": s[3]} for s in SUPPLIES[category]
        ],
    }


@tool
def order_beekeeping_supplies(
    sku: Sku,
    quantity: Annotated[int, Field(ge=1, le=50, description="How many of the item.")],
    email: Email,
    delivery: Delivery = "standard",
) -> SupplyOrder:
    """Order an item (by item code) from the beekeeping supplier; the order confirmation goes to the email."""
    item = next((s for items in SUPPLIES.values() for s in items if s[0] == sku), None)
    if item is None:
        raise ToolError(f"no item {sku!r}")
    if not item[3]:
        raise ToolError(f"{item[1]} ({sku}) is out of stock")
    return {
        "order_id": f"HIVE-{sku[3:]}-{quantity:02d}{delivery[0].upper()}",
        "item": item[1],
        "quantity": quantity,
        "total_eur": round(item[2] * quantity + DELIVERY_EUR[delivery], 2),
        "sent_to": email,
    }


# --- a dog groomer -----------------------------------------------------------------------------------


@tool
def find_dog_groomer(town: str) -> Groomer:
    """Find the dog groomer in a town: their groomer id, address and phone number."""
    found = GROOMERS.get(_key(town))
    if found is None:
        raise ToolError(f"no dog groomer in {town!r}")
    return {"groomer_id": found[0], "name": found[1], "address": found[2], "phone": found[3]}


@tool
def book_dog_grooming(
    groomer_id: GroomerId,
    dog_name: str,
    weight_kg: Annotated[float, Field(gt=0, le=90, description="The dog's weight in kilograms.")],
    service: GroomingService,
    day: IsoDay,
    email: Email,
) -> Grooming:
    """Book a dog in with a groomer (by groomer id) on a day, Monday to Saturday; the price depends on
    the dog's size by weight and the confirmation goes to the email."""
    groomer = next((g for g in GROOMERS.values() if g[0] == groomer_id), None)
    if groomer is None:
        raise ToolError(f"no dog groomer {groomer_id!r}")
    if dt.date.fromisoformat(day).weekday() == 6:
        raise ToolError(f"{groomer[1]} is closed on Sundays, and {day} is a Sunday")
    band = 0 if weight_kg < 10 else 1 if weight_kg <= 25 else 2
    return {
        "appointment_id": f"GRM-{groomer_id[3:]}-{day[5:7]}{day[8:]}-{_key(dog_name)[:3].upper()}",
        "groomer": groomer[1],
        "day": day,
        "size": ("small", "medium", "large")[band],
        "price_eur": GROOMING_EUR[service][band],
    }


# --- a public library's rooms ------------------------------------------------------------------------


@tool
def find_library_branch(area: str) -> Branch:
    """Find the public library branch in an area of the city: its branch id, address and opening hours."""
    found = BRANCHES.get(_key(area).removesuffix(" library"))
    if found is None:
        raise ToolError(f"no library branch in {area!r}")
    return {"branch_id": found[0], "name": found[1], "address": found[2], "opening_hours": found[3]}


@tool
def list_free_library_rooms(
    branch_id: BranchId,
    date: IsoDay,
    people: Annotated[int, Field(ge=1, le=100, description="Only rooms with at least this many seats.")] = 1,
) -> Rooms:
    """List the rooms free to book at a library branch (by branch id) on a day, each with its room id,
    seats, whether it has a projector and its price an hour in euros."""
    rooms = ROOMS.get(branch_id)
    if rooms is None:
        raise ToolError(f"no library branch {branch_id!r}")
    return {
        "branch_id": branch_id,
        "date": date,
        "rooms": [
            {"room_id": r[0], "name": r[1], "seats": r[2], "projector": r[3], "price_per_hour_eur": r[4]}
            for r in rooms
            if r[2] >= people
        ],
    }


@tool
def book_library_room(
    room_id: RoomId,
    date: IsoDay,
    start: ClockTime,
    hours: Annotated[int, Field(ge=1, le=4, description="How many hours, 1 to 4.")],
    email: Email,
    purpose: Purpose = "meeting",
) -> RoomBooking:
    """Book a library room (by room id) on a day from a start time for whole hours, within the branch's
    opening hours (10:00 to 20:00); the confirmation goes to the email."""
    room = next((r for rs in ROOMS.values() for r in rs if r[0] == room_id), None)
    if room is None:
        raise ToolError(f"no library room {room_id!r}")
    begins = int(start[:2]) * 60 + int(start[3:])
    ends = begins + 60 * hours
    if begins < 10 * 60 or ends > 20 * 60:
        raise ToolError(f"rooms can be booked from 10:00 to 20:00, not {start} for {hours} hours")
    return {
        "booking_ref": f"ROOM-{room_id[3:]}-{date[5:7]}{date[8:]}-{start[:2]}",
        "room": room[1],
        "date": date,
        "start": start,
        "ends": f"{ends // 60:02d}:{ends % 60:02d}",
        "total_eur": room[4] * hours,
    }


IMPLIED_TOOLS_11: list[ToolSpec] = [
    find_bike_workshop,
    bike_repair_quote,
    book_bike_repair,
    find_pottery_studio,
    list_pottery_courses,
    enrol_in_pottery_course,
    alteration_quote,
    book_alteration_fitting,
    search_beekeeping_supplies,
    order_beekeeping_supplies,
    find_dog_groomer,
    book_dog_grooming,
    find_library_branch,
    list_free_library_rooms,
    book_library_room,
]
