"""A part that asks for several things of one object, each the work of another tool.

"Get me details, reviews and offers for the XBox One" is one clause with one verb, so the parts
reader keeps it whole, and a plan of one tool per part does a third of it. Its list names three
tools by the words of their names (``…_Product_Details``, ``…_Product_Reviews``,
``…_Product_Offers``): the part is read as three, each with one item of the list and the rest of the
clause ("Get me details for the XBox One", …). Which words name a tool is decided by the tools'
names alone: a word in the names of few tools, not a verb their descriptions open with.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from pes_agent.guided.language.en import STOPWORDS
from pes_agent.guided.quotes import mask_quotes, unmask
from pes_agent.guided.words import stems

__all__ = ["split_lists"]

FEW = 3
"""A word in the names of at most this many tools (or a tenth of them, when more) names them; in
more, it names a family."""

_LIST = re.compile(
    r"(?<![\w'-])(?P<items>[A-Za-z][\w'-]*(?: [A-Za-z][\w'-]*){0,2}"
    r"(?:(?:,\s*(?:and\s+)?|\s+and\s+)[A-Za-z][\w'-]*(?: [A-Za-z][\w'-]*){0,2})+)"
)
_SEPARATOR = re.compile(r",\s*(?:and\s+)?|\s+and\s+")


def split_lists(parts: Sequence[str], tools: Mapping[str, str]) -> tuple[str, ...]:
    """``parts`` with each part whose list of things names two or more tools read as one part per
    item. ``tools``: name → description of the tools at hand."""
    naming = _naming_words(tools)
    out: list[str] = []
    for part in parts:
        out.extend(_split(part, naming))
    return tuple(out)


def _naming_words(tools: Mapping[str, str]) -> dict[str, frozenset[str]]:
    """Stem → the tools whose names hold it, for the stems few names hold and that do not open
    several descriptions (a verb such as "get" names what tools do, not which)."""
    names = {n: set(stems(n)) for n in tools}
    counts = Counter(w for words in names.values() for w in words)
    openings = Counter(w for about in tools.values() for w in stems(about)[:1])
    verbs = {w for w, k in openings.items() if k > 1}  # "Retrieves …" opens many; "Details …" one
    return {
        w: frozenset(n for n, words in names.items() if w in words)
        for w, k in counts.items()
        if k <= max(FEW, len(tools) // 10) and w not in verbs
    }


def _split(part: str, naming: Mapping[str, frozenset[str]]) -> list[str]:
    """``part`` once per item of the first list in it whose items name different tools each; the
    part alone when it holds no such list."""
    masked, quotes = mask_quotes(part)
    for match in _LIST.finditer(masked):
        items = _trimmed([i.strip() for i in _SEPARATOR.split(match["items"]) if i.strip()])
        named = [_named(item, naming) for item in items]
        if len(items) < 2 or not all(named) or len(set(named)) < len(named):
            continue
        first = masked.find(items[0], match.start())
        last = masked.find(items[-1], first) + len(items[-1])
        before, after = masked[:first], masked[last:]
        return [unmask(f"{before}{item}{after}", quotes) for item in items]
    return [part]


def _trimmed(items: list[str]) -> list[str]:
    """The list's items without the clause's words around them: the first item keeps only its words
    after its last stopword ("get me details" → "details"), the last only those before its first
    ("offers for it" → "offers")."""
    if not items:
        return items
    head = items[0].split()
    cut = [i for i, w in enumerate(head) if w.casefold() in STOPWORDS]
    head = head[cut[-1] + 1 :] if cut else head
    tail = items[-1].split()
    stop = next((i for i, w in enumerate(tail) if w.casefold() in STOPWORDS), len(tail))
    return [" ".join(head), *items[1:-1], " ".join(tail[:stop])]


def _named(item: str, naming: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The tools an item names by the words of their names; empty when it names none."""
    found: frozenset[str] = frozenset()
    for word in stems(item):
        found |= naming.get(word, frozenset())
    return found
