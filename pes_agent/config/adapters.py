"""What each adapter accepts of a provider's settings, checked when the config is validated.

Kept beside the model rather than in it: these are facts about the APIs behind the adapters (which
reply-schema dialects each speaks, what a thinking budget must be there), not about config shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol
from urllib.parse import urlsplit

from pes_agent.config.base import problem
from pes_agent.config.presets import PRESETS

__all__ = [
    "DIALECTS_BY_ADAPTER",
    "HOSTED_ADAPTERS",
    "MIN_ANTHROPIC_THINKING",
    "NO_GRAMMAR_HOSTS",
    "adapter_problems",
]

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
NO_GRAMMAR_HOSTS = frozenset({"api.openai.com"})
"""Where an OpenAI-compatible endpoint is known to refuse a ``grammar`` (HTTP 400), besides every
preset's service (none takes one): configuring it is an error, and ``auto`` does not ask."""


class _Settings(Protocol):
    @property
    def adapter(self) -> str: ...
    @property
    def structured_output_dialect(self) -> str: ...
    @property
    def thinking_budget(self) -> int | None: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def preset(self) -> str | None: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def guided(self) -> bool | None: ...


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
    found += _cannot_work(settings)
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


def _cannot_work(settings: _Settings) -> list[dict[str, Any]]:
    """Dialect and guided-mode choices the service behind an ``openai`` provider cannot honour."""
    if settings.adapter != "openai":
        return []
    found: list[dict[str, Any]] = []
    preset = PRESETS.get(settings.preset or "")
    host = urlsplit(settings.base_url or "https://api.openai.com/v1").hostname or ""
    if settings.structured_output_dialect == "grammar" and (preset is not None or host in NO_GRAMMAR_HOSTS):
        service = settings.preset or host
        found.append(
            problem(
                ("structured_output_dialect",),
                f"{service} takes no GBNF `grammar` (only llama.cpp's servers do); use `json_schema` "
                "or `auto`, or point `base_url` at a llama.cpp server",
                ["auto", "json_schema", "json_object", "ollama"],
                "grammar",
            )
        )
    if settings.guided and preset is not None and not preset.enforces_schema:
        found.append(
            problem(
                ("guided",),
                f"`guided: true` needs replies decoded under their schema, and {settings.preset}'s JSON mode "
                "does not enforce one (a choice among options would not hold); set `guided: false` or "
                "use a provider that constrains replies",
                ["false"],
                True,
            )
        )
    return found
