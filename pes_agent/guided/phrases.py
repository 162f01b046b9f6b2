"""Lower-case words written together, read as one value.

"Look up the olive tree" offers a free-text argument "olive tree": offered word by word, a small
model picks the first word of the thing ("olive") and the lookup finds nothing. The phrase comes
first, its words after it (a run may also be a thing and its time, "london tomorrow": the city is
still offered). Capitalised words are names (``grounding``), never joined here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["MAX_PHRASE", "phrases"]

MAX_PHRASE = 3
"""Words a phrase holds at most; a longer run of data words is read word by word."""

_WORD = re.compile(r"[^\W\d_][\w'-]*")


def phrases(plain: str, data: Callable[[str], bool]) -> list[str]:
    """The words of ``plain`` that ``data`` accepts, each run of adjacent lower-case ones first as
    one value, then word by word."""
    out: list[str] = []
    run: list[re.Match[str]] = []
    for m in [*_WORD.finditer(plain), None]:
        joins = m is not None and m.group().islower() and (not run or run[-1].group().islower())
        if (
            m is not None
            and data(m.group())
            and (not run or (joins and plain[run[-1].end() : m.start()] == " "))
        ):
            run.append(m)
            continue
        if 1 < len(run) <= MAX_PHRASE:
            out.append(plain[run[0].start() : run[-1].end()])
        out.extend(r.group() for r in run)
        run = [m] if m is not None and data(m.group()) else []
    return out
