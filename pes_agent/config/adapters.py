"""What each adapter accepts of a provider's settings, checked when the config is validated.

Kept beside the model rather than in it: these are facts about the APIs behind the adapters (which
reply-schema dialects each speaks, what a thinking budget must be there), not about config shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol

from pes_agent.config.base import problem

__all__ = ["DIALECTS_BY_ADAPTER", "HOSTED_ADAPTERS", "MIN_ANTHROPIC_THINKING", "adapter_problems"]

DIALECTS_BY_ADAPTER: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "openai": ("auto", "grammar", "json_schema", "json_object", "ollama"),
        "anthropic": ("auto", "tool", "json_schema"),
        "gemini": ("auto", "json_schema"),
    }
)
HOSTED_ADAPTERS = frozenset({"openai", "anthropic", "gemini"})
"""Adapters that send a model id, so a provider needs one (or a thread's ``modelId``)."""
MIN_ANTHROPIC_THINKING = 1024
"""The Messages API refuses a smaller ``budget_tokens``."""


class _Settings(Protocol):
    @property
    def adapter(self) -> str: ...
    @property
    def structured_output_dialect(self) -> str: ...
    @property
    def thinking_budget(self) -> int | None: ...
    @property
    def max_tokens(self) -> int | None: ...


def adapter_problems(settings: _Settings) -> list[dict[str, Any]]:
    """Each setting the provider's adapter would refuse, as a config problem at its key."""
    found: list[dict[str, Any]] = []
    dialects = DIALECTS_BY_ADAPTER.get(settings.adapter)
    dialect = settings.structured_output_dialect
    if dialects is not None and dialect not in dialects:
        found.append(
            problem(
                ("structured_output_dialect",),
                f"adapter {settings.adapter!r} does not send replies' schemas as {dialect!r}",
                list(dialects),
                dialect,
            )
        )
    budget = settings.thinking_budget
    if budget is not None and settings.adapter not in ("anthropic", "gemini"):
        found.append(
            problem(
                ("thinking_budget",), "only the `anthropic` and `gemini` adapters take a thinking budget", []
            )
        )
    if settings.adapter == "anthropic" and budget is not None:
        if budget < MIN_ANTHROPIC_THINKING:
            found.append(
                problem(
                    ("thinking_budget",),
                    f"Anthropic's extended thinking needs at least {MIN_ANTHROPIC_THINKING} tokens",
                    [f">= {MIN_ANTHROPIC_THINKING}"],
                    budget,
                )
            )
        elif settings.max_tokens is not None and settings.max_tokens <= budget:
            found.append(
                problem(
                    ("max_tokens",),
                    f"with `thinking_budget: {budget}` the reply cap must be larger (thinking counts "
                    "toward it); raise `max_tokens` or leave it unset (budget + 4096)",
                    [f"> {budget}"],
                    settings.max_tokens,
                )
            )
    return found
