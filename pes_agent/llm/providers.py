"""Which provider a call goes to, building adapters from config (imported lazily), and preparing
them at start-up so that no request waits for an SDK import."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from collections.abc import Mapping
from pathlib import Path

from pes_agent.config import ArtInstanceConfig, ProviderConfig, ProviderSelection, ThreadConfig
from pes_agent.errors import ConfigError, ProviderError
from pes_agent.llm.types import CallOptions, Provider

_log = logging.getLogger("pes_agent")


def build_provider(name: str, cfg: ProviderConfig) -> Provider:
    if cfg.adapter == "openai":
        from pes_agent.llm.openai import OpenAIProvider

        return OpenAIProvider(name, cfg)
    if cfg.adapter == "anthropic":
        from pes_agent.llm.anthropic import AnthropicProvider

        return AnthropicProvider(name, cfg)
    if cfg.adapter == "gemini":
        from pes_agent.llm.gemini import GeminiProvider

        return GeminiProvider(name, cfg)
    if cfg.adapter == "scripted":
        return _scripted_from_file(name, cfg)
    if cfg.adapter == "llamacpp":
        from pes_agent.llm.llamacpp import LlamaCppProvider

        return LlamaCppProvider(name, cfg)
    raise ConfigError(
        f"adapter {cfg.adapter!r} is not available in this version; use `openai` (any "
        "OpenAI-compatible endpoint), `anthropic`, `gemini`, `llamacpp` (a local GGUF model) or `scripted`",
        key_path=f"providers.{name}.adapter",
        value=cfg.adapter,
        allowed=["openai", "anthropic", "gemini", "llamacpp", "scripted"],
    )


def _scripted_from_file(name: str, cfg: ProviderConfig) -> Provider:
    from pes_agent.testing.scripted import ScriptedProvider, ScriptedReply

    if not cfg.script:
        raise ConfigError(
            "adapter `scripted` needs `script` (a JSON file of replies), or pass a ScriptedProvider "
            f"as `providers={{{name!r}: ...}}` to create_art_instance",
            key_path=f"providers.{name}.script",
        )
    try:
        raw = json.loads(Path(cfg.script).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"cannot read the reply script {cfg.script!r}: {exc}", key_path=f"providers.{name}.script"
        ) from exc
    replies = raw.get("replies", raw) if isinstance(raw, dict) else raw
    entries = [
        ScriptedReply(text=r["text"], thinking=r.get("thinking")) if isinstance(r, dict) else str(r)
        for r in replies
    ]
    return ScriptedProvider(entries, name=name)


def pick_selection(*levels: ThreadConfig | None) -> ProviderSelection | None:
    return next((lv.provider_config for lv in levels if lv is not None and lv.provider_config), None)


def provider_name(
    config: ArtInstanceConfig, selection: ProviderSelection | None, overrides: Mapping[str, Provider]
) -> str:
    if selection is not None:
        name = selection.provider_name
    elif config.default_provider:
        name = config.default_provider
    else:
        candidates = list(config.providers) or list(overrides)
        if len(candidates) != 1:
            raise ConfigError(
                "no provider chosen: set `default_provider`, or a thread/call `providerConfig`"
                + (f"; configured: {', '.join(candidates)}" if candidates else "; none is configured"),
                key_path="default_provider",
                allowed=candidates,
            )
        name = candidates[0]
    if name not in config.providers and name not in overrides:
        known = sorted(set(config.providers) | set(overrides))
        raise ConfigError(
            f"unknown provider {name!r}; configured: {', '.join(known) or '(none)'}",
            key_path="providerConfig.providerName",
            value=name,
            allowed=known,
        )
    return name


def call_options(
    cfg: ProviderConfig | None, selection: ProviderSelection | None, *levels: ThreadConfig | None
) -> CallOptions:
    """Model settings for one run; ``levels`` are ordered most specific first (call, thread)."""
    extra: dict[str, object] = {}
    for level in reversed(levels):
        if level is not None:
            extra.update(level.llm_params)
    return CallOptions(
        model=(selection.model_id if selection and selection.model_id else None)
        or (cfg.model if cfg else None),
        temperature=cfg.temperature if cfg else None,
        max_tokens=cfg.max_tokens if cfg else None,
        timeout_s=cfg.timeout_s if cfg else None,
        extra=extra,
    )


async def prepare_provider(provider: Provider) -> None:
    """Load a provider's SDK and make its client for the running loop ahead of the first run: the SDK
    adapters (``pes_agent.llm.sdk_adapter.SdkAdapter``) name their SDK's module and make one client
    per event loop on first use; both are done here. A provider without them (llama.cpp loads its
    model in its own thread; scripted) has nothing to prepare."""
    module = getattr(provider, "sdk_module", None)
    if isinstance(module, str):
        await asyncio.to_thread(importlib.import_module, module)
    make_client = getattr(provider, "_client", None)
    if callable(make_client):
        try:
            make_client()  # this loop's client and connection pool
        except ProviderError as exc:  # no key yet: each run that uses it says so, as it would have
            _log.warning("provider %r not prepared: %s", getattr(provider, "name", "?"), exc)
