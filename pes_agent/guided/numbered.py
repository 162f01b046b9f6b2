"""Numbered arguments take the request's numbers in the order it writes them.

``charge1``/``charge2``, ``mass1``/``mass2``, ``first_note_frequency``/``second_note_frequency``: a
tool that takes two of one thing numbers them, and the request gives them in that order ("two
charges of 5C and 7C placed 3 meters apart"). Offered every number, a small model puts the
distance in a charge, or one charge in both. Where the numbers written with one unit ("C", "kg",
"Hz", "degrees") are exactly as many as the numbered arguments, or the request writes exactly as
many numbers in all, they go to the arguments in order. Decided by argument names alone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pes_agent.guided.language.en import ORDINALS
from pes_agent.guided.lists import stated_lists
from pes_agent.guided.numbers import number_value

__all__ = ["numbered_lists", "numbered_values"]

_NUMBER = re.compile(r"(?<![\w.,/:-])(-?\d+(?:\.\d+)?)(?:\s*([A-Za-z°µ]+))?(?![\d.])")


def numbered_values(properties: Mapping[str, Any], names: Sequence[str], part: str) -> dict[str, int | float]:
    """Each numbered numeric argument among ``names`` with the number that is its by order; empty
    when the request's numbers do not line up with the arguments."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for name in names:
        schema = properties.get(name)
        if not isinstance(schema, Mapping) or schema.get("type") not in ("integer", "number"):
            continue
        if "enum" in schema:
            continue
        key = _numbered(name)
        if key is not None:
            groups.setdefault(key[0], []).append((key[1], name))
    found = [(m.group(1), (m.group(2) or "").casefold()) for m in _NUMBER.finditer(part)]
    out: dict[str, int | float] = {}
    for members in groups.values():
        if len(members) < 2 or len({i for i, _ in members}) != len(members):
            continue
        ordered = [name for _, name in sorted(members)]
        units = Counter(unit for _, unit in found if unit)
        fitting = [u for u, n in units.items() if n == len(ordered)]
        if len(fitting) == 1:
            numbers = [n for n, unit in found if unit == fitting[0]]
        elif len(found) == len(ordered):
            numbers = [n for n, _ in found]
        else:
            continue
        out |= {name: number_value(n) for name, n in zip(ordered, numbers, strict=True)}
    return out


def numbered_lists(properties: Mapping[str, Any], names: Sequence[str], part: str) -> dict[str, list[Any]]:
    """Each numbered list argument among ``names`` (``group1``/``group2``, ``dataset_A``/``dataset_B``)
    with the list the part writes in its place, when it writes exactly as many lists as they are."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for name in names:
        schema = properties.get(name)
        if isinstance(schema, Mapping) and schema.get("type") == "array" and (key := _numbered(name)):
            groups.setdefault(key[0], []).append((key[1], name))
    out: dict[str, list[Any]] = {}
    for members in groups.values():
        if len(members) < 2 or len({i for i, _ in members}) != len(members):
            continue
        ordered = [name for _, name in sorted(members)]
        lists = stated_lists(part, properties[ordered[0]], in_order=True)
        if len(lists) == len(ordered):
            out |= dict(zip(ordered, lists, strict=True))
    return out


def _numbered(name: str) -> tuple[str, int] | None:
    """An argument name's stem and number: ``mass2`` is (mass, 2), ``second_note_frequency``
    (note_frequency, 2), ``x1`` (x, 1), ``dataset_B`` and ``pointB`` (…, 2); None for a name
    without one."""
    match = re.fullmatch(r"(.*?[A-Za-z])_?(\d)", name)
    if match:
        return match.group(1).casefold(), int(match.group(2))
    match = re.fullmatch(r"(.*?[a-z])_?([A-D])", name)
    if match:
        return match.group(1).casefold(), ord(match.group(2)) - ord("A") + 1
    words = re.split(r"[_\s]+|(?<=[a-z])(?=[A-Z])", name)
    for i, word in enumerate(words):
        if word.casefold() in ORDINALS:
            rest = "_".join(w.casefold() for j, w in enumerate(words) if j != i)
            return (rest, ORDINALS[word.casefold()]) if rest else None
    return None
