"""Persisted state of a thread: pydantic models, because they cross the store boundary as JSON."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from pes_agent.config import ThreadConfig


class ItemStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    WAITING = "waiting"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class ToolCallRecord(_Model):
    """One tool call of an item and what came of it."""

    call_id: str
    tool_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    status: Literal["success", "error", "suspended", "refused"]
    output: Any = None
    error: str | None = None
    decision: dict[str, Any] | None = None
    """A human's decision on this call (approval tools): approved, reason, modified_args."""
    _output_text: tuple[Any, str] | None = PrivateAttr(default=None)
    """``(output, its prompt text)``: the text is rendered once and reused by every later prompt
    (see `pes_agent.agent.views.output_text`); never stored."""


class TodoItem(_Model):
    id: str
    description: str
    step_type: Literal["tool", "reasoning"] = "reasoning"
    required_tools: list[str] = Field(default_factory=list)
    expected_outcome: str | None = None
    dependencies: list[str] = Field(default_factory=list)
    bindings: dict[str, str] = Field(default_factory=dict)
    """Argument → ``$step.path``: a value planned to come from an earlier step's output field (a
    step the request implied; ``pes_agent.guided.dataflow``)."""
    status: ItemStatus = ItemStatus.PENDING
    validation_mode: Literal["strict", "advisory"] = "strict"
    validation_status: Literal["pending", "passed", "failed", "skipped"] = "pending"
    result: Any = None
    tool_results: list[ToolCallRecord] = Field(default_factory=list)
    iterations: int = 0
    created_at: float | None = None
    started_at: float | None = None
    completed_at: float | None = None
    error: str | None = None

    @property
    def is_tool_step(self) -> bool:
        return self.step_type == "tool" or bool(self.required_tools)

    def planning_fields(self) -> tuple[Any, ...]:
        """What a plan update compares to decide whether an item was modified."""
        return (
            self.description,
            self.step_type,
            tuple(self.required_tools),
            self.expected_outcome,
            tuple(self.dependencies),
        )


class Suspension(_Model):
    id: str
    kind: Literal["approval", "clarification"]
    item_id: str
    tool_name: str | None = None
    call_id: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    message: str = ""
    fields: list[dict[str, Any]] = Field(default_factory=list)
    messages: list[dict[str, str]] = Field(default_factory=list)
    """The item's conversation at the pause, so the resumed turn sees what the model saw."""


class Lease(_Model):
    """Which run holds the thread; refreshed on every save, so a dead holder's lease goes stale."""

    trace_id: str
    owner: str
    """``host:pid`` of the process running it."""
    heartbeat: float


class ThreadState(_Model):
    query: str | None = None
    """The query of the latest run: what a resumed run keeps answering."""
    title: str | None = None
    intent: str | None = None
    plan: str | None = None
    todo_list: list[TodoItem] = Field(default_factory=list)
    unplanned: list[str] = Field(default_factory=list)
    """Parts of the request that ask something no tool step was planned for: the run cannot say
    it answered them, so it ends ``partial`` (guided planning fills it)."""
    current_step_id: str | None = None
    is_paused: bool = False
    suspension: Suspension | None = None
    run_count: int = 0
    lease: Lease | None = None
    config: ThreadConfig | None = None
    """Thread-level settings from `set_thread_config`; None means the instance defaults."""
    owner: str | None = None
    """The ``user_id`` of the thread's first run; only that user may read or continue it (see
    `pes_agent.agent.ownership`). None: started without a user, open to calls without one."""
    stopped: str | None = None
    """Why the thread's latest run stopped before its end, when it did not fail but was cut off (a
    worker gave up on an unreachable database): ``resume`` without a suspension continues it from its
    journal, also when only its answer was left to write. Cleared when a run takes the thread."""

    def item(self, item_id: str) -> TodoItem | None:
        return next((it for it in self.todo_list if it.id == item_id), None)


class HistoryMessage(_Model):
    """One turn of the thread's conversation with the user (not the model's internal turns)."""

    role: Literal["user", "assistant"]
    content: str
    trace_id: str | None = None
    timestamp: float
    metadata: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class ThreadSummary:
    """One line of a user's thread list (`StateStore.threads`): enough to show and pick a thread
    without loading each one again."""

    thread_id: str
    updated_at: float
    """Epoch seconds of the thread's last save."""
    query: str | None
    title: str | None
    waiting_for: Literal["approval", "clarification"] | None
    running: bool
    """A run held the thread's lease at its last save (it may have died since)."""

    @classmethod
    def of(cls, thread_id: str, updated_at: float, state: ThreadState) -> ThreadSummary:
        waiting = state.suspension.kind if state.suspension is not None else None
        return cls(thread_id, updated_at, state.query, state.title, waiting, state.lease is not None)
