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
    _t("i01", "What is the weather in the capital of Japan?",
       (_c("capital_of", country="Japan"), _c("city_weather", city="Tokyo")), _n(18.5)),
    _t("i02", "How warm is it right now in the capital of Peru?",
       (_c("capital_of", country="Peru"), _c("city_weather", city="Lima")), _n(22)),
    _t("i03", "Is it raining in Kenya's capital?",
       (_c("capital_of", country="Kenya"), _c("city_weather", city="Nairobi")), _name("rain")),
    _t("i04", "What is the weather in Oslo?",
       (_c("city_weather", city="Oslo"),), _n(3.5)),
    _t("i05", "Find the Trailmaster Tent and tell me its price in euros.",
       (_c("search_products", name="Trailmaster Tent"),
        _c("convert_currency", amount=189, from_currency="USD", to_currency="EUR")), _n(173.88)),
    _t("i06", "What does a Summit Headlamp cost in British pounds?",
       (_c("search_products", name="Summit Headlamp"),
        _c("convert_currency", amount=24.5, from_currency="USD", to_currency="GBP")), _n(19.36)),
    _t("i07", "Order 2 of the Summit Headlamp.",
       (_c("search_products", name="Summit Headlamp"), _c("place_order", product_id="P-2210", quantity=2)),
       _n(49)),
    _t("i08", "Buy 3 Trailmaster Tarps for the team.",
       (_c("search_products", name="Trailmaster Tarp"), _c("place_order", product_id="P-1043", quantity=3)),
       _n(117)),
    _t("i09", "Email Omar Haddad with the subject 'Badge renewal'.",
       (_c("find_employee", name="Omar Haddad"),
        _c("send_email", to="omar.haddad@northwind.test", subject="Badge renewal")), _name("omar.haddad@northwind.test")),
    _t("i10", "How many days passed between Lena Brook's start date and 2025-01-01?",
       (_c("find_employee", name="Lena Brook"), _c("days_between", start="2019-11-04", end="2025-01-01")),
       _n(1885)),
    _t("i11", "Send a note to raj.patel@example.org with the subject 'Lunch moved to 1pm'.",
       (_c("send_email", to="raj.patel@example.org", subject="Lunch moved to 1pm"),), _name("raj.patel@example.org")),
    _t("i12", "Our team flies to Portugal next week. What will the weather be like in its capital?",
       (_c("capital_of", country="Portugal"), _c("city_weather", city="Lisbon")), _n(19)),
)

IMPLIED_BY_ID = {t.id: t for t in IMPLIED}
