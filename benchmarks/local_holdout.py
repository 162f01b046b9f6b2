"""Tasks held out from tuning: the local-model benchmark's other sets (``--set holdout|holdout2``).

``HOLDOUT`` was written on 2026-11-26, before it was ever run, after the operator narrowing of
guided steps (``pes_agent.guided.arithmetic``) had been shaped on the failures of the first set
(``local_tasks.TASKS``): same tools and judging, phrasings the first set does not have ("times",
"plus", "take ... away from", "the sum", "what is left", "divide that by"). Its first run gave 14/16;
the two phrasings it failed on ("take 15 away from 40", "subtract 100 from the sum") were then
fixed, so it is no longer held out. ``HOLDOUT_2`` was written after that fix and before its first
run (10/12); its two failures ("multiply 11 by 11", "take 2.5 away from it" planned as a price
lookup) were then fixed too. ``HOLDOUT_3`` was written after those fixes, before its first run
(10/12: "divide the remainder by 5" read as two operations, "convert it to upper case" given the
country instead of the capital); after fixing those, ``HOLDOUT_4``, before its first run (12/12);
``HOLDOUT_5``, ``HOLDOUT_6`` and ``HOLDOUT_7`` in session 6 (see there).
Do not tune on a set and keep calling it held out: report its failures, write a new set.
"""

from __future__ import annotations

from typing import Any

from benchmarks.local_tasks import Call, Domain, Says, Task


def _t(
    task_id: str, domain: Domain, query: str, calls: tuple[Call, ...], *says: Says, chained: bool = True
) -> Task:
    return Task(task_id, domain, query, calls, says, chained)


def _c(tool: str, **args: Any) -> Call:
    return Call(tool, args)


def _calc(expression: str) -> Call:
    return _c("calculator", expression=expression)


def _n(value: float) -> Says:
    return Says(value, "number")


HOLDOUT: tuple[Task, ...] = (
    _t(
        "h01",
        "text",
        "What is 9 times 6, then count the words in 'nine times six'.",
        (_calc("9 * 6"), _c("word_count", text="nine times six")),
        _n(54),
        _n(3),
        chained=False,
    ),
    _t(
        "h02",
        "units",
        "Convert 10 miles to kilometers, then divide that by 4.",
        (_c("convert_units", value=10, from_unit="miles", to_unit="kilometers"), _calc("16.09 / 4")),
        _n(4.0225),
    ),
    _t(
        "h03",
        "lookup",
        "Look up the population of France in millions, then subtract 8 from it.",
        (_c("country_facts", country="France"), _calc("68.2 - 8")),
        _n(60.2),
    ),
    _t(
        "h04",
        "dates",
        "Count the days between 2025-05-01 and 2025-06-10, then multiply that number by 3.",
        (_c("days_between", start="2025-05-01", end="2025-06-10"), _calc("40 * 3")),
        _n(120),
    ),
    _t(
        "h05",
        "text",
        "Subtract 19 from 100, then divide the result by 9.",
        (_calc("100 - 19"), _calc("81 / 9")),
        _n(9),
    ),
    _t(
        "h06",
        "units",
        "Convert 50 kilograms to pounds, then add 12 to the result.",
        (_c("convert_units", value=50, from_unit="kilograms", to_unit="pounds"), _calc("110.23 + 12")),
        _n(122.23),
    ),
    _t(
        "h07",
        "lookup",
        "Get the price of a mug, then multiply it by 6.",
        (_c("product_price", product="mug"), _calc("8.25 * 6")),
        _n(49.5),
    ),
    _t(
        "h08",
        "dates",
        "Multiply 3 by 5, then add that many days to 2025-07-04.",
        (_calc("3 * 5"), _c("add_days", date="2025-07-04", days=15)),
        Says("2025-07-19", "date"),
    ),
    _t(
        "h09",
        "text",
        "Add 250 and 175, then subtract 100 from the sum.",
        (_calc("250 + 175"), _calc("425 - 100")),
        _n(325),
    ),
    _t(
        "h10",
        "units",
        "Convert 30 celsius to fahrenheit, then subtract 32 from the result, then divide that by 2.",
        (
            _c("convert_units", value=30, from_unit="celsius", to_unit="fahrenheit"),
            _calc("86 - 32"),
            _calc("54 / 2"),
        ),
        _n(27),
    ),
    _t(
        "h11",
        "lookup",
        "Look up the population of Norway in millions, then multiply it by 1000.",
        (_c("country_facts", country="Norway"), _calc("5.5 * 1000")),
        _n(5500),
    ),
    _t(
        "h12",
        "text",
        "Take 15 away from 40, then multiply what is left by 3.",
        (_calc("40 - 15"), _calc("25 * 3")),
        _n(75),
    ),
    _t(
        "h13",
        "dates",
        "Find the weekday of 2025-08-15, then convert that weekday to upper case.",
        (_c("weekday", date="2025-08-15"), _c("transform_text", text="Friday", mode="upper")),
        Says("FRIDAY", "text"),
    ),
    _t(
        "h14",
        "lookup",
        "Look up the price of a backpack, then look up the price of a pen, then add the two prices.",
        (_c("product_price", product="backpack"), _c("product_price", product="pen"), _calc("45 + 1.2")),
        _n(46.2),
    ),
    _t(
        "h15",
        "text",
        "What is 7 plus 8, then multiply that by 10.",
        (_calc("7 + 8"), _calc("15 * 10")),
        _n(150),
    ),
    _t(
        "h16",
        "units",
        "Multiply 4 by 25, then convert the result from meters to feet.",
        (_calc("4 * 25"), _c("convert_units", value=100, from_unit="meters", to_unit="feet")),
        _n(328.08),
    ),
)
HOLDOUT_2: tuple[Task, ...] = (
    _t(
        "g01",
        "text",
        "Find the product of 6 and 9, then count the words in 'fifty four'.",
        (_calc("6 * 9"), _c("word_count", text="fifty four")),
        _n(54),
        _n(2),
        chained=False,
    ),
    _t(
        "g02",
        "units",
        "Convert 8 kilometers to meters, then subtract 500 from that distance.",
        (_c("convert_units", value=8, from_unit="kilometers", to_unit="meters"), _calc("8000 - 500")),
        _n(7500),
    ),
    _t(
        "g03",
        "lookup",
        "Look up the population of Germany in millions, then divide it by 2.",
        (_c("country_facts", country="Germany"), _calc("84.5 / 2")),
        _n(42.25),
    ),
    _t(
        "g04",
        "dates",
        "Add 20 days to 2025-03-10, then tell the weekday of that date.",
        (_c("add_days", date="2025-03-10", days=20), _c("weekday", date="2025-03-30")),
        Says("Sunday", "name"),
    ),
    _t(
        "g05",
        "text",
        "What is 48 divided by 6, then multiply the answer by 7.",
        (_calc("48 / 6"), _calc("8 * 7")),
        _n(56),
    ),
    _t(
        "g06",
        "units",
        "Convert 212 fahrenheit to celsius, then multiply that by 3.",
        (_c("convert_units", value=212, from_unit="fahrenheit", to_unit="celsius"), _calc("100 * 3")),
        _n(300),
    ),
    _t(
        "g07",
        "lookup",
        "Get the price of a lamp, then take 2.5 away from it.",
        (_c("product_price", product="lamp"), _calc("32.5 - 2.5")),
        _n(30),
    ),
    _t(
        "g08",
        "dates",
        "Count the days between 2025-01-01 and 2025-03-01, then subtract 9 from that number.",
        (_c("days_between", start="2025-01-01", end="2025-03-01"), _calc("59 - 9")),
        _n(50),
    ),
    _t(
        "g09",
        "text",
        "Compute the sum of 33 and 67, then divide it by 4.",
        (_calc("33 + 67"), _calc("100 / 4")),
        _n(25),
    ),
    _t(
        "g10",
        "units",
        "Convert 2 miles to feet, then add 100 to the result.",
        (_c("convert_units", value=2, from_unit="miles", to_unit="feet"), _calc("10560 + 100")),
        _n(10660),
    ),
    _t(
        "g11",
        "lookup",
        "Look up the capital of Peru, then reverse that name.",
        (_c("country_facts", country="Peru"), _c("transform_text", text="Lima", mode="reverse")),
        Says("amiL", "text"),
    ),
    _t(
        "g12",
        "text",
        "Multiply 11 by 11, then subtract 21 from the product.",
        (_calc("11 * 11"), _calc("121 - 21")),
        _n(100),
    ),
)
HOLDOUT_3: tuple[Task, ...] = (
    _t(
        "k01",
        "text",
        "Work out 14 multiplied by 3, then count the words in 'forty two'.",
        (_calc("14 * 3"), _c("word_count", text="forty two")),
        _n(42),
        _n(2),
        chained=False,
    ),
    _t(
        "k02",
        "units",
        "Convert 6 feet to meters, then multiply that by 10.",
        (_c("convert_units", value=6, from_unit="feet", to_unit="meters"), _calc("1.83 * 10")),
        _n(18.3),
    ),
    _t(
        "k03",
        "lookup",
        "Look up the population of Kenya in millions, then add 4.9 to it.",
        (_c("country_facts", country="Kenya"), _calc("55.1 + 4.9")),
        _n(60),
    ),
    _t(
        "k04",
        "dates",
        "Find the date 45 days after 2025-09-01, then find the weekday of that date.",
        (_c("add_days", date="2025-09-01", days=45), _c("weekday", date="2025-10-16")),
        Says("Thursday", "name"),
    ),
    _t(
        "k05",
        "text",
        "Deduct 45 from 200, then divide the remainder by 5.",
        (_calc("200 - 45"), _calc("155 / 5")),
        _n(31),
    ),
    _t(
        "k06",
        "units",
        "Convert 10 pounds to kilograms, then subtract 1.5 from the result.",
        (_c("convert_units", value=10, from_unit="pounds", to_unit="kilograms"), _calc("4.54 - 1.5")),
        _n(3.04),
    ),
    _t(
        "k07",
        "lookup",
        "Check the price of a pen, then multiply it by 12.",
        (_c("product_price", product="pen"), _calc("1.2 * 12")),
        _n(14.4),
    ),
    _t(
        "k08",
        "dates",
        "Count the days between 2025-02-10 and 2025-02-24, then multiply that by 8.",
        (_c("days_between", start="2025-02-10", end="2025-02-24"), _calc("14 * 8")),
        _n(112),
    ),
    _t(
        "k09",
        "text",
        "Calculate 90 minus 35, then add 15 to that.",
        (_calc("90 - 35"), _calc("55 + 15")),
        _n(70),
    ),
    _t(
        "k10",
        "units",
        "Convert 25 celsius to fahrenheit, then add 3 to the result.",
        (_c("convert_units", value=25, from_unit="celsius", to_unit="fahrenheit"), _calc("77 + 3")),
        _n(80),
    ),
    _t(
        "k11",
        "lookup",
        "Look up the capital of Canada, then convert it to upper case.",
        (_c("country_facts", country="Canada"), _c("transform_text", text="Ottawa", mode="upper")),
        Says("OTTAWA", "text"),
    ),
    _t(
        "k12",
        "text",
        "Divide 81 by 9, then multiply the quotient by 4.",
        (_calc("81 / 9"), _calc("9 * 4")),
        _n(36),
    ),
)
HOLDOUT_4: tuple[Task, ...] = (
    _t(
        "m01",
        "text",
        "Figure out 25 times 4, then count the words in 'one hundred'.",
        (_calc("25 * 4"), _c("word_count", text="one hundred")),
        _n(100),
        _n(2),
        chained=False,
    ),
    _t(
        "m02",
        "units",
        "Convert 400 meters to kilometers, then multiply the distance by 5.",
        (_c("convert_units", value=400, from_unit="meters", to_unit="kilometers"), _calc("0.4 * 5")),
        _n(2),
    ),
    _t(
        "m03",
        "lookup",
        "Look up the capital of Egypt, then make it upper case.",
        (_c("country_facts", country="Egypt"), _c("transform_text", text="Cairo", mode="upper")),
        Says("CAIRO", "text"),
    ),
    _t(
        "m04",
        "dates",
        "Find the weekday of 2026-01-01, then turn that weekday into upper case.",
        (_c("weekday", date="2026-01-01"), _c("transform_text", text="Thursday", mode="upper")),
        Says("THURSDAY", "text"),
    ),
    _t(
        "m05",
        "text",
        "Subtract 7 from 50, then add 8 to the difference.",
        (_calc("50 - 7"), _calc("43 + 8")),
        _n(51),
    ),
    _t(
        "m06",
        "units",
        "Convert 68 fahrenheit to celsius, then add 5 to that.",
        (_c("convert_units", value=68, from_unit="fahrenheit", to_unit="celsius"), _calc("20 + 5")),
        _n(25),
    ),
    _t(
        "m07",
        "lookup",
        "Look up the population of Peru in millions, then divide it by 4.",
        (_c("country_facts", country="Peru"), _calc("34.4 / 4")),
        _n(8.6),
    ),
    _t(
        "m08",
        "dates",
        "Add 100 days to 2025-01-01, then tell me the weekday of the new date.",
        (_c("add_days", date="2025-01-01", days=100), _c("weekday", date="2025-04-11")),
        Says("Friday", "name"),
    ),
    _t(
        "m09",
        "text",
        "Multiply 12 by 12, then subtract 44 from the result.",
        (_calc("12 * 12"), _calc("144 - 44")),
        _n(100),
    ),
    _t(
        "m10",
        "units",
        "Convert 3 kilograms to pounds, then divide that by 2.",
        (_c("convert_units", value=3, from_unit="kilograms", to_unit="pounds"), _calc("6.61 / 2")),
        _n(3.305),
    ),
    _t(
        "m11",
        "lookup",
        "Check the price of a chair, then subtract 15 from it.",
        (_c("product_price", product="chair"), _calc("85 - 15")),
        _n(70),
    ),
    _t(
        "m12",
        "text",
        "What is 1000 divided by 8, then add 75 to the answer.",
        (_calc("1000 / 8"), _calc("125 + 75")),
        _n(200),
    ),
)
HOLDOUT_5: tuple[Task, ...] = (
    _t(
        "p01",
        "text",
        "Add 18 and 24, then count the words in 'forty two'.",
        (_calc("18 + 24"), _c("word_count", text="forty two")),
        _n(42),
        _n(2),
        chained=False,
    ),
    _t(
        "p02",
        "units",
        "Convert 2 miles to meters, then add 500 to it.",
        (_c("convert_units", value=2, from_unit="miles", to_unit="meters"), _calc("3218.69 + 500")),
        _n(3718.69),
    ),
    _t(
        "p03",
        "lookup",
        "Look up the price of a notebook and the price of a pen, then add them together.",
        (_c("product_price", product="notebook"), _c("product_price", product="pen"), _calc("3.5 + 1.2")),
        _n(4.7),
    ),
    _t(
        "p04",
        "dates",
        "Add 30 days to 2025-03-15, then find the weekday of that date.",
        (_c("add_days", date="2025-03-15", days=30), _c("weekday", date="2025-04-14")),
        Says("Monday", "name"),
    ),
    _t(
        "p05",
        "text",
        "Work out 144 divided by 12, then add 8 to that.",
        (_calc("144 / 12"), _calc("12 + 8")),
        _n(20),
    ),
    _t(
        "p06",
        "units",
        "Convert 100 fahrenheit to celsius, then multiply that by 2.",
        (_c("convert_units", value=100, from_unit="fahrenheit", to_unit="celsius"), _calc("37.78 * 2")),
        _n(75.56),
    ),
    _t(
        "p07",
        "lookup",
        "Look up the population of Kenya in millions, then add 10 to it.",
        (_c("country_facts", country="Kenya"), _calc("55.1 + 10")),
        _n(65.1),
    ),
    _t(
        "p08",
        "dates",
        "Count the days from 2025-01-10 to 2025-02-20, then add 5 to that number.",
        (_c("days_between", start="2025-01-10", end="2025-02-20"), _calc("41 + 5")),
        _n(46),
    ),
    _t(
        "p09",
        "text",
        "What is the sum of 33 and 67, then divide it by 4.",
        (_calc("33 + 67"), _calc("100 / 4")),
        _n(25),
    ),
    _t(
        "p10",
        "units",
        "Convert 10 kilograms to pounds, then subtract 2 from that.",
        (_c("convert_units", value=10, from_unit="kilograms", to_unit="pounds"), _calc("22.05 - 2")),
        _n(20.05),
    ),
    _t(
        "p11",
        "lookup",
        "Get the price of a lamp, then add 7.5 to it, then multiply the total by 2.",
        (_c("product_price", product="lamp"), _calc("32.5 + 7.5"), _calc("40 * 2")),
        _n(80),
    ),
    _t(
        "p12",
        "text",
        "Increase 80 by 15, then divide the result by 5.",
        (_calc("80 + 15"), _calc("95 / 5")),
        _n(19),
    ),
)
"""Written on 2026-11-26 (session 6) before its first run, after HOLDOUT_4's fixes and before any
change for the 200-tool near neighbour ("add" planned as a tool that "adds a comment"), so half of
it adds, in words that set has not used ("add them together", "increase ... by", "add 5 to that
number"); first runs count, at 9 tools and at 200."""

HOLDOUT_6: tuple[Task, ...] = (
    _t(
        "q01",
        "text",
        "Multiply 14 by 3, then count the words in 'forty two apples'.",
        (_calc("14 * 3"), _c("word_count", text="forty two apples")),
        _n(42),
        _n(3),
        chained=False,
    ),
    _t(
        "q02",
        "units",
        "How many feet is 100 meters? Then divide that by 10.",
        (_c("convert_units", value=100, from_unit="meters", to_unit="feet"), _calc("328.08 / 10")),
        _n(32.808),
    ),
    _t(
        "q03",
        "lookup",
        "Find the capital of Japan, then reverse it.",
        (_c("country_facts", country="Japan"), _c("transform_text", text="Tokyo", mode="reverse")),
        Says("oykoT", "text"),
    ),
    _t(
        "q04",
        "dates",
        "What weekday was 2024-02-29? Then make it lower case.",
        (_c("weekday", date="2024-02-29"), _c("transform_text", text="Thursday", mode="lower")),
        Says("thursday", "text"),
    ),
    _t("q05", "text", "Double 21, then add 8 to the result.", (_calc("21 * 2"), _calc("42 + 8")), _n(50)),
    _t(
        "q06",
        "units",
        "Convert 5 pounds to kilograms, then multiply by 4.",
        (_c("convert_units", value=5, from_unit="pounds", to_unit="kilograms"), _calc("2.27 * 4")),
        _n(9.08),
    ),
    _t(
        "q07",
        "lookup",
        "Look up the population of Germany in millions and the population of Kenya in millions, "
        "then add them together.",
        (_c("country_facts", country="Germany"), _c("country_facts", country="Kenya"), _calc("84.5 + 55.1")),
        _n(139.6),
    ),
    _t(
        "q08",
        "dates",
        "Go forward 45 days from 2025-09-01, then tell me the weekday.",
        (_c("add_days", date="2025-09-01", days=45), _c("weekday", date="2025-10-16")),
        Says("Thursday", "name"),
    ),
    _t(
        "q09",
        "text",
        "What is 250 minus 75, then divide the answer by 5.",
        (_calc("250 - 75"), _calc("175 / 5")),
        _n(35),
    ),
    _t(
        "q10",
        "units",
        "Turn 212 fahrenheit into celsius, then add 10.",
        (_c("convert_units", value=212, from_unit="fahrenheit", to_unit="celsius"), _calc("100 + 10")),
        _n(110),
    ),
    _t(
        "q11",
        "lookup",
        "Check the price of a backpack, then take 5 off it.",
        (_c("product_price", product="backpack"), _calc("45 - 5")),
        _n(40),
    ),
    _t(
        "q12",
        "dates",
        "How many days are there from 2025-06-01 to 2025-06-30? Then multiply that by 2.",
        (_c("days_between", start="2025-06-01", end="2025-06-30"), _calc("29 * 2")),
        _n(58),
    ),
)
"""Written on 2026-11-26 (session 6) before its first run, after every fix of that session (HOLDOUT_5's
included): phrasings no set has used ("double", "take 5 off", "go forward 45 days", "how many feet
is", a question then an instruction); first runs count, at 9 tools and at 200."""

HOLDOUT_7: tuple[Task, ...] = (
    _t(
        "r01",
        "text",
        "Sum 45 and 55, then count the words in 'one hundred exactly'.",
        (_calc("45 + 55"), _c("word_count", text="one hundred exactly")),
        _n(100),
        _n(3),
        chained=False,
    ),
    _t(
        "r02",
        "units",
        "Change 8 kilometers to miles, then multiply the answer by 3.",
        (_c("convert_units", value=8, from_unit="kilometers", to_unit="miles"), _calc("4.97 * 3")),
        _n(14.91),
    ),
    _t(
        "r03",
        "lookup",
        "What's the capital of Kenya? Then turn it into upper case.",
        (_c("country_facts", country="Kenya"), _c("transform_text", text="Nairobi", mode="upper")),
        Says("NAIROBI", "text"),
    ),
    _t(
        "r04",
        "dates",
        "Which day of the week is 2025-12-31? Then reverse that word.",
        (_c("weekday", date="2025-12-31"), _c("transform_text", text="Wednesday", mode="reverse")),
        Says("yadsendeW", "text"),
    ),
    _t("r05", "text", "Halve 90, then subtract 15 from that.", (_calc("90 / 2"), _calc("45 - 15")), _n(30)),
    _t(
        "r06",
        "units",
        "Convert 25 celsius to fahrenheit, then take away 7.",
        (_c("convert_units", value=25, from_unit="celsius", to_unit="fahrenheit"), _calc("77 - 7")),
        _n(70),
    ),
    _t(
        "r07",
        "lookup",
        "Look up the price of a mug and the price of a lamp, then multiply them together.",
        (_c("product_price", product="mug"), _c("product_price", product="lamp"), _calc("8.25 * 32.5")),
        _n(268.125),
    ),
    _t(
        "r08",
        "dates",
        "Count the days between 2025-03-01 and 2025-03-31, then divide by 5.",
        (_c("days_between", start="2025-03-01", end="2025-03-31"), _calc("30 / 5")),
        _n(6),
    ),
    _t(
        "r09",
        "text",
        "Calculate 17 plus 26, then multiply it by 2.",
        (_calc("17 + 26"), _calc("43 * 2")),
        _n(86),
    ),
    _t(
        "r10",
        "units",
        "How many kilograms is 11 pounds? Then add 1 to it.",
        (_c("convert_units", value=11, from_unit="pounds", to_unit="kilograms"), _calc("4.99 + 1")),
        _n(5.99),
    ),
    _t(
        "r11",
        "lookup",
        "Find the population of Japan in millions, then divide it by 2.",
        (_c("country_facts", country="Japan"), _calc("124.5 / 2")),
        _n(62.25),
    ),
    _t(
        "r12",
        "dates",
        "Add 7 days to 2025-12-28, then give me the weekday of the result.",
        (_c("add_days", date="2025-12-28", days=7), _c("weekday", date="2026-01-04")),
        Says("Sunday", "name"),
    ),
)
"""Written on 2026-11-26 (session 6) after HOLDOUT_6's fixes, before its first run, as the session's
last measure: no rule was changed after it ("sum 45 and 55", "change ... to", "which day of the week
is", "take away 7" with no "from", "multiply them together")."""

HOLDOUT_BY_ID = {
    t.id: t for t in HOLDOUT + HOLDOUT_2 + HOLDOUT_3 + HOLDOUT_4 + HOLDOUT_5 + HOLDOUT_6 + HOLDOUT_7
}
