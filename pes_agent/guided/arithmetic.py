"""The arithmetic a clause names: "multiply the result by 3" is ``*`` with 3 on the right.

A guided step composes an expression field from two grounded numbers and an operator
(``grounding``). The numbers are choices a small model makes well; the operator it got wrong in
every wrong run we measured (``42 + 3`` for "multiply the result by 3", ``77*32`` for "subtract
32 from that"), and each of those runs reported success. The clause's own words already say which
operation it is, so the grammar offers only that one, and for the two operations whose order
matters, the order the words give. The model still chooses the operands.

Read purely from the text, in English, past quoted text (data, not the request) and dates; a clause that names
several operations keeps those, one that names none keeps every operator (nothing is guessed). Nothing here
knows any tool.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pes_agent.guided.quotes import without_quotes

__all__ = ["Operation", "named_operation", "operation_verbs", "operation_words"]

_NUMBER = r"(-?\d[\d,]*(?:\.\d+)?)"
_OPERAND = r"(?=\s+(?:[-$]?\d|(?:the|that|it|this|its)\b))"
"""What follows "less" and "times" when they are arithmetic ("100 less 5", "times the result"), and
not when they are everyday English ("less than 200 euros", "three times a day", "less expensive")."""
_WORDS: tuple[tuple[str, str], ...] = (
    ("+", r"add|adds|adding|added|plus|increase[sd]?|increasing|(?:sum|total)\s+of"),
    (
        "-",
        (
            r"subtract|subtracts|subtracting|subtracted|minus|deduct|deducts|deducted|decrease[sd]?|reduce[sd]?"
            rf"|less{_OPERAND}|take\s+(?:[\w.,$%-]+\s+){{0,4}}?(?:away|off)|difference\s+(?:of|between)"
        ),
    ),
    ("*", rf"multiply|multiplies|multiplied|multiplying|times{_OPERAND}|product\s+of"),
    ("/", r"divide|divides|divided|dividing|quotient\s+of"),
    ("^", r"power|squared|cubed|exponent"),
    ("%", r"modulo|mod|remainder\s+of"),
)
"""Verbs name an operation; the nouns only with "of" ("the sum of 3 and 4"): "subtract 100 from the
sum" names a subtraction whose left side is an earlier result, not an addition; "divide the
remainder by 5" is a division."""
_IMPLIED: tuple[tuple[str, str, str], ...] = (
    ("*", "2", rf"double[sd]?{_OPERAND}|doubling{_OPERAND}"),
    ("*", "3", rf"triple[sd]?{_OPERAND}|tripling{_OPERAND}"),
    ("/", "2", rf"halve[sd]?{_OPERAND}|halving{_OPERAND}|half\s+of{_OPERAND}"),
    ("^", "2", r"squared|square\s+of"),
    ("^", "3", r"cubed|cube\s+of"),
)
"""Words that carry their own operand: "double 21" is ``21 * 2``, "halve it" ``x / 2``, "5 squared"
``5 ^ 2``. The number is offered to the composition as if the clause had said it (on the right of
a division or power). Only before an operand ("a double room", "half an hour" are no arithmetic)."""
_IMPLIED_WORDS = tuple((op, n, re.compile(rf"\b(?:{words})\b", re.IGNORECASE)) for op, n, words in _IMPLIED)
_OPERATOR_WORDS = tuple((op, re.compile(rf"\b(?:{words})\b", re.IGNORECASE)) for op, words in _WORDS)
_SYMBOL = re.compile(r"\d\s*([-+*/xX×÷^%])\s*-?\d")
_SYMBOLS = {"x": "*", "X": "*", "×": "*", "÷": "/"}
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b")
"""Dates, ISO or US: their hyphens and slashes are no minus or division ("on 11/26/2026")."""
_RIGHT = re.compile(
    rf"\b(?:subtract|subtracting|minus|deduct|less|by)\s+{_NUMBER}|\btake\s+{_NUMBER}(?=\s+(?:away|from|off)\b)",
    re.IGNORECASE,
)
"""A number the operation applies to the other value with: "subtract 6 ...", "take 6 away", "... by 3".
"take" only so: in "take 100 and subtract 5" it names where the operation starts."""
_LEFT = re.compile(rf"\b(?:from|divide)\s+{_NUMBER}", re.IGNORECASE)
"""A number the operation starts from: "... from 100", "divide 100 ..."."""


_PLAIN_WORDS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "^": "power", "%": "remainder"}


@dataclass(frozen=True)
class Operation:
    """The operators a clause allows, and which numbers must stand on which side (empty: either)."""

    operators: str
    left: tuple[str, ...] = ()
    right: tuple[str, ...] = ()
    twice: tuple[str, ...] = ()
    """Numbers the clause says twice ("multiply 11 by 11"): they may stand on both sides."""
    implied: tuple[str, ...] = ()
    """Numbers its words carry ("double" → 2): offered as operands though never written."""


def named_operation(clause: str) -> Operation | None:
    """The operation ``clause`` names (or the operations, when it names several: then without an
    operand order), or None when it names none."""
    text = _DATE.sub(" ", without_quotes(clause))
    carried = [(op, n) for op, n, words in _IMPLIED_WORDS if words.search(text)]
    named = {op for op, words in _OPERATOR_WORDS if words.search(text)} | {op for op, _ in carried}
    named |= {_SYMBOLS.get(m.group(1), m.group(1)) for m in _SYMBOL.finditer(text)}
    if not named:
        return None
    operators = "".join(op for op in _PLAIN_WORDS if op in named)
    numbers = [m.group(1).replace(",", "") for m in re.finditer(rf"(?<![\w.]){_NUMBER}(?![\w])", text)]
    twice = tuple(dict.fromkeys(n for n in numbers if numbers.count(n) > 1))
    implied = tuple(dict.fromkeys(n for _, n in carried))
    if operators not in ("-", "/", "^"):
        return Operation(operators, twice=twice, implied=implied)
    right = _numbers(_RIGHT, text) + tuple(n for op, n in carried if op in ("/", "^"))
    return Operation(operators, left=_numbers(_LEFT, text), right=right, twice=twice, implied=implied)


def _numbers(pattern: re.Pattern[str], text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.group(m.lastindex or 1).replace(",", "") for m in pattern.finditer(text)))


def operation_verbs(clause: str) -> list[str]:
    """The plain verbs of the arithmetic ``clause`` names on numbers it holds ("work out 144 divided
    by 12" → ``divide``): its action, wherever its words put it. None for a clause without a number
    to compute with ("increase the font size" is no sum, nor is "... to 14"), so a tool search
    weighs them only where they compute."""
    operation = named_operation(clause)
    text = _DATE.sub(" ", without_quotes(clause))
    if operation is None or not (
        operation.implied or any(not m.group(1) for m in _OPERAND_NUMBER.finditer(text))
    ):
        return []
    return [_PLAIN_WORDS[op] for op in operation.operators]


_OPERAND_NUMBER = re.compile(rf"(\bto\s+)?(?<![\w.]){_NUMBER}", re.IGNORECASE)
"""A number, and whether "to" introduces it: then it is the value a setting is brought to, not an
operand ("increase the font size to 14", "reduce the volume to 20" set a font or a volume; "add 5
to that number" computes with its 5)."""


def operation_words(clause: str) -> list[str]:
    """The plain verb of the operation ``clause`` names ("take 2.5 away" → ``subtract``), so a tool
    that says it subtracts is found by a clause that never says "subtract". None when the clause
    says it already: a word counted twice would outweigh the clause's other words in a search."""
    operation = named_operation(clause)
    said = set(re.findall(r"[a-z]+", clause.casefold()))
    return [w for op in (operation.operators if operation else "") if (w := _PLAIN_WORDS[op]) not in said]
