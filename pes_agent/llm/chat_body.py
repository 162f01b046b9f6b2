"""The JSON body of one chat-completions call: what the framework owns, what ``llm_params`` may add,
and how the reply's schema is sent in each server's dialect (``dialects``)."""

from __future__ import annotations

from typing import Any

from pes_agent.config import ProviderConfig
from pes_agent.llm.dialects import Dialect, configured_dialect, constraint_fields
from pes_agent.llm.types import CallOptions, PromptRequest

__all__ = ["RESERVED_PARAMS", "build_chat_body"]

RESERVED_PARAMS = frozenset({"model", "messages", "stream", "stream_options", "response_format", "n"})
"""Body keys the framework sets itself; ``llm_params`` cannot override them."""


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
    the schema's own key in ``dialect``). ``dialect`` None means the configured one, and
    ``json_schema`` for ``auto`` (what a probe tries first). A streamed call asks for usage in the
    last chunk, so token counts stay the server's own.
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
    if config.constrains_replies and request.response_schema is not None:
        configured = configured_dialect(config.structured_output_dialect)
        chosen = dialect or ("json_schema" if configured == "auto" else configured)
        body.update(constraint_fields(chosen, request.response_schema))
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body, refused
