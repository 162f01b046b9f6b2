"""The refinement prompt: a follow-up query against the current plan and its results."""

from __future__ import annotations

from collections.abc import Sequence

from pes_agent.llm.markers import PLAN_END, PLAN_START, sanitize_user_text
from pes_agent.llm.types import PromptRequest
from pes_agent.prompts.planning import plan_request
from pes_agent.prompts.views import HistoryTurn, PromptSettings, StepResultView, clip, render_history

STEP_RESULT_CHARS = 300
"""Each step's result is cut to this many characters: enough to know what it found."""


def _step_line(step: StepResultView) -> str:
    line = f"[{step.id}] ({step.status}) {step.description}"
    if step.result:
        line += f"\n  result: {clip(' '.join(step.result.split()), STEP_RESULT_CHARS)}"
    return line


def build_refinement(
    query: str,
    *,
    intent: str | None,
    steps: Sequence[StepResultView],
    manifesto: str,
    settings: PromptSettings,
    history: Sequence[HistoryTurn] = (),
    tool_names: Sequence[str] = (),
) -> PromptRequest:
    user = settings.templates["refinement"].substitute(
        intent=intent or "(not stated)",
        steps="\n".join(_step_line(s) for s in steps) or "(none)",
        history=render_history(history),
        query=sanitize_user_text(query),
        tools=manifesto or "(no tools available)",
        start=PLAN_START,
        end=PLAN_END,
    )
    return plan_request("refinement", settings, user, tool_names)
