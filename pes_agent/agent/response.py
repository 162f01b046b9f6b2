"""What a run returns: the answer, its status, and an honest account of what it cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pes_agent.llm.types import Phase, Usage
from pes_agent.state.models import TodoItem

RunStatus = Literal["success", "partial", "needs_input", "suspended", "error"]


@dataclass(kw_only=True)
class PhaseUsage:
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Of ``prompt_tokens``, read from the provider's prompt cache."""
    thinking_tokens: int = 0
    """Of ``completion_tokens``, spent thinking."""

    def add(self, usage: Usage) -> None:
        self.llm_calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cached_prompt_tokens += usage.cached_prompt_tokens
        self.thinking_tokens += usage.thinking_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "thinking_tokens": self.thinking_tokens,
        }


@dataclass(kw_only=True)
class RunUsage:
    """Model calls and tokens per phase, tool calls, and recovery counters for one run.

    ``token_source`` says where the counts came from: ``provider`` (the endpoint reported them),
    ``tiktoken`` (counted locally) or ``estimate`` (characters / 4, when no tokenizer is loaded).
    """

    phases: dict[str, PhaseUsage] = field(default_factory=dict)
    tool_calls: int = 0
    arg_repairs: int = 0
    arg_fill_attempts: int = 0
    arg_fill_successes: int = 0
    arg_fill_failures: int = 0
    token_source: str = "provider"

    def record(self, phase: Phase, usage: Usage) -> None:
        counts = self.phases.get(phase)
        if counts is None:
            counts = self.phases[phase] = PhaseUsage()
        counts.add(usage)
        if usage.source != "provider":
            self.token_source = usage.source

    @property
    def llm_calls(self) -> int:
        return sum(p.llm_calls for p in self.phases.values())

    @property
    def prompt_tokens(self) -> int:
        return sum(p.prompt_tokens for p in self.phases.values())

    @property
    def completion_tokens(self) -> int:
        return sum(p.completion_tokens for p in self.phases.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_prompt_tokens": sum(p.cached_prompt_tokens for p in self.phases.values()),
            "thinking_tokens": sum(p.thinking_tokens for p in self.phases.values()),
            "tool_calls": self.tool_calls,
            "arg_repairs": self.arg_repairs,
            "arg_fill": {
                "attempts": self.arg_fill_attempts,
                "successes": self.arg_fill_successes,
                "failures": self.arg_fill_failures,
            },
            "token_source": self.token_source,
            "phases": {name: p.to_dict() for name, p in self.phases.items()},
        }


@dataclass(frozen=True, kw_only=True)
class RunErrorInfo:
    code: str
    phase: str
    message: str


@dataclass(frozen=True, kw_only=True)
class AgentFinalResponse:
    response: str
    status: RunStatus
    thread_id: str
    trace_id: str
    todo_list: list[TodoItem]
    usage: RunUsage
    ui_metadata: dict[str, Any] | None = None
    suspension: dict[str, Any] | None = None
    clarification: dict[str, Any] | None = None
    error: RunErrorInfo | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "response": self.response,
            "status": self.status,
            "thread_id": self.thread_id,
            "trace_id": self.trace_id,
            "todo_list": [item.model_dump(mode="json") for item in self.todo_list],
            "usage": self.usage.to_dict(),
            "ui_metadata": self.ui_metadata,
            "suspension": self.suspension,
            "clarification": self.clarification,
            "error": None if self.error is None else vars(self.error),
        }
