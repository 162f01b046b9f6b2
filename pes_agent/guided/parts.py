"""The parts of a request: the clauses a plan chooses one tool for.

A request is split at sentence ends and sequencing words ("then", "after that", "finally", ";"), at
"and" or a comma before a verb a tool at hand begins with (its *action*: "… and book a ticket" when
a tool books), and one action on two objects said alike becomes two parts. Sentences that only give
context join the ask they serve. Quoted text is never split. What is an action comes from the
tools' own names and descriptions, so the same rule holds for any tool set.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from pes_agent.guided.arithmetic import named_operation
from pes_agent.guided.language import language
from pes_agent.guided.language.en import (
    ARTICLES,
    CLAUSE_BREAK,
    CONJOINED,
    LEADING_CONNECTIVE,
    RELATING,
    TRAILING_CONNECTIVE,
)
from pes_agent.guided.quotes import ADDRESS, mask_quotes, unmask
from pes_agent.guided.words import stems

__all__ = ["MAX_PARTS", "action_words", "joined_unserved", "query_parts"]

MAX_PARTS = 6
"""A query split into more parts than this is planned as its first parts plus one remainder."""


def query_parts(query: str, actions: Collection[str] = ()) -> tuple[str, ...]:
    """The query's clauses in order ("Compute 12 * 7, then count ..." → two parts).

    Quoted text is never split. A query of one clause is one part. ``actions`` (``action_words``:
    the verbs the tools at hand begin with) also end a clause where one follows "and" or a comma:
    "Find a bus to Boston and book a ticket" is two asks when a tool's work is to book.
    """
    masked, quotes = mask_quotes(query.strip())
    parts = []
    for raw in CLAUSE_BREAK.split(masked):
        for clause in _at_actions(raw, actions):
            part = TRAILING_CONNECTIVE.sub("", LEADING_CONNECTIVE.sub("", clause.strip(" ,"))).strip(" ,")
            parts += [unmask(p, quotes) for p in _conjoined(part)] if part else []
    parts = _with_context(parts, actions)
    if len(parts) > MAX_PARTS:
        parts = [*parts[: MAX_PARTS - 1], " ".join(parts[MAX_PARTS - 1 :])]
    return tuple(parts) or (query.strip(),)


def _addressed(part: str, actions: Collection[str]) -> bool:
    """A fragment that only says where something goes: "Confirmation to ciorcal@gmail.com." opens
    with no action of the tools at hand, asks nothing and holds an address: it gives the address to
    the ask it serves."""
    first = _WORD_AFTER.search(part)
    return (
        bool(actions)
        and first is not None
        and _stem(first.group(0)) not in actions
        and not language().is_question(part)
        and ADDRESS.search(part) is not None
        and len(ADDRESS.sub("", part).split()) <= FRAGMENT_WORDS
    )


FRAGMENT_WORDS = 4
"""The most words besides its address a fragment holds ("Confirmation to", "Receipts please to")."""


def _with_context(parts: list[str], actions: Collection[str] = ()) -> list[str]:
    """Sentences that only give context joined to the ask they serve: "A tent weighs 4 pounds.
    Convert that to kilograms." is one part holding its values, not a step for the statement; "Our
    team flies to Portugal next week. What is the weather in its capital?" keeps the country beside
    the question. Context after the last ask joins that ask."""
    out: list[str] = []
    pending: list[str] = []
    for part in parts:
        if language().is_context(part) or _addressed(part, actions):
            pending.append(part)
            continue
        out.append(". ".join([*pending, part]))
        pending = []
    if pending and out:
        out[-1] = ". ".join([out[-1], *pending])
    elif pending:
        out = [". ".join(pending)]
    return out


CONJOINED_MAX = 200
"""The longest part read as one action on two objects (the longest such ask is a line); a longer
one is a pasted text, and ``CONJOINED`` takes time growing with the square of what it reads."""


def _conjoined(part: str) -> list[str]:
    """A part that does one thing to two objects, each introduced by the same words, as two parts
    ("look up the price of a notebook", "look up the price of a pen"): one step calls a tool once,
    and a small model given both in one step looked up the first twice. Not arithmetic ("add the
    price of a lamp and the price of a chair" is one sum of two values), nor an action relating the
    two (``RELATING``)."""
    match = CONJOINED.match(part) if len(part) <= CONJOINED_MAX and not RELATING.search(part) else None
    if match is None or named_operation(match["verb"]) is not None:
        return [part]
    verb, head = match["verb"], match["head"]
    return [f"{verb} {head} {match['first']}", f"{verb} {head} {match['second']}"]


_JOINS = re.compile(r",\s*(?:and\s+)?(?:also\s+)?|\s+and\s+(?:also\s+)?", re.IGNORECASE)
_WORD_AFTER = re.compile(r"[A-Za-z]+")


def _at_actions(text: str, actions: Collection[str]) -> list[str]:
    """``text`` cut where "and" or a comma comes before one of the tools' ``actions``, written in
    lower case as a verb inside a sentence is ("and New York" names a city, not the work of a tool
    described as "New …")."""
    if not actions:
        return [text]
    out, start = [], 0
    for join in _JOINS.finditer(text):
        word = _WORD_AFTER.match(text, join.end())
        verb = word is not None and word.group(0).islower() and _stem(word.group(0)) in actions
        if verb and text[start : join.start()].strip():
            out.append(text[start : join.start()])
            start = join.end()
    return [*out, text[start:]]


def action_words(descriptions: Iterable[str]) -> frozenset[str]:
    """The verbs the tools at hand begin with, stemmed: the first word of each description ("Book a
    bus ticket." gives book). Not of names: their first words are as often a service or a noun
    (``group_dynamics.pattern``, ``Spotify_Scraper_…``). Words that begin anything ("the", "this")
    are left out."""
    words = set()
    for description in descriptions:
        first = _WORD_AFTER.search(description)
        if first is not None and len(first.group(0)) > 2 and first.group(0).casefold() not in ARTICLES:
            words.add(_stem(first.group(0)))
    return frozenset(words)


def _stem(word: str) -> str:
    found = stems(word)
    return found[0] if found else language().stem(word.casefold())


def joined_unserved(parts: Sequence[str], served: Sequence[bool]) -> tuple[str, ...]:
    """Each instruction no tool serves joined to the part after it, as that part's context: "Find the
    Trailmaster Tent" (no tool finds by that name alone) and "tell me its price in euros" are one
    ask, whose steps data flow plans (the search that gives the price) with the tent's name at hand.
    A question no tool serves stays: it is the part the run must say it could not answer."""
    out: list[str] = []
    pending: list[str] = []
    for part, ok in zip(parts, served, strict=True):
        if not ok and not language().is_question(part):
            pending.append(part)
            continue
        out.append(" and ".join([*pending, part]))
        pending = []
    if pending:
        out.append(" and ".join(pending))
    return tuple(out)
