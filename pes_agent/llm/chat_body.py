"""The JSON body of one chat-completions call: what the framework owns, what ``llm_params`` may add,
and how the reply's constraint is sent in each server's dialect (``dialects``)."""

from __future__ import annotations

from typing import Any

from pes_agent.config import ProviderConfig
from pes_agent.llm.dialects import Dialect, configured_dialect, constraint_fields
from pes_agent.llm.reply_grammar import DEFAULT_MAX_TOKENS
from pes_agent.llm.types import CallOptions, PromptRequest

__all__ = ["GRAMMAR_DEFAULTS", "RESERVED_PARAMS", "build_chat_body"]

RESERVED_PARAMS = frozenset({"model", "messages", "stream", "stream_options", "response_format", "n"})
"""Body keys the framework sets itself; ``llm_params`` cannot override them."""

GRAMMAR_DEFAULTS: dict[str, Any] = {
    "temperature": 0.0,
    "max_tokens": DEFAULT_MAX_TOKENS,
    "repeat_penalty": 1.0,
}
"""What a ``grammar`` call sends where nothing sets it: the in-process ``llamacpp`` adapter's own
defaults, so a llama.cpp server decodes as the in-process model does. Without them llama-cpp-python's
server samples at temperature 0.8, applies a repeat penalty of 1.1 (which changes even a greedy
choice) and sets no reply cap. ``llm_params`` and the provider's settings win."""


def build_chat_body(
    request: PromptRequest,
    options: CallOptions,
    config: ProviderConfig,
    *,
    stream: bool = False,
    dialect: Dialect | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The JSON body of one chat-completions call, and the ``extra`` keys that were refused.

    Settings resolve call options → provider config; ``options.extra`` (``llm_params``) wins over
    both for ordinary keys, but never replaces what the framework owns (``RESERVED_PARAMS``, and
    the constraint's own keys in ``dialect``). ``dialect`` None means the configured one, and
    ``json_schema`` for ``auto`` (the most widely spoken). A server that speaks ``grammar`` is a
    llama.cpp one: every call to it, free ones too, gets ``GRAMMAR_DEFAULTS`` where nothing else
    sets them. A streamed call asks for usage in the last chunk, so token counts stay the server's
    own.
    """
    body: dict[str, Any] = {}
    temperature = options.temperature if options.temperature is not None else config.temperature
    if temperature is not None:
        body["temperature"] = temperature
    max_tokens = options.max_tokens if options.max_tokens is not None else config.max_tokens
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    refused = sorted(k for k in options.extra if k in RESERVED_PARAMS)
    body.update({k: v for k, v in options.extra.items() if k not in RESERVED_PARAMS})
    body["model"] = options.model or config.model
    body["messages"] = [m.to_dict() for m in request.messages]
    configured = configured_dialect(config.structured_output_dialect)
    known = dialect or (None if configured == "auto" else configured)
    if config.constrains_replies and known == "grammar":
        body = {**GRAMMAR_DEFAULTS, **body}
    if config.constrains_replies and request.response_schema is not None:
        cap = int(body.get("max_tokens") or DEFAULT_MAX_TOKENS)
        body.update(
            constraint_fields(
                known or "json_schema", request.response_schema, phase=request.phase, max_tokens=cap
            )
        )
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body, refused
