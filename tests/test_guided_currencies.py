"""Currencies named in words go to a tool as codes, the amount's currency to the source argument."""

from __future__ import annotations

from typing import Any

import pytest

from pes_agent.guided.arguments import guided_arguments_schema
from pes_agent.guided.currencies import as_currency_choice
from pes_agent.guided.language import language
from tests.offered import offered

EXCHANGE = {
    "type": "object",
    "properties": {
        "have": {"type": "string", "description": "Currency you hold"},
        "want": {"type": "string", "description": "Currency you want"},
        "from_ccy": {"type": "string", "description": "Source currency"},
        "sum": {"type": "number"},
    },
    "required": ["from_ccy", "want", "sum"],
}


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("I hold 75 Swiss francs and need Mexican pesos", ["CHF", "MXN"]),
        ("about ¥3000, or in Australian dollars?", ["JPY", "AUD"]),
        ("pay NOK 200", ["NOK"]),
        ("she won the race; the real reason was luck", []),  # words that are no currency alone
    ],
)
def test_currencies_are_read_with_their_codes(text: str, codes: list[str]) -> None:
    assert [c.code for c in language().currencies(text)] == codes


@pytest.mark.parametrize(
    ("part", "source", "target"),
    [
        ("How many Mexican pesos would 75 Swiss francs buy me?", "CHF", "MXN"),
        ("Change €40 into Japanese yen", "EUR", "JPY"),
        ("what is 60 pounds sterling worth in rupees", "GBP", "INR"),
    ],
)
def test_the_amount_s_currency_is_the_source_and_the_other_the_target(
    part: str, source: str, target: str
) -> None:
    schema = guided_arguments_schema(EXCHANGE, part, part, [])
    assert offered(schema, "from_ccy") == [source]
    assert offered(schema, "want") == [target]


def test_a_currency_argument_the_schema_constrains_keeps_its_constraint() -> None:
    lower = {"type": "string", "pattern": "^[a-z]{3}$", "description": "currency code"}
    assert as_currency_choice(lower, "ccy", "in Canadian dollars") == {
        **lower,
        "enum": ["cad"],
        "description": "currency code. cad (Canadian dollars)",
    }


@pytest.mark.parametrize(
    ("schema", "name"),
    [
        ({"type": "string", "description": "Name of the shop"}, "shop"),  # no currency
        (
            {"type": "string", "enum": ["USD", "EUR"], "description": "currency"},
            "currency",
        ),  # a choice already
        ({"type": "number", "description": "amount in the currency"}, "amount"),
    ],
)
def test_other_arguments_are_left_as_they_are(schema: dict[str, Any], name: str) -> None:
    assert as_currency_choice(schema, name, "40 euros in dollars") is None
