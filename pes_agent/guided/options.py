"""How a request names an enum's options: by the value as written ("oil_change" as "oil change",
"check-up" for ``checkup``), by its stem, by each of its words in order, or by the words the schema's
description gives it ("EUR (euros)", "extraction (taking a tooth out, 40 minutes)").

Its own module because tool choice (``choices.tool_options`` and ``can_ground``) and argument
narrowing (``choices.enum_choices``) read options the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pes_agent.guided.words import stems, word_stem

__all__ = ["described", "named"]


def described(schema: Mapping[str, Any]) -> dict[str, str]:
    """Each option's words where the schema's description gives them beside it: "EUR (euros)",
    "C: Celsius", "kg = kilograms". Codes say little to a reader; the author's words for them are
    how a request names them ("in euros")."""
    options = schema.get("enum")
    about = schema.get("description")
    if not isinstance(options, list) or not isinstance(about, str):
        return {}
    out = {}
    for option in options:
        if not isinstance(option, str) or not option.strip():
            continue
        found = re.search(
            rf"(?<![\w-]){re.escape(option)}(?![\w-])\s*(?:\(([^)]{{1,160}})\)|[:=–-]\s*([^,;.()]{{1,60}}))",
            about,
        )
        if found:  # in brackets, the gloss less its figures: "extraction (taking a tooth out, 40
            # minutes)" is named "taking a tooth out", "large (150 sq ft: a three-bedroom house)" "a
            # three-bedroom house"; no request says the minutes or the square feet
            out[option] = (
                ", ".join(p.strip() for p in re.split(r"[,;:]", found.group(1)) if not re.search(r"\d", p))
                if found.group(1)
                else found.group(2)
            )
    return out


_WORDS = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
"""Words as options and texts are compared: a hyphen joins, an underscore separates."""


def named(options: Sequence[Any], text: str, words: Mapping[str, str] | None = None) -> list[Any]:
    """The string options ``text`` names, as words or stems, in the order it names them; also by
    the ``words`` the schema gives an option (``described``: "euros" names EUR)."""
    written = _WORDS.findall(text.casefold())
    lowered = " " + " ".join(written) + " "
    said = set(stems(text))
    # a compound is written closed or hyphenated: "check-up" names ``checkup`` (written open, two words
    # side by side are as often two words: "on line 4" is not ``online``)
    closed = {w.replace("-", "") for w in written}
    found = []
    for option in options:
        if not isinstance(option, str) or not option.strip():
            continue
        value = " ".join(_WORDS.findall(option.casefold()))  # "oil_change" is named "oil change"
        at = lowered.find(f" {value} ")
        if at < 0 and (word_stem(value) in said or value.replace(" ", "").replace("-", "") in closed):
            at = len(lowered)
        if (
            at < 0 and len(value.split()) > 1 and _in_order(value.split(), written)
        ):  # "wash and iron": wash_iron
            at = len(lowered)
        if (
            at < 0
            and words
            and option in words
            and set(stems(words[option])) <= said
            and stems(words[option])
        ):
            at = len(lowered)
        if at >= 0:
            found.append((at, option))
    return [option for _, option in sorted(found, key=lambda n: n[0])]


def _in_order(words: Sequence[str], written: Sequence[str], gap: int = 3) -> bool:
    """Whether ``written`` says each of ``words`` (as written or by its stem) in order, each within
    ``gap`` words of the one before: "wash and iron" says ``wash_iron``, "a 3 day pass" only
    ``3_day``, and "a large coffee and a small tea" no ``small_coffee``."""
    said = [word_stem(w) for w in written]
    wanted = [word_stem(w) for w in words]
    ends = {i + 1 for i, w in enumerate(said) if w == wanted[0]}  # where each reading may go on from
    for word in wanted[1:]:
        ends = {i + 1 for i, w in enumerate(said) if w == word and any(e <= i < e + gap for e in ends)}
    return bool(ends)
