"""The free-form strategy: the model writes its plan, its calls and its answer.

For models that can: every turn is a conversation the model answers in full, with the tool schemas,
the results so far and, after calls, what worked and what to correct (``pes_agent.agent.strategy``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pes_agent.agent.context import RunContext
from pes_agent.agent.execution import ItemOutcome, after_calls_text, free_form_turn
from pes_agent.agent.item_loop import ItemLoop
from pes_agent.agent.planning import free_form_plan
from pes_agent.agent.synthesis import free_form_answer
from pes_agent.llm.replies import ParsedAnswer, ParsedPlan
from pes_agent.llm.types import Message
from pes_agent.prompts.views import HistoryTurn
from pes_agent.tools.spec import ToolResult

__all__ = ["FREE_FORM", "FreeForm"]


class FreeForm:
    closes_steps = False
    """A step closes early only when ``closeStepOnToolSuccess`` says so."""

    async def plan(self, ctx: RunContext, history: Sequence[HistoryTurn]) -> tuple[ParsedPlan, str]:
        return await free_form_plan(ctx, history)

    async def turn(self, ctx: RunContext, loop: ItemLoop) -> ItemOutcome | None:
        return await free_form_turn(ctx, loop)

    async def after_calls(
        self, ctx: RunContext, loop: ItemLoop, results: list[ToolResult], corrections: list[str]
    ) -> None:
        loop.messages.append(Message(role="user", content=after_calls_text(ctx, loop, results, corrections)))

    def unmet(self, ctx: RunContext) -> list[str]:
        """Nothing: a capable model may answer from what it knows, without a call for every value."""
        return []

    async def answer(self, ctx: RunContext, history: Sequence[HistoryTurn], *, status: str) -> ParsedAnswer:
        return await free_form_answer(ctx, history)


FREE_FORM = FreeForm()
