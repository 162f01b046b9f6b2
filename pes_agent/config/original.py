"""The TypeScript original's config shape, rewritten into ours before validation.

Kept apart from the models so that the shape we document stays simple: this is the only place that
knows the original's spelling, and it returns where each rewritten key came from so errors can still
point at the line the user wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pes_agent.config.errors import Path, Problem
from pes_agent.config.presets import PRESETS

NATIVE_ADAPTERS = ("openai", "anthropic", "gemini", "llamacpp", "scripted")
SUPPORTED_ADAPTERS = (*NATIVE_ADAPTERS, *PRESETS)
"""The original's adapter names we take: ours, and the OpenAI-compatible services (``presets``)."""

_BASE_OPTION_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "defaultModel": "model",
        "baseURL": "baseUrl",
        "apiBaseUrl": "baseUrl",
        "ollamaBaseUrl": "baseUrl",
        "defaultTemperature": "temperature",
        "defaultMaxTokens": "maxTokens",
    }
)
_ENTRY_KEYS = ("name", "adapter", "baseOptions", "isLocal")
_POOL_KEYS = frozenset({"maxParallelApiInstancesPerProvider", "apiInstanceIdleTimeoutSeconds"})
_INDEXEDDB_KEYS = frozenset({"dbName", "version", "objectStores"})
_DROPPED_TOP_KEYS = frozenset({"stateSavingStrategy", "state_saving_strategy", "logger"})


@dataclass(frozen=True)
class Normalised:
    data: dict[str, Any]
    """The config in our shape (keys still in the user's spelling where they were not moved)."""
    paths: Mapping[Path, Path]
    """Normalised path prefix → where the user wrote it, for error messages."""
    problems: tuple[Problem, ...]


def normalise_original(data: Mapping[str, Any]) -> Normalised:
    """Rewrite the original's keys into ours; leave everything else for validation to judge.

    Maps:

    - ``providers.availableProviders[i] {name, adapter, baseOptions, isLocal}`` → ``providers.<name>``.
      Adapters openai, anthropic, gemini, llamacpp and scripted are ours; openrouter, deepseek, groq and
      ollama are presets of ``openai`` (their endpoint, key variable and dialect unless ``baseOptions``
      gives them, ``config.presets``); any other is a problem.
      In ``baseOptions``: ``defaultModel`` → ``model``; ``baseURL``/``apiBaseUrl`` → ``baseUrl``;
      ``ollamaBaseUrl`` → ``baseUrl`` + ``/v1``; ``defaultTemperature`` → ``temperature``;
      ``defaultMaxTokens`` → ``maxTokens``; other keys are taken as ours. ``isLocal`` is dropped.
    - ``providers.maxParallelApiInstancesPerProvider`` / ``apiInstanceIdleTimeoutSeconds`` (the
      original's adapter pool, which pes-agent does not have) → dropped.
    - top-level ``providerConfig {providerName, modelId, adapterOptions}`` →
      ``threadDefaults.providerConfig``.
    - ``storage.dbName`` / ``version`` / ``objectStores`` (IndexedDB settings) → dropped; the storage
      ``type`` itself is validated as ours (``indexedDB`` and ``supabase`` are refused there).
    - ``stateSavingStrategy`` (state is always saved after each change) and ``logger`` (use Python's
      ``logging``) → dropped.
    - ``mcpConfig {enabled, discoveryEndpoint, mcpServers}`` → ``mcp.servers``. ``mcpServers`` holds the
      server cards of the original's ``art_mcp_config.json`` by id, ``{id, type: "streamable-http",
      enabled, connection: {url, headers}, timeout}`` (``timeout`` in milliseconds); each becomes
      ``{id, transport, url, headers, enabled, timeoutS}``, enabled only when ``mcpConfig.enabled`` is
      true too (the original's default is false). The cards' ``displayName``, ``description``,
      ``installation`` and cached ``tools``/``resources``/``resourceTemplates`` are dropped (tools are
      listed from the server). ``discoveryEndpoint`` and ``connection.authStrategyId``/``oauth`` are
      problems: pes-agent neither discovers servers nor runs auth strategies (headers carry tokens).
    """
    out = {k: v for k, v in data.items() if k not in _DROPPED_TOP_KEYS}
    paths: dict[Path, Path] = {}
    problems: list[Problem] = []
    providers = out.get("providers")
    if isinstance(providers, Mapping) and "availableProviders" in providers:
        out["providers"] = _providers(providers, paths, problems)
    _move_provider_config(out, paths, problems)
    storage = out.get("storage")
    if isinstance(storage, Mapping):
        out["storage"] = {k: v for k, v in storage.items() if k not in _INDEXEDDB_KEYS}
    if "mcpConfig" in out:
        _move_mcp_config(out, paths, problems)
    return Normalised(out, MappingProxyType(paths), tuple(problems))


def _providers(
    providers: Mapping[str, Any], paths: dict[Path, Path], problems: list[Problem]
) -> dict[str, Any]:
    for key in providers:
        if key not in _POOL_KEYS and key != "availableProviders":
            problems.append(
                Problem(
                    path=("providers", key),
                    allowed=("availableProviders", *sorted(_POOL_KEYS)),
                    message="unknown key beside `availableProviders`; list every provider there",
                )
            )
    entries = providers["availableProviders"]
    if not isinstance(entries, list):
        problems.append(
            Problem(
                path=("providers", "availableProviders"),
                value=entries,
                message="expected a list of {name, adapter, baseOptions} entries",
            )
        )
        return {}
    result: dict[str, Any] = {}
    for index, entry in enumerate(entries):
        where: Path = ("providers", "availableProviders", index)
        converted = _provider_entry(entry, where, problems)
        if converted is None:
            continue
        name, config, renamed = converted
        if name in result:
            problems.append(
                Problem(
                    path=(*where, "name"),
                    value=name,
                    message=f"provider name {name!r} is used twice; names must be unique",
                )
            )
            continue
        result[name] = config
        paths[("providers", name)] = (*where, "baseOptions")
        paths[("providers", name, "adapter")] = (*where, "adapter")
        for ours, theirs in renamed.items():
            paths[("providers", name, ours)] = (*where, "baseOptions", theirs)
    return result


def _provider_entry(
    entry: Any, where: Path, problems: list[Problem]
) -> tuple[str, dict[str, Any], dict[str, str]] | None:
    """``(name, our provider config, {our key: their key})``, or None after recording a problem."""
    if not isinstance(entry, Mapping):
        problems.append(
            Problem(path=where, value=entry, message="expected a mapping {name, adapter, baseOptions}")
        )
        return None
    _unknown_keys(entry, _ENTRY_KEYS, where, problems)
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        problems.append(
            Problem(
                path=(*where, "name"),
                value=name,
                allowed=("a provider name",),
                message="every provider needs a `name` (text), e.g. 'openai'",
            )
        )
        return None
    adapter = _adapter(entry.get("adapter"), (*where, "adapter"), problems)
    options = entry.get("baseOptions") or {}
    if adapter is None:
        return None
    if not isinstance(options, Mapping):
        problems.append(
            Problem(path=(*where, "baseOptions"), value=options, message="expected a mapping of options")
        )
        return None
    config: dict[str, Any] = {"adapter": adapter}
    renamed: dict[str, str] = {}
    for key, value in options.items():
        ours = _BASE_OPTION_KEYS.get(key, key)
        if ours in config:
            problems.append(
                Problem(
                    path=(*where, "baseOptions", key),
                    message=(f"given twice (also as `{renamed.get(ours, ours)}`); keep one"),
                )
            )
            continue
        config[ours] = _with_v1(value) if key == "ollamaBaseUrl" else value
        if ours != key:
            renamed[ours] = key
    return name, config, renamed


def _adapter(value: Any, where: Path, problems: list[Problem]) -> str | None:
    """Our adapter (or preset) for the original's adapter name (``OpenAIAdapter`` → ``openai``)."""
    key = (
        value.strip().lower().removesuffix("adapter").replace("_", "").replace("-", "")
        if isinstance(value, str)
        else ""
    )
    if key in SUPPORTED_ADAPTERS:
        return key
    supported = ", ".join(SUPPORTED_ADAPTERS)
    if value is None:
        message = f"every provider needs an `adapter`; supported: {supported}"
    else:
        message = f"adapter {value!r} is not supported; supported: {supported}"
    problems.append(Problem(path=where, value=value, allowed=SUPPORTED_ADAPTERS, message=message))
    return None


def _with_v1(url: Any) -> Any:
    """The original's Ollama adapter took the server root and added the OpenAI path itself."""
    if not isinstance(url, str):
        return url
    root = url.rstrip("/")
    return root if root.endswith("/v1") else root + "/v1"


def _move_provider_config(out: dict[str, Any], paths: dict[Path, Path], problems: list[Problem]) -> None:
    """The original passed ``providerConfig`` at runtime; a file gives it once, for every thread."""
    key = next((k for k in ("providerConfig", "provider_config") if k in out), None)
    if key is None:
        return
    target_key = next((k for k in ("threadDefaults", "thread_defaults") if k in out), "threadDefaults")
    target = out.get(target_key) or {}
    if not isinstance(target, Mapping):
        return  # validation reports the malformed thread defaults and the stray key
    if "providerConfig" in target or "provider_config" in target:
        problems.append(
            Problem(path=(key,), message=(f"given twice (also as `{target_key}.providerConfig`); keep one"))
        )
        return
    out[target_key] = {**target, "providerConfig": out.pop(key)}
    paths[(target_key, "providerConfig")] = (key,)


_MCP_CONFIG_KEYS = ("enabled", "discoveryEndpoint", "mcpServers")
_CARD_DROPPED = frozenset(
    {"displayName", "description", "installation", "tools", "resources", "resourceTemplates"}
)
_CARD_KEYS = ("id", "type", "enabled", "connection", "timeout", *sorted(_CARD_DROPPED))


def _move_mcp_config(out: dict[str, Any], paths: dict[Path, Path], problems: list[Problem]) -> None:
    """The original's ``mcpConfig`` and server cards → ``mcp.servers``."""
    config = out.pop("mcpConfig")
    where: Path = ("mcpConfig",)
    if not isinstance(config, Mapping):
        problems.append(Problem(path=where, value=config, message="expected a mapping {enabled, mcpServers}"))
        return
    if "mcp" in out:
        problems.append(Problem(path=where, message="given twice (also as `mcp`); keep one"))
        return
    for key in config:
        if key == "discoveryEndpoint":
            problems.append(
                Problem(
                    path=(*where, key),
                    value=config[key],
                    message="server discovery is not supported; list the server cards under "
                    "`mcpConfig.mcpServers` (by id, as in `art_mcp_config.json`) or the servers under "
                    "`mcp.servers`",
                )
            )
        elif key not in _MCP_CONFIG_KEYS:
            _unknown_keys({key: None}, _MCP_CONFIG_KEYS, where, problems)
    enabled = config.get("enabled", False)
    cards = config.get("mcpServers") or {}
    if not isinstance(cards, Mapping):
        problems.append(
            Problem(
                path=(*where, "mcpServers"),
                value=cards,
                message="expected a mapping of server id → server card",
            )
        )
        return
    servers: list[dict[str, Any]] = []
    for card_id, card in cards.items():
        server = _server_card(card_id, card, enabled is True, (*where, "mcpServers", card_id), problems)
        if server is None:
            continue
        index = len(servers)
        servers.append(server)
        theirs: Path = (*where, "mcpServers", card_id)
        paths[("mcp", "servers", index)] = theirs
        paths[("mcp", "servers", index, "transport")] = (*theirs, "type")
        paths[("mcp", "servers", index, "url")] = (*theirs, "connection", "url")
        paths[("mcp", "servers", index, "headers")] = (*theirs, "connection", "headers")
        paths[("mcp", "servers", index, "timeoutS")] = (*theirs, "timeout")
    out["mcp"] = {"servers": servers}
    paths[("mcp",)] = where


def _server_card(
    card_id: Any, card: Any, mcp_enabled: bool, where: Path, problems: list[Problem]
) -> dict[str, Any] | None:
    """One server card of ``art_mcp_config.json`` as our server entry, or None after a problem."""
    if not isinstance(card, Mapping):
        problems.append(
            Problem(
                path=where, value=card, message="expected a server card {type, enabled, connection: {url}}"
            )
        )
        return None
    _unknown_keys(card, _CARD_KEYS, where, problems)
    if "id" in card and card["id"] != card_id:
        problems.append(
            Problem(
                path=(*where, "id"),
                value=card["id"],
                message=f"the card's `id` differs from its key {card_id!r}; make them the same",
            )
        )
        return None
    connection = card.get("connection")
    if not isinstance(connection, Mapping):
        problems.append(
            Problem(
                path=(*where, "connection"),
                value=connection,
                message="every server card needs `connection: {url, headers}`",
            )
        )
        return None
    for key in connection:
        if key in ("authStrategyId", "oauth"):
            problems.append(
                Problem(
                    path=(*where, "connection", key),
                    message="auth strategies and OAuth are not supported; send a token in "
                    "`connection.headers` (e.g. `Authorization: Bearer ${TOKEN}`)",
                )
            )
        elif key not in ("url", "headers"):
            _unknown_keys({key: None}, ("url", "headers"), (*where, "connection"), problems)
    if card.get("type") != "streamable-http":
        problems.append(
            Problem(
                path=(*where, "type"),
                value=card.get("type"),
                allowed=("streamable-http",),
                message="the original's server cards are `type: streamable-http`; list a stdio server under "
                "`mcp.servers` (`transport: stdio`, `command`)",
            )
        )
        return None
    timeout = card.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
    ):
        problems.append(
            Problem(
                path=(*where, "timeout"),
                value=timeout,
                allowed=("milliseconds > 0",),
                message=f"expected a number of milliseconds > 0, got {timeout!r}",
            )
        )
        return None
    server: dict[str, Any] = {
        "id": card_id,
        "transport": "streamable-http",
        "url": connection.get("url"),
        "enabled": mcp_enabled and card.get("enabled", True) is True,
    }
    if "headers" in connection:
        server["headers"] = connection["headers"]
    if timeout is not None:
        server["timeoutS"] = timeout / 1000
    return server


def _unknown_keys(
    mapping: Mapping[str, Any],
    allowed: tuple[str, ...],
    where: tuple[str | int, ...],
    problems: list[Problem],
) -> None:
    """One problem per key of ``mapping`` that ``allowed`` does not name, at its own key path."""
    for key in mapping:
        if key not in allowed:
            problems.append(
                Problem(
                    path=(*where, key),
                    allowed=allowed,
                    message=f"unknown key; allowed keys: {', '.join(allowed)}",
                )
            )
