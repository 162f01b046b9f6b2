"""What one run takes from the instance, thread and call configuration, resolved in one place."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from string import Template

from pes_agent.agent.settings import enabled_tools, first_persona, prompt_settings
from pes_agent.config import ArtInstanceConfig, ResolvedExecution, ThreadConfig, resolve_execution
from pes_agent.config.guidance import Notice, provider_notices
from pes_agent.llm.providers import call_options, pick_selection, provider_name
from pes_agent.llm.types import CallOptions, Provider
from pes_agent.prompts.views import PromptSettings


@dataclass(frozen=True, kw_only=True)
class RunSetup:
    provider: Provider
    options: CallOptions
    limits: ResolvedExecution
    settings: PromptSettings
    enabled_tools: tuple[str, ...]
    structured_output: bool
    guided: bool
    tool_count: int
    """Tools registered when this was derived: a tool registered later makes it stale."""
    notices: tuple[Notice, ...] = ()
    """Said by every run's first event (``NOTICE``)."""


def derive_setup(
    config: ArtInstanceConfig,
    templates: Mapping[str, Template],
    tool_names: Sequence[str],
    overrides: Mapping[str, Provider],
    provider_for: Callable[[str], Provider],
    call: ThreadConfig | None,
    stored: ThreadConfig | None,
) -> RunSetup:
    """Each setting from the most specific level that sets it: call, then thread, then instance."""
    thread = stored or config.thread_defaults
    selection = pick_selection(call, thread, config.thread_defaults)
    name = provider_name(config, selection, overrides)
    pcfg = config.providers.get(name)
    persona = (
        first_persona(call.persona if call else None, thread.persona if thread else None) or config.persona
    )
    return RunSetup(
        provider=provider_for(name),
        options=call_options(pcfg, selection, call, thread),
        limits=resolve_execution(
            call.execution if call else None, thread.execution if thread else None, config.execution
        ),
        settings=prompt_settings(config, templates, persona, call, thread),
        enabled_tools=enabled_tools(tool_names, call, thread),
        structured_output=bool(pcfg and pcfg.constrains_replies),
        guided=bool(pcfg and pcfg.guides_choices),
        tool_count=len(tool_names),
        notices=provider_notices(name, pcfg) if pcfg else (),
    )
