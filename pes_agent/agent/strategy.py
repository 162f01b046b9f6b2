"""How a run asks its model: the one seam where guided and free-form runs differ.

The phases never test a flag; they ask the run's strategy. ``pes_agent.agent.freeform.FreeForm`` lets
the model write its plan, its calls and its answer (capable models); ``pes_agent.guided.strategy.Guided``
turns each of those into a choice among grounded options (small local models). A run's strategy is
chosen once, from its provider's settings (``guided``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pes_agent.agent.context import RunContext
    from pes_agent.agent.execution import ItemOutcome
    from pes_agent.agent.item_loop import ItemLoop
    from pes_agent.llm.replies import ParsedAnswer, ParsedPlan
    from pes_agent.prompts.views import HistoryTurn
    from pes_agent.tools.spec import ToolResult

__all__ = ["Strategy"]


class Strategy(Protocol):
    closes_steps: bool
    """A tool step whose calls all succeeded ends at once, without a closing model turn."""

    async def plan(self, ctx: RunContext, history: Sequence[HistoryTurn]) -> tuple[ParsedPlan, str]:
        """The plan for ``ctx.query``, and the model's reply text it was read from."""
        ...

    async def turn(self, ctx: RunContext, loop: ItemLoop) -> ItemOutcome | None:
        """One model turn of a step: None while the step goes on."""
        ...

    async def after_calls(
        self, ctx: RunContext, loop: ItemLoop, results: list[ToolResult], corrections: list[str]
    ) -> None:
        """What the next turn is told after calls that did not end the step."""
        ...

    def unmet(self, ctx: RunContext) -> list[str]:
        """What the run's calls left of the request undone, each in a sentence; a run with any ends
        ``partial`` (its steps may all have completed)."""
        ...

    async def answer(self, ctx: RunContext, history: Sequence[HistoryTurn], *, status: str) -> ParsedAnswer:
        """The run's answer, written from what the steps found."""
        ...
