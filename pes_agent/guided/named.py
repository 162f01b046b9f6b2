"""Values a request gives an argument by naming it: "a bill of $50", "the title 'Buy groceries'",
"18% tip", "in Celsius", "with a detailed description".

People name the argument when they give a value that matters to them, and a small model, asked to
choose, often puts such a value in the wrong place or leaves an optional argument out. Where the
words right beside a value are the argument's own name's, the value is that argument's; an
optional argument the request names so is given (a small model is otherwise not asked for optional
arguments: it fills them with noise). Decided by argument names, types and the request's words.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from pes_agent.guided.grounding import explicit_values, stated_names
from pes_agent.guided.language import language
from pes_agent.guided.language.en import (
    ARTICLES,
    FLAG_VERBS,
    FRACTION_WORDS,
    NEGATIONS,
    PER_WORDS,
    QUANTITY_WORDS,
    RATE_WORDS,
    SENT_FROM,
    SENT_TO,
    SOURCE_WORDS,
    SPAN_WORDS,
    STOPWORDS,
    TARGET_NAME_WORDS,
    UNITS,
    VALUE_LINKS,
)
from pes_agent.guided.layouts import laid_out, layout_of
from pes_agent.guided.numbers import number_value
from pes_agent.guided.pairs import GENERIC
from pes_agent.guided.words import name_words, stems

__all__ = [
    "as_fraction",
    "converted_for",
    "directed_values",
    "introduced_values",
    "named_optional",
    "stated_for",
]

_NUMBER = r"[$€£]?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)%?"
_LINK = "|".join(re.escape(w) for w in sorted(VALUE_LINKS))
_ASSIGNED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*[=:]\s*(-?\d+(?:\.\d+)?)(?!\w|\.\d)")
"""A name set to a number, as in code or maths: "a=1", "c = -4", "rate: 5"."""

_NEXT_WORD = re.compile(r"\s*([a-z]+)")


def stated_for(name: str, part: str) -> float | int | None:
    """The number the part states beside a word of the argument's name: "to 6 servings" for
    ``servings``, "quantity 3" for ``quantity``, "a bill of $50" for ``bill_total``, "18% tip" for
    ``tip_percentage``; "c = -4" for ``c``; "three children" for ``children``. That number is the
    argument's, though an earlier result holds another (the recipe's own 4 servings); None unless
    exactly one number is stated so."""
    assigned = {number_value(v) for n, v in _ASSIGNED.findall(part) if n.casefold() == name.casefold()}
    if len(assigned) == 1:  # "a=1, b=-3, c=2": the argument's own name, set to a number
        return assigned.pop()
    own = _name_words(name)
    text = part.casefold()
    pairs = [(m.group(1), m.group(2)) for m in re.finditer(rf"(?<![\w.,/:-]){_NUMBER}\s*([a-z]+)", text)]
    pairs += [
        (m.group(2), m.group(1))
        for m in re.finditer(rf"([a-z]+)(?:\s+(?:{_LINK}))?\s*{_NUMBER}(?![-/:.,]?\d)", text)
    ]
    found = {number_value(n) for n, word in pairs if _word_forms(word) & own}
    for count in language().counts(text):  # "three children" for children
        after = _NEXT_WORD.match(text, count.start + len(count.text))
        if after is not None and _word_forms(after.group(1)) & own:
            found.add(count.value)
    return found.pop() if len(found) == 1 else None


def _name_words(name: str) -> set[str]:
    """An argument name's words, stemmed, short units included (``radius_km`` has km)."""
    parts = name_words(name)
    return (set(stems(name)) | {w for w in parts if len(w) == 2}) - GENERIC


def _word_forms(word: str) -> set[str]:
    return set(stems(word)) | ({word} if len(word) == 2 else set())


_BEFORE = 48
"""How far before a value its argument's name is looked for (characters)."""


def introduced_values(name: str, part: str, siblings: Collection[str] = ()) -> list[str]:
    """The values the part states right after a word of the argument's name: "the title 'Buy
    groceries'" for ``title``, "the encryption key 'abc123'" for ``encryption_key``, "the phone
    number 555-0100" for ``phone_number``; or right before it: "the 'Spin Express' class" for
    ``class_name``. Of the two words before a value (joining words such as "of", "the", "and"
    skipped), or the word after it, one must be the name's: the request named the argument and gave
    its value. A word that says nothing of a value ("key", "name") names the argument when none of
    its ``siblings`` (the tool's other arguments) has it: "the key 'abc123'" is ``encryption_key``'s
    beside ``data``."""
    others = {w for sibling in siblings for w in stems(sibling)}
    own = set(stems(name)) - GENERIC
    plain = (set(stems(name)) & GENERIC) - others if siblings else set()  # said right beside the value
    if not own and not plain:
        return []
    found: list[str] = []
    for value in explicit_values(part):
        at = part.find(value)
        if at < 0:
            continue  # another form of a value written otherwise (a date's ISO day)
        window = re.split(r"[.;!?]\s", part[max(0, at - _BEFORE) : at])[-1]  # this sentence's words
        tokens = [t.strip(",:'\"‘’“”") for t in window.split()]
        near = [t for t in tokens if t and t.casefold() not in VALUE_LINKS and t.casefold() not in ARTICLES][
            -2:
        ]
        near = [t for t in near if t.islower()]  # a capitalised word or a value holds no argument's name
        after = re.match(r"['\"’”]?\s*([A-Za-z]+)", part[at + len(value) :])
        beside = (own | plain) & set(stems(near[-1])) if near else set()
        if beside <= plain and _compound(tokens, own):
            beside = set()  # "my user name 'bob'" names the user's name, not ``file_name``
        if (
            beside
            or own & set(stems(" ".join(near)))
            or (after is not None and own & set(stems(after.group(1))))
        ):
            found.append(value)
    return found


def _compound(tokens: list[str], own: Collection[str]) -> bool:
    """Whether the word right before a value, joining words skipped, is itself named by the word
    before it, one not of the argument's name: "user name", "api key" say whose name or key."""
    words = [t for t in tokens if t and t.casefold() not in VALUE_LINKS]
    if len(words) < 2 or not words[-2].islower() or words[-2] in ARTICLES or words[-2] in STOPWORDS:
        return False
    modifier = set(stems(words[-2]))
    return bool(modifier) and not modifier & set(own)


def directed_values(name: str, part: str) -> list[str]:
    """The values the part sends where an argument named for a direction points: after "to" or
    "into" for a target (``target_language``: "translate it into French"), after "from" for a
    source (``source_language``: "from English"). Only names and quoted values: a lower-case word
    after "to" is a verb ("want to know"). A name that is only the direction (an email's ``to``)
    says what goes there by its description, not by the word before it ("to John Doe at john@…").
    The direction opens or closes the name (``to_city``, ``currency_to``): inside it, it relates
    the name's words (``text_to_translate`` is the text, not where it goes)."""
    words = name_words(name)
    ends = {words[0], words[-1]} if words else set()
    way = SENT_TO if ends & TARGET_NAME_WORDS else SENT_FROM if ends & SOURCE_WORDS else None
    if way is None or not set(words) - TARGET_NAME_WORDS - SOURCE_WORDS:
        return []
    found = []
    for value in [*explicit_values(part), *stated_names(part)]:
        for match in re.finditer(rf"(?<!\w){re.escape(value)}(?!\w)", part):  # any of its places
            before = part[: match.start()].rstrip(" '\"‘“").split()
            while before and before[-1].casefold() in ARTICLES:  # "to the US"
                before.pop()
            if before and before[-1].casefold() in way:
                found.append(value)
    return list(dict.fromkeys(found))


def named_optional(properties: Mapping[str, Any], required: Collection[str], part: str) -> dict[str, Any]:
    """The optional arguments the part gives a value by naming them, each with the value when the
    naming decides it (a flag the part names is ``True``) or None when the usual narrowing does: a
    number or text given beside the argument's name, an option of its enum written out ("in
    Celsius"); an argument about a date gets the one date the part states."""
    lowered = part.casefold()
    out: dict[str, Any] = {}
    for name, schema in properties.items():
        if name in required or not isinstance(schema, Mapping):
            continue
        kind = schema.get("type")
        if isinstance(schema.get("enum"), list):
            options = [
                o
                for o in schema["enum"]
                if isinstance(o, str)
                and len(o) > 2
                and o.casefold() not in STOPWORDS
                and o != schema.get("default")
            ]
            if any(re.search(rf"(?<!\w){re.escape(o.casefold())}(?!\w)", lowered) for o in options):
                out[name] = None
        elif kind == "boolean":
            if schema.get("default") is not True and _flag_named(name, lowered):
                out[name] = True
        elif kind in ("integer", "number"):
            if stated_for(name, part) is not None:
                out[name] = None
            elif (converted := converted_for(name, schema, part)) is not None:
                out[name] = converted
        elif kind in ("string", None):
            day = _dated(schema, name, part)
            if day is not None or introduced_values(name, part):
                out[name] = day
    return out


def _flag_named(name: str, lowered: str) -> bool:
    """Whether the part names a flag's subject, not negated: "with detailed description" sets
    ``detail``; "without details" does not."""
    own = set(stems(name)) - GENERIC - FLAG_VERBS
    words = re.findall(r"[a-z']+", lowered)
    for i, word in enumerate(words):
        if own & set(stems(word)) and not NEGATIONS & set(words[max(0, i - 3) : i]):
            return True
    return False


def _dated(schema: Mapping[str, Any], name: str, part: str) -> str | None:
    """For an argument about a date or time, the one the part states: in the layout the argument
    asks for (``layouts``: a ``format``, "YYYY-MM-DD" in its description), else, for an argument
    with "date" in its name, as written."""
    layout = layout_of(schema)
    if layout is not None:
        values = laid_out(layout, part)
        return values[0] if len(values) == 1 else None
    if "date" not in stems(name):
        return None
    days = {d.iso: d.text for d in language().dates(part)}
    days |= {iso: iso for iso in re.findall(r"\b\d{4}-\d{2}-\d{2}\b", part)}
    return next(iter(days.values())) if len(days) == 1 else None


def as_fraction(name: str, schema: Mapping[str, Any], part: str) -> float | None:
    """The one percentage the part states ("an annual rate of 5%"), as a fraction of one (0.05), for
    a numeric argument whose description says it takes rates so ("in decimal form", "5% is 0.05");
    None otherwise."""
    about = str(schema.get("description") or "").casefold()
    words = set(re.findall(r"[a-z]+", about))
    shown = re.search(r"\d\s*%\s*\S+\s+0?\.\d", about)  # "e.g. 5% is 0.05"
    if not (shown or (FRACTION_WORDS & words and RATE_WORDS & (words | set(name_words(name))))):
        return None
    found = {float(n) for n in re.findall(r"(?<![\w.])(\d+(?:\.\d+)?)\s?%", part)}
    return round(found.pop() / 100, 10) if len(found) == 1 else None


_COUNTED = re.compile(rf"\b({'|'.join(QUANTITY_WORDS)})\s+([a-z]+)\b")
_SYMBOLED = re.compile(rf"([$€£])\s?{_NUMBER}(?![\w,]|\.\d)")


def _quantities(part: str) -> list[tuple[int | float, str]]:
    """(amount, unit) for each quantity the part states: "5 minutes", "2kg", "for a year", "two
    weeks", "$86.40" (a currency's symbol is its unit); not a rate's unit ("20 miles a day")."""
    lowered = part.casefold()
    found: list[tuple[int | float, str]] = [
        (number_value(n), u) for n, u in re.findall(rf"(?<![\w.,/:$€£-]){_NUMBER}\s*([a-z]+)\b", lowered)
    ]
    for counted in _COUNTED.finditer(lowered):
        word, unit = counted.groups()
        before = lowered[: counted.start()].split()[-1:]
        if word not in ("a", "an") or (before and before[0] in SPAN_WORDS):  # not "20 miles a day"
            found.append((QUANTITY_WORDS[word], unit))
    found += [(number_value(n), symbol) for symbol, n in _SYMBOLED.findall(part)]
    return found


def converted_for(name: str, schema: Mapping[str, Any], part: str) -> float | int | None:
    """The quantity the part states in another unit of the dimension the argument asks in, given in
    the argument's unit: "record for 5 minutes" for a ``duration`` "in seconds" is 300, "a 5km
    radius" for a radius "in meters" 5000. None unless the argument names a unit ("seconds" in its
    description, ``_km`` in its name) and the part states exactly one quantity of that dimension in
    another unit."""
    pieces = [p.casefold() for p in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name.strip())]
    if PER_WORDS & set(pieces):  # a rate (meals_per_week): a count in its unit, no length of time
        return None
    last = pieces[-1]  # a suffix unit: radius_km
    described = re.findall(r"[a-z]+", str(schema.get("description") or "").casefold())
    wanted = [UNITS[w] for w in [last, *described] if w in UNITS and len(w) > 1]  # not min_humidity's min
    if not wanted:
        return None
    dimension, size = wanted[0]
    found = set()
    for amount, unit in _quantities(part):
        stated = UNITS.get(unit)
        if stated is not None and stated[0] == dimension and stated[1] != size:
            found.add(amount * stated[1] / size)
    if len(found) != 1:
        return None
    value = round(float(found.pop()), 6)  # $19.99 is 1998.9999… cents in floating point
    return int(value) if value.is_integer() else value
