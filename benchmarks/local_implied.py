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

from benchmarks.local_implied_6 import IMPLIED_6
from benchmarks.local_implied_7 import IMPLIED_7
from benchmarks.local_implied_8 import IMPLIED_8
from benchmarks.local_implied_9 import IMPLIED_9
from benchmarks.local_implied_10 import IMPLIED_10
from benchmarks.local_implied_11 import IMPLIED_11
from benchmarks.local_tasks import Call, Says, Task


def _t(task_id: str, query: str, calls: tuple[Call, ...], *says: Says, chained: bool = True) -> Task:
    return Task(task_id, "implied", query, calls, says, chained)


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

IMPLIED_3: tuple[Task, ...] = (
    _t(
        "k01",
        "Can I borrow The Silent Harbor right now?",
        (_c("find_book", title="The Silent Harbor"), _c("book_availability", isbn="978-0143127741")),
        _n(2),
    ),
    _t(
        "k02",
        "Reserve The Silent Harbor for member M-5521.",
        (
            _c("find_book", title="The Silent Harbor"),
            _c("reserve_book", isbn="978-0143127741", member_id="M-5521"),
        ),
        _name("RSV-7741-5521"),
    ),
    _t(
        "k03",
        "Where is the parcel for order O-88213 right now?",
        (_c("order_details", order_id="O-88213"), _c("track_parcel", tracking_number="TRK-4410")),
        _name("Leipzig"),
    ),
    _t(
        "k04",
        "What time is it in Auckland?",
        (_c("city_timezone", city="Auckland"), _c("local_time", timezone="Pacific/Auckland")),
        _name("14:05"),
    ),
    _t(
        "k05", "Track parcel TRK-5120.", (_c("track_parcel", tracking_number="TRK-5120"),), _name("delivered")
    ),
    _t(
        "k06",
        "What is the email address of Ines Duarte's manager?",
        (_c("find_staff", name="Ines Duarte"), _c("staff_by_id", staff_id="S-310")),
        _name("kofi.osei@harbor.test"),
    ),
    _t(
        "k07",
        "How many open issues are there in the harbor-sync repository?",
        (_c("repo_issues", repository="harbor-sync", state="open"),),
        _n(7),
    ),
    _t(
        "k08",
        "How long is the Danube in miles?",
        (_c("river_facts", river="Danube"), _c("convert_length", value=2850, from_unit="km", to_unit="mi")),
        _n(1770.9),
    ),
    _t(
        "k09",
        "Tell the organiser of the Q3 planning meeting: 'The room moved to 4B'.",
        (
            _c("find_meeting", title="Q3 planning"),
            _c("notify", recipient="kofi.osei@harbor.test", message="The room moved to 4B"),
        ),
        _name("N-"),
    ),
    _t(
        "k10",
        "What's the weather like in the city where the Eiffel Tower stands?",
        (_c("landmark_city", landmark="Eiffel Tower"), _c("weather_forecast", city="Paris")),
        _n(11),
    ),
    _t(
        "k11",
        "What does a night at Hotel Aurora cost in Japanese yen?",
        (
            _c("hotel_rate", hotel="Hotel Aurora"),
            _c("convert_currency", amount=120, from_currency="USD", to_currency="JPY"),
        ),
        _n(18120),
    ),
    _t(
        "k12",
        "I'm flying out next week. What's the local time in Reykjavik?",
        (_c("city_timezone", city="Reykjavik"), _c("local_time", timezone="Atlantic/Reykjavik")),
        _name("01:05"),
    ),
)
"""Written on 2026-11-27 (session 8) before any change of that session, with its own tools
(``implied_tools_3``: library, parcels, time zones, staff, repositories, units, meetings, landmarks,
hotels), and run first on the code as it stood. New shapes: an id that is itself looked up from
another id (k03, k06), "where X stands" instead of "of" (k10), a chain across two tool sets (k11),
a unit conversion whose source unit only the producer's output field names (k08), controls (k05,
k07). Its first run is the honest figure."""

IMPLIED_4: tuple[Task, ...] = (
    _t(
        "m01",
        "Which room is the Data Ethics seminar in?",
        (_c("find_course", title="Data Ethics"), _c("course_room", course_id="C-204")),
        _name("B-12"),
    ),
    _t(
        "m02",
        "Refill prescription RX-7781 please.",
        (_c("refill_prescription", prescription="RX-7781"),),
        _name("ready"),
    ),
    _t(
        "m03",
        "Does the Linden Street pharmacy have ibuprofen in stock?",
        (_c("find_pharmacy", name="Linden Street"), _c("stock_check", pharmacy_id="PH-22", drug="ibuprofen")),
        _n(40),
    ),
    _t(
        "m04",
        "What was the score of the Harbor Hawks' last match?",
        (_c("team_lookup", team="Harbor Hawks"), _c("last_match", team_id="T-77")),
        _name("3-1"),
    ),
    _t(
        "m05",
        "Send Kofi Osei's email address to ines.duarte@harbor.test.",
        (
            _c("find_staff", name="Kofi Osei"),
            _c("notify", recipient="ines.duarte@harbor.test", message="kofi.osei@harbor.test"),
        ),
        _name("N-"),
    ),
    _t(
        "m06",
        "What is the temperature in Lisbon in Fahrenheit?",
        (
            _c("city_weather", city="Lisbon"),
            _c("convert_temperature", value=19, from_scale="C", to_scale="F"),
        ),
        _n(66.2),
    ),
    _t(
        "m07",
        "How far is Porto from Lisbon in miles?",
        (
            _c("distance_between", from_city="Porto", to_city="Lisbon"),
            _c("convert_length", value=313, from_unit="km", to_unit="mi"),
        ),
        _n(194.5),
    ),
    _t(
        "m08",
        "Book the Aurora Suite at Hotel Aurora for Lee Park.",
        (
            _c("hotel_room", hotel="Hotel Aurora", room_name="Aurora Suite"),
            _c("book_room", room_id="HR-3012", guest="Lee Park"),
        ),
        _name("BR-3012-LEE"),
    ),
    _t(
        "m09",
        "How many people live in the capital of Portugal?",
        (_c("capital_of", country="Portugal"), _c("city_population", city="Lisbon")),
        _n(545000),
    ),
    _t(
        "m10",
        "I prefer aisle seats. Check me in for booking BK-2041-ANA.",
        (_c("check_in", booking_ref="BK-2041-ANA", seat="aisle"),),
        _name("BP-2041-A"),
    ),
    _t(
        "m11",
        "Give me the ticker of Halvard Foods and its latest share price.",
        (_c("company_ticker", company="Halvard Foods"), _c("stock_quote", symbol="HLVD")),
        _n(12.8),
    ),
    _t(
        "m12",
        "Where is the Applied Statistics course taught?",
        (_c("find_course", title="Applied Statistics"), _c("course_room", course_id="C-117")),
        _name("A-03"),
    ),
)
"""Written on 2026-11-27 (session 8) with ``implied_tools_4``, before that session's changes, and not
run (nor checked model-free) until those changes were done: the held-out measure of them. New shapes:
"which room ... in" (m01), a possessive team (m04), an email that is the message (m05), a temperature
scale only the producer's field names (m06), a distance between two stated cities (m07), a producer
with two inputs (m08), a context sentence giving an enum value (m10), two asks of one chain (m11)."""

IMPLIED_5: tuple[Task, ...] = (
    _t(
        "n01",
        "Find a rental branch within 5 km of Central Station and rent an SUV there for 3 days "
        "from 2026-04-10.",
        (
            _c("find_rental_branch", near="Central Station", radius_km=5),
            _c("rent_car", branch_id="RB-31", pickup_date="2026-04-10", days=3, car_class="suv"),
        ),
        _n(237),
    ),
    _t(
        "n02",
        "Book Biscuit in for a vaccination on March 3rd, 2026.",
        (
            _c("find_pet", name="Biscuit"),
            _c("book_vet_visit", pet_id="PET-0412", date="2026-03-03", reason="vaccination"),
        ),
        _name("VV-0412-0303"),
    ),
    _t(
        "n03",
        "Show me the electricity use at 14 Elm Road for January 2026, with a detailed report.",
        (
            _c("meter_for_address", address="14 Elm Road"),
            _c("meter_readings", meter_id="MTR-20931", month="2026-01", report="detailed"),
        ),
        _n(412.6),
    ),
    _t(
        "n04",
        "What would 3 hours of parking on Quay Street cost me?",
        (_c("parking_zone", street="Quay Street"), _c("parking_quote", zone_id="PZ-14", hours=3)),
        _n(7.2),
    ),
    _t(
        "n05",
        "Which days are paper, glass and plastic picked up at postcode 4021?",
        (_c("collection_schedule", postcode="4021", bins=["paper", "glass", "plastic"]),),
        _name("Tuesday"),
        _name("Thursday"),
        _name("Friday"),
    ),
    _t(
        "n06",
        "Sign member GM-2048 up for the 'Spin Express' class at Northside Gym.",
        (
            _c("find_gym_class", gym="Northside Gym", class_name="Spin Express"),
            _c("join_class", class_id="GC-512", member_id="GM-2048"),
        ),
        _name("EN-512-2048"),
    ),
    _t(
        "n07",
        "Get 2 tickets for Dune at the Rialto on 2026-03-06 for the 7:30 pm show.",
        (
            _c("find_cinema", name="Rialto"),
            _c("buy_tickets", cinema_id="CIN-07", film="Dune", date="2026-03-06", time="19:30", seats=2),
        ),
        _name("TK-07-1930-2"),
    ),
    _t(
        "n08",
        "I'm parked on Quay Street. Pay for 2 hours for plate KX-482-B.",
        (
            _c("parking_zone", street="Quay Street"),
            _c("pay_parking", zone_id="PZ-14", plate="KX-482-B", hours=2),
        ),
        _n(4.8),
    ),
    _t(
        "n09",
        "When is Dune showing at the Rialto on 6 March 2026?",
        (
            _c("find_cinema", name="Rialto"),
            _c("showtimes", cinema_id="CIN-07", film="Dune", date="2026-03-06"),
        ),
        _name("17:00"),
        _name("19:30"),
        _name("21:45"),
    ),
    _t(
        "n10",
        "Pay 2 hours of parking in zone PZ-03 for plate KX-482-B, and tell me which day the glass bin goes "
        "out at postcode 4021.",
        (
            _c("pay_parking", zone_id="PZ-03", plate="KX-482-B", hours=2),
            _c("collection_schedule", postcode="4021", bins=["glass"]),
        ),
        _n(6),
        _name("Thursday"),
        chained=False,
    ),
    _t(
        "n11",
        "Rent a compact car at branch RB-07 for 5 days starting 2026-04-10.",
        (_c("rent_car", branch_id="RB-07", pickup_date="2026-04-10", days=5, car_class="compact"),),
        _name("RC-07-0410-C"),
    ),
    _t(
        "n12",
        "We moved into 9 Mill Lane in February. How many kWh did we use there in February 2026?",
        (
            _c("meter_for_address", address="9 Mill Lane"),
            _c("meter_readings", meter_id="MTR-31877", month="2026-02"),
        ),
        _n(288.4),
    ),
)
"""Written on 2026-11-28 by a helper who had not read the guided rules (``pes_agent/guided``) nor their
tests, with ``implied_tools_5`` (a vet clinic, car rental, electricity meters, recycling pickup, gym
classes, a cinema, street parking), and run first on the code as it stood: the held-out measure of the
rules' generality. Phrased as users write, not as the earlier sets: "find X and rent Y" with an
optional argument said by name (n01 "within 5 km", n03 "with a detailed report"), dates and months in
words (n02, n03, n09, n12), a clock time (n07 "7:30 pm"), a quoted name (n06), a list written out
(n05), context sentences (n08, n12), questions (n04, n05, n09, n12), a near-duplicate pair (quote or
pay for parking: n04, n08, n10), two independent asks joined by "and" (n10), controls (n05, n11)."""

IMPLIED_BY_ID = {
    t.id: t
    for t in IMPLIED
    + IMPLIED_2
    + IMPLIED_3
    + IMPLIED_4
    + IMPLIED_5
    + IMPLIED_6
    + IMPLIED_7
    + IMPLIED_8
    + IMPLIED_9
    + IMPLIED_10
    + IMPLIED_11
}
