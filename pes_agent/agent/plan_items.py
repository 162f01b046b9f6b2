"""A plan as the run keeps it: planned items turned into todo items, and the data of a plan event.

Below both planning (a new plan) and plan updates (a revised one merged by id), which share it.
"""

from __future__ import annotations

from pes_agent.agent.context import RunContext
from pes_agent.llm.replies import PlannedItem
from pes_agent.state.models import TodoItem


def todo_from_plan(planned: PlannedItem, *, validation_mode: str, now: float) -> TodoItem:
    return TodoItem(
        id=planned.id,
        description=planned.description,
        step_type=planned.step_type,
        required_tools=list(planned.required_tools),
        expected_outcome=planned.expected_outcome,
        dependencies=list(planned.dependencies),
        bindings=dict(planned.bindings),
        validation_mode="advisory" if validation_mode == "advisory" else "strict",
        created_at=now,
    )


def plan_event_data(ctx: RunContext) -> dict[str, object]:
    return {
        "title": ctx.state.title,
        "intent": ctx.state.intent,
        "plan": ctx.state.plan,
        "todo_list": [item.model_dump(mode="json") for item in ctx.state.todo_list],
        "unplanned": list(ctx.state.unplanned),
    }
