"""Choices a part of the query narrows: which tools may do it, which enum values it names, which
earlier field it means.

All by words: a part names its action ("convert", "add"), the options it wants ("to miles"), the
earlier result it uses ("the word count"). Nothing here knows a tool or a domain; the words come
from the query, the tools' own names and descriptions, the schemas' options and the outputs' keys.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator

from pes_agent.guided.arithmetic import named_operation, operation_verbs, operation_words
from pes_agent.guided.grounding import Candidate, composable, grounded_property, text_spans
from pes_agent.guided.language import language
from pes_agent.guided.language.en import SOURCE_WORDS
from pes_agent.guided.layouts import in_layout
from pes_agent.guided.options import described, named
from pes_agent.guided.quotes import without_quotes
from pes_agent.guided.words import meanings, name_words, stems

__all__ = [
    "named_options",
    "best_fitting",
    "can_ground",
    "described",
    "enum_choices",
    "introduced_choice",
    "lead_scores",
    "named_leaves",
    "tool_choices",
    "tool_options",
    "tool_scores",
]


def named_leaves(
    candidates: Sequence[Candidate], part: str, actions: Collection[str] = ()
) -> list[Candidate]:
    """The earlier-output candidates whose field the part names ("the word count" → ``words``,
    "the capital's name" → ``capital``); none when it names no field. ``actions``: stemmed words
    of the names of the tools at work, which name the work, not a result: "find flights" names no
    ``relevantFlightParams`` of an airport found before."""
    wanted = set(stems(part)) - set(actions)
    return [c for c in candidates if c.path and wanted & set(stems(c.path))]


def can_ground(input_schema: Mapping[str, Any], part: str, before: str) -> bool:
    """Whether a tool's required arguments could take values grounded for this part.

    ``before`` is the text of the query's earlier parts; when there is any, an earlier result may
    supply a value, so only choices (an ``enum``) must be named, here or before. A first part must
    hold a valid value for every required argument itself: a date tool for a part with no date is
    not the part's tool. A value with a shape (``pattern``, ``format``) must show in this part or an
    earlier one in any case: "add 10 to the result" is no date arithmetic when no date was given.
    """
    properties: Mapping[str, Any] = input_schema.get("properties") or {}
    spans = [Candidate(value=s, source="step") for s in text_spans(part)]
    for name in input_schema.get("required") or ():
        schema = properties.get(name)
        if not isinstance(schema, Mapping) or schema.get("type") == "boolean" or "const" in schema:
            continue
        items = schema.get("items")
        options = items if schema.get("type") == "array" and isinstance(items, Mapping) else schema
        if "enum" in options:  # a choice, or a list of choices ("paper, glass and plastic" bins)
            if not (_names_any(options, part) or (before and _names_any(options, before))):
                return False
        elif (
            _constrained(schema) and not composable(schema, Draft202012Validator(dict(schema)))
        ) or not before:
            seen = (
                spans + [Candidate(value=s, source="query") for s in text_spans(before)] if before else spans
            )
            seen = [Candidate(value=v, source="step") for v in in_layout(schema, f"{before} {part}")] + seen
            if grounded_property(schema, seen) is None:
                return False
    return True


def best_fitting(
    choices: Sequence[str], schemas: Mapping[str, Mapping[str, Any]], part: str, before: str
) -> list[str]:
    """Of the tools a part's words point to equally, those its own values fit best (``fit``).

    Words tie where a catalogue has near neighbours: "add 15 and 27" shares "add" with a calculator
    and with a tool that "adds a comment"; "add 5 to that number" shares "add" and "number" with
    the calculator and with ``add_days``. A small model then picks either, and the run reports
    success with a comment posted or a date moved. What the part holds tells them apart: numbers and
    an operation fit an expression field, not an id and a text; a part with no date does not fit a
    tool that needs one."""
    if len(choices) < 2:
        return list(choices)
    fits = {n: fit(schemas[n], part, before) if n in schemas else 0 for n in choices}
    best = max(fits.values())
    return [n for n in choices if fits[n] == best]


def fit(input_schema: Mapping[str, Any], part: str, before: str) -> int:
    """How well the part's own values fit a tool's required arguments: +1 for each that takes one
    of them by its kind (an option the part names, a shaped value such as a date it holds, a
    number for a numeric argument, an operation on numbers for an expression field), -1 for a
    shaped value the part does not hold (it would be taken from data an earlier step used). Free
    text takes anything, so it tells nothing: 0."""
    properties: Mapping[str, Any] = input_schema.get("properties") or {}
    spans = [Candidate(value=s, source="step") for s in text_spans(part)]
    numbers = sum(bool(_NUMBER_SPAN.fullmatch(c.value)) for c in spans)
    operation = named_operation(part)
    arithmetic = operation is not None and (numbers + len(operation.implied) >= 2 or bool(before))
    total = 0
    for name in input_schema.get("required") or ():
        schema = properties.get(name)
        if not isinstance(schema, Mapping) or schema.get("type") == "boolean" or "const" in schema:
            continue
        validator = Draft202012Validator(dict(schema))
        if "enum" in schema:
            total += int(_names_any(schema, part))
        elif _constrained(schema) and composable(schema, validator):  # an expression field
            total += int(arithmetic)
        elif _constrained(schema):
            laid = [Candidate(value=v, source="step") for v in in_layout(schema, part)]
            total += 1 if grounded_property(schema, laid + spans) is not None else -1
        elif schema.get("type") in ("number", "integer"):
            total += int(numbers > 0)
    return total


_NUMBER_SPAN = re.compile(r"-?\d+(?:[.,]\d+)*")


def _constrained(schema: Mapping[str, Any]) -> bool:
    """A value with a shape (a date, a code): it must be seen somewhere in the query. (Arithmetic
    of numbers is the exception: earlier results supply the numbers.)"""
    return "pattern" in schema or "format" in schema


def named_options(schema: Mapping[str, Any], text: str) -> list[Any]:
    """The options of ``schema``'s enum that ``text`` names, in the order it names them."""
    options = schema.get("enum")
    return named(options, text, described(schema)) if isinstance(options, list) else []


def _names_any(schema: Mapping[str, Any], text: str) -> bool:
    """Whether ``text`` names any option, by its value or by the words the description gives it."""
    return bool(named_options(schema, text))


def tool_options(schemas: Mapping[str, Mapping[str, Any]] | None) -> dict[str, str]:
    """Each tool's argument options (its enums' values) as words, for ``tool_scores``: a tool's
    options are words it understands ("fahrenheit", "Japan"), which its description may never say;
    at 200 tools "turn 212 fahrenheit into celsius" went to a geocoder whose description opens with
    "turn"."""
    return {name: " ".join(_options(schema)) for name, schema in (schemas or {}).items()}


def _options(input_schema: Mapping[str, Any]) -> list[str]:
    """A tool's options: its enums' values, and the description of each enum, which says in words
    what its values stand for when they are codes ("EUR (euros)")."""
    properties = input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    props = [p for p in properties.values() if isinstance(p, Mapping)]
    props += [p["items"] for p in props if p.get("type") == "array" and isinstance(p.get("items"), Mapping)]
    closed = [p for p in props if isinstance(p.get("enum"), list)]  # a choice, or a list of choices
    values = [o for p in closed for o in p["enum"][:MAX_OPTION_WORDS] if isinstance(o, str)]
    about = [p["description"] for p in closed if isinstance(p.get("description"), str)]
    return values + about


MAX_OPTION_WORDS = 50
"""Options of one argument read as the tool's words: a long list (time zones, currencies) would
let any part match something."""


def tool_choices(part: str, tools: Mapping[str, str], options: Mapping[str, str] | None = None) -> list[str]:
    """The tools a part of the query may choose among: those whose name and description share the
    most words with the part (its quoted text left out: that is data, not intent), or every tool
    when none shares a word. A small model picks the first offered tool when it cannot tell; words
    it can see in both places are the evidence it lacks."""
    scores = tool_scores(part, tools, options)
    best = max(scores.values(), default=0)
    if best == 0:
        return list(tools)
    return [name for name, score in scores.items() if score == best]


def tool_scores(
    part: str,
    tools: Mapping[str, str],
    options: Mapping[str, str] | None = None,
    inputs: Mapping[str, str] | None = None,
) -> dict[str, int]:
    """Words each tool's name and description share with the part; its first word counts more, and
    so does the arithmetic it names on its numbers, as its plain verb ("take 2.5 away from it"
    subtracts; "work out 144 divided by 12" divides, whatever works on work orders), and so does
    each of the tool's ``options`` (``tool_options``) the part names: a value the tool takes.

    The names of a tool's ``inputs`` count as its words too, once each ("a principal of 10000" is
    said to the loan tool that takes a principal, whichever description lists more of its inputs),
    but only as written: words of like meaning are looked up in names and descriptions alone (a
    flight search's ``currency`` input is no "value")."""
    words = stems(without_quotes(part))
    lead = set(stems(without_quotes(last_sentence(part)))[:1]) | set(stems(" ".join(operation_verbs(part))))
    words += stems(" ".join(operation_words(part)))
    near = meanings(part, (f"{n} {about} {(options or {}).get(n, '')}" for n, about in tools.items()))
    scores = {}
    for name, about in tools.items():
        said = set(stems(f"{name} {about}"))
        known = said | set(stems((inputs or {}).get(name, "")))
        in_options = set(words) & set(stems((options or {}).get(name, ""))) - known
        scores[name] = (
            len(set(words) & known)
            + LEAD_WEIGHT * len(lead & said)
            + (1 + LEAD_WEIGHT) * len(in_options)
            + sum(1 for alike in near if alike & said)
        )
    return scores


def lead_scores(part: str, tools: Mapping[str, str]) -> dict[str, int]:
    """How many of the part's lead words (its first content word, the arithmetic it names) each
    tool's own name and description hold: what the part asks for, before what it says about it."""
    lead = set(stems(without_quotes(last_sentence(part)))[:1]) | set(stems(" ".join(operation_verbs(part))))
    return {name: len(lead & set(stems(f"{name} {about}"))) for name, about in tools.items()}


def last_sentence(part: str) -> str:
    """The part's last sentence: context sentences joined before it (``grounding.query_parts``) say
    what the ask is about, not what it asks for; and of a sentence that opens as a statement, the
    request inside it ("My dad is paying, so please email the price …": email the price …)."""
    return language().ask_of(re.split(r"[.!?;]\s+", part.strip())[-1])


LEAD_WEIGHT = 2
"""Extra weight of a part's first content word: an instruction opens with its action ("add 10 to
the word count" adds; "word count" there names an earlier result)."""


def introduced_choice(schema: Mapping[str, Any], name: str, text: str, given_in: str = "") -> Any | None:
    """The option ``text`` introduces with a word of the argument's own name: "to miles" for
    ``to_unit``, "from pounds" for ``from_unit``. Argument names carry these words exactly when
    two arguments share one set of options, which is when a small model mixes them up. A source
    (``from_...``, ``source_...``) is also the option a number is given in: "how many feet is 100
    meters" converts from meters; and the option the field a value flows from names (``given_in``:
    an amount taken from ``price_usd`` is given in USD)."""
    options = schema.get("enum")
    if not isinstance(options, list):
        return None
    words = set(name_words(name))
    lowered = " ".join(re.findall(r"[\w-]+", text.casefold()))
    values = {
        o: " ".join(re.findall(r"[\w-]+", o.casefold())) for o in options if isinstance(o, str) and o.strip()
    }
    for option, value in values.items():
        if any(re.search(rf"\b{re.escape(w)} {re.escape(value)}\b", lowered) for w in words):
            return option
    if is_source(name):
        given = [o for o, value in values.items() if re.search(rf"\d {re.escape(value)}\b", lowered)]
        given = given or _amount_in(options, text, described(schema))
        carried = named(options, given_in.replace("_", " "), described(schema)) if given_in else []
        given = given or carried or _suffix_unit(options, given_in)
        return given[0] if len(given) == 1 else None
    return None


def _amount_in(options: Sequence[Any], text: str, words: Mapping[str, str]) -> list[Any]:
    """The options an amount is written in by the words the schema gives them (``described``):
    "500 US dollars", "$100", "EUR 40" (a number right after or right before those words)."""
    found = []
    for option in options:
        written = words.get(option) if isinstance(option, str) else None
        if written and re.search(
            rf"\d\s?{re.escape(written)}(?!\w)|(?<!\w){re.escape(written)}\s?\d", text, re.IGNORECASE
        ):
            found.append(option)
    return found


def _suffix_unit(options: Sequence[Any], field: str) -> list[Any]:
    """The option a field name's short last part abbreviates: ``temperature_c`` is in celsius,
    ``distance_mi`` in miles (the one option that begins with it)."""
    suffix = re.split(r"[_\W]+", field.strip().casefold())[-1] if field.strip() else ""
    if not suffix.isalpha() or len(suffix) > 3:
        return []
    found = [o for o in options if isinstance(o, str) and o.casefold().startswith(suffix)]
    return found if len(found) == 1 else []


def is_source(name: str) -> bool:
    """An argument named for where a value comes from (``from_unit``, ``sourceCurrency``): of a pair
    of arguments sharing one set of options, the one a value is converted from."""
    return bool(SOURCE_WORDS & set(name_words(name)))


def source_taken(schema: Mapping[str, Any], name: str, text: str) -> list[Any]:
    """Options a source argument should not take: those ``text`` names with no number before them.
    "the temperature in Fahrenheit" names the unit wanted, the target; a source names its option
    by a number given in it ("100 meters", ``introduced_choice``) or by "from"."""
    options = schema.get("enum")
    if not is_source(name) or not isinstance(options, list):
        return []
    return named(options, text, described(schema))


def enum_choices(
    schema: Mapping[str, Any], part: str, earlier: Sequence[Any], taken: Collection[Any] = ()
) -> dict[str, Any] | None:
    """An ``enum`` narrowed to the values the part names, less those another argument ``taken`` by
    name (see ``introduced_choice``); failing that, to the values earlier results hold, and failing
    that to any value but the taken ones (two arguments sharing one set of options are a pair, from
    and to: "fahrenheit" to "fahrenheit" converts nothing); None when that leaves nothing or
    everything. What the part names wins: "look up the price of a chair" after a lamp's price is
    about the chair."""
    options = schema.get("enum")
    if not isinstance(options, list):
        return None
    said = named(options, part, described(schema))
    folded = {str(v).casefold() for v in earlier if isinstance(v, str)}
    held = [o for o in options if isinstance(o, str) and o.casefold() in folded]
    kept = [o for o in said if o not in taken] or [o for o in held if o not in taken]
    if not kept:  # what the part names went to the other argument of the pair: any option but that
        kept = [o for o in options if o not in taken] if taken else said
    if not kept or len(kept) == len(options):
        return None
    return {**schema, "enum": kept}
