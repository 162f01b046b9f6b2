"""A client's ``options`` against the service's allow-list.

The library takes any `ThreadConfig` from its caller, who is trusted; a web client is not. So the
options are parsed first (the library's own `ConfigError` for nonsense), then every field the
client set must be allowed, a provider switch must name an allowed provider, and a numeric
execution limit may lower the instance's limit but never raise it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import fields
from typing import Any

from pydantic import ValidationError

from pes_agent import InvalidInputError, ThreadConfig
from pes_agent.config.limits import ResolvedExecution, resolve_execution

from .settings import OptionsPolicy

CAPPED = ("maxIterations", "taefMaxRetries", "toolResultMaxLength", "maxItemsPerRun")
"""Execution limits (camelCase, under ``execution``) a client may only lower."""


def checked_options(
    options: Mapping[str, Any] | None, policy: OptionsPolicy, instance_limits: ResolvedExecution
) -> ThreadConfig | None:
    """The options as a `ThreadConfig`, or `InvalidInputError` (422) naming the first field refused."""
    if not options:
        return None
    try:
        parsed = ThreadConfig.model_validate(dict(options))
    except ValidationError as exc:  # the fields and what is wrong with them, never the values
        problems = "; ".join(f"`options.{'.'.join(map(str, e['loc']))}`: {e['msg']}" for e in exc.errors())
        raise InvalidInputError(f"invalid options: {problems}") from None
    chosen = parsed.model_dump(by_alias=True, exclude_unset=True, mode="json")
    for path, value in _leaves(chosen):
        _check(path, value, policy, instance_limits)
    return parsed


def instance_limits(execution: Any) -> ResolvedExecution:
    """The instance's effective execution limits (its config over the library defaults)."""
    return resolve_execution(execution)


def _check(path: str, value: Any, policy: OptionsPolicy, limits: ResolvedExecution) -> None:
    if path == "providerConfig.providerName":
        if value not in policy.providers:
            allowed = ", ".join(policy.providers) or "none"
            raise InvalidInputError(
                f"`options.{path}`: this service does not let clients switch to provider {value!r} "
                f"(allowed: {allowed})"
            )
        return
    if not any(path == allowed or path.startswith(allowed + ".") for allowed in policy.allow):
        allowed = ", ".join(policy.allow) or "none"
        raise InvalidInputError(f"`options.{path}` is not among the options this service allows ({allowed})")
    name = path.removeprefix("execution.")
    if name in CAPPED and isinstance(value, int):
        cap = getattr(limits, _snake(name))
        if value > cap:
            raise InvalidInputError(
                f"`options.{path}` is {value}; this service allows at most {cap} (the instance's own limit)"
            )


def _leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted paths of the fields set; a list or an empty mapping is one leaf."""
    if isinstance(value, Mapping) and value:
        for key, inner in value.items():
            yield from _leaves(inner, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def _snake(camel: str) -> str:
    names = {f.name.replace("_", ""): f.name for f in fields(ResolvedExecution)}
    return names[camel.lower()]
