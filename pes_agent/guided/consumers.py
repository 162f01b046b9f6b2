"""Steps a request implies *after* the tool it chose: the form it wants a result in, or where it
wants it sent.

"How much would new brake pads set me back in euros?" chooses a garage's quote; "Get the phone
number of Osteria Bellini in Manchester and email it to sam.reid@example.org" chooses the
restaurant's details. Each also states a value after a word of destination ("in euros", "to
sam.reid@…": ``TARGET_WORDS``) that no planned tool can take, and some offered tool takes exactly
that value: an argument whose ``enum``, ``format`` or ``pattern`` accepts it (a currency's code, an
email address). When that tool's other inputs can be fed by the chosen tool's output, it is
planned after the chosen one: the conversion after the quote, the email after the lookup. Without
it the answer states the quote in pounds as if in euros, or says a message was sent.

Decided by schemas: which values an argument accepts, which output fields fit the other inputs. A
tool that takes the value and nothing an output could give (an account looked up by its email) acts
on no result, and is never planned this way. "In" also says where or when: a value a planned tool's
typed argument takes ("sales in 2024" for a ``year``), or one a consumer would take by an argument
named as a planned tool's is ("the weather in Paris": the weather's ``city``, not a hotel's), is
that tool's input, not a destination.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.guided.currencies import as_currency_choice
from pes_agent.guided.dataflow import Binding, ImpliedStep, ToolShape
from pes_agent.guided.grounding import Candidate, checking, explicit_values, grounded_property, is_choice
from pes_agent.guided.kinds import free_text
from pes_agent.guided.language import language
from pes_agent.guided.language.en import NAMING_WORDS, TARGET_WORDS, VERB_MARKERS
from pes_agent.guided.pairs import GENERIC
from pes_agent.guided.shapes import compatible, prepared
from pes_agent.guided.words import stems
from pes_agent.prompts.schemas import inline_refs
from pes_agent.tools.registry import ToolRegistry

__all__ = ["MAX_CONSUMERS", "Destination", "consumer_steps", "destinations", "needed_consumers"]


@dataclass(frozen=True, kw_only=True)
class Destination:
    """A value the request introduces with a word of destination, in the forms a schema may take it
    ("euros" and ``EUR``). ``shaped``: a value written in a shape (an address, a number with its
    dashes) that a ``format`` or ``pattern`` may accept; a plain word only matches an ``enum``
    option (a pattern of letters accepts any word)."""

    text: str
    forms: tuple[str, ...]
    shaped: bool = False


_WORD_AFTER = re.compile(r"\s+([^\W\d_][\w'-]*+)(?![\w.@+-]*[\w@])")
"""The word after a word of destination, when it is a word and not the start of an address (taken
whole, ``*+``: a shorter word is never one, and giving back letters was quadratic in a long token)."""


def destinations(part: str) -> list[Destination]:
    """The values ``part`` states right after a word of destination: an address or a number in a
    shape ("to sam@example.org", "to 555-0101"), a currency ("in euros", with its code), a word
    ("into Spanish"). Of values stated at one place, the longest: "555-0101", not "555"."""
    out: dict[str, Destination] = {}
    taken: list[range] = []

    def after_target(start: int) -> bool:
        words = part[:start].split()
        return bool(words) and words[-1].casefold() in TARGET_WORDS

    for value in sorted(explicit_values(part), key=len, reverse=True):
        at = part.find(value)
        if at > 0 and after_target(at) and not any(at in r for r in taken):
            taken.append(range(at, at + len(value)))
            out.setdefault(value.casefold(), Destination(text=value, forms=(value,), shaped=True))
    for currency in language().currencies(part):
        at = part.find(currency.text)
        if at > 0 and after_target(at):
            forms = tuple(dict.fromkeys((currency.text, currency.code)))
            out[currency.text.casefold()] = Destination(text=currency.text, forms=forms)
    for match in re.finditer(r"\b\w+\b", part):
        if match.group(0).casefold() in TARGET_WORDS and (word := _WORD_AFTER.match(part, match.end())):
            after = word.group(1)
            if match.group(0).casefold() in VERB_MARKERS and after.islower():  # "want to know": a verb
                continue
            out.setdefault(after.casefold(), Destination(text=after, forms=(after,)))
    return list(out.values())


MAX_CONSUMERS = 2
"""Tools an offer gains at most for the destinations a request states: they complete an offer."""


def needed_consumers(
    offered: Sequence[str], enabled: Collection[str], registry: ToolRegistry, query: str
) -> list[str]:
    """Enabled tools not in ``offered`` that take a destination ``query`` states ("in US dollars",
    "to sam@example.org") which no offered tool takes, one for each such destination: retrieval
    finds tools by the request's words, and "What does it cost in US dollars?" says no word of a
    currency converter. Of several takers, the one sharing most words with the request."""
    words = set(stems(query))

    def inputs(name: str) -> list[tuple[str, Mapping[str, Any]]]:
        spec = registry.get(name)
        if spec is None:
            return []
        properties = inline_refs(spec.input_schema).get("properties") or {}
        return [(n, p) for n, p in properties.items() if isinstance(p, Mapping)]

    def about(name: str) -> set[str]:
        spec = registry.get(name)
        return set(stems(f"{name} {spec.summary}")) if spec is not None else set()

    shown = set(offered)
    added: list[str] = []
    for destination in destinations(query):
        if any(_takes(p, n, destination, query) for t in shown for n, p in inputs(t)):
            continue
        takers = [
            t
            for t in enabled
            if t not in shown and any(_takes(p, n, destination, query) for n, p in inputs(t))
        ]
        if takers:
            best = max(takers, key=lambda t: len(words & about(t)))
            shown.add(best)
            added.append(best)
    return added[:MAX_CONSUMERS]


def consumer_steps(
    steps: Sequence[ImpliedStep],
    part: str,
    tools: Mapping[str, ToolShape],
    planned: Collection[str],
) -> list[ImpliedStep]:
    """The steps to plan after a part's ``steps`` (which end with the tool the part chose): an
    offered tool for each destination the part states that no tool of the plan (``planned``, and
    the part's own steps) takes, when the chosen tool's output can feed its other inputs. Each
    consumer's inputs are bound to the output field plainly meant for them, if one is."""
    if not steps:
        return []
    chosen = tools.get(steps[-1].tool)
    if chosen is None or chosen.output_schema is None:
        return []
    fields = prepared(chosen).fields
    using = {*planned, *(s.tool for s in steps)}
    wanted = [
        d
        for d in destinations(part)
        if not any(
            _takes(prop, name, d, part) or _holds(prop, d)
            for t in using
            if t in tools
            for name, prop in _inputs(tools[t])
        )
    ]
    # a consumer's argument named as a planned tool's (a hotel's ``city`` beside the weather's) would
    # take what that tool takes: "the weather in Paris" states the weather's city, not a destination
    planned_words = (
        frozenset(w for t in using if t in tools for n, _ in _inputs(tools[t]) for w in stems(n)) - GENERIC
    )
    asked = frozenset(stems(part))
    of = frozenset(stems(" ".join(language().of_words(part))))
    out: list[ImpliedStep] = []
    while wanted:
        found = _consumer(wanted, tools, using, fields, part, asked, planned_words)
        if found is None:
            break
        name, fed = found
        shape = tools[name]
        wanted = [d for d in wanted if not any(_takes(p, n, d, part) for n, p in _inputs(shape))]
        using.add(name)
        bindings = tuple(
            Binding(argument=argument, producer=len(steps) - 1, path=path)
            for argument in fed
            if (path := _field_for(argument, shape, fields, (of, asked))) is not None
        )
        out.append(ImpliedStep(tool=name, bindings=bindings))
    return out


def _consumer(
    wanted: Sequence[Destination],
    tools: Mapping[str, ToolShape],
    using: Collection[str],
    fields: Sequence[tuple[str, Mapping[str, Any], frozenset[str]]],
    part: str,
    asked: frozenset[str],
    planned_words: frozenset[str],
) -> tuple[str, list[str]] | None:
    """The offered tool that takes a wanted destination and whose other required inputs the chosen
    tool's output fields can each fill (at least one), with those inputs; of several, the one the
    part's words speak of most, then the first offered. An argument sharing a word of its name
    with a planned tool's arguments (``planned_words``) takes no destination."""
    best: tuple[int, str, list[str]] | None = None
    for name, shape in tools.items():
        if name in using:
            continue
        inputs = dict(_inputs(shape))
        required = [a for a in prepared(shape).schema.get("required") or () if a in inputs]
        taking = {
            a
            for a in required
            for d in wanted
            if _takes(inputs[a], a, d, part) and not set(stems(a)) & planned_words
        }
        if not taking:
            continue
        fed = [a for a in required if a not in taking and not is_choice(inputs[a])]
        if not fed or not all(_fillable(a, inputs[a], fields) for a in fed):
            continue
        score = len(prepared(shape).about & asked)
        if best is None or score > best[0]:
            best = (score, name, fed)
    return None if best is None else (best[1], best[2])


_NAMES = frozenset(stems(" ".join(NAMING_WORDS)))


def _fillable(
    argument: str, prop: Mapping[str, Any], fields: Sequence[tuple[str, Mapping[str, Any], frozenset[str]]]
) -> bool:
    """Whether an output field can fill a consumer's input: any field of its type for a free value
    (a message takes the phone number found), a field sharing a word of its name for one with a
    ``format`` or ``pattern`` (a vehicle id only from a field of vehicle ids) or one named for a
    name (a guest's name is no forecast's summary; a message's subject may be any text found)."""
    own = set(stems(argument))
    shaped = "format" in prop or "pattern" in prop or bool(own & _NAMES)
    return any(compatible(out, prop) and (not shaped or words & own) for _, out, words in fields)


def _inputs(shape: ToolShape) -> Iterable[tuple[str, Mapping[str, Any]]]:
    properties = prepared(shape).schema.get("properties") or {}
    return ((n, p) for n, p in properties.items() if isinstance(p, Mapping))


def _holds(prop: Mapping[str, Any], destination: Destination) -> bool:
    """Whether a typed argument (a number, a date: not free text, which takes any word) takes the
    destination as its value: "in 2024" is a ``year``'s, not a place to send a result to."""
    candidates = [Candidate(value=f, source="query") for f in destination.forms]
    return not free_text(prop) and grounded_property(prop, candidates) is not None


def _takes(prop: Mapping[str, Any], name: str, destination: Destination, part: str) -> bool:
    """Whether an argument accepts the destination by its very shape: one of its ``enum`` options
    (a free currency argument reads as a choice of codes, ``currencies``), or a ``format`` or
    ``pattern`` it validates. A free string takes anything, so it takes nothing in particular."""
    prop = as_currency_choice(prop, name, part) or prop
    options = prop.get("enum")
    if isinstance(options, list):
        said = {f.casefold() for f in destination.forms}
        return any(isinstance(o, str) and o.casefold() in said for o in options)
    if not destination.shaped or ("format" not in prop and "pattern" not in prop):
        return False
    validator = checking({k: v for k, v in prop.items() if k != "description"})
    return any(validator.is_valid(f) for f in destination.forms)


def _field_for(
    argument: str,
    shape: ToolShape,
    fields: Sequence[tuple[str, Mapping[str, Any], frozenset[str]]],
    said: tuple[frozenset[str], frozenset[str]],
) -> str | None:
    """The output field plainly meant for a consumer's input: the one the part asks for as
    something *of* something ("the phone number of …"), else one it names, else one sharing a word
    with the input's name, else one named in an option of the consumer's choices (``price_gbp`` for
    a conversion among currency codes), else the only field that fits. None when several fit alike:
    the step then chooses among the values that flowed."""
    schema = prepared(shape).schema
    prop = (schema.get("properties") or {})[argument]
    options = {
        w
        for p in (schema.get("properties") or {}).values()
        if isinstance(p, Mapping) and isinstance(p.get("enum"), list)
        for o in p["enum"]
        if isinstance(o, str)
        for w in stems(o)
    }
    own = set(stems(argument))
    fitting = [(path, words) for path, out, words in fields if compatible(out, prop)]
    of, asked = said
    for wanted in (of, asked, own, options):
        hits = [path for path, words in fitting if words & wanted]
        if len(hits) == 1:
            return hits[0]
    return fitting[0][0] if len(fitting) == 1 else None
