"""Steps a request implies: planning by data flow, decided by the tools' input and output schemas.

A small model plans one tool per part of the request, and a part often needs two: "What is the
weather in the capital of Japan?" needs the capital before the weather; "Order 2 of the Summit
Headlamp" needs the product's id before the order; "Email Omar Haddad ..." needs his address. The
request never says those steps. The schemas do: the chosen tool has a required argument that the
request holds no value for (an id with a pattern, an email), or one the request names as another
tool's *output field* ("the capital", "the price", "start date"); another offered tool declares
that field in its output and can itself be given its inputs from the request. That tool is planned
first and the argument is *bound* to its output (``$step.path``), so the later step takes the value
found, not a word of the request that merely looks like one ("Japan" is not the city).

Working backwards from the tool the part chose, a producer is searched for each required argument:

- a field *named in the part* and of the argument's type binds an argument of the tool the part chose
  even when the request holds some value of that type (the part asks for the field: "the capital of
  Japan");
- a field with a word of the argument's name or description binds it when the request holds no valid
  value for it (``product_id`` for ``product_id``; ``iata_code`` for an origin "IATA airport code"),
  from a tool the part or the argument speaks of (``customer_by_name`` for ``customer_email``);
- a field binds one argument at most (``start_date`` is the start, not also the end), unless two
  arguments are of one kind (an origin and a destination port): each gets a lookup of its own;
- an argument whose description names the tool that gives it ("extracted from the Search Airport
  API") takes that tool's field, whatever text the request holds;
- words many tools share ("calculate") point to no producer, and a producer takes its own inputs
  from the request's text (or from producers of its own, a few levels deep), never from "some
  earlier result": a catalogue of calculators does not chain itself.

Only declared output schemas count (``@tool`` return annotations, MCP ``outputSchema``, A2A): a tool
that promises no fields provides nothing by name. Nothing here knows a tool, a domain or a phrase.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pes_agent.guided.choices import can_ground, last_sentence
from pes_agent.guided.grounding import (
    Candidate,
    explicit_values,
    grounded_property,
    is_choice,
    stated_names,
    text_spans,
)
from pes_agent.guided.kinds import (
    alike,
    claimed,
    declared,
    free_text,
    identifier,
    numeric,
    of_its_kind,
    shaped,
    unclaimed,
)
from pes_agent.guided.language import language
from pes_agent.guided.layouts import in_layout
from pes_agent.guided.shapes import ToolShape, compatible, prepared
from pes_agent.guided.words import common_words, meant, stems

__all__ = ["Binding", "ImpliedStep", "ToolShape", "implied_steps", "suppliable"]
"""``ToolShape`` is re-exported: callers plan with shapes and data flow together."""

MAX_DEPTH = 3
"""Producers of producers: an order's total in euros needs the order, which needs the product's id."""
NAMED = 2
"""Weight of an output field the part names ("the capital of Japan" names ``capital``)."""
SAME_NAME = 2
"""Weight of an output field that shares a word with the argument (``start_date`` for ``start``)."""


@dataclass(frozen=True, kw_only=True)
class Binding:
    """A required argument of a step taken from an earlier step's output field."""

    argument: str
    producer: int | None
    """Index of the producing step in the part's list (``implied_steps``'s result), or None when
    an earlier part's step produces it (``step_id``)."""
    step_id: str | None = None
    path: str
    """The field's path in that output (``capital``, ``[0].product_id``)."""


@dataclass(frozen=True, kw_only=True)
class ImpliedStep:
    """One step of a part: the tool, and the arguments bound to earlier steps of the same part."""

    tool: str
    bindings: tuple[Binding, ...] = ()
    provides: str | None = None
    """For a producer: ``consumer.argument`` it was planned for (shown in the plan)."""


@dataclass(kw_only=True)
class _Search:
    part: str
    before: str
    tools: Mapping[str, ToolShape]
    earlier: Mapping[str, str]
    steps: list[ImpliedStep] = field(default_factory=list)
    spans: list[Candidate] = field(default_factory=list)
    stated: list[Candidate] = field(default_factory=list)
    values: list[Candidate] = field(default_factory=list)
    """What the part states outright or names: the values a free argument can be said to hold (its
    plain words are no such value: "retrieve her followers" holds no username)."""
    asked: frozenset[str] = frozenset()
    related: frozenset[str] = frozenset()
    back: frozenset[str] = frozenset()
    """What the part's ask points back to ("for that amount"): a value earlier results hold."""
    grounds: dict[tuple[str, bool], bool] = field(default_factory=dict)
    common: frozenset[str] = frozenset()
    """Words many of the tools' descriptions share ("calculate" in a catalogue of calculators): the
    ask says them of every tool, so they point to no producer in particular."""

    def __post_init__(self) -> None:
        self.spans = [Candidate(value=s, source="step") for s in text_spans(self.part)]
        self.stated = [Candidate(value=s, source="step") for s in explicit_values(self.part)]
        self.values = self.stated + [Candidate(value=s, source="step") for s in stated_names(self.part)]
        # the ask's words (a context sentence before it states, it asks for nothing: "My customer
        # is Tomas Berg."), and the tools' words it means by words no tool uses ("cost": price);
        # what it names as something *of* something
        ask = last_sentence(self.part)
        self.asked = frozenset(stems(ask)) | meant(ask, (prepared(t).text for t in self.tools.values()))
        self.related = frozenset(stems(" ".join(language().of_words(ask))))
        self.back = frozenset(stems(" ".join(language().back_words(ask))))
        self.common = common_words(prepared(t).about for t in self.tools.values())


def implied_steps(
    chosen: str,
    part: str,
    before: str,
    tools: Mapping[str, ToolShape],
    earlier: Mapping[str, str] | None = None,
) -> list[ImpliedStep]:
    """The steps a part needs, in order, ending with the ``chosen`` tool: producers first.

    ``before`` is the text of the earlier parts; ``tools`` the tools on offer (the chosen one among
    them); ``earlier`` maps the tools earlier parts planned to their step ids: a value one of them
    produces is bound to that step rather than planned again. With nothing implied the result is
    the chosen tool alone."""
    search = _Search(part=part, before=before, tools=tools, earlier=earlier or {})
    _plan(search, chosen, depth=0, used=frozenset({chosen}), provides=None)
    return search.steps


def suppliable(name: str, part: str, before: str, tools: Mapping[str, ToolShape]) -> bool:
    """Whether a tool can be given its required values for this part: from the request, or from
    producers the request implies (an order's product id, from a search the part names)."""
    return name in tools and _suppliable(
        _Search(part=part, before=before, tools=tools, earlier={}), name, frozenset({name}), 0
    )


def _plan(search: _Search, name: str, *, depth: int, used: frozenset[str], provides: str | None) -> int:
    """Plan ``name`` after its producers; its index among ``search.steps``."""
    shape = search.tools[name]
    bindings = []
    planned: dict[tuple[str, int], int] = {}
    for argument, producer, path, copy in _wanted(search, shape, used, depth):
        if producer in search.earlier:
            bindings.append(
                Binding(argument=argument, producer=None, step_id=search.earlier[producer], path=path)
            )
            continue
        if (producer, copy) not in planned:
            planned[producer, copy] = _plan(
                search, producer, depth=depth + 1, used=used | {producer}, provides=f"{name}.{argument}"
            )
        bindings.append(Binding(argument=argument, producer=planned[producer, copy], path=path))
    search.steps.append(ImpliedStep(tool=name, bindings=tuple(bindings), provides=provides))
    return len(search.steps) - 1


def _wanted(
    search: _Search, shape: ToolShape, used: frozenset[str], depth: int
) -> Iterator[tuple[str, str, str, int]]:
    """(argument, producer, path, copy) for each required argument a producer should supply. The
    best-scoring pairs are taken first, and a field fills one argument only, so a field goes to the
    argument it fits best (``start_date`` is the start, and the end keeps the request's date); but
    arguments alike (``kinds.alike``: an origin and a destination port, both port ids), or whose
    descriptions both say the tool gives them, each take the field from a call of their own
    (``copy`` 0, 1, …: the producer is planned once per copy)."""
    if depth >= MAX_DEPTH:
        return
    schema = prepared(shape).schema
    properties: Mapping[str, Any] = schema.get("properties") or {}
    asked, related = search.asked, search.related
    if depth == 0:  # what the part asks *of* something, the chosen tool may give itself ("the lyrics
        # of a song" from the lyrics tool): no other step is planned to look it up; and the words
        # naming the chosen tool's work name no value ("convert the tax amount": no converted field)
        related = related - {w for _, _, words in prepared(shape).fields for w in words}
    work = set(stems(shape.name)) if depth == 0 else set()
    pointing = asked - search.common
    found: list[tuple[float, str, str, str, frozenset[str], bool]] = []
    by_format: set[str] = set()
    declares: set[tuple[str, str]] = set()
    fits_format: set[tuple[str, str, str]] = set()
    required = [a for a in schema.get("required") or () if isinstance(properties.get(a), Mapping)]
    asked_first = not schema.get("required")  # a tool that marks nothing required is asked its first
    if asked_first:  # arguments: those take a field of their own name, never one the part only names
        required = [a for a, p in properties.items() if isinstance(p, Mapping) and "default" not in p][:3]
    claims = {a: claimed(a, properties[a], search.part) for a in required}
    # what the part states beside an optional argument's name is that one's too ("with limit 100":
    # no business id), though the argument is not asked for
    optional = {
        v
        for a, p in properties.items()
        if a not in claims and isinstance(p, Mapping)
        for v in claimed(a, p, search.part)
    }
    # the words of the tool's own inputs name those inputs, not a field to look up ("the client name
    # 'Molly Brown'" names no product name for the due date)
    inputs = {w for a in properties for w in stems(a)}
    for argument in required:
        prop = properties[argument]
        if is_choice(prop) or (claims[argument] and not set(stems(argument)) & search.related):
            continue  # a value the part gives it by name ("using the key 'abc123'") is not looked up,
            # unless the part asks for it *of* that value ("the author of 'Dune'")
        if depth > 0 and not (shaped(prop) or identifier(argument)):  # a lookup's own inputs come
            continue  # from the request, but for an id only another lookup gives (no coordinates
            # from an Instagram post for a business search)
        # what the part states beside another argument's name is that one's ("a basic salary of 2000
        # and an allowance equal to the GCD": 2000 is no allowance)
        taken = {v for a, values in claims.items() if a != argument for v in values} - claims[argument]
        # a date and a time written apart are one value for an argument that takes both in one layout
        laid = [Candidate(value=v, source="step") for v in in_layout(prop, search.part)]
        kindred = [
            v for v in unclaimed(search.values, taken | optional) if of_its_kind(argument, prop, v.value)
        ]
        held = grounded_property(prop, laid + kindred) is not None
        # stated outright (quoted, a date, a number), enough of them for every argument of this shape
        # ("between her start date and 2025-01-01": one date for two, so the start is looked up)
        fits = grounded_property(prop, laid + unclaimed(search.stated, taken))
        twins = sum(properties[a] == prop for a in required)
        given = fits is not None and len(fits.get("enum") or ()) >= twins
        name = set(stems(argument))
        own = name | set(stems(str(prop.get("description") or "")))
        formatted = set(stems(str(prop.get("format") or "").replace("-", " ")))
        sole = None if free_text(prop) else _sole_producer(search, argument, prop, used)
        # "the sales tax for that amount": the amount is one an earlier part found, not a new lookup's
        found_before = (
            depth == 0
            and bool(own & search.back)
            and any(
                compatible(out, prop)
                for e in search.earlier
                if e in search.tools and search.tools[e].output_schema is not None
                for _, out, _ in prepared(search.tools[e]).fields
            )
        )
        for producer, candidate in search.tools.items():
            if producer in used or candidate.output_schema is None:
                continue
            if found_before and producer not in search.earlier:
                continue
            tool = prepared(candidate)
            for path, out, words in tool.fields:
                textual = free_text(prop) and numeric(out)  # a number's text, for a named field only
                if not compatible(out, prop) and not textual:
                    continue
                # the part asks for the field as something *of* something ("the capital of Japan",
                # "its price"), or names it where the request states no value for this argument and
                # the word is not the argument's own ("to 6 servings" gives the servings); only for the
                # tool the part chose: a producer's own inputs come from the request unless it holds none
                named = depth == 0 and (
                    bool(words & related)
                    or (
                        not given
                        and bool((words & asked) - inputs - work)
                        and bool(tool.about & pointing or producer in search.earlier)
                    )
                )
                named = named and not asked_first
                if textual and not (named and producer in search.earlier):  # a number found before
                    continue
                same = bool(words & own) and (not numeric(prop) or words <= own or name <= words)
                if named and not same and shaped(prop):  # a field said to have this shape only by name
                    named = False
                # a field by the argument's name only from a tool the part or the argument speaks of
                # (``customer_by_name`` for ``customer_email``; no employee's start date for a date)
                # or by the argument's very name from the one tool that gives it (``isbn``)
                # an argument whose description says which tool gives it ("can be extracted from the
                # Search Airport API") takes that tool's field, whatever the request holds: the
                # request's "New York" is no airport id
                by_tool = same and declared(str(prop.get("description") or ""), producer)
                if named or (
                    same
                    and (not held or by_tool)
                    and (
                        tool.called & own
                        or tool.about & pointing
                        or (producer, path) == sole
                        or producer in search.earlier  # found before, under the argument's name
                    )
                ):
                    # a field named for the argument's format is that value (``email`` for a
                    # ``customer_email`` of format email, not the ``customer_id`` beside it); a step
                    # an earlier part planned gives it before a new lookup would (the lyrics found
                    # are translated, not looked up again by another lyrics tool)
                    score = (
                        -0.1 * same * len(words - own)  # of two fields of the argument's name, the plainer
                        + NAMED * named
                        + SAME_NAME * (producer in search.earlier)
                        + SAME_NAME * same
                        + SAME_NAME * bool(formatted & words)
                        + SAME_NAME * by_tool
                        + len(tool.called & own)
                        + len(tool.about & pointing)
                    )
                    found.append(
                        (score, argument, producer, path, frozenset(words) if named else frozenset(), same)
                    )
                    if by_tool:
                        declares.add((argument, producer))
                    if formatted & words:
                        by_format.add(argument)
                        fits_format.add((argument, producer, path))
    # an argument with a format that some field is named for takes only such a field (an email, not
    # the customer id beside it, whatever else the request's words say)
    found = [f for f in found if f[1] not in by_format or (f[1], f[2], f[3]) in fits_format]
    found.sort(key=lambda f: -f[0])
    bound: set[str] = set()
    filled: dict[tuple[str, str], list[str]] = {}
    named_once: set[frozenset[str]] = set()
    for _, argument, producer, path, by_words, same in found:
        earlier_args = filled.get((producer, path), [])
        copied = (
            bool(earlier_args)
            and producer not in search.earlier
            and all(
                alike(properties, argument, a, path) or {(argument, producer), (a, producer)} <= declares
                for a in earlier_args
            )
        )
        if argument in bound or (earlier_args and not copied) or (not same and by_words in named_once):
            continue
        if producer not in search.earlier and not _suppliable(search, producer, used | {producer}, depth + 1):
            continue
        bound.add(argument)
        filled.setdefault((producer, path), []).append(argument)
        if by_words:  # the thing the part names fills one argument: "the lyrics" are the text, not
            named_once.add(by_words)  # also the source language, from a second lyrics tool
        yield argument, producer, path, len(earlier_args)


def _sole_producer(
    search: _Search, argument: str, prop: Mapping[str, Any], used: frozenset[str]
) -> tuple[str, str] | None:
    """The one tool on offer whose output has a field of the argument's very name and type (an
    ``isbn`` from the book search, a ``tracking_number`` from the order): no other tool could
    provide it, so no word of the request needs to point to it. None when several could. Not asked
    for free text: a ``name`` is anything's, and the one tool on offer giving a name (a storage
    site's) gives no plant's name."""
    found = [
        (producer, path)
        for producer, candidate in search.tools.items()
        if producer not in used and candidate.output_schema is not None
        for path, out, _ in prepared(candidate).fields
        if path.removeprefix("[0].") == argument and compatible(out, prop)
    ]
    return found[0] if len(found) == 1 else None


def _suppliable(search: _Search, name: str, used: frozenset[str], depth: int) -> bool:
    """Whether the request (or producers of its own, within the depth) can give ``name`` its inputs.

    The tool a part chose may take values earlier results hold (``can_ground``); a producer planned
    for it takes its own from the request's text, or from producers of its own: a loan calculator
    is planned to feed a part only when the request states a loan for it."""
    shape = search.tools[name]
    key = (name, depth == 0)
    if key not in search.grounds:
        search.grounds[key] = (
            can_ground(shape.input_schema, search.part, search.before)
            if depth == 0
            else can_ground(shape.input_schema, f"{search.before} {search.part}", "")
        )
    if search.grounds[key]:
        return True
    if depth >= MAX_DEPTH:
        return False
    missing = _ungrounded(prepared(shape).schema, search.spans, search.part)
    offered = {a for a, _, _, _ in _wanted(search, shape, used, depth)}
    return bool(missing) and missing <= offered


def _ungrounded(schema: Mapping[str, Any], spans: Sequence[Candidate], text: str) -> set[str]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    out = set()
    for argument in schema.get("required") or ():
        prop = properties.get(argument)
        if not isinstance(prop, Mapping) or "enum" in prop:
            continue
        laid = [Candidate(value=v, source="step") for v in in_layout(prop, text)]
        if grounded_property(prop, laid + list(spans)) is None:
            out.add(argument)
    return out
