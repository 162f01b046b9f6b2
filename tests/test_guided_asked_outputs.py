"""What a part asks for is decided by the output fields it names, and "that amount" is a result
already found.

A shop's sales kit no benchmark uses: a sales report, a sales tax, a tip and a loan calculator, all
of which "calculate". Checked is what a user sees in the plan: the report for "the total sales"
(not a tax fed by it), and the tax of "that amount" taken from the report, not from a tip
calculated on the way.
"""

from __future__ import annotations

from typing import TypedDict

from pes_agent.guided.dataflow import ToolShape, implied_steps
from pes_agent.guided.prompts import guided_plan_schema
from pes_agent.tools.decorators import tool


class Report(TypedDict):
    total_sales: float
    average_sales_per_day: float


class Tax(TypedDict):
    sales_tax: float


class Tip(TypedDict):
    tip_amount: float


class Payment(TypedDict):
    monthly_payment: float


@tool
def sales_report(product_type: str, start_date: str, end_date: str) -> Report:
    """Analyze the sales data of a product type over a period (dates as YYYY-MM-DD)."""
    return {"total_sales": 1200.0, "average_sales_per_day": 13.2}


@tool
def sales_tax(amount: float, tax_rate: float) -> Tax:
    """Calculate the sales tax on a purchase."""
    return {"sales_tax": amount * tax_rate}


@tool
def tip(bill_total: float, tip_percentage: float) -> Tip:
    """Calculate the tip amount for a bill."""
    return {"tip_amount": bill_total * tip_percentage / 100}


@tool
def loan_payment(principal: float, interest_rate: float, loan_term: int) -> Payment:
    """Calculate the monthly loan payment."""
    return {"monthly_payment": principal * interest_rate / 1200 + principal / (12 * loan_term)}


TOOLS = [sales_report, sales_tax, tip, loan_payment]
SUMMARIES = {t.name: t.summary for t in TOOLS}
SCHEMAS = {t.name: t.input_schema for t in TOOLS}
OUTPUTS = {t.name: t.output_schema for t in TOOLS if t.output_schema is not None}
SHAPES = {
    t.name: ToolShape(
        name=t.name, input_schema=t.input_schema, output_schema=t.output_schema, description=t.summary
    )
    for t in TOOLS
}
PARTS = [
    "Calculate the total sales for the product 'Kettles' between 2024-01-01 and 2024-03-31",
    "then calculate the sales tax for that amount with a tax rate of 5%",
]


def test_the_part_naming_a_tools_output_whole_is_that_tool_not_one_it_feeds() -> None:
    schema = guided_plan_schema(PARTS[:1], SUMMARIES, SCHEMAS, OUTPUTS)
    assert schema["properties"][PARTS[0]]["enum"] == ["sales_report"]


def test_that_amount_is_the_earlier_result_not_a_new_calculation() -> None:
    steps = implied_steps("sales_tax", PARTS[1], PARTS[0], SHAPES, earlier={"sales_report": "step_1"})
    assert [s.tool for s in steps] == ["sales_tax"]
    assert [(b.argument, b.step_id) for b in steps[0].bindings] in ([("amount", "step_1")], [])
