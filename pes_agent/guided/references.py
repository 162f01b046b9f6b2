"""Words of a part that name what an earlier part finds: data the part acts on, not its action.

"Calculate the mortgage payment …, then calculate the square of the monthly mortgage payment": the
second part names the first one's output (``monthly_payment``) as the thing it squares. Counted as
evidence for a tool, those words choose the mortgage calculator again (three words against one for
"square"), and data flow then looks for producers of a loan amount nobody asked about. Which words
refer back is decided by the output fields the earlier parts' tools declare, not by phrases: a
field is named when every word of its name shows in the part, and the phrase from its first word
to its last ("monthly mortgage payment") is the reference.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pes_agent.guided.choices import tool_scores
from pes_agent.guided.kinds import identifier
from pes_agent.guided.shapes import ToolShape, output_fields, prepared
from pes_agent.guided.words import stems, word_stem

__all__ = ["References", "fed", "names_output", "named_outputs", "part_scores", "references"]

SPREAD = 2
"""Other words a reference may hold between its field's words ("monthly *mortgage* payment")."""


@dataclass(frozen=True)
class References:
    """A part as read for its action: its text less the phrases naming earlier results, and the
    tools that output the fields those phrases name (the part acts on that result, it does not ask
    for it once more)."""

    text: str
    again: frozenset[str] = frozenset()


def references(part: str, earlier: Collection[str], tools: Mapping[str, ToolShape]) -> References:
    """``part`` less the phrases that name an output field of the ``earlier`` parts' tools."""
    tokens = list(re.finditer(r"[A-Za-z][\w'-]*", part))
    stemmed = [word_stem(t.group().casefold().removesuffix("'s")) for t in tokens]
    cut: set[int] = set()
    named: set[frozenset[str]] = set()
    for name in earlier:
        shape = tools.get(name)
        if shape is None:
            continue
        for _, _, words in prepared(shape).fields:
            at = [i for i, s in enumerate(stemmed) if s in words]
            if not words or not at or {stemmed[i] for i in at} != words:
                continue
            first, last = min(at), max(at)
            if last - first + 1 <= len(words) + SPREAD:
                cut.update(range(first, last + 1))
                named.add(words)
    if not cut:
        return References(part)
    again = frozenset(
        n for n, shape in tools.items() if any(w in named for _, _, w in prepared(shape).fields)
    )
    kept, end = [], 0
    for i, token in enumerate(tokens):
        if i in cut:
            kept.append(part[end : token.start()])
            end = token.end()
    kept.append(part[end:])
    return References(re.sub(r"\s+", " ", "".join(kept)).strip(), again)


def named_outputs(part: str, tool: ToolShape) -> int:
    """Words of the part that name one of ``tool``'s output fields whole and that its name and
    description do not say: "calculate the total sales for …" asks for what a sales report gives
    (``total_sales``), whatever verb its description opens with."""
    said = set(stems(part))
    known = prepared(tool).about
    return len({w for _, _, words in prepared(tool).fields if words and words <= said for w in words} - known)


def part_scores(
    part: str,
    said: References,
    texts: Mapping[str, str],
    options: Mapping[str, str],
    *,
    inputs: Mapping[str, str],
    shapes: Mapping[str, ToolShape] | None,
    affinity: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """``tool_scores`` of the part for each tool, read without the references to earlier results
    for the tools that output them, plus the output fields it names (``named_outputs``) and its
    ``affinity``: how many of its inputs earlier results give by name (``fed``)."""
    out = tool_scores(part, texts, options, inputs)
    again = {n: texts[n] for n in said.again if n in texts}
    if again:
        out |= tool_scores(said.text, again, options, inputs)
    for name, count in (affinity or {}).items():
        if name in out:
            out[name] += count
    if shapes is not None:
        for name in out:
            if name in shapes:
                out[name] += named_outputs(said.text if name in again else part, shapes[name])
    return out


def fed(tool: ToolShape, earlier: Sequence[ToolShape]) -> frozenset[str]:
    """The required inputs of ``tool`` that an earlier part's tool outputs under the same name: "Find
    a trip … and book it" gives the booking its origin, destination, time and group size from the
    trip found, and no booking tool of another kind takes those. Unlike data flow's fields
    (``PreparedTool.fields``), an output echoing its tool's own input counts here: the trip found
    *from* a city is the continuation's evidence, though it produces no new value."""
    schema = prepared(tool).schema
    required = set(schema.get("required") or ())
    found: set[str] = set()
    for shape in earlier:
        if shape.output_schema is None or shape is tool:
            continue
        found |= {
            path.rsplit(".", 1)[-1].removeprefix("[0]") for path, _ in output_fields(shape.output_schema)
        }
    return frozenset(required & found)


def names_output(part: str, tool: ToolShape, ids: bool = True) -> bool:
    """Whether the part names one of ``tool``'s output fields whole ("the total sales" for
    ``total_sales``): it asks for what the tool gives. Without ``ids``, an identifier does not count:
    "the Linden Street pharmacy" names the pharmacy a lookup finds the id of, to feed another tool."""
    said = set(stems(part))
    return any(
        words and words <= said and (ids or not identifier(path.rsplit(".", 1)[-1]))
        for path, _, words in prepared(tool).fields
    )
