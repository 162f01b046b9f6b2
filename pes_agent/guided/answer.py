"""Whether an answer states what the steps found, and the plain statement when it does not.

A small model's answer often omits or garbles the numbers its tools produced ("12 * 7 is 85", or
nothing at all). The tool outputs are known exactly, so the agent checks the answer against them:
each completed tool step's *findings* (the output's scalar values that are not an echo of the
call's own arguments) must appear in the answer, and every number the answer states must be one
the request or a tool call holds (``ungrounded``). When either fails, the response becomes a plain
statement of every step's findings (or of what was not found), and the response metadata says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.gate.references import find_references
from pes_agent.guided.grounding import leaves
from pes_agent.guided.language import language
from pes_agent.guided.numbers import AMOUNT, as_number
from pes_agent.guided.words import stems
from pes_agent.state.models import ItemStatus, TodoItem

__all__ = ["Finding", "findings", "not_found", "plain_statement", "ungrounded", "unstated"]

MAX_FINDINGS = 3
"""An output with more scalar values than this is a document: any one of its values stated counts,
and the plain statement shows this many."""


@dataclass(frozen=True, kw_only=True)
class Finding:
    """What one tool step found: its part of the query and the values an answer must state."""

    step_id: str
    description: str
    values: tuple[Any, ...]
    text: str
    """The finding in plain words (``84``, ``text: HELLO``)."""


def findings(items: Sequence[TodoItem]) -> list[Finding]:
    """What each completed tool step found, less the steps whose output only fed a later step (a
    producer the request implied: the capital looked up for the weather is not the answer)."""
    fed = {ref.step_id for item in items for ref in find_references(list(item.bindings.values()))}
    out = []
    for item in items:
        ok = [r for r in item.tool_results if r.status == "success"]
        if item.status is not ItemStatus.COMPLETED or not item.is_tool_step or not ok or item.id in fed:
            continue
        last = ok[-1]
        echoes = {_key(v) for v in _scalars(last.arguments)}
        every = list(_leaves(last.output))
        leaves = [(path, v) for path, v in every if _key(v) not in echoes] or every
        if not leaves:
            continue
        asked = _asked(leaves, item.description) if language().is_question(item.description) else []
        if asked:  # the question names the fields it asks for: those are what the answer must state
            every = leaves = asked
        shown = every[:MAX_FINDINGS] if len(every) <= MAX_FINDINGS else leaves[:MAX_FINDINGS]
        text = (
            _value_text(shown[0][1])
            if len(shown) == 1
            else ", ".join(f"{p}: {_value_text(v)}" for p, v in shown)
        )
        if len(leaves) > MAX_FINDINGS:  # a document: any of its values stated counts, a few are shown
            text += ", …"
        out.append(
            Finding(
                step_id=item.id, description=item.description, values=tuple(v for _, v in leaves), text=text
            )
        )
    return out


def _asked(leaves: Sequence[tuple[str, Any]], part: str) -> list[tuple[str, Any]]:
    """The output fields a question asks for by name: "how many calories are in one serving" asks
    for ``calories_per_serving``, not the recipe's ``servings`` beside it (the field sharing most of
    the part's words). Empty when no field's name is in the part. Only for questions: an instruction's
    words are its action ("Order 2 ..." names ``order_id`` but wants the order's total too)."""
    words = set(stems(part))
    overlap = {path: len(words & set(stems(path.replace("[0]", " ")))) for path, _ in leaves}
    best = max(overlap.values(), default=0)
    return [(path, v) for path, v in leaves if best and overlap[path] == best]


def ungrounded(answer: str, query: str, items: Sequence[TodoItem]) -> list[str]:
    """The numbers (amounts, dates, ids) the answer states that neither the request nor any tool
    call holds: made up ("38°C" after every call failed, "€12.20" when nothing converted). An answer
    may only restate what was asked and found.

    A date is checked whole, by the day it names: "1991-08-16" is made up when the request gave the
    runner's birthday as 14 March 1991 and the race is on 2026-08-16, though each of its numbers
    shows somewhere."""
    seen = [query]
    for item in items:
        for record in item.tool_results:
            seen.append(json.dumps(record.arguments, ensure_ascii=False, default=str))
            if record.status == "success":
                seen.append(json.dumps(record.output, ensure_ascii=False, default=str))
    known = {as_number(n) for text in seen for n in AMOUNT.findall(text)}
    days = {d.iso for text in seen for d in language().dates(text)}
    stated = language().dates(answer)
    invented = [d.text for d in stated if d.iso not in days]
    rest = answer
    for day in stated:  # a date's pieces are no amounts ("-03" of 2026-03-03)
        rest = rest.replace(day.text, " ")
    return invented + [n for n in AMOUNT.findall(rest) if as_number(n) not in known]


def not_found(items: Sequence[TodoItem], unplanned: Sequence[str]) -> str:
    """The plain statement of a run whose steps found nothing to state: what was tried and why it
    did not work, and the parts no step was planned for."""
    lines = [
        f"{_sentence(item.description)}: not found ({item.error or 'the step did not complete'})."
        for item in items
        if item.is_tool_step and item.status is not ItemStatus.COMPLETED
    ]
    lines += [f"{_sentence(part)}: no tool can answer this." for part in unplanned]
    return "\n".join(lines) or "No tool step found anything to state."


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}".rstrip(" .?!")


def unstated(answer: str, found: Sequence[Finding]) -> list[Finding]:
    """The findings whose values the answer does not state."""
    numbers = {as_number(n) for n in AMOUNT.findall(answer)}
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
    number = as_number(text) if AMOUNT.fullmatch(text) else None
    return number in numbers if number is not None else text in answer


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
