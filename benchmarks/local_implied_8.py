"""The eighth implied-steps set (``--set implied8``), with ``implied_tools_8``.

Written on 2026-11-28 by a helper who had not read the guided rules (``pes_agent/guided``) nor their
tests, and run first on main's code as it stood: the held-out measure of the rules' generality. Ids
v01-v12 (the t ids are the tuned set's text tasks). Phrased as customers write to a booking or ordering
service: a step the request never names (two station codes and the cheapest of a list of trains v01, a
train's platform v02, a word count v03, a currency conversion the question's wording asks for v04 and
v06, a babysitter's id v07, her rate times the hours v08, a storage site's id v09 and v10); two asks in
one request (v02 "which platform … text her", v04 "order … what does that come to in pounds", v05
"order … what do I owe", v08 "what does he charge … what would that come to"); context sentences that
are no step (v02, v03, v06, v07, v09, v10); dates in prose ("the 3rd of May 2026", "Saturday 16 May
2026", "Friday the 12th of June 2026", "the 1st of July 2026") and a clock time in words ("9 in the
morning", "7pm") for a ``date-time`` field; units the schema asks differently (kilograms for grams
v05 and v06, hours for minutes v07, "a year" for months v09); an enum chosen by its description
("Brazilian Portuguese" v03, "three-bedroom house" v09, "one-bedroom flat" v10, "lemon" v05); values
that must stay whole (v01 "Köln Hbf", "Margarethe Schäfer"; v02 "IC 718"; v03 a quoted sentence; v05
"Joyeux anniversaire, Léa !"; v07 "Ana-Lucía Gómez"; v09 "Bury St Edmunds"); controls with one tool
and nothing implied (v11, v12).
"""

from __future__ import annotations

from typing import Any

from benchmarks.local_tasks import Call, Says, Task


def _t(task_id: str, query: str, calls: tuple[Call, ...], *says: Says, chained: bool = True) -> Task:
    return Task(task_id, "implied", query, calls, says, chained)


def _c(tool: str, **args: Any) -> Call:
    return Call(tool, args)


LANDLORD_NOTE = (
    "The boiler in flat 4B has been leaking since Monday. Please send a plumber before Friday and let "
    "me know the cost in advance."
)

IMPLIED_8: tuple[Task, ...] = (
    _t(
        "v01",
        "I'm travelling from Köln Hbf to Bruxelles-Midi on the 3rd of May 2026 and can't leave before 9 "
        "in the morning. Please reserve me a seat on the cheapest train after that. It's for Margarethe "
        "Schäfer, and the ticket should go to m.schaefer@posteo.de.",
        (
            _c("find_rail_station", name="Köln Hbf"),
            _c("find_rail_station", name="Bruxelles-Midi"),
            _c("search_trains", origin="DEKOL", destination="BEBMI", depart_after="2026-05-03T09:00:00"),
            _c(
                "reserve_seat",
                journey_id="JR-20260503-ICE18",
                passenger_name="Margarethe Schäfer",
                email="m.schaefer@posteo.de",
            ),
        ),
        Says("SR-0503-42S", "name"),
        Says(39.9, "number"),
    ),
    _t(
        "v02",
        "Which platform does the IC 718 leave from? My daughter is coming to see me off, so text her the "
        "platform on 555-0148.",
        (_c("get_train", train_id="IC 718"), _c("send_sms", phone="555-0148", message="43")),
        Says(43, "number"),
    ),
    _t(
        "v03",
        "I rent a flat in Curitiba and want this note to my landlord done properly by a translator. How "
        f"much would it be to have it put into Brazilian Portuguese? '{LANDLORD_NOTE}'",
        (
            _c("word_count", text=LANDLORD_NOTE),
            _c("quote_translation", word_count=24, target_language="pt-BR"),
        ),
        Says(2.88, "number"),
    ),
    _t(
        "v04",
        "We're happy with quote TQ-420-DE-E for the German contract. Please place the order and send the "
        "invoice to legal@hartmann-bau.de. What does that come to in pounds?",
        (
            _c("order_translation", quote_id="TQ-420-DE-E", email="legal@hartmann-bau.de"),
            _c("convert_currency", amount=75.6, from_currency="EUR", to_currency="GBP"),
        ),
        Says(64.92, "number"),
    ),
    _t(
        "v05",
        "Could I order a 1.5 kg lemon cake to pick up on Saturday 16 May 2026? It should say 'Joyeux "
        "anniversaire, Léa !' on top. Confirmation to camille.roux@orange.fr please, and what do I owe you?",
        (
            _c(
                "order_cake",
                flavour="lemon",
                weight_g=1500,
                pickup_date="2026-05-16",
                email="camille.roux@orange.fr",
                inscription="Joyeux anniversaire, Léa !",
            ),
        ),
        Says("CK-0516-1500L", "name"),
        Says(36, "number"),
    ),
    _t(
        "v06",
        "Before I commit to anything: what would a 2 kg carrot cake cost me in US dollars?",
        (
            _c("price_cake", flavour="carrot", weight_g=2000),
            _c("convert_currency", amount=52, from_currency="GBP", to_currency="USD"),
        ),
        Says(65.82, "number"),
    ),
    _t(
        "v07",
        "Ana-Lucía Gómez looked after our two boys in April and they adored her. Could we have her again on "
        "Friday the 12th of June 2026 from 7pm, for three and a half hours? Both boys, of course. Please "
        "confirm to dan.whitfield@gmail.com.",
        (
            _c("find_babysitter", name="Ana-Lucía Gómez"),
            _c(
                "book_babysitter",
                sitter_id="BS-0417",
                start="2026-06-12T19:00:00",
                duration_minutes=210,
                parent_email="dan.whitfield@gmail.com",
                children=2,
            ),
        ),
        Says("BB-0417-0612", "name"),
        Says(56, "number"),
    ),
    _t(
        "v08",
        "How much does Tom Beck charge an hour? We'd need him for four hours, so what would that come to "
        "altogether?",
        (_c("find_babysitter", name="Tom Beck"), _c("calculator", expression="12.5 * 4")),
        Says(12.5, "number"),
        Says(50, "number"),
    ),
    _t(
        "v09",
        "We're clearing out my late mum's three-bedroom house in Bury St Edmunds. What would it cost to "
        "keep everything at your site there for a year?",
        (
            _c("find_storage_site", town="Bury St Edmunds"),
            _c("quote_storage_unit", site_id="SS-31", size="large", months=12),
        ),
        Says(1501.2, "number"),
    ),
    _t(
        "v10",
        "I'm moving to Llandudno this summer and need somewhere to keep a one-bedroom flat's worth of "
        "furniture for six months, starting the 1st of July 2026. Can you book me a unit at your site "
        "there? I'm r.okonkwo@outlook.com.",
        (
            _c("find_storage_site", town="Llandudno"),
            _c(
                "rent_storage_unit",
                site_id="SS-07",
                size="medium",
                start_date="2026-07-01",
                months=6,
                email="r.okonkwo@outlook.com",
            ),
        ),
        Says("ST-07-0701-M6", "name"),
    ),
    _t(
        "v11",
        "What's the fee for renewing an adult passport on the fast-track service?",
        (_c("passport_fee", application="adult_renewal", service="fast_track"),),
        Says(178, "number"),
    ),
    _t(
        "v12",
        "Can you check where passport application PEX204518733 has got to?",
        (_c("application_status", reference="PEX204518733"),),
        Says("printed", "name"),
    ),
)
