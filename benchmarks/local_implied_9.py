"""The ninth implied-steps set (``--set implied9``), with ``implied_tools_9``.

Written on 2026-11-28 by a helper who had not read the guided rules (``pes_agent/guided``) nor their
tests, and run first on main's code as it stood: the held-out measure of the rules' generality. Ids
w01-w12 (no earlier set uses w). Phrased as patients, fans, candidates, donors, sailors and runners
write to the service: a step the request never names (a dentist's id w01, her practice's phone then an
email of it w02, the concert in one city out of a tour's list w03, a conversion of a found price w04,
an exam centre's id w05, a charity's id w07, the cheapest boat that sleeps six out of a list w08, a
race's id w09, a found entry fee times twelve w10, the days between two found dates w12); context
sentences that are no step (w01, w03, w08, w10, w12); dates in prose ("Tuesday the 9th of June 2026",
"Saturday the 20th of June 2026", "the 2nd of February 2004", "14 March 1991") and a clock time in words
("half past two in the afternoon") for a ``date-time`` field; units the schema asks differently (euros
for cents w07, "a week" for days w08); an enum chosen by its description ("check-up" w01, "standing"
w03, "balcony" w04, "upper-intermediate" w05, "every month" w07, "with a skipper" w08, "take a tooth
out" w11); values that must stay whole ("Siobhán Ní Bhriain", "Zofia Wójcik-Nowak", "Łódź", "Aoife
O'Sullivan-Byrne", "Rosalía Vega", "08-640 21 77"); controls with one tool and nothing implied (w06,
w11).
"""

from __future__ import annotations

from typing import Any

from benchmarks.local_tasks import Call, Says, Task


def _t(task_id: str, query: str, calls: tuple[Call, ...], *says: Says, chained: bool = True) -> Task:
    return Task(task_id, "implied", query, calls, says, chained)


def _c(tool: str, **args: Any) -> Call:
    return Call(tool, args)


IMPLIED_9: tuple[Task, ...] = (
    _t(
        "w01",
        "Siobhán Ní Bhriain did my crown last spring and I'd like her to give me a check-up. Is there any "
        "chance of Tuesday the 9th of June 2026 at half past two in the afternoon? Please send the "
        "confirmation to p.kavanagh@eircom.net.",
        (
            _c("find_dentist", name="Siobhán Ní Bhriain"),
            _c(
                "book_dental_appointment",
                dentist_id="DN-0316",
                start="2026-06-09T14:30:00",
                treatment="checkup",
                patient_email="p.kavanagh@eircom.net",
            ),
        ),
        Says("DA-0316-0609-1430", "name"),
    ),
    _t(
        "w02",
        "I never have the number for Jonas Lindqvist's dental surgery when I need it. Could you look it "
        "up and email it to me at karin.sjoberg@bahnhof.se?",
        (
            _c("find_dentist", name="Jonas Lindqvist"),
            _c("send_email", to="karin.sjoberg@bahnhof.se", subject="08-640 21 77"),
        ),
        Says("08-640 21 77", "name"),
    ),
    _t(
        "w03",
        "Rosalía Vega is touring Portugal and Spain in July. Grab me two standing tickets for her Porto "
        "show, and have them sent to joao.m@sapo.pt.",
        (
            _c("search_concerts", artist="Rosalía Vega"),
            _c(
                "book_concert_tickets",
                concert_id="CN-0707-OPO",
                section="standing",
                quantity=2,
                email="joao.m@sapo.pt",
            ),
        ),
        Says("BK-OPO-0707-S2", "name"),
        Says(90, "number"),
    ),
    _t(
        "w04",
        "I've got concert CN-0919-DUB open in another tab. Four seats up in the balcony: roughly what is "
        "that in sterling?",
        (
            _c("price_concert_tickets", concert_id="CN-0919-DUB", section="balcony", quantity=4),
            _c("convert_currency", amount=142.2, from_currency="EUR", to_currency="GBP"),
        ),
        Says(122.11, "number"),
    ),
    _t(
        "w05",
        "Please register me for the upper-intermediate English exam at your Łódź centre on Saturday the "
        "20th of June 2026. I'm Zofia Wójcik-Nowak, born on the 2nd of February 2004, and my email is "
        "zofia.wojcik@wp.pl.",
        (
            _c("find_exam_centre", city="Łódź"),
            _c(
                "register_for_exam",
                centre_id="EC-PL-014",
                exam="b2_first",
                exam_date="2026-06-20",
                candidate_name="Zofia Wójcik-Nowak",
                date_of_birth="2004-02-02",
                email="zofia.wojcik@wp.pl",
            ),
        ),
        Says("0620-53258", "name"),
    ),
    _t(
        "w06",
        "What score did candidate 0412-88317 get?",
        (_c("exam_result", candidate_number="0412-88317"),),
        Says(193, "number"),
    ),
    _t(
        "w07",
        "I'd like to give €15 every month to the Red Squirrel Survival Trust. Receipts to "
        "anna.berg@telia.se, please.",
        (
            _c("find_charity", name="Red Squirrel Survival Trust"),
            _c(
                "donate_to_charity",
                charity_id="CH-1137486",
                amount_cents=1500,
                donor_email="anna.berg@telia.se",
                frequency="monthly",
            ),
        ),
        Says("DON-1137-1500M", "name"),
    ),
    _t(
        "w08",
        "There are six of us and we fancy sailing out of Kotor for a week in September. Find the cheapest "
        "boat that sleeps everyone, and tell me what a week on it would cost with a skipper.",
        (
            _c("list_charter_boats", harbour="Kotor"),
            _c("quote_charter", boat_id="CB-KOT-03", days=7, crew="skippered"),
        ),
        Says(2908.5, "number"),
    ),
    _t(
        "w09",
        "Sign me up for the 10k at the Bray Seafront Run, please: Aoife O'Sullivan-Byrne, date of birth 14 "
        "March 1991, aoife.osb@gmail.com.",
        (
            _c("find_race", name="Bray Seafront Run"),
            _c(
                "enter_race",
                race_id="RR-BRAY-26",
                distance="10k",
                runner_name="Aoife O'Sullivan-Byrne",
                date_of_birth="1991-03-14",
                email="aoife.osb@gmail.com",
            ),
        ),
        Says("RE-BRAY-6120", "name"),
    ),
    _t(
        "w10",
        "Our running club has twelve members doing the half marathon at the Bray Seafront Run this year. "
        "The club pays the entries, so how much should the treasurer set aside?",
        (_c("find_race", name="Bray Seafront Run"), _c("calculator", expression="38 * 12")),
        Says(456, "number"),
    ),
    _t(
        "w11",
        "How much do you charge to take a tooth out?",
        (_c("dental_fee", treatment="extraction"),),
        Says(120, "number"),
    ),
    _t(
        "w12",
        "The results for candidate 0509-40276 finally came through. How many days did we have to wait "
        "after the exam?",
        (
            _c("exam_result", candidate_number="0509-40276"),
            _c("days_between", start="2026-05-09", end="2026-06-02"),
        ),
        Says(24, "number"),
    ),
)
