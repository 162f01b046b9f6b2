"""``ArtInstance`` (built by `pes_agent.factory.create_art_instance`): one object made at service start,
shared by many concurrent runs; it owns the providers, the store, the tool registry and the event bus.

Its methods are the public API; what they stand on lives in `pes_agent.agent`: building a run from
the instance's parts (`run_assembly`), reading threads (`thread_reads`), leases and claims (`lease`),
recovering a run that died (`recovery`), checking a decision before it is applied (`decision_check`).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from functools import partial
from typing import Any, Self

from pes_agent.agent.context import RunContext
from pes_agent.agent.decision_check import check_decision, decision_scope
from pes_agent.agent.lease import abandon_on_error, claim, run_then_release
from pes_agent.agent.ownership import check_access, check_run, take
from pes_agent.agent.pes import remember, run_pes
from pes_agent.agent.planning import first_planning_request
from pes_agent.agent.props import AgentProps
from pes_agent.agent.recovery import recover_run, trace_to_recover
from pes_agent.agent.response import AgentFinalResponse
from pes_agent.agent.resume import Resumption
from pes_agent.agent.run_assembly import RunAssembly
from pes_agent.agent.settings import check_suspension, thread_config, toggle_tools
from pes_agent.agent.setup import RunSetup
from pes_agent.agent.steps import DIRECT, StepRunner
from pes_agent.agent.thread_locks import ThreadLocks
from pes_agent.agent.thread_reads import ThreadReads
from pes_agent.config import ArtInstanceConfig, ThreadConfig
from pes_agent.decision import Decision
from pes_agent.errors import InvalidInputError, ThreadSuspendedError, UnknownThreadError
from pes_agent.events import Event, EventBus, EventType, Listener, Subscription
from pes_agent.gate import ArgumentGate
from pes_agent.llm.providers import prepare_provider
from pes_agent.llm.types import PromptRequest, Provider
from pes_agent.observability import NOOP_TRACER, LoggingTracer, Tracer
from pes_agent.prompts.views import HistoryTurn
from pes_agent.state.models import Suspension, ThreadState
from pes_agent.state.store import StateStore
from pes_agent.streaming import stream_run
from pes_agent.tools.executor import ToolExecutor
from pes_agent.tools.finder import finder_for
from pes_agent.tools.registry import ToolRegistry


class ArtInstance(ThreadReads, RunAssembly):
    def __init__(
        self,
        config: ArtInstanceConfig,
        *,
        registry: ToolRegistry,
        provider_overrides: dict[str, Provider],
        store: StateStore,
        owns_store: bool,
        templates: Mapping[str, Any],
        clock: Callable[[], float],
        tracer: Tracer | None = None,
        tool_sources: Mapping[str, str] | None = None,
        closers: Sequence[Callable[[], Awaitable[None]]] = (),
    ) -> None:
        self.config = config
        self.tool_sources: Mapping[str, str] = tool_sources if tool_sources is not None else {}
        """Where each registered tool came from: ``python:<module>``, ``mcp:<serverId>`` or ``a2a:<agentId>``
        (kept up to date when an MCP server's tool list changes)."""
        self._closers = list(closers)
        self.tracer: Tracer = tracer if tracer is not None else NOOP_TRACER
        """The tracer given or built (OpenTelemetry: ``art.tracer.provider`` takes span processors)."""
        self._tracer = LoggingTracer(self.tracer)
        self.registry = registry
        self.store = store
        self.bus = EventBus()
        self._owns_store = owns_store
        self._overrides = provider_overrides
        self._built: dict[str, Provider] = {}
        self._templates = templates
        self._clock = clock
        self._executor = ToolExecutor(registry)
        self._finder = finder_for(registry, config.retrieval, config.providers)
        self._gate = ArgumentGate(registry, config.gate)
        self._locks = ThreadLocks()
        self._default_setup: RunSetup | None = None
        self._default_setup_version = -1
        """``registry.version`` when ``_default_setup`` was derived (tools change: MCP's list_changed)."""
        self.steps: StepRunner = DIRECT
        """How runs perform model and tool calls: directly, or as durable workflow steps when a
        worker (``pes_agent.workers``) runs them."""

    # -- runs ---------------------------------------------------------------------------------

    async def process(
        self,
        query: str | AgentProps,
        *,
        thread_id: str | None = None,
        trace_id: str | None = None,
        user_id: str | None = None,
        options: ThreadConfig | Mapping[str, Any] | None = None,
    ) -> AgentFinalResponse:
        """Plan, execute and synthesize an answer to ``query`` on a thread (new when not given)."""
        props = (
            query
            if isinstance(query, AgentProps)
            else AgentProps(
                query=query,
                thread_id=thread_id,
                trace_id=trace_id,
                user_id=user_id,
                options=thread_config(options),
            )
        )
        if not isinstance(props.query, str) or not props.query.strip():
            raise InvalidInputError("the query is empty; pass the user's request as a non-empty string")
        tid = props.thread_id or f"thread_{uuid.uuid4().hex}"
        props = replace(props, thread_id=tid, trace_id=props.trace_id or uuid.uuid4().hex)
        async with self._thread_lock(tid):
            state, version = await self.store.load(tid)
            check_run(tid, state, props.user_id)
            suspension = state.suspension if state is not None else None
            if suspension is not None and suspension.kind == "approval":
                raise ThreadSuspendedError(tid, suspension.id, suspension.tool_name)
            trace = props.trace_id or ""
            state, version = await self._claim(tid, trace, take(state, props.user_id), version)
            async with abandon_on_error(self.store, tid, trace):
                check_run(tid, state, props.user_id)  # a waiting claim reloads: another run may have begun it
                state = take(state, props.user_id)
                if suspension is not None:  # a clarification: this query is the user's answer
                    return await self._answer_clarification(props, tid, state, version, suspension)
                state.query = props.query
                ctx = self._context(props, tid, state, version)
                history = await self._history(ctx)
                state.run_count += 1
                await remember(ctx, "user", props.query)
                return await run_then_release(ctx, run_pes(ctx, history, plan=True))

    async def resume(
        self,
        thread_id: str,
        suspension_id: str | None = None,
        decision: Decision | Mapping[str, Any] | None = None,
        *,
        options: ThreadConfig | Mapping[str, Any] | None = None,
        user_id: str | None = None,
        ended_trace: str | None = None,
    ) -> AgentFinalResponse:
        """Continue a thread of ``user_id`` (`ThreadAccessError` for another user's).

        With a suspension id: ``decision`` is a `Decision` (or its JSON object: ``{approved, reason,
        modified_args}`` for an approval, ``{values: {field: value}}`` for a clarification; see
        `pes_agent.agent.resume`). A decision that does not fit the pause raises
        `InvalidDecisionError` before anything is applied: the thread still waits on the same
        suspension. Without a suspension id: recover a run that died (crash, restart) from its
        first unfinished item; tool calls that completed are never run again. ``ended_trace`` names
        a run the caller knows has ended without finishing (a worker reported it failed): a lease it
        still holds is taken as stale at once rather than after ``concurrency.leaseTimeoutS``.
        """
        async with self._thread_lock(thread_id):
            state, version = await self._stored(thread_id, user_id)
            if suspension_id is None:
                return await self._recover(thread_id, state, version, options, user_id, ended_trace)
            check_suspension(thread_id, state, suspension_id)
            answer = self._checked(thread_id, state, decision, options)
            return await self._continue(
                thread_id,
                state,
                version,
                options,
                user_id,
                lambda ctx, history: run_pes(ctx, history, plan=False, resume=answer),
            )

    async def check_decision(
        self,
        thread_id: str,
        suspension_id: str,
        decision: Decision | Mapping[str, Any] | None,
        *,
        options: ThreadConfig | Mapping[str, Any] | None = None,
        user_id: str | None = None,
    ) -> Decision:
        """What `resume` checks before applying a decision, without applying it: the `Decision`, or
        the error `resume` would raise (`InvalidDecisionError`, `UnknownSuspensionError`, ...). For
        a process that hands decisions to workers (`pes_agent.workers.Producer`), which hold the
        tools: a bad decision is refused to its sender instead of on a worker."""
        state, _ = await self._stored(thread_id, user_id)
        check_suspension(thread_id, state, suspension_id)
        return self._checked(thread_id, state, decision, options).decision

    async def _stored(self, thread_id: str, user_id: str | None) -> tuple[ThreadState, int]:
        state, version = await self.store.load(thread_id)
        if state is None:
            raise UnknownThreadError(f"thread {thread_id!r} has no stored state; start it with `process`")
        check_access(thread_id, state, user_id)
        return state, version

    def _checked(
        self,
        thread_id: str,
        state: ThreadState,
        decision: Decision | Mapping[str, Any] | None,
        options: ThreadConfig | Mapping[str, Any] | None,
    ) -> Resumption:
        """The decision parsed and checked against the pause (the stored state is read, never changed)."""
        suspension = state.suspension
        assert suspension is not None  # check_suspension passed
        parsed = Decision.from_mapping(decision)  # None and other non-objects are refused there
        call = thread_config(options)
        scope = decision_scope(
            thread_id, state, config=self.config, gate=self._gate, call=call, registered=self.registry.names()
        )
        check_decision(scope, suspension, parsed)
        return Resumption(suspension=suspension, decision=parsed)

    async def _recover(
        self,
        thread_id: str,
        state: ThreadState,
        version: int,
        options: ThreadConfig | Mapping[str, Any] | None,
        user_id: str | None,
        ended_trace: str | None = None,
    ) -> AgentFinalResponse:
        """Take over a run that died (see `pes_agent.agent.recovery`)."""
        previous = await trace_to_recover(
            self.store,
            thread_id,
            state,
            ended_trace=ended_trace,
            clock=self._clock,
            lease_timeout_s=self.config.concurrency.lease_timeout_s,
        )
        start = partial(recover_run, previous_trace=previous)
        return await self._continue(thread_id, state, version, options, user_id, start, ended_trace)

    async def _continue(
        self,
        thread_id: str,
        state: ThreadState,
        version: int,
        options: ThreadConfig | Mapping[str, Any] | None,
        user_id: str | None,
        start: Callable[[RunContext, list[HistoryTurn]], Awaitable[AgentFinalResponse]],
        ended_trace: str | None = None,
    ) -> AgentFinalResponse:
        """Claim a stored thread under a new trace and run ``start`` on its stored query; its tools
        see ``user_id`` as they did in the run that paused."""
        trace = self.steps.new_id()
        state, version = await self._claim(thread_id, trace, state, version, ended_trace)
        async with abandon_on_error(self.store, thread_id, trace):
            check_access(thread_id, state, user_id)
            props = AgentProps(
                query=state.query or "",
                thread_id=thread_id,
                trace_id=trace,
                user_id=user_id,
                options=thread_config(options),
            )
            ctx = self._context(props, thread_id, state, version)
            return await run_then_release(ctx, start(ctx, await self._history(ctx)))

    async def _claim(
        self,
        thread_id: str,
        trace_id: str,
        state: ThreadState | None,
        version: int,
        ended_trace: str | None = None,
    ) -> tuple[ThreadState, int]:
        return await claim(
            self.store,
            thread_id,
            trace_id,
            state,
            version,
            config=self.config.concurrency,
            clock=self._clock,
            ended_trace=ended_trace,
        )

    async def _answer_clarification(
        self, props: AgentProps, tid: str, state: ThreadState, version: int, suspension: Suspension
    ) -> AgentFinalResponse:
        """A plain reply to a clarification: one asked field takes the text as its value; with
        several, an arg-fill turn picks the values out of it. Either way the answer joins the query,
        so later turns can use it."""
        answer = props.query.strip()
        original = state.query or ""
        values = {suspension.fields[0]["name"]: answer} if len(suspension.fields) == 1 else {}
        state.query = f"{original}\nThe user's answer to the question: {answer}"
        ctx = self._context(replace(props, query=state.query), tid, state, version)
        history = await self._history(ctx)
        await remember(ctx, "user", answer)
        answered = Resumption(suspension=suspension, decision=Decision(values=values), free_text=True)
        return await run_then_release(ctx, run_pes(ctx, history, plan=False, resume=answered))

    def process_stream(
        self, query: str | AgentProps, **kwargs: Any
    ) -> AsyncIterator[Event | AgentFinalResponse]:
        """Yield the events of one run as they happen, then its ``AgentFinalResponse``."""
        props = query if isinstance(query, AgentProps) else AgentProps(query=query, **kwargs)
        return stream_run(self, props)

    def planning_prompt(self, query: str, *, thread_config: ThreadConfig | None = None) -> PromptRequest:
        """The planning prompt this instance would send for ``query`` (what `pes-agent prompts` shows)."""
        persona = (thread_config.persona if thread_config else None) or self.config.persona
        settings = self._settings(persona, thread_config)
        names = self._enabled_tools(thread_config)
        return first_planning_request(
            query, names, self.registry, settings, self.config.retrieval, self._finder
        )

    # -- threads ------------------------------------------------------------------------------

    async def set_thread_config(self, thread_id: str, config: ThreadConfig | Mapping[str, Any]) -> None:
        parsed = thread_config(config)
        await self._update_thread(thread_id, lambda st: setattr(st, "config", parsed))

    async def enable_tools_for_thread(self, thread_id: str, names: Collection[str]) -> None:
        await self._set_tools(thread_id, names, enable=True)

    async def disable_tools_for_thread(self, thread_id: str, names: Collection[str]) -> None:
        await self._set_tools(thread_id, names, enable=False)

    # -- events -------------------------------------------------------------------------------

    def subscribe(
        self,
        listener: Listener,
        *,
        thread_id: str | None = None,
        types: Collection[EventType | str] | None = None,
    ) -> Subscription:
        return self.bus.subscribe(listener, thread_id=thread_id, types=types)

    async def prepare_retrieval(self) -> None:
        """Embed the tool catalogue now when tools will be ranked by meaning: a wrong key or model
        fails at start (``EmbeddingsRefusedError``), not in the first run, and the built-in table is
        read before the first query waits for it."""
        if self._finder.embedder is not None and len(self.registry.names()) > self.config.retrieval.threshold:
            await self._finder.searcher(())

    async def prepare_providers(self) -> None:
        """Build every configured provider and load its SDK now, in a worker thread, and make its
        client for the running loop: what a service calls at start-up, so that no request's event
        loop stops for ``import openai`` (about a second) when the first run reaches a provider.
        Providers passed as overrides are the caller's own and left as they are."""
        for name in self.config.providers:
            if name not in self._overrides:
                await prepare_provider(self._provider(name))

    async def aclose(self) -> None:
        closers, self._closers = self._closers, []
        for close in closers:  # MCP sessions: a stdio server's process ends here
            await close()
        for provider in self._built.values():
            await provider.aclose()
        self._built.clear()
        await self._finder.aclose()
        self._default_setup = None
        if self._owns_store:
            await self.store.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- internals ----------------------------------------------------------------------------

    def _thread_lock(self, thread_id: str) -> AbstractAsyncContextManager[None]:
        """In-process guard; the lease (`_claim`) guards across processes."""
        return self._locks.hold(
            thread_id, refuse_when_busy=self.config.concurrency.on_busy_thread == "refuse"
        )

    async def _update_thread(self, thread_id: str, change: Callable[[ThreadState], None]) -> None:
        async with self._thread_lock(thread_id):
            state, version = await self.store.load(thread_id)
            state = state or ThreadState()
            change(state)
            await self.store.save(thread_id, state, version)

    async def _set_tools(self, thread_id: str, names: Collection[str], *, enable: bool) -> None:
        change = toggle_tools(
            self.registry.names(), names, enable=enable, defaults=self.config.thread_defaults
        )
        await self._update_thread(thread_id, change)
