"""Lists a request writes out: "[12.4, 15.6, 11.2, 18.9]", "-50000, 10000, 15000 and 20000",
"'New York', 'Boston' and 'Washington D.C.'", "John, Jane, and Jim".

A list argument built item by item from grounded options gets a few items, each a small model's
pick; a list the request states is one value and is offered whole, as written, in order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pes_agent.guided.grounding import checking
from pes_agent.guided.numbers import number_value
from pes_agent.guided.quotes import mask_quotes

__all__ = ["stated_lists"]

_JOIN = r"\s*(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+)"
_NUMBER = r"-?\d+(?:\.\d+)?"
_NUMBERS = re.compile(rf"(?<![\w.,-]){_NUMBER}(?:{_JOIN}{_NUMBER})+(?![\w.]\d|\d)")
_MASKED = r"\x00\d+\x00"
_QUOTES = re.compile(rf"{_MASKED}(?:{_JOIN}{_MASKED})+")
_NAME = r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*"
_NAMES = re.compile(rf"(?<![\w]){_NAME}(?:{_JOIN}{_NAME})+")


def stated_lists(text: str, schema: Mapping[str, Any], *, in_order: bool = False) -> list[list[Any]]:
    """The lists ``text`` writes out that are valid for the array ``schema``, longest first (in the
    order written, with ``in_order``)."""
    masked, quotes = mask_quotes(text)
    found: list[tuple[int, list[Any]]] = []
    for match in _NUMBERS.finditer(masked):
        found.append((match.start(), [number_value(n) for n in re.findall(_NUMBER, match.group(0))]))
    for match in _QUOTES.finditer(masked):
        found.append((match.start(), [quotes[int(i)] for i in re.findall(r"\x00(\d+)\x00", match.group(0))]))
    for match in _NAMES.finditer(re.sub(_MASKED, " ", masked)):
        items = [n.strip() for n in re.split(_JOIN, match.group(0)) if n.strip()]
        found.append((match.start(), items))
    validator = checking(schema)
    valid = [(at, items) for at, items in found if len(items) > 1 and validator.is_valid(items)]
    if in_order:
        return [items for _, items in sorted(valid, key=lambda f: f[0])]
    return [items for _, items in sorted(valid, key=lambda f: len(f[1]), reverse=True)]
