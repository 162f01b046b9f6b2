"""Conversions from persisted state to the frozen views the prompt builders take."""

from __future__ import annotations

from pes_agent.prompts.views import StepResultView, StepView, ToolResultView
from pes_agent.state.models import ThreadState, TodoItem, ToolCallRecord


def tool_result_view(record: ToolCallRecord) -> ToolResultView:
    return ToolResultView(
        call_id=record.call_id,
        tool_name=record.tool_name,
        status=record.status,
        output=record.output,
        error=record.error,
    )


def step_view(item: TodoItem) -> StepView:
    return StepView(
        id=item.id,
        description=item.description,
        expected_outcome=item.expected_outcome,
        required_tools=tuple(item.required_tools),
    )


def result_text(item: TodoItem) -> str | None:
    if item.result is None:
        return None
    return item.result if isinstance(item.result, str) else str(item.result)


def step_result_view(item: TodoItem) -> StepResultView:
    return StepResultView(
        id=item.id,
        description=item.description,
        status=item.status.value,
        result=result_text(item),
        tool_results=tuple(tool_result_view(r) for r in item.tool_results if r.status != "refused"),
    )


def results_before(state: ThreadState, item_id: str | None = None) -> list[StepResultView]:
    """Result views of every item other than ``item_id`` (only completed ones are rendered)."""
    return [step_result_view(it) for it in state.todo_list if it.id != item_id]
