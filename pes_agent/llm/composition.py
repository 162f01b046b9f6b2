"""Composed values: an expression field as two grounded numbers and an operator (``"42 * 3"``).

The schema keywords are our own (``pes_agent.guided.grounding`` writes them, ``gbnf`` reads them);
validators ignore unknown keywords, so a schema carrying them stays valid. Here is what they allow,
apart from how a grammar spells it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Any

__all__ = ["COMPOSED_OF", "MAX_COMPOSED", "OPERATORS", "Composition"]

COMPOSED_OF = "x-composed-of"
"""The pieces a value is made of, joined by an arithmetic operator."""
COMPOSED_OPS = "x-composed-ops"
"""The operators it may use (``pes_agent.guided.arithmetic``): those the step's words name.
Absent: any arithmetic operator."""
COMPOSED_LEFT = "x-composed-left"
COMPOSED_RIGHT = "x-composed-right"
"""Pieces that must stand left / right of the operator ("subtract 32 from that": 32 on the right)."""
COMPOSED_TWICE = "x-composed-twice"
"""Pieces that may stand on both sides ("multiply 11 by 11"); any other piece is used once."""
MAX_COMPOSED = 8
"""Pieces a composed value may draw from (the first ones given)."""
OPERATORS = "-+*/^%"


@dataclass(frozen=True)
class Composition:
    """What a composed value's schema allows: pieces, operators and operand sides."""

    pieces: tuple[str, ...]
    operators: tuple[str, ...] = ()
    """Empty: any of ``OPERATORS``."""
    left: tuple[str, ...] = ()
    right: tuple[str, ...] = ()
    twice: tuple[str, ...] = ()

    @classmethod
    def of(cls, schema: Mapping[str, Any]) -> Composition | None:
        """The composition a schema describes, or None when it is not one."""
        pieces = _texts(schema.get(COMPOSED_OF))
        if not pieces:
            return None
        ops = schema.get(COMPOSED_OPS)
        return cls(
            pieces=tuple(dict.fromkeys(pieces))[:MAX_COMPOSED],
            operators=tuple(o for o in dict.fromkeys(ops) if o in OPERATORS) if isinstance(ops, str) else (),
            left=_texts(schema.get(COMPOSED_LEFT)),
            right=_texts(schema.get(COMPOSED_RIGHT)),
            twice=_texts(schema.get(COMPOSED_TWICE)),
        )

    def pairs(self) -> list[tuple[str, str]]:
        """The ordered operand pairs allowed; every pair of distinct pieces when the sides would
        allow none (the marks narrow, they never leave a value impossible)."""
        pairs = list(permutations(self.pieces, 2)) + [(p, p) for p in self.twice if p in self.pieces]
        kept = [
            (a, b)
            for a, b in pairs
            if (not self.left or (a in self.left and b not in self.left))
            and (not self.right or (b in self.right and a not in self.right))
        ]
        return kept or pairs


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(str(p) for p in value) if isinstance(value, Sequence) and not isinstance(value, str) else ()
