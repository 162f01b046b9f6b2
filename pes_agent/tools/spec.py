"""What a tool is, what a call to it is, and what running it gives back."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

ExecutionMode = Literal["automatic", "blocking"]
ResultStatus = Literal["success", "error", "suspended", "refused"]


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """Passed to a tool function that declares a parameter annotated ``ToolContext``."""

    thread_id: str
    trace_id: str
    step_id: str | None
    call_id: str
    user_id: str | None = None


SEARCH_TERMS = "x-search-terms"
"""The input-schema keyword holding a tool's search words (a list of strings): MCP and A2A tools
carry it in their schema, ``@tool(keywords=...)`` writes it. Validators ignore ``x-`` keywords."""


@dataclass(frozen=True, kw_only=True, eq=False)
class ToolSpec:
    """A tool as registered: its contract with the model and the function that runs it.

    ``fn`` is called with the validated arguments as keyword arguments (plus the ``ToolContext`` under
    ``context_param`` when the function asks for one). It may be sync or async.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    fn: Callable[..., Any]
    output_schema: Mapping[str, Any] | None = None
    capabilities: tuple[str, ...] = ()
    examples: tuple[Mapping[str, Any], ...] = ()
    execution_mode: ExecutionMode = "automatic"
    requires_approval: bool = False
    timeout: float | None = 30.0
    side_effects: bool = False
    idempotent: bool = False
    deterministic: bool = True
    """Same arguments, same result: an identical call already made in the step is not run again.
    Declare ``False`` for a random draw, a clock, or anything that reads changing state."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    value_aliases: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    context_param: str | None = None

    @property
    def search_terms(self) -> tuple[str, ...]:
        """Words the tool is also found by (``x-search-terms`` in its input schema, or the decorator's
        ``keywords=``): the words users say for its job ("google", "look online") that its description
        does not use. Retrieval reads them; the model is not shown them."""
        terms = self.input_schema.get(SEARCH_TERMS)
        return tuple(str(t) for t in terms if isinstance(t, str)) if isinstance(terms, (list, tuple)) else ()

    @property
    def model_schema(self) -> Mapping[str, Any]:
        """The input schema as the model is shown it: without the search words, which are for
        retrieval (they would cost tokens on every step and say nothing about the arguments)."""
        if SEARCH_TERMS not in self.input_schema:
            return self.input_schema
        return {k: v for k, v in self.input_schema.items() if k != SEARCH_TERMS}

    @property
    def summary(self) -> str:
        """The first sentence of the description: what the planning manifesto shows."""
        text = " ".join(self.description.split())
        match = re.match(r"(.+?[.!?])(\s|$)", text)
        return match.group(1) if match else text


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """A call as the model asked for it (after parsing, before the gate)."""

    call_id: str
    tool_name: str
    arguments: Mapping[str, Any]
    non_object_arguments: Any = None
    """What the model sent as arguments when it was no JSON object (a list, a number, text that is
    not JSON), with ``arguments`` then empty: such a call never runs, the model is told to send an
    object of named fields."""


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    call_id: str = ""
    tool_name: str = ""
    status: ResultStatus = "success"
    output: Any = None
    error: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def suspended(cls, message: str, preview: Any = None) -> ToolResult:
        """Return this from a tool to pause the run for a human decision."""
        return cls(status="suspended", output={"message": message, "preview": preview})

    def bound(self, call_id: str, tool_name: str) -> ToolResult:
        return replace(self, call_id=call_id, tool_name=tool_name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "tool_name": self.tool_name,
            "status": self.status,
            "output": self.output,
            "error": self.error,
        }
