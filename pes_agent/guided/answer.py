"""Whether an answer states what the steps found, and the plain statement when it does not.

A small model's answer often omits or garbles the numbers its tools produced ("12 * 7 is 85", or
nothing at all). The tool outputs are known exactly, so the agent checks the answer against them:
each completed tool step's *findings* (the output's scalar values that are not an echo of the
call's own arguments) must appear in the answer. When one does not, the response becomes a plain
statement of every step's findings, and the response metadata says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.guided.grounding import leaves
from pes_agent.state.models import ItemStatus, TodoItem

__all__ = ["Finding", "findings", "plain_statement", "unstated"]

MAX_FINDINGS = 3
"""An output with more scalar values than this is a document, not a finding; it is not checked."""
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")


@dataclass(frozen=True, kw_only=True)
class Finding:
    """What one tool step found: its part of the query and the values an answer must state."""

    step_id: str
    description: str
    values: tuple[Any, ...]
    text: str
    """The finding in plain words (``84``, ``text: HELLO``)."""


def findings(items: Sequence[TodoItem]) -> list[Finding]:
    out = []
    for item in items:
        ok = [r for r in item.tool_results if r.status == "success"]
        if item.status is not ItemStatus.COMPLETED or not item.is_tool_step or not ok:
            continue
        last = ok[-1]
        echoes = {_key(v) for v in _scalars(last.arguments)}
        leaves = [(path, v) for path, v in _leaves(last.output) if _key(v) not in echoes]
        if not leaves or len(leaves) > MAX_FINDINGS:
            continue
        text = _value_text(leaves[0][1]) if len(leaves) == 1 else ", ".join(f"{p}: {_value_text(v)}" for p, v in leaves)
        out.append(Finding(step_id=item.id, description=item.description, values=tuple(v for _, v in leaves), text=text))
    return out


def unstated(answer: str, found: Sequence[Finding]) -> list[Finding]:
    """The findings whose values the answer does not state."""
    numbers = {_as_number(n) for n in _NUMBER.findall(answer)}
    lowered = answer.casefold()
    return [f for f in found if not any(_stated(v, numbers, lowered, answer) for v in _checked(f.values))]


def _checked(values: Sequence[Any]) -> Sequence[Any]:
    """The values that must show: the numbers when there are any (one of them suffices), else the
    texts. An answer that gives the word count need not also give the character count."""
    numeric = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return numeric or values


def plain_statement(found: Sequence[Finding]) -> str:
    lines = [f"{f.description[:1].upper()}{f.description[1:]}: {f.text}." for f in found]
    return "\n".join(lines)


def _stated(value: Any, numbers: set[float | None], lowered: str, answer: str) -> bool:
    """Numbers by value (84 = 84.0), texts exactly: "desserts" does not state DESSERTS."""
    if isinstance(value, bool):
        return str(value).casefold() in lowered
    if isinstance(value, int | float):
        return float(value) in numbers
    text = str(value).strip()
    number = _as_number(text) if _NUMBER.fullmatch(text) else None
    return number in numbers if number is not None else text in answer


def _as_number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _value_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _key(value: Any) -> str:
    """Exact: an output that differs from an argument only in case (upper-casing) is a finding."""
    return str(value).strip()


def _scalars(value: Any) -> Iterator[Any]:
    for _, leaf in _leaves(value):
        yield leaf


def _leaves(value: Any) -> Iterator[tuple[str, Any]]:
    """The output's leaves that say something (not null, not empty), a bare value named ``result``."""
    for path, leaf in leaves(value):
        if leaf is not None and leaf != "":
            yield path or "result", leaf
