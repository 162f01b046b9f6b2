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

from pes_agent.guided.language import language
from pes_agent.guided.language.en import DAY_NAME_WORDS, GENERIC_NAME_WORDS, KIND_NAME_WORDS, WHEN_NAME_WORDS
from pes_agent.guided.words import stems

__all__ = ["GENERIC", "bare_number", "dated", "settle_free"]

GENERIC = frozenset(stems(" ".join(GENERIC_NAME_WORDS)))
KINDS = frozenset(stems(" ".join(KIND_NAME_WORDS)))
WHEN = frozenset(stems(" ".join(WHEN_NAME_WORDS)))
DAY_WORDS = frozenset(stems(" ".join(DAY_NAME_WORDS)))


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
        own = set(stems(name))
        about = own | set(stems(str(out[name].get("description") or "")))
        for holder in _enums(out[name]):
            rest = [o for o in holder["enum"] if o not in spent and not _only_name(o, own)]
            if own & KINDS:  # a kind or a name of something is never a bare number
                rest = [o for o in rest if not bare_number(o)] or rest
            # "name of the location", an origin_city "Starting city for the trip": no date, no clock
            # time (the name says what it is before the description's words do)
            if (own & KINDS and not own & WHEN) or (about & KINDS and not about & WHEN):
                rest = [o for o in rest if not dated(o)] or rest
            elif own & DAY_WORDS:  # a departure_date: the dates, when the request states any
                rest = [o for o in rest if dated(o)] or rest
            if rest:
                holder["enum"] = rest
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


def _enums(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema's list of options: its own ``enum``, or that of its ``anyOf`` alternative (options
    beside a composition of numbers), each a copy the caller may narrow in place."""
    if isinstance(schema.get("enum"), list):
        return [schema]
    alternatives = schema.get("anyOf")
    if not isinstance(alternatives, list):
        return []
    schema["anyOf"] = copies = [dict(a) if isinstance(a, Mapping) else a for a in alternatives]
    return [a for a in copies if isinstance(a, dict) and isinstance(a.get("enum"), list)]


def dated(option: Any) -> bool:
    """A date or a clock time, whole ("August 15, 2024", "2024-08-15", "10 am")."""
    if not isinstance(option, str):
        return False
    text = option.strip()
    spans = [d.text for d in language().dates(text)] + [t.text for t in language().times(text)]
    return text in spans or re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) is not None


def bare_number(option: Any) -> bool:
    if isinstance(option, bool):
        return False
    return isinstance(option, int | float) or (
        isinstance(option, str) and re.fullmatch(r"-?\d+(?:[.,]\d+)*", option) is not None
    )


def _only_name(option: Any, own: set[str]) -> bool:
    """An option made only of words of its argument's name ("title" for ``title``, "product" for
    ``product_type``) repeats the question, it is no answer."""
    words = set(stems(option)) if isinstance(option, str) else set()
    return bool(words) and words <= own
