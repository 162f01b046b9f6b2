"""Clock times as English writes them: "7 PM", "14:30", "half past two in the afternoon", "noon"."""

from __future__ import annotations

import re

from pes_agent.guided.language.base import TimeSpan

__all__ = ["clock_times"]

_TIME = re.compile(
    r"(?<![\w:.])(?:(?:[01]?\d|2[0-3])(?::[0-5]\d)?\s?(?:a\.m\.|p\.m\.|[ap]m\b)|(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?![\d:]))",
    re.IGNORECASE,
)
"""A clock time: with am/pm ("7 PM", "9:00pm", "10:30 a.m.") or on the 24-hour clock ("14:30")."""
_HOUR_WORDS = {
    w: n
    for n, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), start=1)
}
_SPOKEN_TIME = re.compile(
    r"\b(?:(?P<part>half\s+past|(?:a\s+)?quarter\s+(?:past|to))\s+)?"
    rf"(?P<hour>{'|'.join(_HOUR_WORDS)}|1[0-2]|[1-9])(?P<oclock>\s+o['’]clock)?"
    r"(?:\s+(?P<when>in\s+the\s+(?:morning|afternoon|evening)|at\s+night))?\b"
    r"|\b(?P<noon>noon|midday|midnight)\b",
    re.IGNORECASE,
)
"""A clock time in words, said with its part of the day or "o'clock" ("half past two in the
afternoon", "a quarter to nine in the morning", "seven o'clock", "noon"); a bare "two" is a count, so
one of those words must say it is a time (``clock_times``)."""


def clock_times(text: str) -> list[TimeSpan]:
    """The clock times ``text`` writes, in figures or in words, in the order written."""
    found = [(m.start(), TimeSpan(text=m.group(0), iso=_clock(m.group(0)))) for m in _TIME.finditer(text)]
    found += [
        (m.start(), TimeSpan(text=m.group(0), iso=_spoken_clock(m)))
        for m in _SPOKEN_TIME.finditer(text)
        if m["noon"] or m["part"] or m["oclock"] or m["when"]
    ]
    return [span for _, span in sorted(found, key=lambda f: f[0])]


def _clock(written: str) -> str:
    """A clock time as ``HH:MM`` (``HH:MM:SS`` with seconds) on the 24-hour clock: "8pm" is 20:00,
    "12 AM" 00:00, "12:30 p.m." 12:30."""
    numbers = [int(n) for n in re.findall(r"\d+", written)]
    hour, rest = numbers[0], numbers[1:]
    half = re.search(r"([ap])\.?m\.?", written.casefold())
    if half is not None:
        hour = hour % 12 + (12 if half.group(1) == "p" else 0)
    return ":".join(f"{n:02d}" for n in [hour, *(rest or [0])])


def _spoken_clock(match: re.Match[str]) -> str:
    """A clock time said in words as ``HH:MM``: "half past two in the afternoon" is 14:30."""
    if match["noon"]:
        return "00:00" if match["noon"].casefold() == "midnight" else "12:00"
    written = match["hour"].casefold()
    hour = _HOUR_WORDS.get(written) or int(written)
    minutes = 0
    part = re.sub(r"\s+", " ", (match["part"] or "").casefold()).removeprefix("a ")
    if part == "half past":
        minutes = 30
    elif part == "quarter past":
        minutes = 15
    elif part == "quarter to":
        hour, minutes = hour - 1 or 12, 45
    when = (match["when"] or "").casefold()
    if ("afternoon" in when or "evening" in when or "night" in when) and hour < 12:
        hour += 12
    elif "morning" in when and hour == 12:
        hour = 0
    return f"{hour:02d}:{minutes:02d}"
