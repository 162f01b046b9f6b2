"""The implied-steps set (``--set implied``): requests whose steps are not all said.

Written on 2026-11-27 for issue 25, before any agent change made for it, and run first on the code as
it stood (its first run is the honest figure). Each request needs a step it only implies: the capital
a weather question is about, the product id an order needs, the price a conversion starts from, the
email or start date of a person named. Two controls need no implied step (a value the request holds
whole; a context sentence that is no step). The tools are ``implied_tools``, not the ones the guided
rules were shaped on; only the ``plans`` setting means anything here (a given plan would say the
implied steps for the model).
"""

from __future__ import annotations

from typing import Any

from benchmarks.local_tasks import Call, Says, Task


def _t(task_id: str, query: str, calls: tuple[Call, ...], *says: Says) -> Task:
    return Task(task_id, "implied", query, calls, says, True)


def _c(tool: str, **args: Any) -> Call:
    return Call(tool, args)


def _n(value: float) -> Says:
    return Says(value, "number")


def _name(text: str) -> Says:
    return Says(text, "name")


IMPLIED: tuple[Task, ...] = (
    _t(
        "i01",
        "What is the weather in the capital of Japan?",
        (_c("capital_of", country="Japan"), _c("city_weather", city="Tokyo")),
        _n(18.5),
    ),
    _t(
        "i02",
        "How warm is it right now in the capital of Peru?",
        (_c("capital_of", country="Peru"), _c("city_weather", city="Lima")),
        _n(22),
    ),
    _t(
        "i03",
        "Is it raining in Kenya's capital?",
        (_c("capital_of", country="Kenya"), _c("city_weather", city="Nairobi")),
        _name("rain"),
    ),
    _t("i04", "What is the weather in Oslo?", (_c("city_weather", city="Oslo"),), _n(3.5)),
    _t(
        "i05",
        "Find the Trailmaster Tent and tell me its price in euros.",
        (
            _c("search_products", name="Trailmaster Tent"),
            _c("convert_currency", amount=189, from_currency="USD", to_currency="EUR"),
        ),
        _n(173.88),
    ),
    _t(
        "i06",
        "What does a Summit Headlamp cost in British pounds?",
        (
            _c("search_products", name="Summit Headlamp"),
            _c("convert_currency", amount=24.5, from_currency="USD", to_currency="GBP"),
        ),
        _n(19.36),
    ),
    _t(
        "i07",
        "Order 2 of the Summit Headlamp.",
        (_c("search_products", name="Summit Headlamp"), _c("place_order", product_id="P-2210", quantity=2)),
        _n(49),
    ),
    _t(
        "i08",
        "Buy 3 Trailmaster Tarps for the team.",
        (_c("search_products", name="Trailmaster Tarp"), _c("place_order", product_id="P-1043", quantity=3)),
        _n(117),
    ),
    _t(
        "i09",
        "Email Omar Haddad with the subject 'Badge renewal'.",
        (
            _c("find_employee", name="Omar Haddad"),
            _c("send_email", to="omar.haddad@northwind.test", subject="Badge renewal"),
        ),
        _name("omar.haddad@northwind.test"),
    ),
    _t(
        "i10",
        "How many days passed between Lena Brook's start date and 2025-01-01?",
        (_c("find_employee", name="Lena Brook"), _c("days_between", start="2019-11-04", end="2025-01-01")),
        _n(1885),
    ),
    _t(
        "i11",
        "Send a note to raj.patel@example.org with the subject 'Lunch moved to 1pm'.",
        (_c("send_email", to="raj.patel@example.org", subject="Lunch moved to 1pm"),),
        _name("raj.patel@example.org"),
    ),
    _t(
        "i12",
        "Our team flies to Portugal next week. What will the weather be like in its capital?",
        (_c("capital_of", country="Portugal"), _c("city_weather", city="Lisbon")),
        _n(19),
    ),
)

IMPLIED_2: tuple[Task, ...] = (
    _t(
        "j01",
        "Find flights from Denver to Chicago on 2025-06-03.",
        (
            _c("lookup_airport", city="Denver"),
            _c("lookup_airport", city="Chicago"),
            _c("search_flights", origin="DEN", destination="ORD", date="2025-06-03"),
        ),
        _name("FL2041"),
    ),
    _t(
        "j02",
        "What is Nordwind Motors' share price?",
        (_c("company_ticker", company="Nordwind Motors"), _c("stock_quote", symbol="NWM")),
        _n(41.25),
    ),
    _t(
        "j03",
        "Book flight FL2041 for Ana Ruiz.",
        (_c("book_flight", flight_id="FL2041", passenger="Ana Ruiz"),),
        _name("BK-2041-ANA"),
    ),
    _t(
        "j04",
        "How many calories are in one serving of shakshuka?",
        (_c("recipe_lookup", dish="shakshuka"),),
        _n(310),
    ),
    _t(
        "j05",
        "Scale the shakshuka recipe to 6 servings.",
        (_c("recipe_lookup", dish="shakshuka"), _c("scale_recipe", recipe_id="R-114", servings=6)),
        _n(6),
    ),
    _t(
        "j06",
        "Open a ticket for Priya Nair with the summary 'Invoice total is wrong'.",
        (
            _c("customer_by_name", name="Priya Nair"),
            _c("open_ticket", customer_email="priya.nair@acme.test", summary="Invoice total is wrong"),
        ),
        _name("T-"),
    ),
    _t(
        "j07",
        "What is the share price of Halvard Foods times 100?",
        (
            _c("company_ticker", company="Halvard Foods"),
            _c("stock_quote", symbol="HLVD"),
            _c("calculator", expression="12.8 * 100"),
        ),
        _n(1280),
    ),
    _t(
        "j08",
        "Get me the IATA code of the airport in Lisbon.",
        (_c("lookup_airport", city="Lisbon"),),
        _name("LIS"),
    ),
    _t("j09", "What's the latest quote for ticker HLVD?", (_c("stock_quote", symbol="HLVD"),), _n(12.8)),
    _t(
        "j10",
        "My customer is Tomas Berg. Open a ticket for him with the summary 'Login fails'.",
        (
            _c("customer_by_name", name="Tomas Berg"),
            _c("open_ticket", customer_email="tomas.berg@acme.test", summary="Login fails"),
        ),
        _name("T-"),
    ),
    _t(
        "j11",
        "Search flights from DEN to ORD on June 3rd 2025.",
        (_c("search_flights", origin="DEN", destination="ORD", date="2025-06-03"),),
        _name("FL2041"),
    ),
    _t(
        "j12",
        "Scale the lentil soup recipe for 10 people.",
        (_c("recipe_lookup", dish="lentil soup"), _c("scale_recipe", recipe_id="R-207", servings=10)),
        _n(10),
    ),
)
"""Written on 2026-11-27 after the data-flow planning had been shaped on ``IMPLIED``, before its own first
run: other tools (airports and flights, tickers and quotes, recipes, support tickets), ids with patterns,
two values of one kind from one producer (j01), a three-step chain ending in arithmetic (j07), a context
sentence with a pronoun (j10), a date in words (j11). Its first run is the honest figure."""

IMPLIED_BY_ID = {t.id: t for t in IMPLIED + IMPLIED_2}
