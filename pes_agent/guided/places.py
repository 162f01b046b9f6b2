"""A place written with its region ("Boston, MA", "Riga, Latvia") is one value where a tool asks so.

Names are read up to a comma, so "Riga, Latvia" offers "Riga" and "Latvia": right for a list of
cities, wrong for a weather tool whose location is "The city and state, e.g. San Francisco, CA",
the way a great many tools copy it. Where an argument's description shows such an example (a name,
a comma, a name or a short code) and speaks of a region (state, country, ...), the request's places
written that way are offered whole, and first. The request's words are never completed: "Boston"
alone stays "Boston" (which state is knowledge, not text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pes_agent.guided.language.en import REGION_WORDS

__all__ = ["places_with_region", "wants_region"]

_NAME = r"[A-Z][\w.'’-]*(?:\s+(?:de|da|do|del|la|le|of|on|upon)?\s*[A-Z][\w.'’-]*){0,3}"
_WITH_REGION = re.compile(rf"(?<![\w,])({_NAME}),\s+({_NAME}|[A-Z]{{2,3}})(?![\w-])(?!\s+(?:and|or)\s+[A-Z])")
"""A name, a comma, a name or a short code; not the first two of a list ("Paris, London and Rome")."""
_EXAMPLE = re.compile(rf"['\"]?{_NAME},\s+(?:{_NAME}|[A-Z]{{2,3}})\b")


def wants_region(schema: Mapping[str, Any]) -> bool:
    """Whether a string argument asks for a place written with its region: its description shows
    one ("e.g. San Francisco, CA") or the layout ("City, State") and names a region word."""
    if schema.get("type") not in ("string", None) or "enum" in schema:
        return False
    about = str(schema.get("description") or "")
    words = set(re.findall(r"[a-z]+", about.casefold()))
    return bool(words & REGION_WORDS) and _EXAMPLE.search(about) is not None


def places_with_region(text: str) -> list[str]:
    """The places ``text`` writes with their region, whole, in order ("Riga, Latvia")."""
    found = [(m.group(1), re.split(r"\.\s", m.group(2))[0]) for m in _WITH_REGION.finditer(text)]
    return list(dict.fromkeys(f"{place}, {region}" for place, region in found))  # not past a sentence
