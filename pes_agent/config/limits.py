"""Execution limits resolved field by field: call → thread → instance → built-in default."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pes_agent.config.model import ExecutionConfig


@dataclass(frozen=True, kw_only=True)
class ResolvedExecution:
    max_iterations: int = 5
    taef_max_retries: int = 2
    tool_result_max_length: int = 60_000
    tool_schema_mode: Literal["strict", "flexible"] = "strict"
    max_items_per_run: int = 20
    validation_mode: Literal["strict", "advisory"] = "strict"
    close_step_on_tool_success: bool = False


def resolve_execution(*levels: ExecutionConfig | None) -> ResolvedExecution:
    """Pick each field from the first level (call, thread, instance, ...) that sets it."""
    defaults = ResolvedExecution()
    chosen: dict[str, Any] = {}
    for name in ResolvedExecution.__dataclass_fields__:
        value = next(
            (getattr(lv, name) for lv in levels if lv is not None and getattr(lv, name) is not None), None
        )
        chosen[name] = getattr(defaults, name) if value is None else value
    return ResolvedExecution(**chosen)
