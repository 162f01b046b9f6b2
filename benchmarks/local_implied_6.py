"""The sixth implied-steps set (``--set implied6``), with ``implied_tools_6``.

Written on 2026-11-28 (session 10) by a helper who had not read the guided rules (``pes_agent/guided``)
nor their tests, before that session's changes landed, and run first on main's code as it stood: the
held-out measure of the rules' generality. Phrased as NESTFUL- and Glaive-style users write:
"Then, … After that, … Finally, …" chains (p01, p11); a later step naming an earlier output ("that
sailing's details", "the unlock code", "its pickup PIN", "the encrypted PIN": p01, p07, p10); ids the
user never gives, found from a name (p02, p03, p04, p06, p07); questions (p02, p04, p06, p09, p12);
context sentences (p06, p09); dates in words for a date field (p02 "May 14th, 2026", p09 "the 23rd of
May 2026"); a clock time in words (p01 "after 10 am"); a unit the schema asks differently (p12 "1.5
hours" for minutes); optional arguments said by name (vehicle, pot, bike type, departure time);
near-duplicate tools (search/get a sailing or a plant; price or book a sailing); two independent asks
(p12, ``chained=False``); controls with one tool and nothing implied (p05, p08).
"""

from __future__ import annotations

from benchmarks.local_tasks import Call, Says, Task


def _t(task_id: str, query: str, calls: tuple[Call, ...], *says: Says, chained: bool = True) -> Task:
    return Task(task_id, "implied", query, calls, says, chained)


HARWICK, STENBY = Call("find_port", {"name": "Harwick"}), Call("find_port", {"name": "Stenby"})

IMPLIED_6: tuple[Task, ...] = (
    _t(
        "p01",
        "Find the ferry ports Harwick and Stenby. Then, search for the first sailing from Harwick to "
        "Stenby on 2026-05-14 leaving after 10 am. After that, get that sailing's details to see if it is "
        "on time. Finally, book it for 2 passengers with a car.",
        (
            HARWICK,
            STENBY,
            Call(
                "search_sailings",
                {"origin": "FP-101", "destination": "FP-204", "date": "2026-05-14", "after": "10:00"},
            ),
            Call("get_sailing", {"sailing_id": "SL-5523"}),
            Call("book_ferry", {"sailing_id": "SL-5523", "passengers": 2, "vehicle": "car"}),
        ),
        Says("on time", "name"),
        Says("FB-5523-2C", "name"),
        Says(79, "number"),
    ),
    _t(
        "p02",
        "How much would the first ferry from Harwick to Stenby on May 14th, 2026 cost for 3 passengers "
        "and a bicycle?",
        (
            HARWICK,
            STENBY,
            Call("search_sailings", {"origin": "FP-101", "destination": "FP-204", "date": "2026-05-14"}),
            Call("calculate_ferry_fare", {"sailing_id": "SL-5521", "passengers": 3, "vehicle": "bicycle"}),
        ),
        Says(61.5, "number"),
    ),
    _t(
        "p03",
        "Order 4 lavender plants in medium pots, then text the order id to 555-0101.",
        (
            Call("search_plants", {"name": "lavender"}),
            Call("order_plants", {"plant_id": "PL-1188", "quantity": 4, "pot": "medium"}),
            Call("send_sms", {"phone": "555-0101", "message": "PO-1188-4M"}),
        ),
        Says("PO-1188-4M", "name"),
    ),
    _t(
        "p04",
        "How often does a monstera need watering?",
        (Call("search_plants", {"name": "monstera"}), Call("get_plant", {"plant_id": "PL-3307"})),
        Says(7, "number"),
    ),
    _t(
        "p05",
        "Encrypt the text 'gate 7 at noon' with key 'k9'.",
        (Call("encrypt_text", {"text": "gate 7 at noon", "key": "k9"}),),
        Says("q93d h 93 mynx", "text"),
    ),
    _t(
        "p06",
        "I'm at Harbour Square with a friend. How many e-bikes are left at the dock there?",
        (Call("find_dock", {"near": "Harbour Square"}), Call("get_dock_status", {"dock_id": "BD-042"})),
        Says(2, "number"),
    ),
    _t(
        "p07",
        "Unlock an electric bike at the Museum Quarter dock for rider R-20817 and send the unlock code to "
        "555-0199.",
        (
            Call("find_dock", {"near": "Museum Quarter"}),
            Call("unlock_bike", {"dock_id": "BD-017", "rider_id": "R-20817", "bike_type": "electric"}),
            Call("send_sms", {"phone": "555-0199", "message": "5736"}),
        ),
        Says(5736, "number"),
    ),
    _t(
        "p08",
        "Calculate the cost of a 40-minute ride on an electric bike.",
        (Call("calculate_ride_cost", {"minutes": 40, "bike_type": "electric"}),),
        Says(13, "number"),
    ),
    _t(
        "p09",
        "My parcel PX-448120 is in a locker and I'm away until the weekend. Can you extend its hold to "
        "the 23rd of May 2026, and what's the fee?",
        (Call("extend_hold", {"parcel_code": "PX-448120", "until": "2026-05-23"}),),
        Says(4.5, "number"),
    ),
    _t(
        "p10",
        "Look up where parcel PX-448120 can be collected, encrypt its pickup PIN with key 'k9', and text "
        "the encrypted PIN to 555-0101.",
        (
            Call("locker_pickup", {"parcel_code": "PX-448120"}),
            Call("encrypt_text", {"text": "739104", "key": "k9"}),
            Call("send_sms", {"phone": "555-0101", "message": "h2j0a3"}),
        ),
        Says("Harbour Square", "name"),
    ),
    _t(
        "p11",
        "Look up the olive tree in the nursery catalogue. Then, get its care sheet. Finally, order 2 of "
        "them in large pots.",
        (
            Call("search_plants", {"name": "olive tree"}),
            Call("get_plant", {"plant_id": "PL-4410"}),
            Call("order_plants", {"plant_id": "PL-4410", "quantity": 2, "pot": "large"}),
        ),
        Says("full sun", "name"),
        Says(146, "number"),
    ),
    _t(
        "p12",
        "What's the fare for 2 passengers and a van on sailing SL-5527, and what would a 1.5-hour classic "
        "bike ride cost?",
        (
            Call("calculate_ferry_fare", {"sailing_id": "SL-5527", "passengers": 2, "vehicle": "van"}),
            Call("calculate_ride_cost", {"minutes": 90, "bike_type": "classic"}),
        ),
        Says(102, "number"),
        Says(14.5, "number"),
        chained=False,
    ),
)
