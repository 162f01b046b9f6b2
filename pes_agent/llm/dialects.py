"""How an OpenAI-compatible server wants a reply's JSON Schema, and finding that out once (``auto``).

Servers that all call themselves OpenAI-compatible disagree on the one field structured output needs:

- ``json_schema``: OpenAI, vLLM, llama.cpp's C++ server, recent Ollama ``/v1`` —
  ``response_format: {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``;
- ``json_object``: llama-cpp-python's server, whose ``response_format.type`` is ``text`` or
  ``json_object`` with the schema in a ``schema`` key beside it (it answers ``json_schema`` with a
  validation error served as HTTP 500);
- ``ollama``: Ollama's native ``format: <schema>`` field.

``auto`` asks the server: one tiny probe per dialect, in that order, until one is honoured. A dialect
counts as honoured only when the reply really follows the probe's schema, because some servers accept
a field they do not know and ignore it (llama-cpp-python's server answers a ``format`` key with free
text and HTTP 200): trusting the status would fall back to free text without anyone noticing.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, get_args

from pes_agent.errors import ProviderError
from pes_agent.llm.retry import is_body_refusal
from pes_agent.llm.streaming import Completion

__all__ = [
    "DIALECTS",
    "Dialect",
    "DialectChooser",
    "configured_dialect",
    "constraint_fields",
    "probe_body",
    "probe_verdict",
]

_log = logging.getLogger("pes_agent")

Dialect = Literal["json_schema", "json_object", "ollama"]
DIALECTS: tuple[Dialect, ...] = get_args(Dialect)
"""The order ``auto`` tries them in: the most widely spoken first."""

_SPOKEN = {
    "json_schema": "response_format json_schema",
    "json_object": "json_object with schema",
    "ollama": "Ollama's `format` field",
}

PROBE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
_PROBE_PROMPT = "Say hello."
"""Asks for no JSON on purpose: a reply that is ``{"ok": ...}`` anyway shows the constraint at work."""
_PROBE_MAX_TOKENS = 64


def configured_dialect(value: str) -> Dialect | Literal["auto"]:
    """The configured dialect as this adapter knows it; config validation refuses the others'
    (``tool`` is the ``anthropic`` adapter's), so anything else can only be ``auto``."""
    return value if value in DIALECTS else "auto"


def constraint_fields(dialect: Dialect, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The body keys that constrain a reply to ``schema`` in ``dialect``."""
    if dialect == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": dict(schema), "strict": False},
            }
        }
    if dialect == "json_object":
        return {"response_format": {"type": "json_object", "schema": dict(schema)}}
    return {"format": dict(schema)}


def probe_body(dialect: Dialect, model: str) -> dict[str, Any]:
    """The smallest request that shows whether a server honours ``dialect``."""
    return {
        "model": model,
        "messages": [{"role": "user", "content": _PROBE_PROMPT}],
        "temperature": 0,
        "max_tokens": _PROBE_MAX_TOKENS,
        **constraint_fields(dialect, PROBE_SCHEMA),
    }


def probe_verdict(completion: Completion) -> str | None:
    """None when the probe's reply shows the constraint at work, else what shows it was ignored.

    An empty reply is taken as honoured: a reasoning model may spend the probe's few tokens thinking,
    and nothing in that says the constraint was ignored.
    """
    text = completion.text.strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("ok"), bool):
        return None
    return f"the reply was free text, starting {text[:40]!r}"


class DialectChooser:
    """The dialect of one provider: the configured one, or ``auto`` resolved by probing once.

    The probe runs on the first structured call, under a lock so that concurrent first calls wait for
    it instead of probing too. The lock is per event loop (an asyncio lock cannot be shared across
    loops, and a provider serves every loop it is called on), so two loops starting at the same moment
    may each probe once; the answer is the same. A transient failure (server down) decides nothing
    and the next call probes again; "no dialect works" is kept and raised again without new requests.
    """

    def __init__(self, provider: str, configured: Dialect | Literal["auto"]) -> None:
        self._provider = provider
        self._chosen: Dialect | None = None if configured == "auto" else configured
        self._unsupported: str | None = None
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    @property
    def chosen(self) -> Dialect | None:
        """The dialect in use, or None while ``auto`` has not probed yet."""
        return self._chosen

    async def dialect(self, probe: Callable[[Dialect], Awaitable[Completion]], where: str) -> Dialect:
        """The dialect to send; ``probe(d)`` sends ``probe_body(d, ...)`` through the retry layer."""
        if self._chosen is not None:
            return self._chosen
        async with self._lock():
            if self._chosen is None:
                self._chosen = await self._choose(probe, where)
            return self._chosen

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            for other in list(self._locks):
                if other.is_closed():
                    self._locks.pop(other, None)
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    async def _choose(self, probe: Callable[[Dialect], Awaitable[Completion]], where: str) -> Dialect:
        if self._unsupported is not None:
            raise self._unsupported_error()
        refusals: list[str] = []
        for dialect in DIALECTS:
            try:
                ignored = probe_verdict(await probe(dialect))
            except ProviderError as exc:
                if not is_body_refusal(exc.status, exc.retryable):
                    raise  # down, unauthorised, wrong model: says nothing about the dialect
                said = f": {exc.server_message}" if exc.server_message else ""
                refusals.append(f"refused {_SPOKEN[dialect]} (HTTP {exc.status}{said})")
                continue
            if ignored is None:
                self._announce(dialect, refusals)
                return dialect
            refusals.append(f"ignored {_SPOKEN[dialect]} ({ignored})")
        self._unsupported = (
            f"{where}: structured output is not supported by this server: it "
            + "; ".join(refusals)
            + f". Set `providers.{self._provider}.structured_output: false` to send free-text requests "
            "(replies are then read from text), or point `base_url` at a server that constrains replies"
        )
        raise self._unsupported_error()

    def _announce(self, dialect: Dialect, refusals: list[str]) -> None:
        if not refusals:
            _log.info("provider %r: the server accepts %s", self._provider, _SPOKEN[dialect])
            return
        _log.warning(
            "provider %r: the server %s; using %s; set `structured_output_dialect: %s` to skip this probe",
            self._provider,
            " and ".join(refusals),
            _SPOKEN[dialect],
            dialect,
        )

    def _unsupported_error(self) -> ProviderError:
        return ProviderError(self._unsupported or "", provider=self._provider, retryable=False)
