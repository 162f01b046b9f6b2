"""The synthesis prompt: the answer is written from completed work, failures named plainly."""

from __future__ import annotations

from collections.abc import Sequence

from pes_agent.llm.markers import sanitize_user_text
from pes_agent.llm.types import Message, PromptRequest
from pes_agent.prompts.templates import SYNTHESIS_SYSTEM
from pes_agent.prompts.views import (
    HistoryTurn,
    PromptSettings,
    StepResultView,
    guidance_suffix,
    render_history,
    render_previous,
)


def _unfinished(steps: Sequence[StepResultView]) -> str:
    failed = [s for s in steps if s.status in ("failed", "cancelled")]
    pending = [s for s in steps if s.status not in ("completed", "failed", "cancelled")]
    lines = []
    if failed:
        lines.append("Failed steps:")
        lines.extend(f"[{s.id}] {s.description}: {s.result or 'failed'}" for s in failed)
    if pending:
        lines.append("Steps not reached:")
        lines.extend(f"[{s.id}] {s.description}" for s in pending)
    return "\n".join(lines) + "\n" if lines else ""


def build_synthesis(
    query: str,
    steps: Sequence[StepResultView],
    settings: PromptSettings,
    *,
    max_result_length: int,
    history: Sequence[HistoryTurn] = (),
) -> PromptRequest:
    system = SYNTHESIS_SYSTEM.substitute(
        persona=settings.persona, guidance=guidance_suffix(settings.synthesis_guidance)
    )
    completed = render_previous(steps, max_result_length) if steps else "(no steps were needed)"
    user = settings.templates["synthesis"].substitute(
        query=sanitize_user_text(query),
        history=render_history(history),
        completed=completed,
        failed=_unfinished(steps),
    )
    return PromptRequest(
        phase="synthesis",
        step_id=None,
        messages=(Message(role="system", content=system), Message(role="user", content=user)),
    )
