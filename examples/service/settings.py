"""What the service lets in: its users (bearer tokens), what a client may set in ``options``, and the
limits on each request and each user. Read from a YAML file apart from the library's config, because
these are the web front's rules, not the agent's.

The file is ``PES_AGENT_SERVICE_CONFIG`` (default: ``access.yaml`` beside this module); tokens may
also come from ``PES_AGENT_TOKENS`` as ``token:user,token:user`` (added to the file's, and winning
over them), so a deployment need not write secrets into a file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from pes_agent import ConfigError

SETTINGS_ENV = "PES_AGENT_SERVICE_CONFIG"
TOKENS_ENV = "PES_AGENT_TOKENS"
DEFAULT_SETTINGS = Path(__file__).resolve().parent / "access.yaml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OptionsPolicy(_Section):
    """What a client may put in a message's ``options`` (a `ThreadConfig`)."""

    allow: tuple[str, ...] = ()
    """Dotted camelCase paths a client may set, e.g. ``execution.maxIterations``; a path allows
    everything under it. Numeric execution limits are further capped by the instance's own."""
    providers: tuple[str, ...] = ()
    """Providers a client may switch to with ``providerConfig.providerName`` (nothing else in
    ``providerConfig`` unless listed in ``allow``)."""
    max: dict[str, float] = Field(default_factory=dict)
    """The largest value a client may send for an allowed number, by dotted path (e.g.
    ``llmParams.max_tokens: 512``). The execution limits and ``historyLimit`` are capped by the
    instance's own values as well; any other allowed number without a maximum here is refused."""


class Limits(_Section):
    max_body_bytes: int = Field(default=16_384, ge=256)
    """Larger request bodies get 413 before they are parsed."""
    max_query_chars: int = Field(default=4_000, ge=1)
    """A longer query gets 422."""
    requests_per_minute: int = Field(default=120, ge=1)
    """Per user; the bucket holds ``burst`` requests and refills at this rate. Over it: 429."""
    burst: int = Field(default=20, ge=1)
    concurrent_runs: int = Field(default=2, ge=1)
    """Runs (messages and resumes) one user may have in progress at once; more get 429."""
    auth_failures_per_minute: int = Field(default=10, ge=1)
    """Failed authentications (401) per client address, with bursts of ``auth_failure_burst``;
    over it, that address's requests without a known token get 429 with ``Retry-After``."""
    auth_failure_burst: int = Field(default=10, ge=1)


class ServiceSettings(_Section):
    tokens: dict[str, str] = Field(default_factory=dict)
    """Bearer token -> user id. Tokens are secrets: never logged, never echoed."""
    options: OptionsPolicy = OptionsPolicy()
    limits: Limits = Limits()
    docs: bool = False
    """Serve the API's description (``/docs``, ``/openapi.json``); off by default: it maps the
    service for anyone who can reach it."""

    @field_validator("tokens")
    @classmethod
    def _check_tokens(cls, value: dict[str, str]) -> dict[str, str]:
        if any(not token.strip() or not user.strip() for token, user in value.items()):
            raise ValueError("every token and every user id must be non-empty")
        return value


def parse_tokens(text: str) -> dict[str, str]:
    """``token:user,token:user`` -> ``{token: user}``; a malformed entry is refused, not skipped."""
    pairs: dict[str, str] = {}
    for number, entry in enumerate(filter(None, (part.strip() for part in text.split(","))), start=1):
        token, sep, user = entry.rpartition(":")
        if not sep or not token.strip() or not user.strip():
            raise ConfigError(
                f"entry {number} is not `token:user` (the entry itself is not shown: it holds a token)",
                key_path=TOKENS_ENV,
            )
        pairs[token.strip()] = user.strip()
    return pairs


def load_settings(path: str | os.PathLike[str] | None = None) -> ServiceSettings:
    """The settings file (when it exists) plus the tokens in ``PES_AGENT_TOKENS``."""
    where = Path(path or os.environ.get(SETTINGS_ENV) or DEFAULT_SETTINGS)
    raw: dict[str, Any] = {}
    if where.is_file():
        loaded = yaml.safe_load(where.read_text(encoding="utf-8"))
        raw = loaded if isinstance(loaded, dict) else {}
    elif path is not None or os.environ.get(SETTINGS_ENV):
        raise ConfigError("the service settings file does not exist", source=str(where))
    tokens = {**(raw.get("tokens") or {}), **parse_tokens(os.environ.get(TOKENS_ENV, ""))}
    try:
        return ServiceSettings.model_validate({**raw, "tokens": tokens})
    except ValueError as exc:
        raise ConfigError(_without_input(exc), source=str(where)) from None


def _without_input(exc: ValueError) -> str:
    """pydantic's message without the rejected input, which may be a token."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return "invalid service settings"
    return "; ".join(f"`{'.'.join(map(str, e['loc']))}`: {e['msg']}" for e in errors())
