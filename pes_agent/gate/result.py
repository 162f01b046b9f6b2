"""What the gate decides about one call: the outcome, the call as repaired, and what it still needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pes_agent.gate.normalize import Repair
from pes_agent.tools.spec import ToolCall
from pes_agent.tools.validation import ArgumentProblem

Outcome = Literal["execute", "refuse_tool", "fill", "clarify", "reask"]
NeedReason = Literal["missing", "placeholder", "enum_unmapped", "unresolved_reference"]


@dataclass(frozen=True, kw_only=True)
class FieldNeed:
    """A value the model (arg-fill) or the user (clarification) must supply."""

    name: str
    description: str | None
    type: str | None
    """Plain words from the schema: ``string``, ``array of string``, ``integer or null``."""
    allowed: tuple[Any, ...] | None
    reason: NeedReason
    given: Any = None
    """What the call held (a placeholder, an unmapped value, a reference), or None when absent."""

    def to_dict(self) -> dict[str, Any]:
        """For events and prompts (``given`` stays out: it may be long or a model's leftover)."""
        data: dict[str, Any] = {"name": self.name, "description": self.description, "type": self.type}
        data["allowed"] = list(self.allowed) if self.allowed is not None else None
        data["reason"] = self.reason
        return data


@dataclass(frozen=True, kw_only=True)
class GateResult:
    outcome: Outcome
    call: ToolCall
    """The tool name resolved (when it could be) and the arguments after repairs. Fields listed in
    ``needs`` are absent from it: arg-fill or the user's answer adds them."""
    repairs: tuple[Repair, ...]
    needs: tuple[FieldNeed, ...]
    """For fill and clarify; for reask, also the fields whose references did not resolve."""
    message: str | None
    """Plain words: for the model (reask, refuse_tool, and fill when arg-fill is off) or the user
    (clarify)."""
    problems: tuple[ArgumentProblem, ...]
    """What is still wrong (empty on execute)."""
