"""Tools for the implied-steps set (``local_implied``): weather, capitals, a shop, currencies, staff, email.

Written with the implied set, before any agent change made for it. Unlike ``local_tools`` they lean on
free strings rather than enums (a city and a country are both plain strings, so the kind of a value is
told by data flow, not by an option list), and their outputs are declared the way a tool author writes
them: ``TypedDict`` return annotations. Deterministic and offline; an unknown key is a ``ToolError``, so
a wrong value shows as a failed call, never as a made-up result.
"""

from __future__ import annotations

import zlib
from typing import Annotated, Literal, TypedDict

from pydantic import Field

from pes_agent.errors import ToolError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

Currency = Annotated[
    Literal["USD", "EUR", "GBP", "JPY"],
    Field(
        description="ISO 4217 code: USD (US dollars), EUR (euros), GBP (British pounds), JPY (Japanese yen)."
    ),
]
ProductId = Annotated[str, Field(pattern="^P-[0-9]{4}$", description="A product id such as P-1234.")]
Email = Annotated[str, Field(json_schema_extra={"format": "email"}, description="An email address.")]

CAPITALS = {"japan": "Tokyo", "peru": "Lima", "kenya": "Nairobi", "norway": "Oslo", "portugal": "Lisbon"}
WEATHER = {
    "tokyo": (18.5, "cloudy"),
    "lima": (22.0, "sunny"),
    "nairobi": (24.0, "rain"),
    "oslo": (3.5, "snow"),
    "lisbon": (19.0, "sunny"),
}
PRODUCTS = {
    "trailmaster tent": ("P-1042", 189.0),
    "trailmaster tarp": ("P-1043", 39.0),
    "summit headlamp": ("P-2210", 24.5),
}
RATES_PER_USD = {"USD": 1.0, "EUR": 0.92, "GBP": 0.79, "JPY": 151.0}
STAFF = {
    "omar haddad": ("E-117", "omar.haddad@northwind.test", "2021-03-15"),
    "lena brook": ("E-204", "lena.brook@northwind.test", "2019-11-04"),
}


class Capital(TypedDict):
    capital: str


class Weather(TypedDict):
    city: str
    temperature_c: float
    conditions: str


class Product(TypedDict):
    product_id: str
    name: str
    price_usd: float


class Order(TypedDict):
    order_id: str
    total_usd: float


class Money(TypedDict):
    amount: float
    currency: str


class Employee(TypedDict):
    employee_id: str
    email: str
    start_date: str


class Sent(TypedDict):
    message_id: str
    to: str


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


@tool
def capital_of(country: str) -> Capital:
    """The capital city of a country."""
    found = CAPITALS.get(_key(country))
    if found is None:
        raise ToolError(f"no country named {country!r}")
    return {"capital": found}


@tool
def city_weather(city: str) -> Weather:
    """Current weather in a city: temperature in Celsius and conditions."""
    found = WEATHER.get(_key(city))
    if found is None:
        raise ToolError(f"no weather station in {city!r}")
    return {"city": city, "temperature_c": found[0], "conditions": found[1]}


@tool
def search_products(name: str) -> Product:
    """Search the shop's catalogue by product name; returns the best match with its id and price."""
    key = _key(name).removesuffix("s")
    for product, (pid, price) in PRODUCTS.items():
        if product == key or product in _key(name):
            return {"product_id": pid, "name": product.title(), "price_usd": price}
    raise ToolError(f"no product matches {name!r}")


@tool
def place_order(product_id: ProductId, quantity: int) -> Order:
    """Buy a quantity of a product by its id."""
    price = next((p for pid, p in PRODUCTS.values() if pid == product_id), None)
    if price is None:
        raise ToolError(f"no product with id {product_id!r}")
    if quantity < 1:
        raise ToolError("quantity must be at least 1")
    return {"order_id": f"O-{product_id[2:]}-{quantity}", "total_usd": round(price * quantity, 2)}


@tool
def convert_currency(amount: float, from_currency: Currency, to_currency: Currency) -> Money:
    """Convert an amount of money from one currency to another."""
    value = amount / RATES_PER_USD[from_currency] * RATES_PER_USD[to_currency]
    return {"amount": round(value, 2), "currency": to_currency}


@tool
def find_employee(name: str) -> Employee:
    """Look up an employee by full name: their id, work email and start date."""
    found = STAFF.get(_key(name))
    if found is None:
        raise ToolError(f"no employee named {name!r}")
    return {"employee_id": found[0], "email": found[1], "start_date": found[2]}


@tool
def send_email(to: Email, subject: str) -> Sent:
    """Send an email with a subject line to an address."""
    if "@" not in to:
        raise ToolError(f"{to!r} is not an email address")
    return {"message_id": f"M-{zlib.crc32(f'{to}|{subject}'.encode()) % 10000:04d}", "to": to}


IMPLIED_TOOLS: list[ToolSpec] = [
    capital_of,
    city_weather,
    search_products,
    place_order,
    convert_currency,
    find_employee,
    send_email,
]


# --- the second implied set's tools (``local_implied.IMPLIED_2``), written with it, before its first run ---

Iata = Annotated[str, Field(pattern="^[A-Z]{3}$", description="A three-letter IATA airport code.")]
FlightId = Annotated[str, Field(pattern="^FL[0-9]{4}$", description="A flight id such as FL1234.")]
Ticker = Annotated[str, Field(pattern="^[A-Z]{1,5}$", description="A stock ticker symbol.")]
RecipeId = Annotated[str, Field(pattern="^R-[0-9]{3}$", description="A recipe id such as R-123.")]
IsoDay = Annotated[str, Field(pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}$", json_schema_extra={"format": "date"})]

AIRPORTS = {
    "denver": ("DEN", "Denver International"),
    "chicago": ("ORD", "O'Hare International"),
    "lisbon": ("LIS", "Humberto Delgado"),
}
FLIGHTS = {("DEN", "ORD", "2025-06-03"): ("FL2041", 189.0)}
TICKERS = {"nordwind motors": "NWM", "halvard foods": "HLVD"}
QUOTES = {"NWM": 41.25, "HLVD": 12.8}
RECIPES = {"shakshuka": ("R-114", 310, 4), "lentil soup": ("R-207", 240, 6)}
CUSTOMERS = {"priya nair": ("C-501", "priya.nair@acme.test"), "tomas berg": ("C-502", "tomas.berg@acme.test")}


class Airport(TypedDict):
    iata_code: str
    airport_name: str


class Flight(TypedDict):
    flight_id: str
    price_usd: float


class Booking(TypedDict):
    booking_ref: str


class Symbol(TypedDict):
    symbol: str


class Quote(TypedDict):
    symbol: str
    price: float


class Recipe(TypedDict):
    recipe_id: str
    calories_per_serving: int
    servings: int


class Scaled(TypedDict):
    recipe_id: str
    servings: int


class Customer(TypedDict):
    customer_id: str
    email: str


class Ticket(TypedDict):
    ticket_id: str


@tool
def lookup_airport(city: str) -> Airport:
    """The main airport of a city, with its IATA code."""
    found = AIRPORTS.get(_key(city))
    if found is None:
        raise ToolError(f"no airport for {city!r}")
    return {"iata_code": found[0], "airport_name": found[1]}


@tool
def search_flights(origin: Iata, destination: Iata, date: IsoDay) -> Flight:
    """Find a flight between two airports on a day."""
    found = FLIGHTS.get((origin, destination, date))
    if found is None:
        raise ToolError(f"no flight from {origin} to {destination} on {date}")
    return {"flight_id": found[0], "price_usd": found[1]}


@tool
def book_flight(flight_id: FlightId, passenger: str) -> Booking:
    """Book a seat on a flight for a passenger."""
    return {"booking_ref": f"BK-{flight_id[2:]}-{_key(passenger)[:3].upper()}"}


@tool
def company_ticker(company: str) -> Symbol:
    """The stock ticker symbol a listed company trades under."""
    found = TICKERS.get(_key(company).removesuffix("'s").removesuffix("'"))
    if found is None:
        raise ToolError(f"no listed company named {company!r}")
    return {"symbol": found}


@tool
def stock_quote(symbol: Ticker) -> Quote:
    """The latest share price for a ticker symbol."""
    if symbol not in QUOTES:
        raise ToolError(f"no quote for {symbol!r}")
    return {"symbol": symbol, "price": QUOTES[symbol]}


@tool
def recipe_lookup(dish: str) -> Recipe:
    """Look up a recipe by dish name: its id, calories per serving and servings."""
    found = RECIPES.get(_key(dish).removesuffix(" recipe"))
    if found is None:
        raise ToolError(f"no recipe for {dish!r}")
    return {"recipe_id": found[0], "calories_per_serving": found[1], "servings": found[2]}


@tool
def scale_recipe(recipe_id: RecipeId, servings: int) -> Scaled:
    """Rescale a recipe to a number of servings."""
    if recipe_id not in {r[0] for r in RECIPES.values()}:
        raise ToolError(f"no recipe {recipe_id!r}")
    return {"recipe_id": recipe_id, "servings": servings}


@tool
def customer_by_name(name: str) -> Customer:
    """Find a customer account by the customer's name."""
    found = CUSTOMERS.get(_key(name))
    if found is None:
        raise ToolError(f"no customer named {name!r}")
    return {"customer_id": found[0], "email": found[1]}


@tool
def open_ticket(customer_email: Email, summary: str) -> Ticket:
    """Open a support ticket for a customer, with a one-line summary."""
    return {"ticket_id": f"T-{zlib.crc32(f'{customer_email}|{summary}'.encode()) % 1000:03d}"}


IMPLIED_TOOLS_2: list[ToolSpec] = [
    lookup_airport,
    search_flights,
    book_flight,
    company_ticker,
    stock_quote,
    recipe_lookup,
    scale_recipe,
    customer_by_name,
    open_ticket,
]
