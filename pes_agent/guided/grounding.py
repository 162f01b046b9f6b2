"""Grounded options: what a small model may choose from instead of writing values itself.

A 135M-parameter model under a grammar writes well-formed JSON, but what it writes is often copied
from the prompt's hints or invented. It is good at one thing: picking among a few options it can
see. This module finds those options, purely from text and data:

- the *spans* of a text a value can be copied from: quoted text, dates, numbers, capitalised names
  and content words;
- the *leaves* of earlier tool outputs (numbers, short strings), each also reachable as a
  ``$step.path`` reference for long values;
- a property's schema narrowed to those candidates (only candidates that are valid for it), and for
  free strings also compositions of grounded pieces (``42 * 3`` from 42 and 3), so every number and
  span in a value was seen in the query or a result.

Nothing here knows any tool, domain or benchmark: the same rules apply to every tool set.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from referencing.exceptions import Unresolvable

from pes_agent.gate.references import reference_text
from pes_agent.guided.arithmetic import Operation
from pes_agent.guided.examples import example_shapes, shaped_like
from pes_agent.guided.language import language
from pes_agent.guided.language.en import NAME_PARTICLES, STOPWORDS, STREET_WORDS
from pes_agent.guided.numbers import as_number
from pes_agent.guided.phrases import phrases
from pes_agent.guided.quotes import ADDRESS, mask_quotes
from pes_agent.llm.composition import COMPOSED_LEFT, COMPOSED_OF, COMPOSED_OPS, COMPOSED_RIGHT, COMPOSED_TWICE

__all__ = [
    "is_choice",
    "Candidate",
    "checking",
    "composable",
    "composition_pieces",
    "explicit_values",
    "grounded_property",
    "holds_data",
    "leaves",
    "output_candidates",
    "stated_names",
    "text_spans",
]

MAX_CANDIDATES = 24
"""Options offered for one value: enough for any clause, few enough to choose among."""
MAX_LIST_ITEMS = 3
"""Items of a grounded list: a step passes on a few values, not everything it saw."""
LONG_VALUE = 80
"""An earlier result longer than this (in characters) is offered as its ``$step.path`` reference."""

_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b")
_NUMBER = re.compile(r"(?<![\w.])(?<![^\W\d_]-)-?\d+(?:[.,]\d+)*(?:\.\d+)?(?![\w])")
_WORD = re.compile(r"[^\W\d_][\w'-]*")
_RANGE = re.compile(r"(?<![\w.,-])\d+(?:[-–]\d+)+(?![\w-]|[.,]\d)")
"""Numbers joined by dashes: a season, a score, a range of years ("2019-2020", "3-1"), a code
written in groups ("0412-88317", "555-123-4567"): one value, then its numbers."""
_STREET = re.compile(
    rf"(?<![\w.,-])\d+[A-Za-z]?\s+(?:[A-Za-z][\w'-]*\s+){{0,3}}(?:{'|'.join(sorted(STREET_WORDS))})\b\.?",
    re.IGNORECASE,
)
"""A street address: a house number, up to three words, a street word ("123 main street", "14 Elm
Road"): one value, never its number alone."""
_CAPITALISED_WORD = r"(?:[A-Z](?:\.[A-Z])+\.?|[A-Z][\w'-]*)"
_PARTICLE = "|".join(re.escape(p) for p in NAME_PARTICLES)
_CAPITALISED = re.compile(rf"\b{_CAPITALISED_WORD}(?:\s+(?:(?:{_PARTICLE})\s+)?{_CAPITALISED_WORD})*")
"""A name: capitalised words ("Washington D.C." whole), a particle between two of them ("Battle of
Stalingrad", "R vs Adams")."""
_AT_PARTICLE = re.compile(rf"\s+(?:{_PARTICLE})\s+")


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One value a model may pick: a literal, or a reference to an earlier result."""

    value: Any
    source: str
    """Where it was seen: ``query``, ``step`` (this step's part of the query) or a step id."""
    path: str = ""
    """For an earlier output's leaf, its path there (``words``, ``results[0].url``)."""


def explicit_values(text: str) -> list[str]:
    """The values a text states outright: quoted text, addresses, dates and numbers, in digits or
    in words ("three children": 3) (``text_spans`` without names and words). An argument one of
    them fills was given by the request."""
    return _stated(text)[0]


def _stated(text: str) -> tuple[list[str], str]:
    """The values stated outright, most specific first, and the text left once they are taken out
    (where names and words are read)."""
    masked, quotes = mask_quotes(text)
    plain = re.sub(r"\x00\d+\x00", " ", masked)
    found = [*quotes, *(m.group(0).rstrip(".") for m in ADDRESS.finditer(plain))]
    plain = ADDRESS.sub(" ", plain)
    found += [m.group(0) for m in _DATE.finditer(plain)]
    plain = _DATE.sub(" ", plain)
    for day in language().dates(plain):
        found += [day.text, day.iso]
        plain = plain.replace(day.text, " ")
    for month in language().months(plain):
        found += [month.text, month.iso]
        plain = plain.replace(month.text, " ")
    for time in language().times(plain):
        found.append(time.text)
        plain = plain.replace(time.text, " ", 1)
    found += [m.group(0) for m in _RANGE.finditer(plain)]  # "2019-2020", "0412-88317": whole first
    for street in _STREET.finditer(plain):
        found.append(street.group(0))
    plain = _STREET.sub(" ", plain)
    found += [m.group(0) for m in _NUMBER.finditer(plain)]
    found += [count.text for count in language().counts(plain)]  # "two adults": 2 (``_typed``)
    return found, plain


def text_spans(text: str, actions: Collection[str] = ()) -> list[str]:
    """Values a text offers, most specific first: quoted text, addresses (emails, URLs), dates,
    numbers, names, words. Values stay whole: a date is one value, as written and as ISO 8601
    ("01/15/2024", "2024-01-15"), never its numbers; an email is never its words; a name of several
    words ("Tel Aviv") is never one of them alone, and is offered without its possessive ("Lena
    Brook's" → "Lena Brook"). ``actions``: stemmed words of the tools at hand, which name the work,
    not its data: no such word is offered ("Email", "subject" for an email tool), and a name run that
    opens the sentence with one ("Email Omar Haddad") starts after it."""
    found, plain = _stated(text)
    names = _names(plain, actions)
    found.extend(names)
    inside = {w for n in names if len(n.split()) > 1 for w in n.split()}
    openers = {m.group(1) for m in re.finditer(r"(?:^|[.!?;]\s+)\W*([^\W\d_][\w'-]*)", plain)}

    def data(w: str) -> bool:
        return (
            len(w) > 2
            and w not in openers  # a sentence's first word is its action ("Analyze …"), not data
            and w.lower() not in STOPWORDS
            and language().name_core(w) not in inside
            and language().stem(w.casefold()) not in actions
        )

    found.extend(phrases(plain, data))
    return list(dict.fromkeys(s.strip() for s in found if s.strip()))


def stated_names(text: str, actions: Collection[str] = ()) -> list[str]:
    """The names a text writes (capitalised runs that are not a sentence's first word), outside
    its quotes, addresses, dates and numbers; ``actions`` as in ``text_spans``."""
    return _names(_stated(text)[1], actions)


def _names(plain: str, actions: Collection[str]) -> list[str]:
    """Names, each whole first; a name with a particle is also offered in its pieces ("Lena Brook
    of Sales" may name Lena Brook)."""
    names = [
        _numbered(m, plain, _name(m, plain, actions))
        for m in _CAPITALISED.finditer(plain)
        if _is_name(m, plain)
    ]
    pieces = [p for n in names if _AT_PARTICLE.search(n) for p in _AT_PARTICLE.split(n)]
    return [n for n in [*names, *pieces] if n]


def _numbered(match: re.Match[str], text: str, name: str) -> str:
    """A street's name with the house number written before it ("14 Elm Road"): one address."""
    number = re.search(r"(?<![\w.,])\d+[A-Za-z]?\s+$", text[: match.start()])
    last = name.split()[-1].casefold() if name.split() else ""
    return f"{number.group(0)}{name}" if number and last in STREET_WORDS and name == match.group(0) else name


def _name(match: re.Match[str], text: str, actions: Collection[str]) -> str:
    """A capitalised run as a name: past an opening word that is the tool's action, without a
    possessive."""
    words = match.group(0).split()
    opens = text[: match.start()].rstrip() == "" or text[: match.start()].rstrip()[-1:] in ".!?;"
    if opens and len(words) > 1 and actions and language().stem(words[0].casefold()) in actions:
        words = words[1:]
    return language().name_core(" ".join(words))


def output_candidates(step_id: str, output: Any) -> list[Candidate]:
    """An earlier output's leaves: short ones as values, long ones as ``$step.path`` references."""
    out = []
    for path, value in leaves(output):
        if isinstance(value, str) and len(value) > LONG_VALUE:
            out.append(Candidate(value=reference_text(step_id, path), source=step_id, path=path))
        elif value is not None and not isinstance(value, bool):
            out.append(Candidate(value=value, source=step_id, path=path))
    return out


def composition_pieces(candidates: Iterable[Candidate]) -> list[str]:
    """The numbers among ``candidates`` as text, for values composed of them (``42 * 3``)."""
    pieces = []
    for c in candidates:
        if isinstance(c.value, int | float) and not isinstance(c.value, bool):
            pieces.append(_number_text(c.value))
        elif isinstance(c.value, str) and _NUMBER.fullmatch(c.value.strip()):
            pieces.append(c.value.strip().replace(",", ""))
    return list(dict.fromkeys(pieces))


def is_choice(schema: Mapping[str, Any]) -> bool:
    """A schema that is already a choice (an ``enum``, a ``const``, a boolean): nothing in the
    request grounds it, its options are named or not."""
    return "enum" in schema or "const" in schema or schema.get("type") == "boolean"


def grounded_property(
    schema: Mapping[str, Any], candidates: Sequence[Candidate], operation: Operation | None = None
) -> dict[str, Any] | None:
    """``schema`` narrowed to the candidates valid for it, or None when none is (or it already is
    a choice: enum, const, boolean). Free strings may also be compositions of grounded numbers,
    joined by the ``operation`` the step's words name (any operator when None)."""
    if is_choice(schema):
        return None
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, Mapping):
        return _grounded_list(schema, items, candidates, operation)
    validator = checking(schema)
    shapes = example_shapes(schema)
    options: list[Any] = []
    for candidate in candidates:
        for value in _typed(candidate.value, schema):
            if value not in options and _valid(validator, value) and shaped_like(value, shapes):
                options.append(value)
    options = options[:MAX_CANDIDATES]
    pieces = composition_pieces(candidates) if composable(schema, validator) else []
    if pieces and operation is not None:  # "double it": the 2 its words carry joins the operands
        pieces += [n for n in operation.implied if not any(_same_number(n, p) for p in pieces)]
    marks = _operation_marks(operation, pieces)
    composing = len(pieces) >= 2 or COMPOSED_TWICE in marks  # "multiply 11 by 11": one piece, twice
    if composing and "pattern" in schema:
        # an expression field with numbers to combine: the operation, not one of its operands
        options = [o for o in options if not _NUMBER.fullmatch(str(o).strip())]
    if not options and not composing:
        return None
    alternatives: list[dict[str, Any]] = [{"enum": options}] if options else []
    if composing:
        alternatives.append({"type": "string", COMPOSED_OF: pieces, **marks})
    narrowed = {k: v for k, v in schema.items() if k in ("description", "title")}
    if len(alternatives) == 1:
        return {**narrowed, **alternatives[0]}
    return {**narrowed, "anyOf": alternatives}


def _grounded_list(
    schema: Mapping[str, Any],
    items: Mapping[str, Any],
    candidates: Sequence[Candidate],
    operation: Operation | None,
) -> dict[str, Any] | None:
    """A list whose items are each a grounded option (``urls`` from an earlier search's results)."""
    narrowed = grounded_property(items, candidates, operation)
    if narrowed is None:
        return None
    count = len(narrowed.get("enum") or ()) or 1
    most = min(int(schema.get("maxItems", MAX_LIST_ITEMS)), MAX_LIST_ITEMS, count)
    low = min(int(schema.get("minItems", 1)), most)
    return {
        **{k: v for k, v in schema.items() if k in ("description", "title")},
        "type": "array",
        "items": narrowed,
        "minItems": max(low, 1),
        "maxItems": max(most, 1),
    }


def _operation_marks(operation: Operation | None, pieces: Sequence[str]) -> dict[str, Any]:
    """The schema marks that narrow a composition to ``operation`` (``llm.composition``): its
    operators, and the pieces each side must take, kept only when such a piece is offered."""
    if operation is None:
        return {}
    marks: dict[str, Any] = {COMPOSED_OPS: operation.operators}
    for key, numbers in (
        (COMPOSED_LEFT, operation.left),
        (COMPOSED_RIGHT, operation.right),
        (COMPOSED_TWICE, operation.twice),
    ):
        offered = [p for p in pieces if any(_same_number(p, n) for n in numbers)]
        if offered:
            marks[key] = offered
    return marks


def _same_number(a: str, b: str) -> bool:
    return (number := as_number(a)) is not None and number == as_number(b)


def _is_name(match: re.Match[str], text: str) -> bool:
    """A capitalised run that is not just a sentence's first word ("Between", "Convert"), nor a
    stopword written with its first letter up ("Them"); one written all in capitals is an acronym
    ("the US", "our IT desk"), whatever word its letters spell."""
    run = match.group(0)
    words = run.split()
    opens = text[: match.start()].rstrip() == "" or text[: match.start()].rstrip()[-1:] in ".!?;"
    if opens and len(words) == 1:
        return False
    return (len(run) > 1 and run.isupper()) or run.lower() not in STOPWORDS


def checking(schema: Mapping[str, Any]) -> Draft202012Validator:
    """A validator that checks ``format`` too: a word is no ``format: email``, "18" no date."""
    return Draft202012Validator(dict(schema), format_checker=Draft202012Validator.FORMAT_CHECKER)


def _valid(validator: Draft202012Validator, value: Any) -> bool:
    """A schema the validator cannot read (a dangling ``$ref``) offers no candidate, never raises."""
    try:
        return bool(validator.is_valid(value))
    except Unresolvable:  # a dangling $ref (jsonschema wraps referencing's error)
        return False


def composable(schema: Mapping[str, Any], validator: Draft202012Validator) -> bool:
    """A string that may hold arithmetic of grounded numbers: free, or with a pattern that
    admits "1 + 2" (an expression field)."""
    types = schema.get("type")
    is_string = types == "string" or (isinstance(types, list) and "string" in types)
    if not is_string or any(k in schema for k in ("enum", "const", "format")):
        return False
    return "pattern" not in schema or _valid(validator, "1 + 2")


def _typed(value: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    """``value`` as each JSON type the schema may want (the text "84" is also the number 84); a
    count in words is only its number: "two adults" gives ``adults`` 2 and no museum's name "two";
    being no digits, it is never an operand of arithmetic ("add the two prices" adds the prices)."""
    counted = language().counts(value) if isinstance(value, str) else []
    if len(counted) == 1 and counted[0].text == value.strip():  # "two" is 2, never a name
        yield counted[0].value
        return
    yield value
    if isinstance(value, str):
        number = as_number(value.strip()) if _NUMBER.fullmatch(value.strip()) else None
        if number is not None:  # not a version ("6.3.1"), which the number pattern also reads
            yield int(number) if number.is_integer() else number
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield _number_text(value)
        if isinstance(value, float) and value.is_integer():
            yield int(value)


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, scalar)`` for each leaf of an output (a JSON text read as data; lists' first 8 items),
    each path spelled as a ``$step`` reference spells it (``results[0].url``)."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, Mapping):
        for key, child in value.items():
            yield from leaves(child, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for i, child in enumerate(value[:8]):
            yield from leaves(child, f"{path}[{i}]")
    else:
        yield path, value


def holds_data(part: str) -> bool:
    """Whether a part carries values to act on: a number, a date or quoted text."""
    masked, quotes = mask_quotes(part)
    return bool(quotes) or any(c.isdigit() for c in re.sub(r"\x00\d+\x00", " ", masked))
