"""Execution prompts: a tool step (with just-in-time schemas), a reasoning step, and the turns
that follow a reply (tool results, TAEF enforcement)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pes_agent.llm.markers import sanitize_user_text
from pes_agent.llm.types import Message, PromptRequest
from pes_agent.prompts.schemas import content_reply_schema, step_reply_schema
from pes_agent.prompts.templates import DATA_FLOW, EXECUTION_SYSTEM, TOOL_RESULTS
from pes_agent.prompts.views import (
    PromptSettings,
    StepResultView,
    StepView,
    ToolResultView,
    render_previous,
    render_tool_result,
)


def _system(settings: PromptSettings) -> Message:
    return Message(role="system", content=EXECUTION_SYSTEM.substitute(persona=settings.persona))


def build_tool_step(
    step: StepView,
    query: str,
    settings: PromptSettings,
    *,
    schemas: str,
    allowed_tools: Sequence[str],
    previous: Sequence[StepResultView],
    max_result_length: int,
    other_tools: str = "",
    tool_schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> PromptRequest:
    """``schemas`` holds the full schemas of the step's required tools only; in flexible mode
    ``other_tools`` carries the manifesto lines of the rest."""
    user = settings.templates["execution"].substitute(
        step_id=step.id,
        description=step.description,
        expected_outcome=step.expected_outcome or "(not stated)",
        required_tools=", ".join(step.required_tools) or "(none)",
        query=sanitize_user_text(query),
        data_flow=DATA_FLOW,
        previous=render_previous(previous, max_result_length),
        schemas=schemas,
        other_tools=f"\nOther tools you may call:\n{other_tools}\n" if other_tools else "",
        allowed_tools=", ".join(allowed_tools),
    )
    return PromptRequest(
        phase="execution",
        step_id=step.id,
        messages=(_system(settings), Message(role="user", content=user)),
        tools=tuple(step.required_tools),
        response_schema=step_reply_schema(tool_schemas or {}),
    )


def build_reasoning_step(
    step: StepView,
    query: str,
    settings: PromptSettings,
    *,
    previous: Sequence[StepResultView],
    max_result_length: int,
) -> PromptRequest:
    user = settings.templates["reasoning"].substitute(
        step_id=step.id,
        description=step.description,
        expected_outcome=step.expected_outcome or "(not stated)",
        query=sanitize_user_text(query),
        previous=render_previous(previous, max_result_length),
    )
    return PromptRequest(
        phase="execution",
        step_id=step.id,
        messages=(_system(settings), Message(role="user", content=user)),
        response_schema=content_reply_schema(),
    )


def tool_results_text(results: Sequence[ToolResultView], max_result_length: int) -> str:
    """What the model sees after its calls ran: every result, errors shown as errors."""
    share = max(max_result_length // max(len(results), 1), 200)
    return TOOL_RESULTS.substitute(results="\n".join(render_tool_result(r, share) for r in results))


def enforcement_text(
    settings: PromptSettings,
    *,
    missing: Sequence[str],
    refused: Sequence[str] = (),
    allowed_tools: Sequence[str] = (),
) -> str:
    """The single corrective message when a tool step ends without its required tools.

    ``refused`` names tools the model tried that are unknown or not allowed here: the message says
    so and lists exactly the tools this step may use (never the whole registry).
    """
    refused_note = ""
    if refused:
        names = ", ".join(f"`{n}`" for n in refused)
        refused_note = (
            f" {names} cannot be used in this step; the tools you may use are: {', '.join(allowed_tools)}."
        )
    return settings.templates["enforcement"].substitute(missing=", ".join(missing), refused=refused_note)


def truncated_text(tools: Sequence[str] = ()) -> str:
    """The corrective for a reply cut off at the token limit, naming the ``tools`` it was for."""
    head = "Your last reply was truncated: it hit the token limit before it ended, so nothing in it was run."
    chunks = "large content in smaller chunks over several calls."
    if not tools:
        return f"{head} Send a shorter reply, and {chunks}"
    names = " or ".join(f"`{t}`" for t in tools)
    return f"{head} Call {names} with a shorter reply, and send {chunks}"


def resumed_text(results: Sequence[ToolResultView], max_result_length: int) -> str:
    """After an interruption: the calls of this step that already ran, so they are not repeated."""
    share = max(max_result_length // max(len(results), 1), 200)
    lines = "\n".join(render_tool_result(r, share) for r in results)
    return (
        "This step was interrupted and is continuing. These calls already ran; do not repeat them:\n"
        f"{lines}\nContinue the step from here."
    )
