"""Conversions from persisted state to the frozen views the prompt builders take."""

from __future__ import annotations

from pes_agent.prompts.views import StepResultView, StepView, ToolResultView, render_output
from pes_agent.state.models import ThreadState, TodoItem, ToolCallRecord


def output_text(record: ToolCallRecord) -> str:
    """The output as prompt text, rendered once per record: one result appears in the next turn,
    in every later step's prompt and in the synthesis, and large outputs cost most to render."""
    cached = record._output_text
    if cached is None or cached[0] is not record.output:
        cached = record._output_text = (record.output, render_output(record.output))
    return cached[1]


def tool_result_view(record: ToolCallRecord) -> ToolResultView:
    return ToolResultView(
        call_id=record.call_id,
        tool_name=record.tool_name,
        status=record.status,
        output=record.output,
        error=record.error,
        text=output_text(record) if record.status in ("success", "suspended") else None,
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
