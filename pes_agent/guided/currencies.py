"""A free currency argument as a choice among the currencies the request names, by their codes.

Tools take currencies as ISO 4217 codes, whether or not their schema says so ("The currency to
convert from." over a free string); people name them in words ("500 US dollars", "in euros", "£20").
Offered the request's words, a small model passes "Canadian" or "euros", or both arguments the same
one. So an argument about a currency (the word in its name or description) whose schema leaves it
free becomes a choice among the codes of the currencies the request names, each described by the
words the request used for it ("USD (US dollars)"): the choice machinery for enums then gives the
source argument the currency an amount is stated in, and the target the other (``choices``).
Decided by the schema; the names of currencies are the language module's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pes_agent.guided.grounding import checking
from pes_agent.guided.language import language
from pes_agent.guided.words import stems

__all__ = ["as_currency_choice"]

_CURRENCY = frozenset(stems("currency currencies"))


def as_currency_choice(schema: Mapping[str, Any], name: str, text: str) -> dict[str, Any] | None:
    """``schema`` as an ``enum`` of the codes of the currencies ``text`` names, when it is a free
    string about a currency and ``text`` names at least one it accepts; else None."""
    if "enum" in schema or "const" in schema or schema.get("type") not in ("string", None):
        return None
    if not _CURRENCY & set(stems(f"{name} {schema.get('description') or ''}")):
        return None
    validator = checking({k: v for k, v in schema.items() if k != "description"})
    words: dict[str, str] = {}
    for named in language().currencies(text):
        code = next((c for c in (named.code, named.code.lower()) if validator.is_valid(c)), None)
        if code is not None and code not in words:
            words[code] = named.text
    if not words:
        return None
    about = ", ".join(code if written == code else f"{code} ({written})" for code, written in words.items())
    given = str(schema.get("description") or "").strip().rstrip(".")
    return {**schema, "type": "string", "enum": list(words), "description": f"{given}. {about}".lstrip(". ")}
