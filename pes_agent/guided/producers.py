"""Tools an offer needs for the tools it offers: the one whose output gives an id an offered tool
requires and the request does not hold.

Retrieval finds tools by the request's words, and a request never names the lookup its action
needs: "Get the phone number of Osteria Bellini in Manchester" finds the restaurant details tool,
which takes a restaurant id of the form ``RS-1234``, and not the restaurant search, the one tool
that gives such an id. Planning by data flow (``dataflow``) can plan the search first only if it is
on offer. So for each offered tool's required argument that has a shape (a ``pattern`` or
``format``) no span of the request fits, a tool whose declared output has a field of that very name
is offered too: of several, the one sharing most words with the request.

Decided by schemas: argument names, shapes, declared output fields. The catalogue's fields are
indexed once per version of the registry.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pes_agent.guided.grounding import Candidate, grounded_property, text_spans
from pes_agent.guided.shapes import output_fields
from pes_agent.guided.words import stems
from pes_agent.prompts.schemas import inline_refs
from pes_agent.tools.registry import ToolRegistry

__all__ = ["MAX_PRODUCERS", "needed_producers"]

MAX_PRODUCERS = 2
"""Tools added to one offer at most: producers complete an offer, they do not replace retrieval."""
NEEDING = 10
"""The offered tools, best first, whose needs are looked at: those a part is likely to choose. A
tool far down the offer, completed with lookups, became the plan of a part it barely matched."""

_INDEXES: weakref.WeakKeyDictionary[ToolRegistry, tuple[int, Mapping[str, tuple[str, ...]]]] = (
    weakref.WeakKeyDictionary()
)


def needed_producers(
    offered: Sequence[str], enabled: Iterable[str], registry: ToolRegistry, query: str
) -> list[str]:
    """Enabled tools not in ``offered`` whose output gives a shaped id one of the best ``NEEDING``
    offered tools requires and ``query`` holds no value for (and, once, what those need in turn),
    in the order found."""
    index = _index(registry)
    allowed = set(enabled)
    spans = [Candidate(value=s, source="query") for s in text_spans(query)]
    words = set(stems(query))
    shown = set(offered)
    added: list[str] = []
    wanting = list(offered[:NEEDING])
    for _ in range(2):  # producers of producers: an order needs a product id found by a search
        found = []
        for name in wanting:
            for argument, prop in _unheld_ids(registry, name, spans):
                makers = [p for p in _makers(index, argument, prop) if p in allowed and p != name]
                if not makers:
                    continue
                # the maker the request, the argument and the tool needing it speak of most; of
                # equals, one already on offer
                about = words | set(stems(f"{argument} {_about(registry, name)}"))
                best = max(makers, key=lambda p: (len(about & set(stems(_about(registry, p)))), p in shown))
                if best not in shown:
                    shown.add(best)
                    found.append(best)
        added += found
        wanting = found
    return added[:MAX_PRODUCERS]


def _makers(index: Mapping[str, tuple[str, ...]], argument: str, prop: Mapping[str, Any]) -> list[str]:
    """Tools whose output has a field of the argument's name, or named for its ``format`` where the
    argument's name says it (``email`` for a ``customer_email`` of format email)."""
    shape = str(prop.get("format") or "")
    named = shape in stems(argument) and shape != argument
    return list(dict.fromkeys([*index.get(argument, ()), *(index.get(shape, ()) if named else ())]))


def _unheld_ids(
    registry: ToolRegistry, name: str, spans: Sequence[Candidate]
) -> list[tuple[str, Mapping[str, Any]]]:
    spec = registry.get(name)
    if spec is None:
        return []
    schema = inline_refs(spec.input_schema)
    properties: Mapping[str, Any] = schema.get("properties") or {}
    out = []
    for argument in schema.get("required") or ():
        prop = properties.get(argument)
        if (
            isinstance(prop, Mapping)
            and ("pattern" in prop or "format" in prop)
            and grounded_property(prop, spans) is None
        ):
            out.append((str(argument), prop))
    return out


def _about(registry: ToolRegistry, name: str) -> str:
    spec = registry.get(name)
    return f"{name} {spec.summary}" if spec is not None else name


def _index(registry: ToolRegistry) -> Mapping[str, tuple[str, ...]]:
    """Output field name → the tools declaring it (a field echoing one of the tool's own inputs
    produces nothing), built again when the registry's version moves."""
    kept = _INDEXES.get(registry)
    if kept is not None and kept[0] == registry.version:
        return kept[1]
    index: dict[str, list[str]] = {}
    for spec in registry.specs():
        if spec.output_schema is None:
            continue
        inputs = set(inline_refs(spec.input_schema).get("properties") or {})
        for path, _ in output_fields(spec.output_schema):
            field = path.rsplit(".", 1)[-1].removeprefix("[0]")
            if field and field not in inputs and spec.name not in index.setdefault(field, []):
                index[field].append(spec.name)
    frozen = {k: tuple(v) for k, v in index.items()}
    _INDEXES[registry] = (registry.version, frozen)
    return frozen
