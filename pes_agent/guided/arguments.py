"""A guided step's arguments, each narrowed to grounded options: what a small model may choose from
when it fills one tool's call.

Options come from the step's part of the query and the earlier results first, then the whole query;
a value the part gives beside an argument's name is that argument's (``named``), a list it writes
out is one value (``lists``), a call's free arguments are read together (``pairs``), and what the
plan bound to an earlier step's output is the argument's one option. See ``grounding`` for where
values come from.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pes_agent.guided.arithmetic import named_operation
from pes_agent.guided.choices import (
    enum_choices,
    introduced_choice,
    named_leaves,
    named_options,
    source_taken,
)
from pes_agent.guided.currencies import as_currency_choice
from pes_agent.guided.grounding import (
    Candidate,
    grounded_property,
    leaves,
    output_candidates,
    text_spans,
)
from pes_agent.guided.kinds import identifier
from pes_agent.guided.language import language
from pes_agent.guided.language.en import SEVERAL
from pes_agent.guided.layouts import assigned, laid_out, layout_of
from pes_agent.guided.lists import stated_lists
from pes_agent.guided.named import (
    as_fraction,
    converted_for,
    directed_values,
    introduced_values,
    named_optional,
    stated_for,
)
from pes_agent.guided.numbered import numbered_lists, numbered_values
from pes_agent.guided.numbers import as_number
from pes_agent.guided.pairs import settle_free
from pes_agent.guided.places import places_with_region, wants_region
from pes_agent.guided.quotes import without_quotes
from pes_agent.guided.words import stems, word_stem
from pes_agent.prompts.schemas import inline_refs

__all__ = ["MAX_FREE_ARGUMENTS", "REQUEST_MARK", "EarlierResult", "guided_arguments_schema"]


MAX_FREE_ARGUMENTS = 3
"""A tool with no required argument is asked for at most this many of its optional ones."""


@dataclass(frozen=True, kw_only=True)
class EarlierResult:
    """A completed step as a guided prompt shows it: its part of the query and its tool's output."""

    step_id: str
    description: str
    output: Any
    text: str
    """The output as prompt text (rendered once by the caller)."""
    direct: bool = True
    """A step this one depends on: its values flow here. Others' values are offered only where the
    part names their field ("add the two prices")."""
    inputs: Mapping[str, Any] = field(default_factory=dict)
    """The arguments its call was given: a lookup's key is spent there (``pairs.settle_free``)."""


REQUEST_MARK = "x-pes-request"
"""Schema keyword of a string argument that is a request in words: guided steps give it the step's
part of the query whole, where a word or a quoted span picked out of it would lose the request."""


def guided_arguments_schema(
    input_schema: Mapping[str, Any],
    part: str,
    query: str,
    earlier: Sequence[EarlierResult],
    avoid: Mapping[str, Any] | None = None,
    bindings: Mapping[str, str] | None = None,
    tool_text: str = "",
    *,
    tool_names: Collection[str] = (),
) -> dict[str, Any]:
    """The tool's arguments with each value narrowed to grounded options.

    Options come from this step's part of the query and the earlier results first; only a value
    that finds none there is looked for in the whole query; one found nowhere keeps its own schema.
    Optional arguments are left to their defaults (a small model fills them with noise). An argument
    marked ``"x-pes-request": true`` (a delegated task, a search request) takes the step's part whole.
    ``avoid`` holds values that already failed: not offered again while another option remains.
    ``tool_text`` (the names and descriptions of the tool and of the part's other tools): their
    words are not offered as values, and a name run opening with one starts after it ("Email Omar
    Haddad" offers "Omar Haddad", not "Email").
    ``tool_names``: the names of those tools, whose words name the work, not an earlier result
    ("find flights" names no ``relevantFlightParams`` of an airport found before).
    ``bindings`` (argument → ``$step.path``) are the arguments the plan wired to an earlier step's
    output field (a step the request implied): that reference is their one option, and the gate
    puts the value found in its place, so "Japan" cannot stand in for the capital looked up.
    """
    input_schema = inline_refs(input_schema)
    properties: Mapping[str, Any] = {
        n: (as_currency_choice(s, n, query) or s) if isinstance(s, Mapping) else s
        for n, s in (input_schema.get("properties") or {}).items()
    }
    required = [n for n in input_schema.get("required") or () if n in properties]
    flags = named_optional(properties, required, part)
    names = (
        required + [n for n in flags if n not in required]
        if required
        else list(properties)[:MAX_FREE_ARGUMENTS]
    )
    actions = frozenset(stems(tool_text))
    flowing = _flowing(earlier, part, frozenset(stems(" ".join(tool_names))))
    near = [Candidate(value=s, source="step") for s in _unnamed(text_spans(part, actions), flowing)]
    near += flowing
    anywhere = [Candidate(value=s, source="query") for s in text_spans(query, actions)]
    values = [c.value for c in near]
    operation = named_operation(part)
    given_in = " ".join(ref.rsplit(".", 1)[-1] for ref in (bindings or {}).values())
    introduced = {
        n: introduced_choice(properties[n], n, part, given_in)
        for n in names
        if isinstance(properties[n], Mapping)
    }
    numbered = numbered_values(properties, names, part)
    listed = numbered_lists(properties, names, part)
    laid = assigned(properties, names, part)
    laid |= {  # the rest of the request's, where no earlier result gives this argument one
        n: v
        for n, v in assigned(properties, names, query).items()
        if n not in laid and not _dated_before(properties[n], flowing)
    }
    narrowed = {}
    claimed: dict[str, list[Any]] = {}
    for name in names:
        schema = properties[name] if isinstance(properties[name], Mapping) else {}
        taken = [v for other, v in introduced.items() if other != name and v is not None]
        if introduced.get(name) is None:
            taken += source_taken(schema, name, part)
        own = part if schema.get(REQUEST_MARK) is True else introduced.get(name)
        if own is None and flags.get(name) is not None:
            own = flags[name]
            if not isinstance(own, bool):
                claimed[name] = [own]
        if bindings and name in bindings:  # the reference, whatever the type: the gate checks the value
            narrowed[name] = _options(schema, [bindings[name]])
            continue
        if name in laid:  # a date or time in the layout the argument asks for, nothing else
            chosen = _options(schema, laid[name])
            narrowed[name] = _without_value(chosen, avoid[name]) if avoid and name in avoid else chosen
            if len(laid[name]) == 1:
                claimed[name] = laid[name]
            continue
        stated = numbered.get(name)
        if stated is None and _numeric(schema):  # "a $40.50 deposit" for deposit_cents: 4050
            stated = converted_for(name, schema, part)
        if stated is None and _numeric(schema):
            stated = stated_for(name, part)
        fraction = as_fraction(name, schema, part) if _numeric(schema) else None
        if fraction is not None:
            stated = fraction  # "5%" for a rate taken in decimal form
        if own is None and name in listed:  # "Group A [3, 4] and Group B [7, 8]"
            own = listed[name]
            claimed[name] = [own]
        if own is None and stated is not None:
            own = stated
            claimed[name] = [stated]
            if fraction is not None:  # the percentage as written is this argument's too
                claimed[name].append(round(fraction * 100, 8))
        given = _given(schema, name, part, [n for n in properties if n != name]) if own is None else None
        if given is not None:
            claimed[name] = list(given["enum"])
        chosen = (
            ({**schema, "enum": [own]} if own is not None else None)
            or given
            or _mentioned(schema, part)
            or _placed(schema, part)
            or _listed(schema, part)
            or enum_choices(schema, part, values, taken)
            or grounded_property(schema, near, operation)
            or grounded_property(schema, anywhere, operation)
            or _without_examples(schema)
        )
        if avoid and name in avoid:
            chosen = _without_value(chosen, avoid[name])
        narrowed[name] = chosen
    narrowed = _unclaimed(narrowed, claimed)
    free = {n for n in names if n not in (bindings or {}) and "enum" not in (properties.get(n) or {})}
    narrowed = settle_free(narrowed, free, _spent(earlier, part, bindings or {}))
    return {"type": "object", "properties": narrowed, "required": names, "additionalProperties": False}


def _flowing(earlier: Sequence[EarlierResult], part: str, actions: Collection[str] = ()) -> list[Candidate]:
    """Earlier values that may flow into this step: the fields the part names (by words that are
    not the tools' own, ``named_leaves``), from any earlier step; else the values of the steps it
    depends on (every earlier step when it names none, or when it speaks of several: "them",
    "both", "together"), and of those, the fields each step's own part asked for when it named any:
    after "look up the capital of Canada", "convert it to upper case" means the capital, not the
    country. A step made for this same part that this one does not depend on is its sibling (the
    origin's airport and the destination's, looked up side by side): its values are not this one's."""
    earlier = [r for r in earlier if r.direct or r.description != part]
    leaves = [c for r in reversed(earlier) for c in output_candidates(r.step_id, r.output)]
    named = named_leaves(leaves, part, actions)
    if named:
        return named
    direct = {r.step_id for r in earlier if r.direct or SEVERAL.search(without_quotes(part))}
    flowing = [c for c in leaves if c.source in direct] or leaves
    asked = [
        c
        for r in reversed(earlier)
        for c in named_leaves([leaf for leaf in flowing if leaf.source == r.step_id], r.description)
    ]
    return asked or flowing


def _unnamed(spans: Sequence[str], flowing: Sequence[Candidate]) -> list[str]:
    """The part's spans less the words that name an earlier result's field: in "generate a barcode
    using the BMI value", BMI is the value found, not the text "BMI"."""
    fields = [set(stems(c.path.replace("[0]", " "))) for c in flowing if c.path]
    return [s for s in spans if not ((words := set(stems(s))) and any(words <= f for f in fields))]


def _given(
    schema: Mapping[str, Any], name: str, part: str, siblings: Collection[str] = ()
) -> dict[str, Any] | None:
    """A free argument narrowed to the values the part gives right after its name ("the title
    'Buy groceries'"), or sends where its name points ("into French" for ``target_language``),
    those valid for it; None when the part gives none."""
    if "enum" in schema or _numeric(schema):
        return None
    values = introduced_values(name, part, siblings)
    if not values and not identifier(name):  # an id is looked up, not written after "to"
        values = directed_values(name, part)
    narrowed = (
        grounded_property(schema, [Candidate(value=v, source="step") for v in values]) if values else None
    )
    return narrowed if narrowed is not None and isinstance(narrowed.get("enum"), list) else None


def _dated_before(schema: Mapping[str, Any], flowing: Sequence[Candidate]) -> bool:
    """Whether an earlier result flowing here holds a date or time for an argument with a layout."""
    layout = layout_of(schema)
    return layout is not None and any(laid_out(layout, str(c.value)) for c in flowing)


def _mentioned(schema: Mapping[str, Any], part: str) -> dict[str, Any] | None:
    """A free string narrowed to the values its description names that the part names too ("'gas'
    refers to a gasoline vehicle" and "my gas car"; "e.g. Living room, Bathroom" and "two living
    rooms"), written as the description writes them: the tool's author said what it understands,
    where the request's other words would be noise to choose among. None when the part names none."""
    if schema.get("type") not in ("string", None) or any(k in schema for k in ("enum", "const", "format")):
        return None
    lowered = part.casefold()
    said = set(stems(part)) | set(re.findall(r"[\w'-]+", lowered))
    found = []
    for value in language().mentioned_values(str(schema.get("description") or "")):
        at = re.search(rf"(?<!\w){re.escape(value.casefold())}(?!\w)", lowered)
        words = re.findall(r"[\w'-]+", value.casefold())
        if at is not None or (words and all(w in said or word_stem(w) in said for w in words)):
            found.append((at.start() if at else len(lowered), value))
    named = [v for _, v in sorted(found, key=lambda f: f[0])]
    return _options(schema, named) if named else None


def _placed(schema: Mapping[str, Any], part: str) -> dict[str, Any] | None:
    """A place argument that asks for the region too (``places``) narrowed to the places the part
    writes so ("Riga, Latvia"); None when it writes none."""
    places = places_with_region(part) if wants_region(schema) else []
    return _options(schema, places) if places else None


def _listed(schema: Mapping[str, Any], part: str) -> dict[str, Any] | None:
    """A list argument narrowed to the lists the part writes out whole (``lists``), or for a list of
    choices to the options the part names."""
    if schema.get("type") != "array":
        return None
    items = schema.get("items")
    named = named_options(items, part) if isinstance(items, Mapping) else []
    if named:  # a list of choices: the ones the part names, in its order ("paper, glass and plastic")
        return _options(schema, [named])
    lists = stated_lists(part, schema)
    return _options(schema, lists) if lists else None


def _options(schema: Mapping[str, Any], options: Sequence[Any]) -> dict[str, Any]:
    """``schema`` as a choice among ``options``, keeping the words a prompt shows of it."""
    return {k: v for k, v in schema.items() if k in ("description", "title")} | {"enum": list(options)}


def _unclaimed(narrowed: dict[str, Any], claimed: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """A value the part gives beside one argument's name ("a bill of $50", "the title 'Buy
    groceries'") is not offered to the call's other arguments while they keep another option: "$50"
    is not also the tip percentage."""
    out = dict(narrowed)
    for name, schema in narrowed.items():
        options = schema.get("enum") if isinstance(schema, Mapping) else None
        taken = {_claim_key(v) for other, values in claimed.items() if other != name for v in values}
        if name in claimed or not taken or not isinstance(options, list):
            continue
        rest = [o for o in options if _claim_key(o) not in taken]
        if rest:
            out[name] = {**schema, "enum": rest}
    return out


def _claim_key(value: Any) -> Any:
    """Numbers by value (50, 50.0 and "50" are one claim), anything else as it is."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        number = as_number(value)
        return value if number is None else number
    return repr(value)


def _numeric(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") in ("integer", "number") and "enum" not in schema


def _spent(earlier: Sequence[EarlierResult], part: str, bindings: Mapping[str, str]) -> list[Any]:
    """Values this step's free arguments should not take while others remain: the keys the part's
    earlier steps looked up ("Linden Street" found the pharmacy; the drug is something else) and the
    values the plan already bound to another argument of this call (the pharmacy id found)."""
    spent = [v for r in earlier if r.description == part for v in r.inputs.values()]
    for reference in bindings.values():
        step, _, path = reference.removeprefix("$").partition(".")
        spent += [v for r in earlier if r.step_id == step for p, v in leaves(r.output) if p == path]
    return spent


def _without_value(schema: dict[str, Any], value: Any) -> dict[str, Any]:
    """``schema`` with ``value`` taken out of its options, unless it was the only one."""
    options = schema.get("enum")
    if isinstance(options, list) and value in options and len(options) > 1:
        return {**schema, "enum": [o for o in options if o != value]}
    alternatives = schema.get("anyOf")
    if isinstance(alternatives, list):
        return {**schema, "anyOf": [_without_value(dict(a), value) for a in alternatives]}
    return schema


def _without_examples(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in ("examples", "example", "default")}
