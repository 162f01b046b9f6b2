"""Which configured provider a run uses when none is named."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pes_agent.errors import ConfigError

if TYPE_CHECKING:
    from pes_agent.config.model import ArtInstanceConfig
    from pes_agent.config.provider import ProviderConfig


def require_provider(config: ArtInstanceConfig, name: str | None = None) -> tuple[str, ProviderConfig]:
    """The provider a run should use: ``name`` if given, else the default (or the only one).

    The default is ``default_provider``, else the thread defaults' ``providerConfig`` (the original's
    way of choosing), else the only provider configured.
    """
    configured = sorted(config.providers)
    if not configured:
        raise ConfigError(
            "no provider configured; add one under `providers`", key_path="providers", value=name, allowed=[]
        )
    selection = config.thread_defaults.provider_config if config.thread_defaults else None
    chosen = name or config.default_provider or (selection.provider_name if selection else None)
    if chosen is None:
        if len(configured) == 1:
            return configured[0], config.providers[configured[0]]
        raise ConfigError(
            f"several providers are configured ({', '.join(configured)}) and none is the "
            "default; set `defaultProvider` to one of them",
            key_path="defaultProvider",
            allowed=configured,
        )
    if chosen not in config.providers:
        raise ConfigError(
            f"no provider named {chosen!r} is configured; configured: {', '.join(configured)}",
            key_path="providers",
            value=chosen,
            allowed=configured,
        )
    return chosen, config.providers[chosen]
