"""Tools for the ninth implied-steps set (``local_implied_9.IMPLIED_9``): a dental practice, concert
tickets, language exams, charity donations, sailing-boat charters and road-race entries.

Written on 2026-11-28 by a helper who had not read the guided rules, with that set, before its first
run. Same habits as the other implied tool sets (ids with patterns, enums with their words in the
description, flat ``TypedDict`` outputs, deterministic data, a ``ToolError`` for an unknown key), plus
what appointment, ticketing and sign-up services have: a ``format: date-time`` start
(``book_dental_appointment.start``), ``format: date`` birthdays and exam days, units the customer says
differently (``amount_cents`` where people say euros, ``days`` where they say "a week"), enums chosen by
what their description says (a "scale and polish" is ``hygiene``, "upper intermediate" is
``b2_first``), list outputs to choose from (``search_concerts`` by city, ``list_charter_boats`` by
berths and price), names with accents, hyphens and apostrophes kept as written (``Siobhán Ní
Bhriain``, ``Zofia Wójcik-Nowak``, ``Aoife O'Sullivan-Byrne``), near-duplicate pairs that price or do
(``price_concert_tickets`` or ``book_concert_tickets``; ``dental_fee`` or ``book_dental_appointment``)
and optional arguments with defaults (``reminder``, ``city``, ``quantity``, ``frequency``,
``min_berths``, ``crew``, ``tshirt``).
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

DentistId = Annotated[str, Field(pattern="^DN-[0-9]{4}$", description="A dentist id such as DN-1234.")]
Treatment = Annotated[
    Literal["checkup", "hygiene", "filling", "extraction", "whitening"],
    Field(
        description="checkup (an examination of teeth and gums, 20 minutes), hygiene (a scale and polish "
        "by the hygienist, 30 minutes), filling (filling a cavity, 45 minutes), extraction (taking a "
        "tooth out, 40 minutes) or whitening (bleaching the teeth, 60 minutes)."
    ),
]
Reminder = Annotated[
    Literal["email", "sms", "none"],
    Field(description="How to remind the patient the day before: email, sms (a text message) or none."),
]
ConcertId = Annotated[
    str,
    Field(
        pattern="^CN-[0-9]{4}-[A-Z]{3}$",
        description="One concert: CN-, its month and day, then the city's code, e.g. CN-0704-LIS.",
    ),
]
Section = Annotated[
    Literal["standing", "stalls", "balcony", "box"],
    Field(
        description="standing (the floor in front of the stage, no seat), stalls (seats on the ground "
        "floor, 1.3 times the standing price), balcony (seats upstairs, 0.9 times) or box (a private box "
        "seat, 2.5 times)."
    ),
]
TicketCount = Annotated[int, Field(ge=1, le=8, description="How many tickets (at most 8 per order).")]
CentreId = Annotated[
    str, Field(pattern="^EC-[A-Z]{2}-[0-9]{3}$", description="An exam centre id such as EC-DE-021.")
]
Exam = Annotated[
    Literal["a2_key", "b1_preliminary", "b2_first", "c1_advanced", "c2_proficiency"],
    Field(
        description="The English exam, by level: a2_key (A2, elementary), b1_preliminary (B1, "
        "intermediate), b2_first (B2, upper intermediate), c1_advanced (C1, advanced) or c2_proficiency "
        "(C2, near-native mastery)."
    ),
]
CandidateNumber = Annotated[
    str,
    Field(pattern="^[0-9]{4}-[0-9]{5}$", description="A candidate number such as 0314-12345."),
]
CharityId = Annotated[
    str, Field(pattern="^CH-[0-9]{7}$", description="A registered charity's id such as CH-1234567.")
]
Frequency = Annotated[
    Literal["once", "monthly", "yearly"],
    Field(description="once (a single gift), monthly (the same gift every month) or yearly (every year)."),
]
BoatId = Annotated[
    str, Field(pattern="^CB-[A-Z]{3}-[0-9]{2}$", description="A charter boat id such as CB-SPL-04.")
]
Crew = Annotated[
    Literal["bareboat", "skippered", "crewed"],
    Field(
        description="bareboat (you sail it yourself; a skipper's licence is needed), skippered (a skipper "
        "sails it for you, 150 euros a day more) or crewed (a skipper and a cook, 260 euros a day more)."
    ),
]
RaceId = Annotated[
    str, Field(pattern="^RR-[A-Z]{3,5}-[0-9]{2}$", description="A race id such as RR-CORK-26.")
]
Distance = Annotated[
    Literal["5k", "10k", "half"],
    Field(description="5k (5 km), 10k (10 km) or half (a half marathon, 21.1 km; 16 and over only)."),
]
Shirt = Annotated[Literal["xs", "s", "m", "l", "xl"], Field(description="The finisher's T-shirt size.")]

DENTISTS = {
    "siobhán ní bhriain": ("DN-0316", "Siobhán Ní Bhriain", "Harbour Road Dental, Howth", "+353 1 832 4410"),
    "jonas lindqvist": ("DN-0522", "Jonas Lindqvist", "Södermalm Tandvård, Stockholm", "08-640 21 77"),
}
"""Id, name, practice, the practice's phone."""
TREATMENTS = {
    "checkup": (55.0, 20),
    "hygiene": (70.0, 30),
    "filling": (95.0, 45),
    "extraction": (120.0, 40),
    "whitening": (340.0, 60),
}
"""Fee in euros, minutes."""
CONCERTS = {
    "rosalía vega": (
        ("CN-0704-LIS", "Lisbon", "Coliseu dos Recreios", "2026-07-04", 48.0),
        ("CN-0707-OPO", "Porto", "Super Bock Arena", "2026-07-07", 45.0),
        ("CN-0711-MAD", "Madrid", "WiZink Center", "2026-07-11", 52.0),
    ),
    "kettle & crane": (
        ("CN-0919-DUB", "Dublin", "Vicar Street", "2026-09-19", 39.5),
        ("CN-0922-GLA", "Glasgow", "Barrowland Ballroom", "2026-09-22", 36.0),
    ),
}
"""Artist: concerts (id, city, venue, day, standing price in euros)."""
SECTION_FACTOR = {"standing": 1.0, "stalls": 1.3, "balcony": 0.9, "box": 2.5}
EXAM_CENTRES = {
    "łódź": ("EC-PL-014", "Łódź Language Centre, ul. Piotrkowska 104"),
    "valparaíso": ("EC-CL-003", "Centro de Exámenes Valparaíso, Av. Brasil 1720"),
}
EXAM_FEES_EUR = {
    "a2_key": 95.0,
    "b1_preliminary": 110.0,
    "b2_first": 195.0,
    "c1_advanced": 210.0,
    "c2_proficiency": 225.0,
}
RESULTS = {
    "0412-88317": ("c1_advanced", "2026-03-14", "2026-04-09", 193, "Grade B"),
    "0509-40276": ("b2_first", "2026-05-09", "2026-06-02", 176, "Grade B"),
}
"""Candidate number: exam, exam day, day the result came out, scale score, grade."""
CHARITIES = {
    "red squirrel survival trust": ("CH-1137486", "Red Squirrel Survival Trust"),
    "médecins du monde": ("CH-1099207", "Médecins du Monde"),
}
BOATS = {
    "kotor": (
        ("CB-KOT-01", "Bokeljka", 4, 210.0),
        ("CB-KOT-02", "Lastva", 6, 340.0),
        ("CB-KOT-03", "Sveti Đorđe", 8, 295.0),
        ("CB-KOT-04", "Perast", 6, 320.0),
    ),
    "split": (("CB-SPL-01", "Vila Velebita", 6, 280.0), ("CB-SPL-02", "Galeb", 10, 450.0)),
}
"""Harbour: boats (id, name, berths, day rate in euros, bareboat)."""
CREW_EUR_PER_DAY = {"bareboat": 0.0, "skippered": 150.0, "crewed": 260.0}
RACES = {
    "bray seafront run": ("RR-BRAY-26", "Bray Seafront Run", "2026-08-16", 22.0, 30.0, 38.0),
    "corrida de são silvestre": ("RR-SSIL-26", "Corrida de São Silvestre", "2026-12-31", 15.0, 25.0, 0.0),
}
"""Race: id, name, day, fees in euros for the 5k, the 10k and the half (0: not run)."""


class Dentist(TypedDict):
    dentist_id: str
    name: str
    practice: str
    phone: str


class DentalFee(TypedDict):
    treatment: str
    fee_eur: float
    minutes: int


class DentalAppointment(TypedDict):
    appointment_id: str
    start: str
    ends: str
    practice: str
    fee_eur: float


class Concert(TypedDict):
    concert_id: str
    city: str
    venue: str
    date: str


class Concerts(TypedDict):
    artist: str
    concerts: list[Concert]


class TicketPrice(TypedDict):
    concert_id: str
    section: str
    quantity: int
    price_each_eur: float
    total_eur: float


class TicketBooking(TypedDict):
    booking_ref: str
    concert_id: str
    quantity: int
    total_eur: float
    sent_to: str


class ExamCentre(TypedDict):
    centre_id: str
    name: str


class ExamRegistration(TypedDict):
    candidate_number: str
    exam: str
    exam_date: str
    centre: str
    fee_eur: float


class ExamResult(TypedDict):
    candidate_number: str
    exam: str
    exam_date: str
    result_date: str
    score: int
    grade: str


class Charity(TypedDict):
    charity_id: str
    name: str


class Donation(TypedDict):
    donation_id: str
    charity: str
    amount_eur: float
    frequency: str
    receipt_to: str


class Boat(TypedDict):
    boat_id: str
    name: str
    berths: int
    day_rate_eur: float


class Boats(TypedDict):
    harbour: str
    boats: list[Boat]


class CharterQuote(TypedDict):
    boat_id: str
    days: int
    crew: str
    total_eur: float


class Race(TypedDict):
    race_id: str
    name: str
    date: str
    fee_5k_eur: float
    fee_10k_eur: float
    fee_half_eur: float


class RaceEntry(TypedDict):
    entry_id: str
    bib: int
    race_date: str
    fee_eur: float


@tool
def find_dentist(name: str) -> Dentist:
    """Find a dentist by name: their dentist id, their practice and the practice's phone number."""
    found = DENTISTS.get(_key(name))
    if found is None:
        raise ToolError(f"no dentist called {name!r}")
    return {"dentist_id": found[0], "name": found[1], "practice": found[2], "phone": found[3]}


@tool
def dental_fee(treatment: Treatment) -> DentalFee:
    """What a dental treatment costs and how long it takes, without booking anything."""
    fee, minutes = TREATMENTS[treatment]
    return {"treatment": treatment, "fee_eur": fee, "minutes": minutes}


@tool
def book_dental_appointment(
    dentist_id: DentistId,
    start: LocalDateTime,
    treatment: Treatment,
    patient_email: Email,
    reminder: Reminder = "email",
) -> DentalAppointment:
    """Book an appointment with a dentist (by dentist id) for a treatment at a date and time, on a
    weekday between 08:00 and 18:00; the confirmation goes to the patient's email."""
    practice = next((d[2] for d in DENTISTS.values() if d[0] == dentist_id), None)
    if practice is None:
        raise ToolError(f"no dentist {dentist_id!r}")
    begins = dt.datetime.fromisoformat(start)
    fee, minutes = TREATMENTS[treatment]
    ends = begins + dt.timedelta(minutes=minutes)
    if begins.weekday() >= 5 or begins.hour < 8 or ends.time() > dt.time(18):
        raise ToolError(f"the practice sees patients on weekdays from 08:00 to 18:00, not at {start}")
    return {
        "appointment_id": f"DA-{dentist_id[3:]}-{start[5:7]}{start[8:10]}-{start[11:13]}{start[14:16]}",
        "start": start,
        "ends": ends.isoformat(),
        "practice": practice,
        "fee_eur": fee,
    }


def _concert(concert_id: str) -> tuple[str, str, str, str, float]:
    for concerts in CONCERTS.values():
        for concert in concerts:
            if concert[0] == concert_id:
                return concert
    raise ToolError(f"no concert {concert_id!r}")


@tool
def search_concerts(artist: str, city: str = "") -> Concerts:
    """List an artist's coming concerts (optionally in one city only), each with its concert id."""
    concerts = CONCERTS.get(_key(artist))
    if concerts is None:
        raise ToolError(f"no concerts by {artist!r}")
    shown = [c for c in concerts if not city or _key(c[1]) == _key(city)]
    if not shown:
        raise ToolError(f"{artist!r} plays no concert in {city!r}")
    return {
        "artist": artist,
        "concerts": [{"concert_id": c[0], "city": c[1], "venue": c[2], "date": c[3]} for c in shown],
    }


def _ticket_eur(concert_id: str, section: str) -> float:
    return round(_concert(concert_id)[4] * SECTION_FACTOR[section], 2)


@tool
def price_concert_tickets(concert_id: ConcertId, section: Section, quantity: TicketCount = 1) -> TicketPrice:
    """Price tickets in a section for one concert (by concert id), in euros, without buying them."""
    each = _ticket_eur(concert_id, section)
    return {
        "concert_id": concert_id,
        "section": section,
        "quantity": quantity,
        "price_each_eur": each,
        "total_eur": round(each * quantity, 2),
    }


@tool
def book_concert_tickets(
    concert_id: ConcertId, section: Section, quantity: TicketCount, email: Email
) -> TicketBooking:
    """Buy tickets in a section for one concert (by concert id); the e-tickets go to the email."""
    each = _ticket_eur(concert_id, section)
    return {
        "booking_ref": f"BK-{concert_id[8:]}-{concert_id[3:7]}-{section[0].upper()}{quantity}",
        "concert_id": concert_id,
        "quantity": quantity,
        "total_eur": round(each * quantity, 2),
        "sent_to": email,
    }


@tool
def find_exam_centre(city: str) -> ExamCentre:
    """Find the English exam centre in a city; returns its centre id."""
    found = EXAM_CENTRES.get(_key(city))
    if found is None:
        raise ToolError(f"no exam centre in {city!r}")
    return {"centre_id": found[0], "name": found[1]}


@tool
def register_for_exam(
    centre_id: CentreId,
    exam: Exam,
    exam_date: Annotated[IsoDay, Field(description="The exam day; exams are held on Saturdays.")],
    candidate_name: str,
    date_of_birth: IsoDay,
    email: Email,
) -> ExamRegistration:
    """Register a candidate for an English exam at a centre (by centre id) on an exam day; the
    candidate number goes to the email."""
    centre = next((c[1] for c in EXAM_CENTRES.values() if c[0] == centre_id), None)
    if centre is None:
        raise ToolError(f"no exam centre {centre_id!r}")
    day = dt.date.fromisoformat(exam_date)
    if day.weekday() != 5:
        raise ToolError(f"exams are held on Saturdays; {exam_date} is a {day.strftime('%A')}")
    if dt.date.fromisoformat(date_of_birth) > day - dt.timedelta(days=365 * 10):
        raise ToolError(f"a candidate born on {date_of_birth} is too young for this exam")
    serial = zlib.crc32(f"{centre_id}|{candidate_name}|{date_of_birth}".encode()) % 100000
    return {
        "candidate_number": f"{exam_date[5:7]}{exam_date[8:]}-{serial:05d}",
        "exam": exam,
        "exam_date": exam_date,
        "centre": centre,
        "fee_eur": EXAM_FEES_EUR[exam],
    }


@tool
def exam_result(candidate_number: CandidateNumber) -> ExamResult:
    """A candidate's exam result (by candidate number): the exam, its day, when the result came out,
    the scale score and the grade."""
    found = RESULTS.get(candidate_number)
    if found is None:
        raise ToolError(f"no result for candidate {candidate_number!r}")
    exam, sat, out, score, grade = found
    return {
        "candidate_number": candidate_number,
        "exam": exam,
        "exam_date": sat,
        "result_date": out,
        "score": score,
        "grade": grade,
    }


@tool
def find_charity(name: str) -> Charity:
    """Find a registered charity by name; returns its charity id."""
    found = CHARITIES.get(_key(name))
    if found is None:
        raise ToolError(f"no registered charity called {name!r}")
    return {"charity_id": found[0], "name": found[1]}


@tool
def donate_to_charity(
    charity_id: CharityId,
    amount_cents: Annotated[int, Field(ge=100, le=1000000, description="The gift in euro cents.")],
    donor_email: Email,
    frequency: Frequency = "once",
) -> Donation:
    """Give money to a charity (by charity id), once or repeatedly; the receipt goes to the donor's email."""
    charity = next((c[1] for c in CHARITIES.values() if c[0] == charity_id), None)
    if charity is None:
        raise ToolError(f"no registered charity {charity_id!r}")
    return {
        "donation_id": f"DON-{charity_id[3:7]}-{amount_cents}{frequency[0].upper()}",
        "charity": charity,
        "amount_eur": amount_cents / 100,
        "frequency": frequency,
        "receipt_to": donor_email,
    }


@tool
def list_charter_boats(
    harbour: str, min_berths: Annotated[int, Field(ge=1, le=12, description="Sleeps at least this many.")] = 1
) -> Boats:
    """List the sailing boats to charter from a harbour, each with its berths and bareboat day rate."""
    boats = BOATS.get(_key(harbour))
    if boats is None:
        raise ToolError(f"no charter boats in {harbour!r}")
    return {
        "harbour": harbour,
        "boats": [
            {"boat_id": b[0], "name": b[1], "berths": b[2], "day_rate_eur": b[3]}
            for b in boats
            if b[2] >= min_berths
        ],
    }


@tool
def quote_charter(
    boat_id: BoatId,
    days: Annotated[
        int, Field(ge=2, le=21, description="How many days, 2 to 21; 7 or more are 10 % off the boat.")
    ],
    crew: Crew = "bareboat",
) -> CharterQuote:
    """Quote chartering a boat (by boat id) for some days, in euros, with or without crew."""
    rate = next((b[3] for boats in BOATS.values() for b in boats if b[0] == boat_id), None)
    if rate is None:
        raise ToolError(f"no charter boat {boat_id!r}")
    boat = rate * (0.9 if days >= 7 else 1.0)
    return {
        "boat_id": boat_id,
        "days": days,
        "crew": crew,
        "total_eur": round((boat + CREW_EUR_PER_DAY[crew]) * days, 2),
    }


@tool
def find_race(name: str) -> Race:
    """Find a road race by name: its race id, its day and the entry fee for each distance."""
    found = RACES.get(_key(name))
    if found is None:
        raise ToolError(f"no race called {name!r}")
    race_id, title, day, five, ten, half = found
    return {
        "race_id": race_id,
        "name": title,
        "date": day,
        "fee_5k_eur": five,
        "fee_10k_eur": ten,
        "fee_half_eur": half,
    }


@tool
def enter_race(
    race_id: RaceId,
    distance: Distance,
    runner_name: str,
    date_of_birth: IsoDay,
    email: Email,
    tshirt: Shirt = "m",
) -> RaceEntry:
    """Enter a runner in a race (by race id) over a distance; the entry and bib number go to the email."""
    race = next((r for r in RACES.values() if r[0] == race_id), None)
    if race is None:
        raise ToolError(f"no race {race_id!r}")
    fee = {"5k": race[3], "10k": race[4], "half": race[5]}[distance]
    if not fee:
        raise ToolError(f"{race[1]} has no {distance} race")
    born, day = dt.date.fromisoformat(date_of_birth), dt.date.fromisoformat(race[2])
    if distance == "half" and born > day.replace(year=day.year - 16):
        raise ToolError("the half marathon is for runners 16 and over")
    bib = zlib.crc32(f"{race_id}|{runner_name}|{date_of_birth}".encode()) % 9000 + 1000
    return {
        "entry_id": f"RE-{race_id[3:].split('-')[0]}-{bib}",
        "bib": bib,
        "race_date": race[2],
        "fee_eur": fee,
    }


IMPLIED_TOOLS_9: list[ToolSpec] = [
    find_dentist,
    dental_fee,
    book_dental_appointment,
    search_concerts,
    price_concert_tickets,
    book_concert_tickets,
    find_exam_centre,
    register_for_exam,
    exam_result,
    find_charity,
    donate_to_charity,
    list_charter_boats,
    quote_charter,
    find_race,
    enter_race,
]
