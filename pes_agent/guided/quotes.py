"""Quoted text and addresses in a query: data it carries, which no rule splits or reads as a request.

Its own module because both the query's parts (``grounding``) and the arithmetic a part names
(``arithmetic``) read past quotes, and parts are split by what the arithmetic says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["ADDRESS", "mask_quotes", "unmask", "without_quotes"]

_QUOTED = re.compile(
    r"""(?<!\w)'((?:[^']|(?<=\w)'(?=\w)){1,200})'(?!\w)|"([^"]{1,200})"|“([^”]{1,200})”"""
    r"""|‘((?:[^’]|(?<=\w)’(?=\w)){1,200})’(?!\w)"""
)
"""Quoted text. A single quote between two letters is an apostrophe ("item's", "don't"), never
where a quotation opens or closes: "the item's description using the key 'abc123'" quotes abc123."""


def mask_quotes(text: str) -> tuple[str, list[str]]:
    """Quoted spans replaced by ``\\x00n\\x00`` so no rule splits or reads inside them."""
    quotes: list[str] = []

    def keep(match: re.Match[str]) -> str:
        quotes.append(next(g for g in match.groups() if g is not None))
        return f"\x00{len(quotes) - 1}\x00"

    return _QUOTED.sub(keep, text), quotes


ADDRESS = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\bhttps?://[^\s'\"<>]+", re.IGNORECASE)
"""An email address or a URL: one value, never its words. (Read from where a run of its characters
starts, not from each word inside it: linear in a long dotted text.)"""


def without_quotes(text: str) -> str:
    """``text`` with its quoted spans and addresses blanked: what it asks for, not the data it
    carries ("ana@outlook.com" says no "outlook" to a weather outlook)."""
    masked, _ = mask_quotes(text)
    return ADDRESS.sub(" ", re.sub(r"\x00\d+\x00", " ", masked))


def unmask(text: str, quotes: Sequence[str]) -> str:
    """``text`` with its masked spans quoted again."""
    return re.sub(r"\x00(\d+)\x00", lambda m: f"'{quotes[int(m.group(1))]}'", text)
