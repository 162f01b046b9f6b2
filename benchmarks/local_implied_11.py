"""The eleventh implied-steps set (``--set implied11``), with ``implied_tools_11``.

Written on 2026-11-28 by a helper who had not read the guided rules (``pes_agent/guided``) nor their
tests' reasoning, and run first on main's code as it stood (df9d3e6): the held-out measure of the
rules' generality. Ids y01-y12 (no earlier set uses y). Phrased as cyclists, pottery students, wedding
guests, beekeepers, dog owners and book clubs write to a service: a step the request never names (a
workshop's id y01, a price sent on by email y02, a studio's id then the Thursday course out of its list
y03, a course's price out of a list then euros to dollars y04, pounds sterling to euros y05, the day two
weeks before a wedding y06, the cheapest smoker in stock out of a list y07, a groomer's id and pounds to
kilos y09, a groomer's phone number sent on by text y10, a branch's id then the cheapest room with a
projector out of a list y11); context sentences that are no step (y01, y02, y03, y05, y07, y09, y10,
y11); dates in prose ("Tuesday the 9th of June 2026", "Saturday the 19th of September 2026", "Friday the
16th of October 2026", "Wednesday the 14th of October 2026", "Saturday the 7th of November 2026"); clock
times in words ("11 in the morning", "from 6 to 8 in the evening", "10 am for three hours"); units and
currencies the schema asks differently (pounds for kilos y09, sterling quoted to a euro payer y05, euros
to a visitor from Boston y04); an enum chosen by its description ("a full service" beside slipping gears
y01, "a buckle in it" y02, "take them up" y05, "taking in at the sides" y06, "my e-bike" y02); values
that must stay whole ("Zoë Ó Murchú", "Siobhán Nic Aodha-Brennan", "Biscuit", "065 684 2290");
controls with one tool and nothing implied (y08, y12).

Expected arguments are the ones the request settles: an optional argument a request speaks to only
as a choice among listed items is left out (y03's ``level``, y11's ``people``), as implied10 left out
``species``. A value sent on is the message or subject itself, as the earlier sets judge it (x10's
subject ``308``, w02's phone number): y02's subject ``45``, y10's message ``065 684 2290``.
"""

from __future__ import annotations

from typing import Any

from benchmarks.local_tasks import Call, Says, Task


def _t(task_id: str, query: str, calls: tuple[Call, ...], *says: Says, chained: bool = True) -> Task:
    return Task(task_id, "implied", query, calls, says, chained)


def _c(tool: str, **args: Any) -> Call:
    return Call(tool, args)


IMPLIED_11: tuple[Task, ...] = (
    _t(
        "y01",
        "The gears on my commuter bike have been slipping for weeks and the brakes squeal at every "
        "junction, so I think it's due a proper going-over. Please book it in for a full service at the "
        "bike workshop in Galway. I can drop it off on Tuesday the 9th of June 2026; the confirmation can "
        "go to aoife.nifhlatharta@gmail.com.",
        (
            _c("find_bike_workshop", town="Galway"),
            _c(
                "book_bike_repair",
                workshop_id="BW-GWY-01",
                job="full_service",
                drop_off="2026-06-09",
                email="aoife.nifhlatharta@gmail.com",
            ),
        ),
        Says("BRB-GWY-0609-FS", "name"),
    ),
    _t(
        "y02",
        "I clipped a kerb on the way home and now the back wheel of my e-bike has a buckle in it. How much "
        "would Rothar na Gaillimhe (workshop BW-GWY-01) charge to true it? My dad is insisting on paying, "
        "so please email the price to him at declan.kavanagh@eircom.net.",
        (
            _c("bike_repair_quote", workshop_id="BW-GWY-01", job="wheel_true", bike_type="e_bike"),
            _c("send_email", to="declan.kavanagh@eircom.net", subject="45"),
        ),
        Says(45, "number"),
    ),
    _t(
        "y03",
        "My partner gave me a pottery course for my 40th and I've finally got round to using it. I've never "
        "touched clay in my life, so it'll have to be the beginners' wheel-throwing course at the pottery "
        "studio in Dingle, the one on Thursday evenings, since I work late on Tuesdays. Please enrol me: "
        "Zoë Ó Murchú, zoe.omurchu@gmail.com.",
        (
            _c("find_pottery_studio", town="Dingle"),
            _c("list_pottery_courses", studio_id="PS-DGL-01"),
            _c(
                "enrol_in_pottery_course",
                course_id="PC-2104",
                student_name="Zoë Ó Murchú",
                email="zoe.omurchu@gmail.com",
            ),
        ),
        Says("ENR-2104-742", "name"),
        Says("2027-01-14", "date"),
    ),
    _t(
        "y04",
        "I'm over from Boston for a few weeks in the new year and I'd love to do the Raku weekend at the "
        "Kinsale Clay Studio (studio PS-KNS-02). What does it cost in US dollars?",
        (
            _c("list_pottery_courses", studio_id="PS-KNS-02"),
            _c("convert_currency", amount=240, from_currency="EUR", to_currency="USD"),
        ),
        Says(260.87, "number"),
    ),
    _t(
        "y05",
        "I'm over from Cork for my brother's wedding in London and the suit trousers I bought turn out to "
        "be far too long. What would you charge to take them up? Give me the figure in euros, please, as "
        "that's what my card is in.",
        (
            _c("alteration_quote", garment="trousers", alteration="hem"),
            _c("convert_currency", amount=14, from_currency="GBP", to_currency="EUR"),
        ),
        Says(16.3, "number"),
    ),
    _t(
        "y06",
        "My dress for my cousin's wedding needs taking in at the sides. The wedding is on Saturday the 19th "
        "of September 2026, and I'd like the fitting exactly two weeks before that, at 11 in the morning. "
        "The name is Siobhán Nic Aodha-Brennan and my email is siobhan.nicaodha@gmail.com.",
        (
            _c("add_days", date="2026-09-19", days=-14),
            _c(
                "book_alteration_fitting",
                garment="dress",
                alteration="take_in",
                fitting="2026-09-05T11:00:00",
                customer_name="Siobhán Nic Aodha-Brennan",
                email="siobhan.nicaodha@gmail.com",
            ),
        ),
        Says("ALT-0905-1141", "name"),
        Says("2026-09-05", "date"),
    ),
    _t(
        "y07",
        "Our old smoker finally rusted through halfway through inspecting the hives last weekend. Could you "
        "order two of the cheapest smoker you have in stock, one for me and one for my neighbour who has "
        "just started keeping bees? The order confirmation to bees@glenariffhoney.ie, please.",
        (
            _c("search_beekeeping_supplies", category="smokers"),
            _c("order_beekeeping_supplies", sku="BK-3027", quantity=2, email="bees@glenariffhoney.ie"),
        ),
        Says("HIVE-3027-02S", "name"),
        Says(66.3, "number"),
    ),
    _t(
        "y08",
        "Please send me 3 packs of BK-4410 by next-day delivery, and the confirmation to "
        "ruth.mcilroy@btinternet.com.",
        (
            _c(
                "order_beekeeping_supplies",
                sku="BK-4410",
                quantity=3,
                email="ruth.mcilroy@btinternet.com",
                delivery="next_day",
            ),
        ),
        Says("HIVE-4410-03N", "name"),
        Says(70.5, "number"),
    ),
    _t(
        "y09",
        "Biscuit, our cocker spaniel, rolled in something unspeakable on Banna Strand and badly needs a "
        "full groom. Could you book her in with the dog groomer in Tralee on Friday the 16th of October "
        "2026? The vet weighed her last week at 31 pounds. My email is m.fitzgerald-oneill@gmail.com.",
        (
            _c("find_dog_groomer", town="Tralee"),
            _c("convert_units", value=31, from_unit="pounds", to_unit="kilograms"),
            _c(
                "book_dog_grooming",
                groomer_id="DG-0412",
                dog_name="Biscuit",
                weight_kg=14.06,
                service="full_groom",
                day="2026-10-16",
                email="m.fitzgerald-oneill@gmail.com",
            ),
        ),
        Says("GRM-0412-1016-BIS", "name"),
        Says(60, "number"),
    ),
    _t(
        "y10",
        "My mum's new puppy needs his nails clipped and she's asked me for the number of the dog groomer in "
        "Ennis. She doesn't do email, so could you text it to her on 555-0186?",
        (
            _c("find_dog_groomer", town="Ennis"),
            _c("send_sms", phone="555-0186", message="065 684 2290"),
        ),
        Says("065 684 2290", "name"),
    ),
    _t(
        "y11",
        "I run a small book club (nine of us these days, since Máire's sister joined) and we'd like to meet "
        "at the library in Ballymun on Wednesday the 14th of October 2026, from 6 to 8 in the evening. "
        "We'll be watching a short film adaptation, so it has to be a room with a projector; if more than "
        "one has one, take the cheapest. Please book it and send the confirmation to "
        "bookclub.ballymun@gmail.com.",
        (
            _c("find_library_branch", area="Ballymun"),
            _c("list_free_library_rooms", branch_id="LB-BMN", date="2026-10-14"),
            _c(
                "book_library_room",
                room_id="LR-1108",
                date="2026-10-14",
                start="18:00",
                hours=2,
                email="bookclub.ballymun@gmail.com",
            ),
        ),
        Says("ROOM-1108-1014-18", "name"),
        Says(30, "number"),
    ),
    _t(
        "y12",
        "Could you book room LR-2204 for Saturday the 7th of November 2026, 10 am for three hours? It's for "
        "our Irish conversation circle. Confirmation to ciorcal.comhra@gmail.com.",
        (
            _c(
                "book_library_room",
                room_id="LR-2204",
                date="2026-11-07",
                start="10:00",
                hours=3,
                email="ciorcal.comhra@gmail.com",
            ),
        ),
        Says("ROOM-2204-1107-10", "name"),
    ),
)
