"""Resolving per-run settings from instance, thread and call: pure functions, no I/O."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from string import Template
from typing import Any

from pydantic import ValidationError

from pes_agent.config import ArtInstanceConfig, PersonaConfig, ThreadConfig
from pes_agent.errors import ConfigError, UnknownSuspensionError, UnknownToolError
from pes_agent.prompts.views import PromptSettings
from pes_agent.state.models import ThreadState


def prompt_settings(
    config: ArtInstanceConfig,
    templates: Mapping[str, Template],
    persona: PersonaConfig,
    *levels: ThreadConfig | None,
) -> PromptSettings:
    """The persona's stage prompts with the instance, thread and call system prompts appended."""
    extra = [config.system_prompt, *(lv.system_prompt for lv in reversed(levels) if lv)]
    custom = "\n".join(p for p in extra if p)

    def join(stage: str | None) -> str | None:
        return "\n".join(p for p in (stage, custom) if p) or None

    return PromptSettings(
        persona=persona.name,
        templates=templates,
        planning_guidance=join(persona.prompts.planning),
        synthesis_guidance=join(persona.prompts.synthesis),
    )


def enabled_tools(registered: Sequence[str], *levels: ThreadConfig | None) -> tuple[str, ...]:
    """The most specific level that names tools decides; unregistered names are ignored."""
    chosen = next(
        (lv.enabled_tools for lv in levels if lv is not None and lv.enabled_tools is not None), None
    )
    if chosen is None:
        return tuple(registered)
    return tuple(n for n in chosen if n in registered)


def first_persona(*values: PersonaConfig | None) -> PersonaConfig | None:
    return next((v for v in values if v), None)


def thread_config(value: ThreadConfig | Mapping[str, Any] | None) -> ThreadConfig | None:
    if value is None or isinstance(value, ThreadConfig):
        return value
    try:
        return ThreadConfig.model_validate(dict(value))
    except ValidationError as exc:
        problems = "; ".join(f"`{'.'.join(map(str, e['loc']))}`: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid thread or call options: {problems}") from None


def check_suspension(thread_id: str, state: ThreadState, suspension_id: str) -> None:
    if state.suspension is None:
        raise UnknownSuspensionError(
            f"thread {thread_id!r} is not suspended; there is nothing to resume "
            f"(check `check_for_suspended_state({thread_id!r})`)"
        )
    if state.suspension.id != suspension_id:
        raise UnknownSuspensionError(
            f"thread {thread_id!r} is waiting on suspension {state.suspension.id!r}, not {suspension_id!r}"
        )


def toggle_tools(
    registered: Sequence[str], names: Collection[str], *, enable: bool, defaults: ThreadConfig | None
) -> Callable[[ThreadState], None]:
    """The change that enables or disables ``names`` in a thread's config (unknown names refused)."""
    unknown = sorted(set(names) - set(registered))
    if unknown:
        raise UnknownToolError(
            f"unknown tool(s) {', '.join(map(repr, unknown))}; registered: {', '.join(registered)}"
        )

    def change(state: ThreadState) -> None:
        cfg = state.config or defaults or ThreadConfig()
        current = list(cfg.enabled_tools if cfg.enabled_tools is not None else registered)
        if enable:
            current += [n for n in names if n not in current]
        else:
            current = [n for n in current if n not in names]
        state.config = cfg.model_copy(update={"enabled_tools": current})

    return change
