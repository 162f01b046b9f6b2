"""The seventh implied-steps set (``--set implied7``), with ``implied_tools_7``.

Written on 2026-11-28 by a helper who had not read the guided rules (``pes_agent/guided``) nor their
tests, before that session's changes landed, and run first on main's code as it stood: the held-out
measure of the rules' generality. Phrased as customer-support and BFCL users write, not as "then"
chains: an email address in one sentence and the ask in another (s05, s06, s07, s08); a question whose
answer needs a lookup the user never names (the restaurant's id for its closing time s02, the vehicle
id and a currency conversion for a price in euros s03, the account's postcode for an outage s05);
two asks in one request (s04 "book … and tell me what it costs", s08, s11 "get … and email it to …");
context sentences that are no step (s02, s05, s06, s08); dates as "March 18th, 2026" and a month as
"January 2026" for a ``YYYY-MM`` field (s07); a clock time in words (s01 "8pm"); counts in words (s01,
s09, s10); accents that must stay whole (s01 "Casa Lúcia", "São Paulo", "Zoë Müller"); an enum chosen
by its description (s03 "brake pads", s08 "four screens", s06 "afternoon"); a unit the schema asks
differently (s09 dollars for ``total_cents``); controls with one tool (s09, and s12 with nothing
implied at all).
"""

from __future__ import annotations

from typing import Any

from benchmarks.local_tasks import Call, Says, Task


def _t(task_id: str, query: str, calls: tuple[Call, ...], *says: Says, chained: bool = True) -> Task:
    return Task(task_id, "implied", query, calls, says, chained)


def _c(tool: str, **args: Any) -> Call:
    return Call(tool, args)


COPPER_POT = _c("search_restaurants", name="The Copper Pot", city="Leeds")
PRIYA = _c("find_account", email="priya.nair@fastmail.com")

IMPLIED_7: tuple[Task, ...] = (
    _t(
        "s01",
        "Could you get us a table for two at Casa Lúcia in São Paulo on March 18th, 2026 at 8pm? The "
        "booking should be under Zoë Müller, and please send the confirmation to zoe.mueller@example.com.",
        (
            _c("search_restaurants", name="Casa Lúcia", city="São Paulo"),
            _c(
                "reserve_table",
                restaurant_id="RS-2201",
                date="2026-03-18",
                time="20:00",
                party_size=2,
                guest_name="Zoë Müller",
                email="zoe.mueller@example.com",
            ),
        ),
        Says("RT-2201-0318-2", "name"),
        Says("Zoë Müller", "name"),
    ),
    _t(
        "s02",
        "I'm taking a client to dinner at The Copper Pot in Leeds. What time does the kitchen close there?",
        (COPPER_POT, _c("get_restaurant", restaurant_id="RS-1180")),
        Says("22:30", "text"),
    ),
    _t(
        "s03",
        "My car's registration is KX19 LMP. How much would new brake pads set me back in euros?",
        (
            _c("lookup_vehicle", plate="KX19 LMP"),
            _c("quote_service", vehicle_id="VH-40712", service="brakes"),
            _c("convert_currency", amount=180, from_currency="GBP", to_currency="EUR"),
        ),
        Says(209.62, "number"),
    ),
    _t(
        "s04",
        "Please book an MOT for the van with plate LR21 XWD on April 2nd, 2026 and tell me what it will "
        "cost. Confirmations go to fleet@brightway.co.uk.",
        (
            _c("lookup_vehicle", plate="LR21 XWD"),
            _c(
                "book_service",
                vehicle_id="VH-52290",
                service="mot",
                date="2026-04-02",
                contact_email="fleet@brightway.co.uk",
            ),
        ),
        Says("GS-52290-0402", "name"),
        Says(54.85, "number"),
    ),
    _t(
        "s05",
        "Hi, my internet has been dead since breakfast and the router light is red. The account email is "
        "priya.nair@fastmail.com. Is there a known outage where I live, and when will it be fixed?",
        (PRIYA, _c("check_outage", postcode="LS6 2QT")),
        Says("18:00", "text"),
    ),
    _t(
        "s06",
        "The engineer who came last week didn't fix the wiring. I'd like someone to come back on February "
        "9th, 2026, in the afternoon if possible. My login is priya.nair@fastmail.com.",
        (PRIYA, _c("schedule_technician", account_id="AC-300514", date="2026-02-09", slot="afternoon")),
        Says("TV-300514-0209A", "name"),
    ),
    _t(
        "s07",
        "I signed up with tom.okafor@gmail.com. How much was my broadband bill for January 2026, and "
        "when do I have to pay it by?",
        (
            _c("find_account", email="tom.okafor@gmail.com"),
            _c("get_invoice", account_id="AC-118203", month="2026-01"),
        ),
        Says(42.5, "number"),
        Says("2026-02-14", "date"),
    ),
    _t(
        "s08",
        "My kids keep fighting over the TV. Please move the streaming account lena.ortiz@example.net to the "
        "plan that lets four screens watch at once. What will it cost per month after that?",
        (
            _c("get_subscription", email="lena.ortiz@example.net"),
            _c("change_plan", subscription_id="SUB-77031", plan="premium"),
        ),
        Says(22.99, "number"),
    ),
    _t(
        "s09",
        "Dinner came to $86.40. Split it three ways with a 20% tip, please.",
        (_c("split_bill", total_cents=8640, people=3, tip_percent=20),),
        Says(34.56, "number"),
    ),
    _t(
        "s10",
        "What would two adults and three children pay to visit the Halden Maritime Museum on July 4th, 2026?",
        (
            _c("find_museum", name="Halden Maritime Museum"),
            _c("price_museum_visit", museum_id="MU-208", date="2026-07-04", adults=2, children=3),
        ),
        Says(47.5, "number"),
    ),
    _t(
        "s11",
        "Get the phone number of Osteria Bellini in Manchester and email it to sam.reid@example.org.",
        (
            _c("search_restaurants", name="Osteria Bellini", city="Manchester"),
            _c("get_restaurant", restaurant_id="RS-3307"),
            _c("send_email", to="sam.reid@example.org", subject="0161 496 0772"),
        ),
        Says("0161 496 0772", "text"),
    ),
    _t(
        "s12",
        "Quote an oil change for vehicle VH-40712.",
        (_c("quote_service", vehicle_id="VH-40712", service="oil_change"),),
        Says(89, "number"),
    ),
)
