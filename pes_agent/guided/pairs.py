"""A call's free-text arguments read together: a value that names its argument is that argument's,
and the others do not take it.

"Book the Aurora Suite at Hotel Aurora for Lee Park" offers the same three names to ``hotel``,
``room_name`` and ``guest``; a small model picks one name for two of them, or swaps them. Of the
names, "Hotel Aurora" holds the word ``hotel``: it is the hotel, and it is no longer offered as the
room or the guest. Decided by argument names and the values' own words, nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from pes_agent.guided.choices import stems
from pes_agent.guided.grounding import explicit_values
from pes_agent.guided.language.en import ARTICLES, GENERIC_NAME_WORDS, VALUE_LINKS

__all__ = ["introduced_values", "settle_free", "stated_for"]

GENERIC = frozenset(stems(" ".join(GENERIC_NAME_WORDS)))


def settle_free(
    narrowed: Mapping[str, dict[str, Any]], free: set[str], spent: Collection[Any] = ()
) -> dict[str, dict[str, Any]]:
    """``narrowed`` (argument → its options schema) with each argument in ``free`` (free strings
    whose options are the request's words) narrowed to the options that name it, when some do,
    and those options taken out of the other free arguments' (while each keeps one); options made
    only of the argument's own name's words are dropped likewise; ``spent``
    values (keys earlier steps looked up, values bound to other arguments) are taken out likewise."""
    out = {name: dict(schema) for name, schema in narrowed.items()}
    for name in free:
        options = out[name].get("enum")
        if isinstance(options, list):
            own = set(stems(name))
            rest = [o for o in options if o not in spent and not _only_name(o, own)]
            if rest:
                out[name]["enum"] = rest
    claimed: dict[str, list[Any]] = {}
    for name in free:
        options = out[name].get("enum")
        if not isinstance(options, list) or len(options) < 2:
            continue
        own = set(stems(name)) - GENERIC
        naming = [o for o in options if isinstance(o, str) and own & set(stems(o))]
        if naming and len(naming) < len(options):
            claimed[name] = naming
    for name, naming in claimed.items():
        out[name]["enum"] = naming
        for other in free - {name}:
            options = out[other].get("enum")
            if isinstance(options, list):
                rest = [o for o in options if o not in naming]
                if rest:
                    out[other]["enum"] = rest
    return out


def _only_name(option: Any, own: set[str]) -> bool:
    """An option made only of words of its argument's name ("title" for ``title``, "product" for
    ``product_type``) repeats the question, it is no answer."""
    words = set(stems(option)) if isinstance(option, str) else set()
    return bool(words) and words <= own


_NUMBER = r"[$€£]?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)%?"
_LINK = "|".join(re.escape(w) for w in sorted(VALUE_LINKS))


def stated_for(name: str, part: str) -> float | int | None:
    """The number the part states beside a word of the argument's name: "to 6 servings" for
    ``servings``, "quantity 3" for ``quantity``, "a bill of $50" for ``bill_total``, "18% tip" for
    ``tip_percentage``. That number is the argument's, though an earlier result holds another (the
    recipe's own 4 servings); None unless exactly one number is stated so."""
    own = set(stems(name)) - GENERIC
    text = part.casefold()
    pairs = [(m.group(1), m.group(2)) for m in re.finditer(rf"(?<![\d.,/:-]){_NUMBER}\s+([a-z]+)", text)]
    pairs += [
        (m.group(2), m.group(1))
        for m in re.finditer(rf"([a-z]+)(?:\s+(?:{_LINK}))?\s*{_NUMBER}(?![-/:.,]?\d)", text)
    ]
    found = {_number(n) for n, word in pairs if set(stems(word)) & own}
    return found.pop() if len(found) == 1 else None


def _number(text: str) -> float | int:
    plain = text.replace(",", "")
    return float(plain) if "." in plain else int(plain)


_BEFORE = 48
"""How far before a value its argument's name is looked for (characters)."""


def introduced_values(name: str, part: str) -> list[str]:
    """The values the part states right after a word of the argument's name: "the title 'Buy
    groceries'" for ``title``, "the encryption key 'abc123'" for ``encryption_key``, "the phone
    number 555-0100" for ``phone_number``. Of the two words before a value (joining words such as
    "of", "the", "and" skipped), one must be the name's: the request named the argument and gave
    its value."""
    own = set(stems(name)) - GENERIC
    if not own:
        return []
    found: list[str] = []
    for value in explicit_values(part):
        at = part.find(value)
        if at < 0:
            continue  # another form of a value written otherwise (a date's ISO day)
        words = re.findall(r"[a-z]+", part[max(0, at - _BEFORE) : at].casefold())
        near = [w for w in words if w not in VALUE_LINKS and w not in ARTICLES][-2:]
        if own & set(stems(" ".join(near))):
            found.append(value)
    return found
