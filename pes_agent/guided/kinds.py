"""Kinds of arguments as data flow reads them: which values a part states for an argument by
its name, which arguments are alike (each a lookup of its own), which name the tool that gives them,
and which take a number's text.

Decided by argument names, descriptions and schemas, and by the values the request states.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pes_agent.guided.grounding import Candidate, grounded_property
from pes_agent.guided.language import language
from pes_agent.guided.language.en import CLOCK_NAME_WORDS, DATED_NAME_WORDS, ID_NAME_WORDS, PROVENANCE
from pes_agent.guided.named import introduced_values, stated_for
from pes_agent.guided.numbers import as_number
from pes_agent.guided.pairs import GENERIC, dated
from pes_agent.guided.shapes import types_of
from pes_agent.guided.words import name_words, stems

__all__ = [
    "alike",
    "claimed",
    "declared",
    "free_text",
    "identifier",
    "numeric",
    "of_its_kind",
    "shaped",
    "unclaimed",
]


def declared(description: str, producer: str) -> bool:
    """Whether an argument's description says the value comes from the tool: two or more words of
    the tool's name, in order, after a word of provenance ("… extracted from the Search Airport API"
    for ``SkyScrapperSearchAirport``; "a rental branch id" names no source, whatever tool is called
    ``find_rental_branch``)."""
    name = name_words(producer)
    if len(name) < 2 or not description:
        return False
    said = " " + " ".join(re.findall(r"[a-z]+", description.casefold())) + " "
    runs = {" ".join(name[i:j]) for i in range(len(name)) for j in range(i + 2, len(name) + 1)}
    return any(f" {w} {run} " in said or f" {w} the {run} " in said for w in PROVENANCE for run in runs)


_WORDING = frozenset({"description", "title", "examples", "default"})
"""Keys of a schema that word or illustrate a value rather than constrain it."""


def _constraints(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in _WORDING}


def alike(properties: Mapping[str, Any], a: str, b: str, field: str) -> bool:
    """Two arguments of one kind, each a value of its own from a call of its own: the same schema but
    for its wording (description, title, examples, default), with a shape (a pattern, a format), or
    both named for the output ``field`` that fills them (``originSkyId`` and ``destinationSkyId`` for
    ``skyId``; a ``departure_time`` is no second ``departure_date``)."""
    one, two = properties.get(a), properties.get(b)
    if not isinstance(one, Mapping) or not isinstance(two, Mapping) or a == b:
        return False
    if {k: v for k, v in one.items() if k not in _WORDING} != {
        k: v for k, v in two.items() if k not in _WORDING
    }:
        return False
    words = set(stems(field.replace("[0]", " "))) - GENERIC
    return shaped(one) or (bool(words) and words <= set(stems(a)) and words <= set(stems(b)))


def claimed(argument: str, schema: Mapping[str, Any], part: str) -> set[str]:
    """The values the part states beside the argument's name, as text (``named``): the one number,
    and texts that are no numbers and fit the argument ("a loan of $10,000 … a term of 5 years"
    claims no 10,000 for ``loan_term``; "'Inception' released in 2010" no title for ``release_year``)."""
    number = stated_for(argument, part)
    if number is not None and not numeric(schema) and grounded_property(schema, [_candidate(number)]) is None:
        number = None  # "the recipe for 10": no recipe id of the form R-123
    texts = [v for v in introduced_values(argument, part) if as_number(v) is None]
    fitting = grounded_property(schema, [Candidate(value=v, source="step") for v in texts]) if texts else None
    return {str(v).casefold() for v in (fitting or {}).get("enum") or ()} | (
        {str(float(number))} if number is not None else set()
    )


def _candidate(number: float) -> Candidate:
    return Candidate(value=str(int(number)) if float(number).is_integer() else str(number), source="step")


def unclaimed(values: Sequence[Candidate], taken: set[str]) -> list[Candidate]:
    """``values`` less those ``taken`` (``claimed`` by other arguments), as text or as numbers."""
    return [c for c in values if c.value.casefold() not in taken and str(as_number(c.value)) not in taken]


def free_text(schema: Mapping[str, Any]) -> bool:
    """A string of any shape (no format, pattern or options): a number's text is one."""
    return schema.get("type") == "string" and not {"format", "pattern", "enum", "const"} & set(schema)


def numeric(schema: Mapping[str, Any]) -> bool:
    """A number: a field shares a word with it by name only when one name holds the other
    (``total`` for ``total_price``); numbers are everywhere, so "amount" alone ties a loan's amount
    to a tip's, and "interest" a rate to the interest earned."""
    return types_of(schema) & {"number", "integer"} != set()


def shaped(schema: Mapping[str, Any]) -> bool:
    """An argument whose value has a shape (a pattern, a format): a field named in the request fills
    it only when the field's own name speaks of the argument too (an airport code is no start date)."""
    return "pattern" in schema or "format" in schema


_IDENTIFIER = re.compile(r"\S*(?:\d|[-_:.]|[a-z][A-Z])\S*")
"""An identifier as written: one token with a digit, a joiner or a capital inside it ("RS-3307",
"ChIJ8f2", "user_42"); "Las Vegas" and "Houston" are names, not ids."""


def identifier(argument: str) -> bool:
    """Whether an argument's name asks for an identifier (``business_id``, ``courseId``)."""
    words = name_words(argument)
    return bool(words) and words[-1] in ID_NAME_WORDS


def of_its_kind(argument: str, schema: Mapping[str, Any], value: str) -> bool:
    """Whether a value the request states can be a free text argument's at all, by what its name
    asks for: an id is written as an identifier, a clock time is no date. A value that cannot leaves
    the argument to an earlier step's output (``dataflow``): "Find open nightclubs in Las Vegas and
    show their reviews" holds no business id, so the search that gives one is planned first. (A kind
    or a name of something is not judged so: the request often gives it in plain words no value
    reads, "the sales data for laptops", and a lookup planned for it finds some other thing.)"""
    if not free_text(schema):
        return True
    words = name_words(argument)
    if identifier(argument):
        return _IDENTIFIER.fullmatch(value.strip()) is not None
    if CLOCK_NAME_WORDS & set(words) and not DATED_NAME_WORDS & set(words):
        return not (dated(value) and not language().times(value))
    return True
