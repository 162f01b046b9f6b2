"""Dates and clock times in the layout an argument asks for, and several of them to several arguments.

A tool says how it wants a date: ``format: date`` in its schema, or a layout in the description
("Format: YYYY-MM-DD", "in the format of 'YYYY-MM-DDTHH:MM:SS'", "HH:MM"). The request writes the
day as people do ("August 15, 2024", "Jun.20,2023", "at 8pm"). Offering the request's words would
leave a small model to rewrite them, which it cannot; offering every value of the request would let
it put a reference or a name where a day belongs. So an argument with a layout is offered the
request's dates and times written in that layout, and nothing else. Where a call takes several
(a departure and a return, a start and an end), each takes the one the words before it name
("return on August 18"), else they go in the order the request writes them, which is the order the
schema lists them in nearly every tool (start before end, check-in before check-out). Decided by
schemas; the reading of dates and times is the language module's.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.guided.language import language
from pes_agent.guided.words import stems

__all__ = ["Layout", "assigned", "in_layout", "layout_of", "laid_out"]

_TOKEN = r"(?:YYYY|yyyy|YY|yy|MM|mm|DD|dd|HH|hh|SS|ss)"
_LAYOUT = re.compile(rf"(?<![A-Za-z]){_TOKEN}(?:[-/.: T]{_TOKEN}|T{_TOKEN})+(?:Z|(?![A-Za-z]))")
"""A layout written with the usual letters: at least two fields joined by separators (a closing
``Z``, UTC's designator, is read and not written: the request's time is not known to be UTC)."""

_FORMATS = {"date": "YYYY-MM-DD", "date-time": "YYYY-MM-DDTHH:MM:SS", "time": "HH:MM:SS"}
"""JSON Schema's own formats, as layouts (RFC 3339's full date, date-time without offset, time)."""

_NOT_THE_ARGUMENT = frozenset(stems("date time day datetime timestamp format the of in on at"))
"""Words every date or time argument's name has: they do not tell two such arguments apart."""


@dataclass(frozen=True)
class Layout:
    """A date or time layout as fields and separators: ``("YYYY", "-", "MM", "-", "DD")``."""

    pieces: tuple[str, ...]

    @property
    def has_date(self) -> bool:
        return any(p[0] in "YD" or p == "MO" for p in self.pieces)

    @property
    def has_time(self) -> bool:
        return any(p in ("HH", "MI", "SS") for p in self.pieces)

    @property
    def kind(self) -> str:
        return ("date" if self.has_date else "") + ("time" if self.has_time else "")

    def render(self, day: dt.date | None, clock: str | None) -> str | None:
        """The value in this layout, None when it needs a part it was not given."""
        hour, minute, second = ([int(n) for n in clock.split(":")] + [0, 0])[:3] if clock else (0, 0, 0)
        fields = {
            "YYYY": f"{day.year:04d}" if day else None,
            "YY": f"{day.year % 100:02d}" if day else None,
            "MO": f"{day.month:02d}" if day else None,
            "DD": f"{day.day:02d}" if day else None,
            "HH": f"{hour:02d}" if clock else None,
            "MI": f"{minute:02d}" if clock else None,
            "SS": f"{second:02d}" if clock else None,
        }
        out = []
        for piece in self.pieces:
            if piece in fields:
                value = fields[piece]
                if value is None:
                    return None
                out.append(value)
            else:
                out.append(piece)
        return "".join(out)


def layout_of(schema: Mapping[str, Any]) -> Layout | None:
    """The layout a string argument asks its dates or times in: its ``format``, else one its
    description writes out; None when it asks for none."""
    if schema.get("type") not in ("string", None) or "enum" in schema:
        return None
    written = _FORMATS.get(str(schema.get("format") or ""))
    if written is None:
        match = _LAYOUT.search(str(schema.get("description") or ""))
        written = match.group(0) if match else None
    if written is None and isinstance(schema.get("pattern"), str):
        written = _by_pattern(schema["pattern"])
    return _parsed(written) if written else None


_SAMPLE_DAY, _SAMPLE_CLOCK = dt.date(2024, 1, 15), "09:30:00"
_USUAL = ("YYYY-MM-DD", "HH:MM", "HH:MM:SS", "YYYY-MM-DDTHH:MM:SS", "YYYY-MM-DDTHH:MM", "YYYY-MM-DD HH:MM")
"""Layouts a ``pattern`` is tried with (``^([01][0-9]|2[0-3]):[0-5][0-9]$`` is a clock's ``HH:MM``)."""


@functools.lru_cache(maxsize=1024)
def _by_pattern(pattern: str) -> str | None:
    """The usual layout whose sample the pattern takes, none when it takes none (a code's pattern)."""
    try:
        compiled = re.compile(pattern)
    except re.error:
        return None
    if compiled.search("word") or compiled.search("12345"):  # takes anything: no layout
        return None
    for written in _USUAL:
        layout = _parsed(written)
        sample = layout.render(_SAMPLE_DAY, _SAMPLE_CLOCK) if layout is not None else None
        if sample is not None and compiled.search(sample):
            return written
    return None


def _parsed(written: str) -> Layout | None:
    pieces: list[str] = []
    timed = False
    for token in re.findall(rf"{_TOKEN}|.", written.removesuffix("Z")):
        upper = token.upper()
        if upper in ("YYYY", "YY", "DD", "SS"):
            pieces.append(upper)
        elif upper == "HH":
            pieces.append("HH")
            timed = True
        elif upper == "MM":  # a month, or minutes once an hour came before
            pieces.append("MI" if timed else "MO")
        else:
            pieces.append(token)
    layout = Layout(tuple(pieces))
    return layout if layout.has_date or layout.has_time else None


@dataclass(frozen=True, kw_only=True)
class _Value:
    text: str
    """The value in the argument's layout."""
    at: int
    """Where the request writes it."""
    before: frozenset[str]
    """The stemmed words just before it ("return on" → return)."""


def laid_out(layout: Layout, text: str) -> list[str]:
    """The dates and times ``text`` writes, in ``layout``, in the order written."""
    return [v.text for v in _values(layout, text)]


def in_layout(schema: Mapping[str, Any], text: str) -> list[str]:
    """The dates and times ``text`` writes, in the layout ``schema`` asks for; none when it asks for
    none. Planning reads them as the step will offer them: "Thursday the 13th of August 2026 at 4 pm"
    holds a value for a ``date-time`` argument, though neither the day nor the time alone is one."""
    layout = layout_of(schema)
    return laid_out(layout, text) if layout is not None else []


def _values(layout: Layout, text: str) -> list[_Value]:
    days = [(text.find(d.text), d.text, dt.date.fromisoformat(d.iso)) for d in language().dates(text)]
    clocks = [(text.find(t.text), t.text, t.iso) for t in language().times(text)]
    found: list[_Value] = []
    if layout.has_date and layout.has_time:
        for c_at, _, clock in clocks:  # each time on the day written last before it, else the first
            before = [d for d in days if d[0] <= c_at] or days[:1]
            if before:
                _, _, day = before[-1]
                found.append(_value(layout.render(day, clock), text, c_at))
    elif layout.has_date:
        found = [_value(layout.render(day, None), text, at) for at, _, day in days]
    else:
        found = [_value(layout.render(None, clock), text, at) for at, _, clock in clocks]
    unique = {v.text: v for v in found if v.text}
    return sorted(unique.values(), key=lambda v: v.at)


def _value(rendered: str | None, text: str, at: int) -> _Value:
    window = re.split(r"[.;!?]\s|,", text[max(0, at - 40) : at])[-1]
    return _Value(text=rendered or "", at=at, before=frozenset(stems(window)) - _NOT_THE_ARGUMENT)


def assigned(properties: Mapping[str, Any], names: Sequence[str], text: str) -> dict[str, list[str]]:
    """For each argument among ``names`` with a layout, the values ``text`` offers it: those in its
    layout; where several arguments share a kind (dates, times), each its own value when the words
    before one name it, and the rest in the order written when there are as many values as
    arguments. An argument whose layout finds no value in ``text`` is left out."""
    out: dict[str, list[str]] = {}
    groups: dict[str, list[tuple[str, list[_Value]]]] = {}
    for name in names:
        schema = properties.get(name)
        layout = layout_of(schema) if isinstance(schema, Mapping) else None
        if layout is None:
            continue
        values = _values(layout, text)
        if values:
            groups.setdefault(layout.kind, []).append((name, values))
            out[name] = [v.text for v in values]
    for members in groups.values():
        if len(members) < 2:
            continue
        out |= _one_each(members, properties)
    return out


def _one_each(members: list[tuple[str, list[_Value]]], properties: Mapping[str, Any]) -> dict[str, list[str]]:
    """Several arguments of one kind: a value to each whose own words stand before exactly one value,
    the others in order when as many values remain as arguments."""
    out: dict[str, list[str]] = {}
    taken: set[int] = set()
    for name, values in members:
        schema = properties.get(name) or {}
        own = set(stems(f"{name} {schema.get('description') or ''}")) - _NOT_THE_ARGUMENT
        told = [i for i, v in enumerate(values) if own & v.before]
        if len(told) == 1 and told[0] not in taken:
            out[name] = [values[told[0]].text]
            taken.add(told[0])
    rest = [(name, values) for name, values in members if name not in out]
    left = [i for i in range(len(members[0][1])) if i not in taken]
    if rest and len(left) == len(rest) and all(len(v) == len(members[0][1]) for _, v in rest):
        for (name, values), i in zip(rest, left, strict=True):
            out[name] = [values[i].text]
    return out
