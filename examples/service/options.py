"""A client's ``options`` against the service's allow-list.

The library takes any `ThreadConfig` from its caller, who is trusted; a web client is not. So the
options are parsed first (the library's own `ConfigError` for nonsense), then every field the
client set must be allowed, a provider switch must name an allowed provider, and every number has
a ceiling: the execution limits and ``historyLimit`` may lower the instance's own but never raise
them, and any other allowed number needs its maximum in the settings (``options.max``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import fields
from typing import Any

from pydantic import ValidationError

from pes_agent import ArtInstanceConfig, InvalidInputError, ThreadConfig
from pes_agent.config.limits import ResolvedExecution, resolve_execution

from .settings import OptionsPolicy


def instance_caps(config: ArtInstanceConfig) -> dict[str, float]:
    """The instance's own numeric limits by option path (camelCase): a client may only lower them."""
    limits = resolve_execution(config.execution)
    caps: dict[str, float] = {
        f"execution.{_camel(f.name)}": getattr(limits, f.name)
        for f in fields(ResolvedExecution)
        if isinstance(getattr(limits, f.name), int) and not isinstance(getattr(limits, f.name), bool)
    }
    caps["historyLimit"] = config.history.limit
    return caps


def checked_options(
    options: Mapping[str, Any] | None, policy: OptionsPolicy, caps: Mapping[str, float]
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
        _check(path, value, policy, caps)
    return parsed


def _check(path: str, value: Any, policy: OptionsPolicy, caps: Mapping[str, float]) -> None:
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
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return
    ceilings = [c for c in (caps.get(path), policy.max.get(path)) if c is not None]
    if not ceilings:
        raise InvalidInputError(
            f"`options.{path}` is a number this service sets no maximum for, so it does not accept it "
            "(an operator may allow it with a maximum under `options.max` in the service settings)"
        )
    cap = min(ceilings)
    if value > cap:
        whose = " (the instance's own limit)" if caps.get(path) == cap else ""
        raise InvalidInputError(f"`options.{path}` is {value}; this service allows at most {cap:g}{whose}")


def _leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted paths of the fields set; a list or an empty mapping is one leaf."""
    if isinstance(value, Mapping) and value:
        for key, inner in value.items():
            yield from _leaves(inner, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)
