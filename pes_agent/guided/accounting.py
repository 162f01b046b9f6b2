"""Whether the calls a run made account for what its request stated.

Every step can complete while the request was not done: "$50" reached no call; the tip tool got 18
as the bill and 18 as the percentage; both currencies of a conversion were "Euros". The answer then
states a figure of a calculation nobody asked for, and ``success`` would be a lie. Two things are
known exactly, without any model: the values the request states outright (quoted text, addresses,
dates, times, numbers, names, a currency asked for: "in euros") and the arguments every call was
given. So a run is held to them:

- a stated value no call took is a part of the request left undone (the run is ``partial`` and
  says which value);
- one value given to two arguments of one call, when the request states it once and the schema
  does not offer it (an enum option, a default), filled one of them with a guess.

A request value a tool cannot take (a date for a tool with no date) ends ``partial`` too: the run
could not honour it, and saying so is the point. Names made only of the words of the tools the
steps used ("Spotify" for a Spotify tool) name the tool, not data, and are not held.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.guided.grounding import explicit_values, leaves, stated_names
from pes_agent.guided.language import language
from pes_agent.guided.language.base import Counted
from pes_agent.guided.language.en import STOPWORDS, TARGET_WORDS
from pes_agent.guided.numbers import AMOUNT, as_number
from pes_agent.guided.words import common_words, meant, stems
from pes_agent.state.models import TodoItem

__all__ = [
    "Stated",
    "doubled_argument",
    "doubled_values",
    "stated_values",
    "unanswered",
    "unmet",
    "unran_tools",
    "unused_values",
]

_DIGITS = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
"""A number inside a text, unsigned: "77-32" holds 32."""


@dataclass(frozen=True, kw_only=True)
class Stated:
    """One value of the request: as written, and the other forms a call may give it in (a date's
    ISO day)."""

    text: str
    forms: tuple[str, ...]
    percent: bool = False
    """Written with "%": 8 may be given as 0.08."""


def stated_values(query: str, tool_text: str = "") -> list[Stated]:
    """What the request states outright, one entry per value; names made only of ``tool_text``'s
    words are left out (they name a tool)."""
    explicit = explicit_values(query)
    days = {d.text: d.iso for d in [*language().dates(query), *language().months(query)]}
    isos = set(days.values())
    out: list[Stated] = []
    counted = {c.text: c for c in language().counts(query)}
    for value in explicit:
        if value in isos and value not in query:
            continue  # the ISO form of a date written otherwise: a form of that value, not another
        if value in counted and _counts_others(query, counted[value]):
            continue
        forms = (value, days[value]) if value in days else (value,)
        if value in counted:
            forms = (value, str(counted[value].value))
        percent = bool(re.search(rf"(?<![\w.]){re.escape(value)}\s*%", query))
        out.append(Stated(text=value, forms=forms, percent=percent))
    actions = set(stems(tool_text))
    currencies = language().currencies(query)
    written = [v.casefold() for v in [*explicit_values(query), *(c.text for c in currencies)]]
    for name in stated_names(query, frozenset(actions)):
        words = stems(name)
        inside = any(name.casefold() in value for value in written)  # "February" of "February 2026"
        if len(name) > 1 and words and not set(words) <= actions and not inside:
            out.append(Stated(text=name, forms=(name, *_without_opening_word(name, query))))
    for currency in currencies:  # "how much in euros": the request asks for that form
        before = query[: query.find(currency.text)].split()
        if before and before[-1].casefold() in TARGET_WORDS and not currency.text.isupper():
            out.append(Stated(text=currency.text, forms=(currency.text, currency.code)))
    unique: dict[str, Stated] = {}
    for stated in out:
        unique.setdefault(stated.text.casefold(), stated)
    return list(unique.values())


def _counts_others(query: str, count: Counted) -> bool:
    """Whether a count in words counts values the request writes or has named, rather than being one:
    "the other two sides, 4 and 5" and "the three cities Paris, London and Rome" (as many values
    follow), "add the two prices (together)" (the prices of parts before it). "Twelve members doing
    the half marathon" is a value a call must take: the entries are paid twelve times."""
    after = query[count.start + len(count.text) :]
    sentence = re.split(r"[.!?;]\s", after, maxsplit=1)[0]
    following = [*AMOUNT.findall(sentence), *explicit_values(sentence), *stated_names(sentence)]
    if len(set(following)) >= count.value:
        return True
    nouns = [w for w in re.findall(r"\w+", after.casefold())[:2] if w not in STOPWORDS]  # "two (big) prices"
    counted_words = {w for word in nouns for w in stems(word)}
    return bool(counted_words & set(stems(query[: count.start])))


def unused_values(
    query: str,
    items: Sequence[TodoItem],
    tool_text: str = "",
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """The request's stated values that no call took, as written. A value that names an option in
    the description of an argument a call filled ("British pounds" beside GBP) chose that option:
    it was taken. Only calls that succeeded took anything: "Badge renewal" tried as an employee's
    name, before the employee was found by hers, is still the email's subject that nothing sent."""
    records = [r for r in _records(items) if r.status == "success"]  # a failed call did nothing
    given = [leaf for record in records for _, leaf in leaves(record.arguments)]
    described = " ".join(
        _described(record.arguments, (schemas or {}).get(record.tool_name)) for record in records
    )
    return [
        s.text
        for s in stated_values(query, tool_text)
        if not any(_takes(leaf, s) for leaf in given) and not _named_in(s.text, described)
    ]


def _described(arguments: Mapping[str, Any], schema: Mapping[str, Any] | None) -> str:
    """The descriptions of the arguments a call filled."""
    properties = (schema or {}).get("properties") or {}
    return " ".join(
        str(p.get("description") or "") for n in arguments if isinstance(p := properties.get(n), Mapping)
    ).casefold()


def _named_in(value: str, text: str) -> bool:
    return as_number(value) is None and bool(re.search(rf"(?<!\w){re.escape(value.casefold())}(?!\w)", text))


def doubled_values(
    query: str, items: Sequence[TodoItem], schemas: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Calls that gave one value to two arguments though the request states it once and the
    tool's schema does not offer it: each as "``value`` as both ``a`` and ``b`` of ``tool``"."""
    out = []
    for record in _records(items):
        properties = (schemas.get(record.tool_name) or {}).get("properties") or {}
        by_value: dict[str, list[tuple[str, Any]]] = {}
        for name, value in record.arguments.items():
            if isinstance(value, bool) or not isinstance(value, str | int | float) or value == "":
                continue
            if _offered(properties.get(name), value):
                continue
            by_value.setdefault(_normal(value), []).append((name, value))
        for normal, given in by_value.items():
            if len(given) > 1 and _mentions(query, normal) < 2:
                (first, value), (second, _) = given[:2]
                out.append(f'"{value}" as both {first} and {second} of {record.tool_name}')
    return out


def doubled_argument(reply: str, schema: Mapping[str, Any], query: str) -> dict[str, Any] | None:
    """The later of two arguments a guided reply gave one value that the request states once and
    the schema does not offer (``doubled_values``' rule), with that value: what the next ask should
    not offer it. None when the reply is no such object."""
    try:
        arguments = json.loads(reply)
    except ValueError:
        return None
    if not isinstance(arguments, dict):
        return None
    properties = schema.get("properties") or {}
    seen: dict[str, str] = {}
    for name, value in arguments.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float) or value == "":
            continue
        if _offered(properties.get(name), value):
            continue
        key = _normal(value)
        if key in seen and _mentions(query, key) < 2:
            return {name: value}
        seen[key] = name
    return None


def unanswered(items: Sequence[TodoItem], tools: Mapping[str, str]) -> list[str]:
    """The questions of the request that nothing which ran speaks of: no word the question asks
    with ("how *warm* is it in the capital of Peru") is a word of a tool that succeeded (its name,
    description, output fields) or means one (``choices.meant``). Words of the request's data
    (names, numbers) and words used as *of* something ("the capital of Peru", a means to the
    answer) are not what it asks. Country facts found for "how warm" answer nothing asked."""
    ran = [r for it in items for r in it.tool_results if r.status == "success"]
    if not ran:
        return []
    text = " ".join(
        f"{r.tool_name} {tools.get(r.tool_name, '')} {' '.join(p for p, _ in leaves(r.output))}" for r in ran
    )
    known = set(stems(text))
    out = []
    for part in dict.fromkeys(it.description for it in items if language().is_question(it.description)):
        data = set(stems(" ".join([*explicit_values(part), *stated_names(part)])))
        words = [w for w in stems(part) if w not in data]
        # words used as *of* something are means ("the capital of Peru" for "how warm"), unless the
        # question opens with one: then it is what is asked ("what is the capital of Peru")
        means = set(stems(" ".join(language().of_words(part)))) - set(words[:1])
        asked = set(words) - means
        if asked and not asked & known and not meant(part, [text]) & known:
            out.append(part)
    return out


def unran_tools(query: str, ran: Collection[str], catalogue: Mapping[str, str]) -> list[str]:
    """Words of the request that name tools of the ``catalogue`` (name → description) by their
    names, where no tool that ran has the word in its name or description: "Get me details and
    offers for …" names ``Product_Offers`` by "offers", and a run of ``Product_Details`` alone did
    not do it. Only tools kin to one that ran count (``Product_Offers`` beside ``Product_Details``).
    Words that open descriptions (the tools' verbs), words in the names of many tools, and the
    request's data (names, quotes, numbers) name no tool in particular."""
    if not ran or len(catalogue) < 2:
        return []
    named = {n: set(stems(n)) for n in catalogue}
    common = common_words(named.values())
    verbs = {w for about in catalogue.values() for w in stems(about)[:1]}
    done = {w for n in ran for w in named.get(n, set()) | set(stems(catalogue.get(n, "")))}
    data = set(stems(" ".join([*explicit_values(query), *stated_names(query)])))
    out: dict[str, str] = {}
    for written in re.findall(r"[A-Za-z]+", query):
        found = stems(written)
        word = found[0] if found else ""
        if not word or word in out or word in done or word in data or word in common or word in verbs:
            continue
        # a sibling of a tool that ran (their names share a word of their own): a request naming a
        # flight's price does not ask for a stock price tool, it asks the flight search
        kin = {w for n in ran for w in named.get(n, set())} - common
        tools = [n for n, words in named.items() if word in words and (words - {word}) & kin]
        if tools:
            out[word] = f'"{written}" ({", ".join(sorted(tools)[:2])})'
    return list(out.values())


def unmet(
    query: str,
    items: Sequence[TodoItem],
    schemas: Mapping[str, Mapping[str, Any]],
    tools: Mapping[str, str],
    catalogue: Mapping[str, str] | None = None,
) -> list[str]:
    """What the run's calls left of the request undone, each in a sentence; empty when no call ran
    (a run without calls is judged by its steps). ``tools``: name → description of the tools the
    steps used; ``catalogue``: of the tools planning offered (``unran_tools``)."""
    if not any(True for _ in _records(items)):
        return []
    tool_text = " ".join(f"{name} {about}" for name, about in tools.items())
    unused = unused_values(query, items, tool_text, schemas)
    failed = [leaf for r in _records(items) if r.status != "success" for _, leaf in leaves(r.arguments)]
    tried = {s.text for s in stated_values(query, tool_text) if any(_takes(leaf, s) for leaf in failed)}
    reasons = [
        f'"{v}" from the request was tried only in calls that failed'
        if v in tried
        else f'"{v}" from the request was used by no step'
        for v in unused
    ]
    reasons += [f"one value was given twice: {d}" for d in doubled_values(query, items, schemas)]
    reasons += [f'nothing found answers "{q}"' for q in unanswered(items, tools)]
    ran = {r.tool_name for it in items for r in it.tool_results if r.status == "success"}
    reasons += [f"no tool ran for {w}" for w in unran_tools(query, ran, catalogue or {})]
    return list(dict.fromkeys(reasons))


def _records(items: Sequence[TodoItem]) -> Iterator[Any]:
    for item in items:
        yield from (r for r in item.tool_results if r.status != "refused")


def _takes(leaf: Any, stated: Stated) -> bool:
    """Whether an argument's value holds a stated value: numbers by value (8% as 8 or 0.08), texts
    case-folded, whole or as part of a longer text ("100 * 3", "Shape of You" inside the lyrics
    request)."""
    if isinstance(leaf, bool) or leaf is None:
        return False
    number = as_number(stated.text) if AMOUNT.fullmatch(stated.text.replace(" ", "")) else None
    if number is not None:
        return _takes_number(leaf, number, stated.percent)
    text = (leaf if isinstance(leaf, str) else json.dumps(leaf)).casefold().strip()
    counts = [n for form in stated.forms[1:] if AMOUNT.fullmatch(form) and (n := as_number(form)) is not None]
    if any(_takes_number(leaf, n, False) for n in counts):  # "twelve" as 12: a whole number, not "2012"
        return True
    return any(
        form.casefold() in text or (len(text) >= 3 and text in form.casefold() and 2 * len(text) >= len(form))
        for form in stated.forms
        if not AMOUNT.fullmatch(form)
    )


def _takes_number(leaf: Any, number: float, percent: bool) -> bool:
    """Whether an argument's value holds a number: itself, the fraction of a percentage, or one of
    the whole numbers a text writes ("38 * 12" holds 12; "2012" and "120" do not)."""
    if isinstance(leaf, int | float):
        return float(leaf) == number or (percent and abs(float(leaf) * 100 - number) < 1e-9)
    return any(as_number(n) == abs(number) for n in _DIGITS.findall(str(leaf)))


def _offered(schema: Any, value: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    options = list(schema.get("enum") or ()) + ([schema["default"]] if "default" in schema else [])
    return _normal(value) in {_normal(o) for o in options}


def _mentions(query: str, value: str) -> int:
    """How often the request writes ``value`` (numbers by value)."""
    number = as_number(value)
    if number is not None:
        return sum(1 for n in AMOUNT.findall(query) if as_number(n) == number)
    return len(re.findall(rf"(?<!\w){re.escape(value)}(?!\w)", query.casefold()))


def _without_opening_word(name: str, query: str) -> tuple[str, ...]:
    """A name run that opens a sentence may start with the sentence's verb ("Retrieve COVID-19"):
    its rest is a form of it."""
    words = name.split()
    at = query.find(name)
    opens = at >= 0 and (query[:at].rstrip() == "" or query[:at].rstrip()[-1:] in ".!?;")
    return (" ".join(words[1:]),) if opens and len(words) > 1 else ()


def _normal(value: Any) -> str:
    number = as_number(str(value)) if not isinstance(value, bool) else None
    if number is not None:
        return repr(number)
    return str(value).casefold().strip()
