"""How an `ArtInstance`'s parts become one run's `RunContext`: the providers (each built once per
name; a scripted one replayed per thread when its config says so), the setup a run derives from
config (derived once for the default config, again when the registry's tools change), the run's
strategy (guided or free-form, from that setup) and the thread's history within its limit.

A base of `ArtInstance`, as `ThreadReads` is: it reads the parts the instance holds (declared
below; `ArtInstance.__init__` sets them) and never changes them, except its own caches of built
providers and the default setup.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from pes_agent.agent.context import RunContext
from pes_agent.agent.freeform import FREE_FORM
from pes_agent.agent.props import AgentProps
from pes_agent.agent.settings import enabled_tools, prompt_settings
from pes_agent.agent.setup import RunSetup, derive_setup
from pes_agent.agent.steps import StepRunner
from pes_agent.config import ArtInstanceConfig, PersonaConfig, ThreadConfig
from pes_agent.events import EventBus
from pes_agent.gate import ArgumentGate
from pes_agent.guided.strategy import GUIDED
from pes_agent.llm.providers import build_provider
from pes_agent.llm.types import Provider
from pes_agent.observability import LoggingTracer
from pes_agent.prompts.views import HistoryTurn, PromptSettings
from pes_agent.state.models import ThreadState
from pes_agent.state.store import StateStore
from pes_agent.testing.scripted import PerThreadReplay, ScriptedProvider
from pes_agent.tools.executor import ToolExecutor
from pes_agent.tools.finder import ToolFinder
from pes_agent.tools.registry import ToolRegistry


class RunAssembly:
    """The run-building half of `ArtInstance`."""

    config: ArtInstanceConfig
    store: StateStore
    bus: EventBus
    registry: ToolRegistry
    steps: StepRunner
    _overrides: dict[str, Provider]
    _built: dict[str, Provider]
    _templates: Mapping[str, Any]
    _clock: Callable[[], float]
    _executor: ToolExecutor
    _gate: ArgumentGate
    _finder: ToolFinder
    _tracer: LoggingTracer
    _default_setup: RunSetup | None
    _default_setup_version: int

    def _provider(self, name: str) -> Provider:
        if name in self._overrides:
            return self._overrides[name]
        if name not in self._built:
            config = self.config.providers[name]
            built = build_provider(name, config)
            if config.replay == "per_thread" and isinstance(built, ScriptedProvider):
                built = PerThreadReplay(built.replies, name=name)
            self._built[name] = built
        return self._built[name]

    def _context(self, props: AgentProps, thread_id: str, state: ThreadState, version: int) -> RunContext:
        setup = self._setup(props.options, state.config)
        return RunContext(
            thread_id=thread_id,
            trace_id=props.trace_id or uuid.uuid4().hex,
            user_id=props.user_id,
            query=props.query,
            state=state,
            version=version,
            store=self.store,
            bus=self.bus,
            registry=self.registry,
            executor=self._executor,
            gate_engine=self._gate,
            provider=setup.provider,
            options=setup.options,
            limits=setup.limits,
            settings=setup.settings,
            enabled_tools=setup.enabled_tools,
            gate=self.config.gate,
            arg_fill=self.config.arg_fill,
            clock=self._clock,
            structured_output=setup.structured_output,
            strategy=GUIDED if setup.guided else FREE_FORM,
            notices=setup.notices,
            tracer=self._tracer,
            steps=self.steps,
            retrieval=self.config.retrieval,
            finder=self._finder,
        )

    def _setup(self, call: ThreadConfig | None, stored: ThreadConfig | None) -> RunSetup:
        """What a run derives from config; with no call or thread config (the usual case) it is the
        same every time, so it is derived once."""
        if call is None and stored is None:
            setup = self._default_setup
            if setup is None or self._default_setup_version != self.registry.version:
                self._default_setup_version = self.registry.version
                setup = self._default_setup = self._derive_setup(None, None)
            return setup
        return self._derive_setup(call, stored)

    def _derive_setup(self, call: ThreadConfig | None, stored: ThreadConfig | None) -> RunSetup:
        names = self.registry.names()
        return derive_setup(
            self.config, self._templates, names, self._overrides, self._provider, call, stored
        )

    def _settings(self, persona: PersonaConfig, *levels: ThreadConfig | None) -> PromptSettings:
        return prompt_settings(self.config, self._templates, persona, *levels)

    def _enabled_tools(self, *levels: ThreadConfig | None) -> tuple[str, ...]:
        return enabled_tools(self.registry.names(), *levels)

    async def _history(self, ctx: RunContext) -> list[HistoryTurn]:
        call = ctx.state.config
        limit = call.history_limit if call and call.history_limit is not None else None
        limit = self.config.history.limit if limit is None else limit
        if limit == 0:
            return []
        stored = await self.store.messages(ctx.thread_id, limit=limit)
        return [HistoryTurn(role=m.role, content=m.content) for m in stored]
