"""The local-model benchmark's own tools: unit conversion, two lookup tables and date arithmetic.

Deterministic and offline, like the demo text tools they sit beside. They are the benchmark's, not the
product's: `benchmarks/local_model.py` registers them with ``create_art_instance(config, tools=...)``,
and nothing in ``pes_agent`` knows their names or schemas. Their schemas are as helpful as a tool
author may fairly make them: every closed set is an enum (units, countries, products), dates carry a
``pattern`` and ``format: date``, and outputs are small objects whose keys say what the value is.
Numbers are rounded to two decimals, so the value a later step is handed is the one it was shown.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field

from pes_agent.errors import ToolError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

Unit = Literal["kilometers", "miles", "meters", "feet", "kilograms", "pounds", "celsius", "fahrenheit"]
Country = Literal["Canada", "Egypt", "France", "Germany", "Japan", "Kenya", "Norway", "Peru"]
Product = Literal["backpack", "chair", "lamp", "mug", "notebook", "pen"]
ISO_DATE_PATTERN = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
"""Spelled with ``[0-9]``: llama-cpp-python 0.3.36's grammar converter reads ``\\d`` as a literal
backslash and ``d``, which would force every date argument into an invalid value."""
IsoDate = Annotated[
    str,
    Field(pattern=ISO_DATE_PATTERN, description="Year-month-day.", json_schema_extra={"format": "date"}),
]

_METERS_PER = {"kilometers": 1000.0, "miles": 1609.344, "meters": 1.0, "feet": 0.3048}
_KILOGRAMS_PER = {"kilograms": 1.0, "pounds": 0.45359237}
_TEMPERATURES = ("celsius", "fahrenheit")

COUNTRIES: dict[str, tuple[str, float]] = {
    "Canada": ("Ottawa", 40.1),
    "Egypt": ("Cairo", 112.7),
    "France": ("Paris", 68.2),
    "Germany": ("Berlin", 84.5),
    "Japan": ("Tokyo", 124.5),
    "Kenya": ("Nairobi", 55.1),
    "Norway": ("Oslo", 5.5),
    "Peru": ("Lima", 34.4),
}
"""Country → (capital, population in millions): a fixed table, not live data."""

PRICES_USD: dict[str, float] = {
    "backpack": 45.0,
    "chair": 85.0,
    "lamp": 32.5,
    "mug": 8.25,
    "notebook": 3.5,
    "pen": 1.2,
}
"""Product → price in US dollars: a fixed table."""


def _convert(value: float, from_unit: str, to_unit: str) -> float:
    if from_unit in _METERS_PER and to_unit in _METERS_PER:
        return value * _METERS_PER[from_unit] / _METERS_PER[to_unit]
    if from_unit in _KILOGRAMS_PER and to_unit in _KILOGRAMS_PER:
        return value * _KILOGRAMS_PER[from_unit] / _KILOGRAMS_PER[to_unit]
    if from_unit in _TEMPERATURES and to_unit in _TEMPERATURES:
        if from_unit == to_unit:
            return value
        return value * 9 / 5 + 32 if from_unit == "celsius" else (value - 32) * 5 / 9
    raise ToolError(f"cannot convert {from_unit!r} to {to_unit!r}: they measure different things")


@tool
def convert_units(value: float, from_unit: Unit, to_unit: Unit) -> dict[str, float | str]:
    """Convert a length, mass or temperature from one unit to another."""
    return {"value": round(_convert(value, from_unit, to_unit), 2), "unit": to_unit}


@tool
def country_facts(country: Country) -> dict[str, str | float]:
    """Look up a country's capital city and its population in millions."""
    capital, population = COUNTRIES[country]
    return {"country": country, "capital": capital, "population_millions": population}


@tool
def product_price(product: Product) -> dict[str, str | float]:
    """Look up the price of a product in US dollars."""
    return {"product": product, "price_usd": PRICES_USD[product]}


def _day(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise ToolError(f"{text!r} is not a calendar date (year-month-day)") from exc


@tool
def days_between(start: IsoDate, end: IsoDate) -> dict[str, int]:
    """Count the days between two dates."""
    return {"days": abs((_day(end) - _day(start)).days)}


@tool
def add_days(date: IsoDate, days: int) -> dict[str, str]:
    """Add a number of days to a date (a negative number goes back)."""
    try:
        return {"date": (_day(date) + dt.timedelta(days=days)).isoformat()}
    except OverflowError as exc:
        raise ToolError(f"{date} plus {days} days is outside the calendar") from exc


@tool
def weekday(date: IsoDate) -> dict[str, str]:
    """Tell the day of the week of a date."""
    return {"weekday": _day(date).strftime("%A")}


BENCHMARK_TOOLS: list[ToolSpec] = [
    convert_units,
    country_facts,
    product_price,
    days_between,
    add_days,
    weekday,
]
"""The benchmark's tools beyond the demo text tools (calculator, word_count, transform_text)."""
