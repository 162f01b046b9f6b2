"""Tools for the tenth implied-steps set (``local_implied_10.IMPLIED_10``): an animal shelter's
adoptions, a laundry service, a driving school, piano tuners, campsites and ski lift passes.

Written on 2026-11-28 by a helper who had not read the guided rules, with that set, before its first
run. Same habits as the other implied tool sets (ids with patterns, enums with their words in the
description, flat ``TypedDict`` outputs, deterministic data, a ``ToolError`` for an unknown key), plus
what booking and quoting services have: a ``format: date-time`` lesson start
(``book_driving_lesson.start``), ``format: date`` pickup, visit and arrival days, an integer enum
(``minutes``: 60, 90 or 120), units the customer may say differently (``kilos`` where an American
says pounds; ``nights`` where people say "a week"), a price charged per started kilo, prices in a
currency the customer does not use (yen at ``SR-NGH``), enums chosen by what their description says
("after lunch" is the ``afternoon`` slot, "an apartment" is a ``flat``, a child of 9 is ``child``),
list outputs to choose from by a rule the request states (``list_adoptable_animals`` by name,
``find_piano_tuners`` by the soonest free day, ``search_campsites`` by price among those that take
dogs), names with accents, hyphens and apostrophes kept as written (``Oisín Mac Giolla Phádraig``,
``Niamh D'Arcy-Walsh``, ``Pádraig``, ``3 O'Connell Street, Ennis``), a quote-or-book pair
(``quote_campsite_stay`` or ``book_campsite_pitch``) and optional arguments with defaults
(``species``, ``children_under_10``, ``express``, ``pickup``, ``pitch_raise``, ``dogs``, ``people``,
``age_group``, ``passes``).
"""

from __future__ import annotations

import datetime as dt
import math
import zlib
from typing import Annotated, Literal, TypedDict

from pydantic import Field

from benchmarks.implied_tools import Email, IsoDay, _key
from benchmarks.implied_tools_8 import LocalDateTime
from pes_agent.errors import ToolError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

ShelterId = Annotated[
    str, Field(pattern="^AS-[A-Z]{3}-[0-9]{2}$", description="An animal shelter id such as AS-CRK-03.")
]
AnimalId = Annotated[str, Field(pattern="^AN-[0-9]{5}$", description="An animal's id such as AN-12345.")]
Species = Annotated[
    Literal["dog", "cat", "rabbit", "any"],
    Field(description="dog (dogs and puppies), cat (cats and kittens), rabbit (rabbits, bunnies) or any."),
]
Home = Annotated[
    Literal["flat", "house", "house_with_garden"],
    Field(
        description="flat (an apartment or flat, no garden of your own), house (a house with no garden, "
        "or only a yard) or house_with_garden (a house with a fenced garden)."
    ),
]
LaundryService = Annotated[
    Literal["wash_fold", "wash_iron", "delicates"],
    Field(
        description="wash_fold (a service wash: washed, tumble-dried and folded, 2.80 euros a started "
        "kilo), wash_iron (washed, dried and pressed on hangers, 4.50 euros a started kilo) or delicates "
        "(wool, silk and hand-wash items, washed by hand, 7.00 euros a started kilo)."
    ),
]
Kilos = Annotated[
    float,
    Field(gt=0, le=40, description="The weight of the washing in kilograms; charged per started kilo."),
]
Slot = Annotated[
    Literal["morning", "afternoon", "evening"],
    Field(
        description="When the driver calls: morning (08:00-12:00), afternoon (12:00-17:00) or evening "
        "(17:00-21:00)."
    ),
]
InstructorId = Annotated[
    str, Field(pattern="^DI-[0-9]{4}$", description="A driving instructor's id such as DI-1234.")
]
LessonMinutes = Annotated[
    Literal[60, 90, 120],
    Field(
        description="How long the lesson is: 60 (an hour), 90 (an hour and a half) or 120 (a double "
        "lesson, two hours)."
    ),
]
Pickup = Annotated[
    Literal["home", "school", "work"],
    Field(description="Where the instructor collects the pupil: home, school (or college) or work."),
]
PupilNumber = Annotated[
    str, Field(pattern="^PN-[0-9]{6}$", description="A learner driver's pupil number such as PN-123456.")
]
TunerId = Annotated[str, Field(pattern="^PT-[0-9]{3}$", description="A piano tuner's id such as PT-123.")]
Piano = Annotated[
    Literal["upright", "baby_grand", "grand"],
    Field(
        description="upright (an upright or cottage piano, the kind that stands against a wall), "
        "baby_grand (a small grand, under 1.7 m long; 30 euros more) or grand (a parlour or concert "
        "grand, 1.7 m or longer; 60 euros more)."
    ),
]
CampsiteId = Annotated[str, Field(pattern="^CS-[0-9]{4}$", description="A campsite id such as CS-1234.")]
Pitch = Annotated[
    Literal["tent", "campervan", "pod"],
    Field(
        description="tent (a grass pitch for a tent), campervan (a hard-standing pitch with electric "
        "hook-up, for a campervan, motorhome or caravan) or pod (a wooden glamping pod with beds)."
    ),
]
Nights = Annotated[int, Field(ge=1, le=28, description="How many nights, 1 to 28.")]
People = Annotated[
    int, Field(ge=1, le=8, description="How many people, children included; the price covers two.")
]
Dogs = Annotated[int, Field(ge=0, le=2, description="How many dogs come along (3 euros a night each).")]
ResortId = Annotated[str, Field(pattern="^SR-[A-Z]{3}$", description="A ski resort's id such as SR-ABC.")]
AgeGroup = Annotated[
    Literal["child", "youth", "adult", "senior"],
    Field(
        description="child (6 to 15 years old, 40 % off), youth (16 to 24, 20 % off), adult (25 to 64) "
        "or senior (65 and over, 15 % off)."
    ),
]

SHELTERS = {
    "kilkenny": ("AS-KIK-01", "Kilkenny Animal Rescue", "Hebron Road, Kilkenny", "056 776 2210"),
    "galway": ("AS-GWY-02", "Galway Paws Shelter", "Tuam Road, Galway", "091 771 348"),
}
"""Town: id, name, address, phone."""
ANIMALS = {
    "AS-KIK-01": (
        ("AN-31052", "Bramble", "dog", 3, "lurcher", 150.0),
        ("AN-31077", "Mossy", "dog", 7, "terrier cross", 120.0),
        ("AN-31090", "Señorita", "cat", 2, "tortoiseshell", 90.0),
        ("AN-31102", "Clover", "rabbit", 1, "lop-eared", 40.0),
    ),
    "AS-GWY-02": (
        ("AN-40217", "Pádraig", "cat", 4, "grey tabby", 90.0),
        ("AN-40233", "Juniper", "cat", 1, "black and white", 90.0),
        ("AN-40251", "Rua", "dog", 5, "red setter", 150.0),
    ),
}
"""Shelter id: animals (id, name, species, age in years, breed or coat, adoption fee in euros)."""
LAUNDRY_EUR_PER_KILO = {"wash_fold": 2.80, "wash_iron": 4.50, "delicates": 7.00}
SLOT_HOURS = {"morning": "08:00-12:00", "afternoon": "12:00-17:00", "evening": "17:00-21:00"}
INSTRUCTORS = {
    "oisín mac giolla phádraig": ("DI-0731", "Oisín Mac Giolla Phádraig", "manual", 42.0),
    "małgorzata ruiz-fernández": ("DI-0958", "Małgorzata Ruiz-Fernández", "automatic", 48.0),
}
"""Name: id, name, gearbox, hourly rate in euros."""
PUPILS = {
    "PN-204518": ("Dara Ó Briain-Kelly", "DI-0731", 27.5, 19, True),
    "PN-311907": ("Chloé Martin", "DI-0958", 9.0, 6, False),
}
"""Pupil number: name, instructor id, hours driven, lessons taken, theory test passed."""
TUNERS = {
    "ennis": (
        ("PT-104", "Dónal Ó Súilleabháin", 95.0, "2026-09-21"),
        ("PT-212", "Agnieszka Kowalczyk-Ryan", 110.0, "2026-09-15"),
        ("PT-318", "Tom O'Dea", 85.0, "2026-09-29"),
    ),
    "sligo": (("PT-407", "Gráinne McHugh", 100.0, "2026-10-05"),),
}
"""Town: tuners (id, name, price for an upright in euros, first free day)."""
PIANO_EXTRA_EUR = {"upright": 0.0, "baby_grand": 30.0, "grand": 60.0}
PITCH_RAISE_EUR = 40.0
CAMPSITES = {
    "connemara": (
        ("CS-0207", "Clifden Eco Beach Camping", {"tent": 15.0, "campervan": 28.0, "pod": 65.0}, True),
        ("CS-0211", "Renvyle Strand Camping", {"tent": 11.0, "campervan": 24.0}, False),
        ("CS-0219", "Leenane Harbour Camping", {"tent": 13.0, "campervan": 26.0, "pod": 70.0}, True),
    ),
    "haute-savoie": (
        ("CS-0412", "Camping Les Mélèzes", {"tent": 16.0, "campervan": 32.0, "pod": 85.0}, True),
        ("CS-0418", "Camping de l'Île des Barrats", {"tent": 18.0, "campervan": 35.0}, False),
    ),
}
"""Region: campsites (id, name, price a night for two people by pitch, dogs allowed)."""
EXTRA_PERSON_EUR = 6.0
DOG_EUR = 3.0
RESORTS = {
    "niseko grand hirafu": (
        "SR-NGH",
        "Niseko Grand Hirafu",
        "Japan",
        "JPY",
        9800.0,
        "2026-12-01",
        "2027-05-05",
    ),
    "val d'isère": ("SR-VDI", "Val d'Isère", "France", "EUR", 74.0, "2026-11-28", "2027-05-02"),
    "kitzbühel": ("SR-KTZ", "Kitzbühel", "Austria", "EUR", 79.5, "2026-10-16", "2027-05-01"),
}
"""Name: id, name, country, currency, an adult's day pass in that currency, season opens, closes."""
AGE_FACTOR = {"child": 0.6, "youth": 0.8, "adult": 1.0, "senior": 0.85}


class Shelter(TypedDict):
    shelter_id: str
    name: str
    address: str
    phone: str


class Animal(TypedDict):
    animal_id: str
    name: str
    species: str
    age_years: int
    breed: str
    adoption_fee_eur: float


class Animals(TypedDict):
    shelter_id: str
    animals: list[Animal]


class AdoptionApplication(TypedDict):
    application_id: str
    animal: str
    adoption_fee_eur: float
    next_step: str


class LaundryQuote(TypedDict):
    service: str
    kilos_charged: int
    express: bool
    total_eur: float
    ready_in_hours: int


class LaundryPickup(TypedDict):
    pickup_id: str
    pickup_date: str
    window: str
    service: str
    ready_by: str


class Instructor(TypedDict):
    instructor_id: str
    name: str
    gearbox: str
    hourly_rate_eur: float


class DrivingLesson(TypedDict):
    lesson_id: str
    start: str
    ends: str
    pickup: str
    total_eur: float


class PupilRecord(TypedDict):
    pupil_number: str
    name: str
    instructor_id: str
    hours_driven: float
    lessons_taken: int
    theory_test_passed: bool


class Tuner(TypedDict):
    tuner_id: str
    name: str
    upright_price_eur: float
    first_free_day: str


class Tuners(TypedDict):
    town: str
    tuners: list[Tuner]


class TuningBooking(TypedDict):
    booking_id: str
    tuner: str
    visit_date: str
    price_eur: float


class Campsite(TypedDict):
    campsite_id: str
    name: str
    price_per_night_eur: float
    dogs_allowed: bool


class Campsites(TypedDict):
    region: str
    pitch: str
    campsites: list[Campsite]


class StayQuote(TypedDict):
    campsite: str
    arrival: str
    departure: str
    nights: int
    total_eur: float


class PitchBooking(TypedDict):
    booking_ref: str
    campsite: str
    arrival: str
    departure: str
    total_eur: float
    sent_to: str


class Resort(TypedDict):
    resort_id: str
    name: str
    country: str
    currency: str
    season_opens: str
    season_closes: str


class PassPrice(TypedDict):
    resort_id: str
    days: int
    age_group: str
    price_each: float
    total: float
    currency: str


@tool
def find_animal_shelter(town: str) -> Shelter:
    """Find the animal shelter in a town: its shelter id, address and phone number."""
    found = SHELTERS.get(_key(town))
    if found is None:
        raise ToolError(f"no animal shelter in {town!r}")
    return {"shelter_id": found[0], "name": found[1], "address": found[2], "phone": found[3]}


def _animal(animal_id: str) -> tuple[str, str, str, int, str, float]:
    for animals in ANIMALS.values():
        for animal in animals:
            if animal[0] == animal_id:
                return animal
    raise ToolError(f"no animal {animal_id!r} is up for adoption")


@tool
def list_adoptable_animals(shelter_id: ShelterId, species: Species = "any") -> Animals:
    """List the animals a shelter (by shelter id) has up for adoption, each with its animal id."""
    animals = ANIMALS.get(shelter_id)
    if animals is None:
        raise ToolError(f"no animal shelter {shelter_id!r}")
    return {
        "shelter_id": shelter_id,
        "animals": [
            {
                "animal_id": a[0],
                "name": a[1],
                "species": a[2],
                "age_years": a[3],
                "breed": a[4],
                "adoption_fee_eur": a[5],
            }
            for a in animals
            if species in ("any", a[2])
        ],
    }


@tool
def apply_to_adopt(
    animal_id: AnimalId,
    applicant_name: str,
    email: Email,
    home: Home,
    children_under_10: Annotated[int, Field(ge=0, le=10, description="Children under 10 at home.")] = 0,
) -> AdoptionApplication:
    """Apply to adopt one animal (by animal id); a volunteer then books a home visit by email."""
    animal = _animal(animal_id)
    if animal[2] == "dog" and home == "flat":
        raise ToolError(f"{animal[1]} needs a home with outdoor space; a flat is not suitable")
    serial = zlib.crc32(f"{animal_id}|{applicant_name}|{email}".encode()) % 1000
    return {
        "application_id": f"ADP-{animal_id[3:]}-{serial:03d}",
        "animal": animal[1],
        "adoption_fee_eur": animal[5],
        "next_step": f"a volunteer will email {email} within three days to arrange a home visit",
    }


def _laundry_total(kilos: float, service: str, express: bool) -> tuple[int, float]:
    charged = math.ceil(kilos - 1e-9)
    total = charged * LAUNDRY_EUR_PER_KILO[service] * (1.5 if express else 1.0)
    return charged, round(total, 2)


@tool
def laundry_quote(kilos: Kilos, service: LaundryService, express: bool = False) -> LaundryQuote:
    """Price a laundry order by weight and service, without booking a pickup. Express (ready the same
    evening) costs 50 % more; otherwise washing is ready in 48 hours."""
    charged, total = _laundry_total(kilos, service, express)
    return {
        "service": service,
        "kilos_charged": charged,
        "express": express,
        "total_eur": total,
        "ready_in_hours": 8 if express else 48,
    }


@tool
def schedule_laundry_pickup(
    address: str, pickup_date: IsoDay, slot: Slot, service: LaundryService, email: Email
) -> LaundryPickup:
    """Have a driver collect washing from an address on a day (Monday to Saturday) in a time slot; it
    comes back washed 48 hours later and the confirmation goes to the email."""
    day = dt.date.fromisoformat(pickup_date)
    if day.weekday() == 6:
        raise ToolError(f"there are no pickups on Sundays, and {pickup_date} is a Sunday")
    code = zlib.crc32(_key(address).encode()) % 1000
    return {
        "pickup_id": f"WSH-{pickup_date[5:7]}{pickup_date[8:]}-{slot[0].upper()}{code:03d}",
        "pickup_date": pickup_date,
        "window": SLOT_HOURS[slot],
        "service": service,
        "ready_by": (day + dt.timedelta(days=2)).isoformat(),
    }


@tool
def find_driving_instructor(name: str) -> Instructor:
    """Find a driving instructor by name: their instructor id, the car's gearbox and the hourly rate."""
    found = INSTRUCTORS.get(_key(name))
    if found is None:
        raise ToolError(f"no driving instructor called {name!r}")
    return {"instructor_id": found[0], "name": found[1], "gearbox": found[2], "hourly_rate_eur": found[3]}


@tool
def book_driving_lesson(
    instructor_id: InstructorId,
    start: LocalDateTime,
    minutes: LessonMinutes,
    pupil_email: Email,
    pickup: Pickup = "home",
) -> DrivingLesson:
    """Book a driving lesson with an instructor (by instructor id) at a date and time, Monday to
    Saturday between 07:00 and 21:00; the confirmation goes to the pupil's email."""
    rate = next((i[3] for i in INSTRUCTORS.values() if i[0] == instructor_id), None)
    if rate is None:
        raise ToolError(f"no driving instructor {instructor_id!r}")
    begins = dt.datetime.fromisoformat(start)
    ends = begins + dt.timedelta(minutes=minutes)
    if begins.weekday() == 6 or begins.hour < 7 or ends > begins.replace(hour=21, minute=0):
        raise ToolError(f"lessons run Monday to Saturday from 07:00 to 21:00, not at {start}")
    return {
        "lesson_id": f"DLN-{instructor_id[3:]}-{start[5:7]}{start[8:10]}-{start[11:13]}{start[14:16]}",
        "start": start,
        "ends": ends.isoformat(),
        "pickup": pickup,
        "total_eur": round(rate * minutes / 60, 2),
    }


@tool
def driving_pupil_record(pupil_number: PupilNumber) -> PupilRecord:
    """A learner driver's record (by pupil number): their instructor, hours driven so far, lessons
    taken and whether the theory test is passed."""
    found = PUPILS.get(pupil_number)
    if found is None:
        raise ToolError(f"no pupil {pupil_number!r}")
    name, instructor, hours, lessons, theory = found
    return {
        "pupil_number": pupil_number,
        "name": name,
        "instructor_id": instructor,
        "hours_driven": hours,
        "lessons_taken": lessons,
        "theory_test_passed": theory,
    }


@tool
def find_piano_tuners(town: str) -> Tuners:
    """List the piano tuners who work in a town, each with their tuner id, their price for tuning an
    upright and the first day they are free."""
    tuners = TUNERS.get(_key(town))
    if tuners is None:
        raise ToolError(f"no piano tuner works in {town!r}")
    return {
        "town": town,
        "tuners": [
            {"tuner_id": t[0], "name": t[1], "upright_price_eur": t[2], "first_free_day": t[3]}
            for t in tuners
        ],
    }


@tool
def book_piano_tuning(
    tuner_id: TunerId,
    visit_date: IsoDay,
    piano: Piano,
    address: str,
    email: Email,
    pitch_raise: Annotated[
        bool,
        Field(description="Raise the pitch first, for a piano not tuned for two years or more (40 euros)."),
    ] = False,
) -> TuningBooking:
    """Book a piano tuner (by tuner id) to visit an address on a day, no earlier than their first free
    day and not on a Sunday; the confirmation goes to the email."""
    tuner = next((t for tuners in TUNERS.values() for t in tuners if t[0] == tuner_id), None)
    if tuner is None:
        raise ToolError(f"no piano tuner {tuner_id!r}")
    day = dt.date.fromisoformat(visit_date)
    if visit_date < tuner[3] or day.weekday() == 6:
        raise ToolError(f"{tuner[1]} is free from {tuner[3]}, Monday to Saturday; not on {visit_date}")
    price = tuner[2] + PIANO_EXTRA_EUR[piano] + (PITCH_RAISE_EUR if pitch_raise else 0.0)
    return {
        "booking_id": f"PTB-{tuner_id[3:]}-{visit_date[5:7]}{visit_date[8:]}",
        "tuner": tuner[1],
        "visit_date": visit_date,
        "price_eur": price,
    }


def _campsite(campsite_id: str) -> tuple[str, str, dict[str, float], bool]:
    for sites in CAMPSITES.values():
        for site in sites:
            if site[0] == campsite_id:
                return site
    raise ToolError(f"no campsite {campsite_id!r}")


def _stay(campsite_id: str, arrival: str, nights: int, pitch: str, people: int, dogs: int) -> StayQuote:
    _, name, prices, dogs_allowed = _campsite(campsite_id)
    if pitch not in prices:
        raise ToolError(f"{name} has no {pitch} pitches")
    if dogs and not dogs_allowed:
        raise ToolError(f"{name} does not take dogs")
    nightly = prices[pitch] + EXTRA_PERSON_EUR * max(0, people - 2) + DOG_EUR * dogs
    departure = dt.date.fromisoformat(arrival) + dt.timedelta(days=nights)
    return {
        "campsite": name,
        "arrival": arrival,
        "departure": departure.isoformat(),
        "nights": nights,
        "total_eur": round(nightly * nights, 2),
    }


@tool
def search_campsites(
    region: str,
    pitch: Pitch,
    dogs: Annotated[bool, Field(description="Only campsites that take dogs.")] = False,
) -> Campsites:
    """List the campsites in a region with a kind of pitch, each with its campsite id, its price a night
    for two people and whether dogs are allowed."""
    sites = CAMPSITES.get(_key(region))
    if sites is None:
        raise ToolError(f"no campsites listed in {region!r}")
    return {
        "region": region,
        "pitch": pitch,
        "campsites": [
            {"campsite_id": s[0], "name": s[1], "price_per_night_eur": s[2][pitch], "dogs_allowed": s[3]}
            for s in sites
            if pitch in s[2] and (s[3] or not dogs)
        ],
    }


@tool
def quote_campsite_stay(
    campsite_id: CampsiteId, arrival: IsoDay, nights: Nights, pitch: Pitch, people: People = 2, dogs: Dogs = 0
) -> StayQuote:
    """Price a stay at a campsite (by campsite id) from an arrival day, in euros, without booking it.
    Each person beyond two costs 6 euros a night."""
    return _stay(campsite_id, arrival, nights, pitch, people, dogs)


@tool
def book_campsite_pitch(
    campsite_id: CampsiteId,
    arrival: IsoDay,
    nights: Nights,
    pitch: Pitch,
    people: People,
    email: Email,
    dogs: Dogs = 0,
) -> PitchBooking:
    """Book a pitch at a campsite (by campsite id) from an arrival day; the confirmation goes to the email."""
    stay = _stay(campsite_id, arrival, nights, pitch, people, dogs)
    return {
        "booking_ref": f"CMP-{campsite_id[3:]}-{arrival[5:7]}{arrival[8:]}-{nights}N",
        "campsite": stay["campsite"],
        "arrival": arrival,
        "departure": stay["departure"],
        "total_eur": stay["total_eur"],
        "sent_to": email,
    }


@tool
def find_ski_resort(name: str) -> Resort:
    """Find a ski resort by name: its resort id, country, the currency its lift passes are sold in and
    the season's opening and closing days."""
    found = RESORTS.get(_key(name))
    if found is None:
        raise ToolError(f"no ski resort called {name!r}")
    resort_id, title, country, currency, _, opens, closes = found
    return {
        "resort_id": resort_id,
        "name": title,
        "country": country,
        "currency": currency,
        "season_opens": opens,
        "season_closes": closes,
    }


@tool
def ski_pass_price(
    resort_id: ResortId,
    days: Annotated[int, Field(ge=1, le=14, description="Days of skiing, 1 to 14; 6 or more are 10 % off.")],
    age_group: AgeGroup = "adult",
    passes: Annotated[int, Field(ge=1, le=10, description="How many passes of this kind.")] = 1,
) -> PassPrice:
    """Price lift passes at a ski resort (by resort id), in the resort's own currency."""
    found = next((r for r in RESORTS.values() if r[0] == resort_id), None)
    if found is None:
        raise ToolError(f"no ski resort {resort_id!r}")
    currency, day_rate = found[3], found[4]
    each = day_rate * days * AGE_FACTOR[age_group] * (0.9 if days >= 6 else 1.0)
    each = round(each) if currency == "JPY" else round(each, 2)
    return {
        "resort_id": resort_id,
        "days": days,
        "age_group": age_group,
        "price_each": each,
        "total": round(each * passes, 2),
        "currency": currency,
    }


IMPLIED_TOOLS_10: list[ToolSpec] = [
    find_animal_shelter,
    list_adoptable_animals,
    apply_to_adopt,
    laundry_quote,
    schedule_laundry_pickup,
    find_driving_instructor,
    book_driving_lesson,
    driving_pupil_record,
    find_piano_tuners,
    book_piano_tuning,
    search_campsites,
    quote_campsite_stay,
    book_campsite_pitch,
    find_ski_resort,
    ski_pass_price,
]
