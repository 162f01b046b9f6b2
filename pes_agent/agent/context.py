"""One run's working set: the thread state, who to call, and how to record what happens.

Phases (planning, execution, synthesis) receive a ``RunContext`` explicitly; nothing is global.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pes_agent.agent.response import RunUsage
from pes_agent.agent.steps import DIRECT, StepRunner
from pes_agent.config import ArgFillConfig, GateConfig, ResolvedExecution, RetrievalConfig
from pes_agent.config.guidance import Notice
from pes_agent.events import Event, EventBus, EventType, new_event_id
from pes_agent.gate import ArgumentGate
from pes_agent.llm.streaming import accepts_token_sink, replay_reply
from pes_agent.llm.types import CallOptions, LLMReply, Phase, PromptRequest, Provider, TokenKind, TokenSink
from pes_agent.observability import NOOP_TRACER, Tracer
from pes_agent.prompts.views import PromptSettings
from pes_agent.state.journal import CallFinish
from pes_agent.state.models import ItemStatus, ThreadState, TodoItem
from pes_agent.state.store import StateStore
from pes_agent.tools.executor import ToolExecutor
from pes_agent.tools.finder import ToolFinder
from pes_agent.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from pes_agent.agent.strategy import Strategy


class PhaseFailure(Exception):
    """Ends a run early with an error status; carries the code and the phase for the response."""

    def __init__(self, code: str, phase: str, message: str) -> None:
        self.code = code
        self.phase = phase
        super().__init__(message)


@dataclass(kw_only=True)
class RunContext:
    thread_id: str
    trace_id: str
    user_id: str | None
    query: str
    state: ThreadState
    version: int
    store: StateStore
    bus: EventBus
    registry: ToolRegistry
    executor: ToolExecutor
    gate_engine: ArgumentGate
    provider: Provider
    options: CallOptions
    limits: ResolvedExecution
    settings: PromptSettings
    enabled_tools: tuple[str, ...]
    gate: GateConfig
    arg_fill: ArgFillConfig
    clock: Callable[[], float]
    strategy: Strategy
    """How the phases ask the model: free-form or guided (``pes_agent.agent.strategy``)."""
    usage: RunUsage = field(default_factory=RunUsage)
    structured_output: bool = False
    tracer: Tracer = NOOP_TRACER
    steps: StepRunner = DIRECT
    """How model and tool calls run: directly, or as durable steps (``pes_agent.workers``)."""
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    finder: ToolFinder | None = None
    """The instance's tool index (``retrieval``); None: the planner sees every enabled tool."""
    phase: str = "planning"
    user_answers: list[str] = field(default_factory=list)
    """Values the user gave in answer to a clarification: grounding, like the query."""
    offered: tuple[str, ...] = ()
    """The tools planning offered this run (set by the strategy's ``plan``; empty in a process that
    resumed the run after planning)."""
    notices: tuple[Notice, ...] = ()
    """What the run says first, as ``NOTICE`` events (``pes_agent.config.guidance``)."""

    async def emit(self, type_: EventType, data: Mapping[str, Any], *, step_id: str | None = None) -> Event:
        event = Event(
            id=new_event_id(),
            type=type_,
            thread_id=self.thread_id,
            trace_id=self.trace_id,
            step_id=step_id,
            timestamp=self.clock(),
            data=dict(data),
        )
        if event.persisted:
            await self.store.append_events([event])
        self.bus.publish(event)
        return event

    async def save(self, *, finished: Sequence[CallFinish] = ()) -> None:
        """Persist the state (compare-and-set on its version), with finished tool calls in the same
        transaction; the run's lease is refreshed on every save."""
        if self.state.lease is not None:
            self.state.lease.heartbeat = self.clock()
        if finished:
            self.version = await self.store.finish_calls_and_save(
                self.thread_id, self.state, self.version, finished
            )
        else:
            self.version = await self.store.save(self.thread_id, self.state, self.version)

    async def call_model(self, request: PromptRequest, phase: Phase | None = None) -> LLMReply:
        if phase is not None and phase != request.phase:
            request = request.with_phase(phase)
        if not self.structured_output and request.response_schema is not None:
            request = PromptRequest(
                phase=request.phase, step_id=request.step_id, messages=request.messages, tools=request.tools
            )
        attributes = {
            "phase": request.phase,
            "step_id": request.step_id,
            "provider": self.provider.name,
            "model": self.options.model,
        }
        with self.tracer.span("llm", f"chat {self.options.model or self.provider.name}", attributes) as span:
            if self.tracer.capture_content:  # prompt text only for a tracer that asked for it
                span.set_attribute("input.messages", request.messages)
            name = f"model {request.phase} {request.step_id or '-'}"
            reply = await self.steps.run("model", name, lambda: self._complete(request))
            span.set_attribute("usage.prompt_tokens", reply.usage.prompt_tokens)
            span.set_attribute("usage.completion_tokens", reply.usage.completion_tokens)
            if reply.usage.cached_prompt_tokens or reply.usage.thinking_tokens:
                span.set_attribute("usage.cached_prompt_tokens", reply.usage.cached_prompt_tokens)
                span.set_attribute("usage.thinking_tokens", reply.usage.thinking_tokens)
            span.set_attribute("finish_reason", reply.finish_reason)
            span.set_attribute("response.model", reply.model)
            if self.tracer.capture_content:
                span.set_attribute("output.text", reply.text)
        self.usage.record(request.phase, reply.usage)
        if reply.thinking:
            await self.emit(
                EventType.THOUGHTS,
                {"phase": request.phase, "text": reply.thinking},
                step_id=request.step_id,
            )
        return reply

    async def _complete(self, request: PromptRequest) -> LLMReply:
        """Call the provider, streaming its reply as TOKEN events while anyone listens for them.

        Nobody listening means the plain call: no sink, no per-token work. A provider that cannot
        stream still gives listeners its reply, as one piece per kind once it is complete.
        """
        if not self.bus.has_listeners(self.thread_id, EventType.TOKEN):
            return await self.provider.complete(request, self.options)
        sink = self._token_sink(request)
        if accepts_token_sink(self.provider):
            return await self.provider.complete(request, self.options, on_token=sink)
        reply = await self.provider.complete(request, self.options)
        replay_reply(reply, sink)
        return reply

    def _token_sink(self, request: PromptRequest) -> TokenSink:
        """Publishes each piece as a TOKEN event: broadcast only, never stored (thinking is stored
        once per call, whole, as THOUGHTS)."""
        phase, step_id = request.phase, request.step_id

        def publish(kind: TokenKind, text: str) -> None:
            self.bus.publish(
                Event(
                    id=new_event_id(),
                    type=EventType.TOKEN,
                    thread_id=self.thread_id,
                    trace_id=self.trace_id,
                    step_id=step_id,
                    timestamp=self.clock(),
                    data={"phase": phase, "kind": kind, "text": text},
                )
            )

        return publish

    async def set_status(self, item: TodoItem, status: ItemStatus, *, save: bool = True) -> None:
        """``save=False`` leaves the change for the next save to carry (see `run_item`)."""
        previous = item.status
        item.status = status
        now = self.clock()
        if status is ItemStatus.IN_PROGRESS and item.started_at is None:
            item.started_at = now
        if status in (ItemStatus.COMPLETED, ItemStatus.FAILED, ItemStatus.CANCELLED):
            item.completed_at = now
        if save:
            await self.save()
        await self.emit(
            EventType.ITEM_STATUS,
            {"item_id": item.id, "status": status.value, "previous": previous.value},
            step_id=item.id,
        )
