"""Building an `ArtInstance` from configuration: config file or dict, tools, providers, store, tracer."""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pes_agent.config import ArtInstanceConfig, ObservabilityConfig, config_from_dict, load_config
from pes_agent.errors import ConfigError
from pes_agent.instance import ArtInstance
from pes_agent.llm.types import Provider
from pes_agent.observability import Tracer
from pes_agent.prompts import templates as prompt_templates
from pes_agent.state.factory import open_store
from pes_agent.state.store import StateStore
from pes_agent.tools.loading import load_tools
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.spec import ToolSpec

if TYPE_CHECKING:
    from pes_agent.tools.a2a import AgentTools
    from pes_agent.tools.mcp import McpTools


async def create_art_instance(
    config: ArtInstanceConfig | Mapping[str, Any] | str | os.PathLike[str],
    *,
    tools: Sequence[ToolSpec] | None = None,
    providers: Mapping[str, Provider] | None = None,
    store: StateStore | None = None,
    clock: Callable[[], float] = time.time,
    tracer: Tracer | None = None,
) -> ArtInstance:
    """Build an instance from a config object, a dict, or a config file path.

    ``tracer`` receives the run, phase, model-call and tool-call spans; without one,
    ``observability.otel: true`` builds an OpenTelemetry tracer (see
    `pes_agent.observability.otel`).
    """
    source: str | None = None
    base_dir: str | None = None
    if isinstance(config, ArtInstanceConfig):
        cfg = config
    elif isinstance(config, Mapping):
        cfg = config_from_dict(config)
    else:
        source = str(config)
        base_dir = str(Path(config).resolve().parent)
        cfg = load_config(config)
    templates = prompt_templates.resolve(cfg.prompts.model_dump(), source=source)
    registry = ToolRegistry()
    sources: dict[str, str] = {}
    for spec in [*load_tools(cfg.tools, source=source), *(tools or [])]:
        registry.register(spec)
        sources[spec.name] = f"python:{getattr(spec.fn, '__module__', None) or '?'}"
    closers: list[Callable[[], Awaitable[None]]] = []
    try:
        if any(server.enabled for server in cfg.mcp.servers):
            mcp_tools = await _open_mcp(cfg, registry.names(), source)
            closers.append(mcp_tools.aclose)
            for spec in mcp_tools.specs:
                registry.register(spec)
                sources[spec.name] = f"mcp:{mcp_tools.server_of[spec.name]}"
            mcp_tools.follow(registry, sources)
        if any(agent.enabled for agent in cfg.agents):
            agent_tools = await _open_agents(cfg, registry.names(), source)
            closers.append(agent_tools.aclose)
            for spec in agent_tools.specs:
                registry.register(spec)
                sources[spec.name] = f"a2a:{agent_tools.agent_of[spec.name]}"
        owned_store = store is None
        the_store = store if store is not None else open_store(cfg.storage, base_dir=base_dir)
        instance = ArtInstance(
            cfg,
            registry=registry,
            provider_overrides=dict(providers or {}),
            store=the_store,
            owns_store=owned_store,
            templates=templates,
            clock=clock,
            tracer=tracer if tracer is not None else tracer_from_config(cfg.observability),
            tool_sources=sources,
            closers=closers,
        )
    except BaseException:
        for close in closers:
            await close()
        raise
    try:
        await instance.prepare_retrieval()
    except BaseException:
        await instance.aclose()  # closes what it was given too
        raise
    return instance


async def _open_mcp(cfg: ArtInstanceConfig, taken: Sequence[str], source: str | None) -> McpTools:
    """The tools of the enabled MCP servers. Imported lazily: without a server, the SDK never is."""
    off = "set `enabled: false` on the servers under `mcp.servers`"
    with _needs_extra(("mcp",), "the MCP SDK", "mcp", off, "mcp.servers", source):
        from pes_agent.tools.mcp import open_mcp_tools
    return await open_mcp_tools(cfg.mcp, taken=taken, source=source)


async def _open_agents(cfg: ArtInstanceConfig, taken: Sequence[str], source: str | None) -> AgentTools:
    """The tools of the enabled remote agents. Imported lazily: without an agent, the SDK never is."""
    off = "set `enabled: false` on the agents under `agents`"
    with _needs_extra(("a2a", "google"), "the A2A SDK", "a2a", off, "agents", source):
        from pes_agent.tools.a2a import open_agent_tools
    return await open_agent_tools(cfg.agents, taken=taken, source=source)


@contextmanager
def _needs_extra(
    packages: tuple[str, ...], sdk: str, extra: str, off: str, key_path: str, source: str | None
) -> Iterator[None]:
    """An import of one of ``packages`` failing inside is a ConfigError saying which extra to install
    (or which setting to turn off); any other ImportError is a bug and passes."""
    try:
        yield
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in packages:
            raise
        raise ConfigError(
            f"{sdk} is not installed ({exc}); install it with `pip install 'pes-agent[{extra}]'` or {off}",
            source=source,
            key_path=key_path,
        ) from exc


def tracer_from_config(config: ObservabilityConfig) -> Tracer | None:
    """The OpenTelemetry tracer when ``observability.otel`` is on; None (the no-op) otherwise.

    Imported lazily: without the option, opentelemetry is never imported.
    """
    if not config.otel:
        return None
    try:
        from pes_agent.observability.otel import tracer_for_service
    except ImportError as exc:
        raise ConfigError(
            f"OpenTelemetry is not installed ({exc}); install it with `pip install 'pes-agent[otel]'` "
            "or set `observability.otel` to false",
            key_path="observability.otel",
            value=True,
        ) from exc
    return tracer_for_service(config.service_name, capture_content=config.capture_content)
