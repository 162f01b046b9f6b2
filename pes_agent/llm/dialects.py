"""How an OpenAI-compatible server wants a reply constrained, and finding that out once (``auto``).

Servers that all call themselves OpenAI-compatible disagree on the one field structured output needs:

- ``grammar``: llama.cpp's ``llama-server`` and llama-cpp-python's server take a GBNF grammar in the
  request's ``grammar`` field. pes-agent sends its own (``reply_grammar``, the one the in-process
  ``llamacpp`` adapter decodes with), so the server parses nothing but a grammar already known to be
  readable, and a reply is bounded exactly as in-process. Preferred wherever it is honoured;
- ``json_schema``: OpenAI, vLLM, llama.cpp's C++ server, recent Ollama ``/v1`` —
  ``response_format: {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``;
- ``json_object``: llama-cpp-python's server, whose ``response_format.type`` is ``text`` or
  ``json_object`` with the schema in a ``schema`` key beside it (it answers ``json_schema`` with a
  validation error served as HTTP 500);
- ``ollama``: Ollama's native ``format: <schema>`` field.

The three schema dialects send the schema cut to what the server's own converter takes
(``server_schemas``); the gate validates the full schema afterwards.

``auto`` asks the server: one tiny probe per dialect, in that order, until one is honoured. A dialect
counts as honoured only when the reply really follows the probe's constraint, because some servers
accept a field they do not know and ignore it (llama-cpp-python's server answers a ``format`` key
with free text and HTTP 200; Ollama and vLLM ignore ``grammar``): trusting the status would fall
back to free text without anyone noticing. The grammar probe allows one reply only, a fixed word no
model says unasked. What a server speaks is remembered per base URL for the life of the process:
each new instance, and so each run of a service that builds one per request, does not probe again.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pes_agent.config.adapters import NO_GRAMMAR_HOSTS
from pes_agent.errors import ProviderError
from pes_agent.llm.reply_grammar import grammar_for
from pes_agent.llm.retry import is_body_refusal
from pes_agent.llm.server_schemas import for_server
from pes_agent.llm.streaming import Completion

__all__ = [
    "DIALECTS",
    "PROBE_REPLY",
    "Dialect",
    "DialectChooser",
    "configured_dialect",
    "constraint_fields",
    "forget_dialects",
    "probe_body",
    "probe_verdict",
    "remembered_dialect",
]

_log = logging.getLogger("pes_agent")

Dialect = Literal["grammar", "json_schema", "json_object", "ollama"]
DIALECTS: tuple[Dialect, ...] = get_args(Dialect)
"""The order ``auto`` tries them in: pes-agent's own grammar first, then the most widely spoken."""

_SPOKEN = {
    "grammar": "a GBNF grammar in the `grammar` field",
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
PROBE_REPLY = "pes-probe-ok"
"""The only reply the grammar probe allows: a word no model answers "Say hello." with unasked."""
PROBE_GRAMMAR = f'root ::= "{PROBE_REPLY}"'
_PROBE_PROMPT = "Say hello."
"""Asks for no JSON on purpose: a reply that is ``{"ok": ...}`` anyway shows the constraint at work."""
_PROBE_MAX_TOKENS = 64


def configured_dialect(value: str) -> Dialect | Literal["auto"]:
    """The configured dialect as this adapter knows it; config validation refuses the others'
    (``tool`` is the ``anthropic`` adapter's), so anything else can only be ``auto``."""
    return value if value in DIALECTS else "auto"


def constraint_fields(
    dialect: Dialect, schema: Mapping[str, Any], *, phase: str = "execution", max_tokens: int = 256
) -> dict[str, Any]:
    """The body keys that constrain a reply to ``schema`` in ``dialect``. ``grammar``: pes-agent's
    own GBNF for a reply of ``phase`` within ``max_tokens``, and ``cache_prompt`` (llama-server's
    prefix reuse; llama-cpp-python's server reuses the prefix anyway and ignores the key)."""
    if dialect == "grammar":
        return {"grammar": grammar_for(schema, phase, max_tokens), "cache_prompt": True}
    return _schema_fields(dialect, for_server(dialect, schema).schema)


def _schema_fields(dialect: Dialect, schema: Mapping[str, Any]) -> dict[str, Any]:
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
    constraint = {"grammar": PROBE_GRAMMAR} if dialect == "grammar" else _schema_fields(dialect, PROBE_SCHEMA)
    return {
        "model": model,
        "messages": [{"role": "user", "content": _PROBE_PROMPT}],
        "temperature": 0,
        "max_tokens": _PROBE_MAX_TOKENS,
        **constraint,
    }


def probe_verdict(completion: Completion, dialect: Dialect = "json_schema") -> str | None:
    """None when the probe's reply shows the constraint at work, else what shows it was ignored.

    A schema probe's empty reply is taken as honoured: a reasoning model may spend the probe's few
    tokens thinking, and nothing in that says the constraint was ignored. The grammar probe allows
    one reply only, so anything else, nothing included, says the grammar was not applied.
    """
    text = completion.text.strip()
    if dialect == "grammar":
        if text == PROBE_REPLY:
            return None
        return (
            f"the reply was {text[:40]!r}, not the only one its grammar allows"
            if text
            else ("the reply was empty")
        )
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("ok"), bool):
        return None
    return f"the reply was free text, starting {text[:40]!r}"


# -- what each server speaks, for the life of the process ------------------------------------------

_CHOSEN: dict[str, Dialect] = {}
_UNSUPPORTED: dict[str, str] = {}


def _server_key(base_url: str) -> str:
    return base_url.rstrip("/")


def remembered_dialect(base_url: str) -> Dialect | None:
    """The dialect ``auto`` found for the server at ``base_url`` in this process, if it probed it."""
    return _CHOSEN.get(_server_key(base_url))


def forget_dialects() -> None:
    """Forget every server's dialect (tests: a loopback port may serve another fake later)."""
    _CHOSEN.clear()
    _UNSUPPORTED.clear()


class DialectChooser:
    """The dialect of one provider: the configured one, or ``auto`` resolved by probing once per
    server (base URL) in this process.

    The probe runs on the first structured call, under a lock so that concurrent first calls wait for
    it instead of probing too. The lock is per event loop (an asyncio lock cannot be shared across
    loops, and a provider serves every loop it is called on), so two loops starting at the same moment
    may each probe once; the answer is the same. A transient failure (server down) decides nothing
    and the next call probes again; "no dialect works" is kept and raised again without new requests.
    """

    def __init__(self, provider: str, configured: Dialect | Literal["auto"], base_url: str) -> None:
        self._provider = provider
        self._configured: Dialect | None = None if configured == "auto" else configured
        self._server = _server_key(base_url)
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        host = urlsplit(base_url).hostname or ""
        self._order = tuple(d for d in DIALECTS if d != "grammar" or host not in NO_GRAMMAR_HOSTS)

    @property
    def chosen(self) -> Dialect | None:
        """The dialect in use, or None while ``auto`` has not probed this server yet."""
        return self._configured or _CHOSEN.get(self._server)

    async def dialect(self, probe: Callable[[Dialect], Awaitable[Completion]], where: str) -> Dialect:
        """The dialect to send; ``probe(d)`` sends ``probe_body(d, ...)`` through the retry layer."""
        chosen = self.chosen
        if chosen is not None:
            return chosen
        async with self._lock():
            chosen = self.chosen
            if chosen is None:
                chosen = _CHOSEN[self._server] = await self._choose(probe, where)
            return chosen

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
        if self._server in _UNSUPPORTED:
            raise self._unsupported_error()
        refusals: list[str] = []
        for dialect in self._order:
            try:
                ignored = probe_verdict(await probe(dialect), dialect)
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
        _UNSUPPORTED[self._server] = (
            f"{where}: structured output is not supported by this server: it "
            + "; ".join(refusals)
            + f". Set `providers.{self._provider}.structured_output: false` to send free-text requests "
            "(replies are then read from text), or point `base_url` at a server that constrains replies"
        )
        raise self._unsupported_error()

    def _announce(self, dialect: Dialect, refusals: list[str]) -> None:
        """A warning only when a schema dialect had to be passed over: most servers take no grammar
        (OpenAI, vLLM, Ollama), and saying so on every start would teach people to ignore the log."""
        schema_refusals = [r for r in refusals if _SPOKEN["grammar"] not in r]
        if not schema_refusals:
            _log.info(
                "provider %r: the server at %s accepts %s%s",
                self._provider,
                self._server,
                _SPOKEN[dialect],
                f" (it {refusals[0]})" if refusals else "",
            )
            return
        _log.warning(
            "provider %r: the server %s; using %s; set `structured_output_dialect: %s` to skip this probe",
            self._provider,
            " and ".join(refusals),
            _SPOKEN[dialect],
            dialect,
        )

    def _unsupported_error(self) -> ProviderError:
        return ProviderError(_UNSUPPORTED.get(self._server, ""), provider=self._provider, retryable=False)
