"""The tenth implied-steps set (``--set implied10``), with ``implied_tools_10``.

Written on 2026-11-28 by a helper who had not read the guided rules (``pes_agent/guided``) nor their
tests, and run first on main's code as it stood: the held-out measure of the rules' generality. Ids
x01-x12 (no earlier set uses x). Phrased as adopters, laundry customers, learner drivers and their
parents, piano owners, campers and skiers write to the service: a step the request never names (a
shelter's id x01, a shelter's id then a cat's id out of its list x02, pounds to kilos x04, the day ten
days after a flight x05, an instructor's id x06, the hours still to drive x07, the tuner free soonest
out of a list x08, the cheapest campsite that takes dogs out of a list x09, an email of a found total
x10, a resort's id then a price in yen to euros x11); context sentences that are no step (x01, x02,
x04, x07, x08, x10, x11); dates in prose ("Friday the 24th of July 2026", "Monday the 6th of July
2026", "Thursday the 13th of August 2026 at 4 pm", "Saturday the 8th of August 2026"); units the
schema asks differently (pounds for kilos x04, "a week" for nights x10); an enum chosen by its
description ("an apartment" x02, "wash-and-fold" x04, "in the evening" x05, "an hour and a half"
x06, "upright" x08, "a tent" x09, "the campervan" x10, children of 9 and 12 x11); values that must
stay whole ("Pádraig", "Niamh D'Arcy-Walsh", "Oisín Mac Giolla Phádraig", "3 O'Connell Street,
Ennis", "Flat 2, 41 Rathgar Road"); controls with one tool and nothing implied (x03, x12).

Expected arguments are the ones the request settles: an optional argument it does not speak to is
left out (x01's and x02's ``species``, x08's ``pitch_raise``). x10's email subject is the figure,
as the earlier sets judge a value sent on (w02's phone number, implied6's and implied8's text
messages): the subject ``308``.
"""

from __future__ import annotations

from typing import Any

from benchmarks.local_tasks import Call, Says, Task


def _t(task_id: str, query: str, calls: tuple[Call, ...], *says: Says, chained: bool = True) -> Task:
    return Task(task_id, "implied", query, calls, says, chained)


def _c(tool: str, **args: Any) -> Call:
    return Call(tool, args)


IMPLIED_10: tuple[Task, ...] = (
    _t(
        "x01",
        "We've just moved to Kilkenny and the kids won't stop asking for a dog. Which dogs does the local "
        "animal shelter have up for adoption at the moment?",
        (
            _c("find_animal_shelter", town="Kilkenny"),
            _c("list_adoptable_animals", shelter_id="AS-KIK-01"),
        ),
        Says("Bramble", "name"),
        Says("Mossy", "name"),
    ),
    _t(
        "x02",
        "Last Saturday I met a grey tabby called Pádraig at the Galway animal shelter and I haven't "
        "stopped thinking about him. Please put in an adoption application for him: Niamh D'Arcy-Walsh, "
        "niamh.darcywalsh@gmail.com. We live in an apartment and have no children.",
        (
            _c("find_animal_shelter", town="Galway"),
            _c("list_adoptable_animals", shelter_id="AS-GWY-02"),
            _c(
                "apply_to_adopt",
                animal_id="AN-40217",
                applicant_name="Niamh D'Arcy-Walsh",
                email="niamh.darcywalsh@gmail.com",
                home="flat",
            ),
        ),
        Says("ADP-40217-635", "name"),
    ),
    _t(
        "x03",
        "How much would you charge to wash and iron 6 kg of work shirts?",
        (_c("laundry_quote", kilos=6, service="wash_iron"),),
        Says(27, "number"),
    ),
    _t(
        "x04",
        "I'm over from Ohio for the summer and my bathroom scale says the laundry bag weighs 18 pounds. "
        "What would a wash-and-fold cost? No rush on it.",
        (
            _c("convert_units", value=18, from_unit="pounds", to_unit="kilograms"),
            _c("laundry_quote", kilos=8.16, service="wash_fold"),
        ),
        Says(25.2, "number"),
    ),
    _t(
        "x05",
        "I fly out on Monday the 6th of July 2026 and I'm back ten days later. Could you get my washing "
        "collected from Flat 2, 41 Rathgar Road on the day I get home, in the evening? Washed and ironed, "
        "please; it's mostly work shirts. Confirmation to c.obrien@outlook.ie.",
        (
            _c("add_days", date="2026-07-06", days=10),
            _c(
                "schedule_laundry_pickup",
                address="Flat 2, 41 Rathgar Road",
                pickup_date="2026-07-16",
                slot="evening",
                service="wash_iron",
                email="c.obrien@outlook.ie",
            ),
        ),
        Says("WSH-0716-E877", "name"),
        Says("2026-07-16", "date"),
    ),
    _t(
        "x06",
        "My daughter's instructor is Oisín Mac Giolla Phádraig. Can you get her an hour and a half with "
        "him on Thursday the 13th of August 2026 at 4 pm? Her email is saoirse.mcg@gmail.com.",
        (
            _c("find_driving_instructor", name="Oisín Mac Giolla Phádraig"),
            _c(
                "book_driving_lesson",
                instructor_id="DI-0731",
                start="2026-08-13T16:00:00",
                minutes=90,
                pupil_email="saoirse.mcg@gmail.com",
            ),
        ),
        Says("DLN-0731-0813-1600", "name"),
    ),
    _t(
        "x07",
        "Pupil number PN-204518 here. My instructor reckons most people need about 40 hours behind the "
        "wheel before they're ready for the test. How many more hours have I got to do?",
        (
            _c("driving_pupil_record", pupil_number="PN-204518"),
            _c("calculator", expression="40 - 27.5"),
        ),
        Says(12.5, "number"),
    ),
    _t(
        "x08",
        "Our old upright in the front room is badly out of tune, and my daughter has her Grade 5 exam in "
        "October. Please book whichever piano tuner in Ennis can come soonest, on their first free day. "
        "The address is 3 O'Connell Street, Ennis, and you can reach me at mairead.nichonaill@eircom.net.",
        (
            _c("find_piano_tuners", town="Ennis"),
            _c(
                "book_piano_tuning",
                tuner_id="PT-212",
                visit_date="2026-09-15",
                piano="upright",
                address="3 O'Connell Street, Ennis",
                email="mairead.nichonaill@eircom.net",
            ),
        ),
        Says("PTB-212-0915", "name"),
    ),
    _t(
        "x09",
        "There are two of us plus Bess, our border collie, and we'd like to pitch a tent somewhere in "
        "Connemara for three nights from Friday the 24th of July 2026. Book whichever site is cheapest "
        "that lets dogs in, and send the confirmation to ruairi.and.ellen@gmail.com.",
        (
            _c("search_campsites", region="Connemara", pitch="tent"),
            _c(
                "book_campsite_pitch",
                campsite_id="CS-0219",
                arrival="2026-07-24",
                nights=3,
                pitch="tent",
                people=2,
                email="ruairi.and.ellen@gmail.com",
                dogs=1,
            ),
        ),
        Says("CMP-0219-0724-3N", "name"),
        Says(48, "number"),
    ),
    _t(
        "x10",
        "There'll be four of us (two adults and two teenagers) at Camping Les Mélèzes, site CS-0412, in "
        "the campervan for a week from Saturday the 8th of August 2026. Could you work out what that "
        "comes to and email the figure to my husband at luc.berthier@free.fr? He's doing the holiday "
        "budget.",
        (
            _c(
                "quote_campsite_stay",
                campsite_id="CS-0412",
                arrival="2026-08-08",
                nights=7,
                pitch="campervan",
                people=4,
            ),
            _c("send_email", to="luc.berthier@free.fr", subject="308"),
        ),
        Says(308, "number"),
    ),
    _t(
        "x11",
        "We're taking the kids (they're 9 and 12) skiing at Niseko Grand Hirafu this winter. What would "
        "two five-day lift passes for them come to in euros?",
        (
            _c("find_ski_resort", name="Niseko Grand Hirafu"),
            _c("ski_pass_price", resort_id="SR-NGH", days=5, age_group="child", passes=2),
            _c("convert_currency", amount=58800, from_currency="JPY", to_currency="EUR"),
        ),
        Says(358.25, "number"),
    ),
    _t(
        "x12",
        "How much is a six-day adult lift pass at resort SR-VDI?",
        (_c("ski_pass_price", resort_id="SR-VDI", days=6),),
        Says(399.6, "number"),
    ),
)
