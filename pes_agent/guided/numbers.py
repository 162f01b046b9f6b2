"""Numbers as guided mode reads them: one pattern for a number an answer or a call writes, and one
reader of its value, shared by the answer checks, the run's accounting and the argument options.
"""

from __future__ import annotations

import re

__all__ = ["AMOUNT", "as_number", "number_value"]

AMOUNT = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")
"""A number as an answer or a call writes it, thousands commas allowed ("1,240.50")."""


def as_number(text: str) -> float | None:
    """The value of a number written as text ("1,240.50" is 1240.5); None for anything else (a
    version such as "6.3.1" matches number patterns but is no number)."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def number_value(text: str) -> int | float:
    """A number the request writes, as the JSON value a call takes: an integer unless it has a
    decimal point ("$10,000" is 10000, "1.75" is 1.75). ``text`` must be a number."""
    plain = text.replace(",", "")
    return float(plain) if "." in plain else int(plain)
