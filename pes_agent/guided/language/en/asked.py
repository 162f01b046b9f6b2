"""What an English sentence asks for as something *of* something ("the capital of Japan", "its
price") and what it points back to as found already ("that amount"): read apart from the rest of
the language so that each reader stays one idea."""

from __future__ import annotations

import re

from pes_agent.guided.language.en.words import ARTICLES, QUANTITY_WORDS

__all__ = ["back_words", "of_words"]

_OF = re.compile(r"\b((?:[a-z]+\s)?[a-z]+)\s+of\b(?!\s+[$€£]?\d)", re.IGNORECASE)
"""The one or two words before "of": "the share price of", "the capital of". Not before a value:
"an original price of 100 dollars", "a rate of 5%" give the price and the rate, they do not ask
for them."""
_GIVEN_OF = re.compile(r"\bwith\b[^.?!]{0,160}\ban?\s+(?:[a-z]+\s+){0,2}of\s+[\"'‘“]", re.IGNORECASE)
"""A quoted value after "a … of" in the attributes "with" gives a thing ("an invoice … with a due date
of '2023-01-01' and a description of 'Website design'"): it gives the description, where "the author
of 'Dune'" and "text me a definition of 'serendipity'" ask for one."""
_COPULA = r"(?:is|are|was|were)\b"
_POSSESSED = re.compile(
    r"(?:\b(?!(?:what|it|that|there|here|who|where|how|he|she|let|when|why)['’]s)\w+(?:'s|’s|s'|s’)"
    r"|\b(?:its|his|her|their|your|my|our))\s+"
    rf"((?>(?!{_COPULA})[a-z]+\b(?:\s(?!{_COPULA})[a-z]+\b)?))(?!\s+{_COPULA})",
    re.IGNORECASE,
)
"""The one or two words after a possessive: "Japan's capital", "its price", "Lena Brook's start date";
not after a contraction ("What's the weather" is "what is"), nor before "is" ("my email is …" gives
the email, it does not ask for it)."""
_ASKED_POSSESSED = re.compile(
    r"\b(?:what|where|when|who|which|how\s+(?:much|many|long|old))\s+(?:its|his|her|their|your|my|our|\w+['’]s)"
    rf"\s+([a-z]+(?:\s[a-z]+)?)\s+{_COPULA}",
    re.IGNORECASE,
)
"""A possessive before "is" inside a question still asks: "tell me what my account balance is"."""


_BACK = re.compile(
    r"(?:\b(?:for|of|to|on|in|with|at|from|by|into|convert|send|add|use|take)\s+that|\bthis|\bthese"
    r"|\bthose|\bthe\s+same)\s+"
    r"(?!(?:is|are|was|were|will|would|can|could|has|have|the|a|an|it|they|we|you|i|he|she|my|our|your)\b)"
    r"([a-z]+)\b(?!\s+(?:is|are|was|were)\b)",
    re.IGNORECASE,
)
"""A demonstrative and the noun it points back with: "that amount", "the same date" (not "that is",
nor "that price is" where the clause states it; "that" only after a preposition or a verb: after a
noun it opens a relative clause, "restaurants that serve …")."""

_WHERE = re.compile(r"\bthe\s+([a-z]+)\s+(?:where|in which|at which|whose)\b", re.IGNORECASE)
"""The noun a relative clause describes: "the city where the Eiffel Tower stands" asks for a city."""


def _counted(text: str, match: re.Match[str]) -> bool:
    """Whether the words before "of" are a quantity's unit ("3 hours of parking", "two cups of
    flour"): they measure something, they ask for nothing."""
    words = text[: match.end(1)].split()
    if len(words) < 2:
        return False
    word = words[-2].casefold()  # right before the unit: "3 hours of", not "the 10 largest cities of"
    return word.replace(".", "").replace(",", "").isdigit() or (
        word in QUANTITY_WORDS and word not in ARTICLES
    )


def of_words(text: str) -> list[str]:
    """Words the text uses as something *of* something else (``Language.of_words``)."""
    given = [m.span() for m in _GIVEN_OF.finditer(text)]
    found = [
        m.group(1)
        for m in _OF.finditer(text)
        if not any(a <= m.start() < b for a, b in given) and not _counted(text, m)
    ]
    found += [m.group(1) for m in _POSSESSED.finditer(text)]
    found += [m.group(1) for m in _ASKED_POSSESSED.finditer(text)]
    found += [m.group(1) for m in _WHERE.finditer(text)]
    return [w for phrase in found for w in phrase.split()]


def back_words(text: str) -> list[str]:
    """Words the text points back with to a thing already found (``Language.back_words``)."""
    return [w for m in _BACK.finditer(text) for w in m.group(1).split()]
