"""The Anthropic Messages API on the wire: the request body, and replies read whole or streamed.

Pure functions and one event reader, no SDK: ``anthropic`` (the adapter) sends what is built here and
hands back the JSON it received, so what is sent and what is read can be tested without a network,
and ``testing.fake_anthropic`` serves the same shapes.

- ``system`` messages at the start become the top-level ``system`` blocks, the prefix every call of a
  run shares: with ``prompt_caching`` the last of them carries a ``cache_control`` breakpoint, so
  later calls read it from the cache (``usage.cache_read_input_tokens``). A system message later in a
  conversation (the API has none) joins the user turn it stands in; turns of one role are merged.
- A reply's schema goes as a forced tool whose input is the reply (``tool``, what every model takes)
  or as ``output_config.format`` (``json_schema``). Thinking rules out a forced tool, so ``auto``
  picks ``json_schema`` then. A tool's input must be an object: another schema is wrapped in one.
- Thinking blocks are read apart from the answer and never joined to it; ``redacted_thinking`` is
  dropped. The stop reason maps onto the finish reasons the parser knows: ``max_tokens`` → ``length``,
  so a cut-off reply is truncated and nothing in it runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pes_agent.config import ProviderConfig
from pes_agent.llm.streaming import Completion, ThinkSplitter
from pes_agent.llm.types import CallOptions, Message, PromptRequest, TokenSink, Usage

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "REPLY_TOOL",
    "RESERVED_PARAMS",
    "EventReader",
    "build_messages_body",
    "finish_reason",
    "read_message",
    "split_messages",
    "structured_mode",
    "tool_reply_text",
    "usage_of",
]

DEFAULT_MAX_TOKENS = 4096
"""The API requires a reply cap; used when neither the call nor the config sets one (plus the
thinking budget when thinking is on)."""
REPLY_TOOL = "reply"
"""The forced tool whose input is a structured reply."""
_WRAPPED = "reply"
"""The one property a non-object reply schema is wrapped in."""

RESERVED_PARAMS = frozenset(
    {
        "model",
        "messages",
        "system",
        "max_tokens",
        "stream",
        "tools",
        "tool_choice",
        "output_config",
        "thinking",
    }
)
"""Body keys the framework sets itself; ``llm_params`` cannot override them."""

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}

Structured = Literal["tool", "json_schema"]


def structured_mode(config: ProviderConfig) -> Structured:
    """How a reply schema is sent: the configured dialect, or for ``auto`` a forced tool unless
    thinking is on (the API refuses a forced tool with thinking)."""
    dialect = config.structured_output_dialect
    if dialect == "auto":
        return "json_schema" if config.thinking_budget is not None else "tool"
    return "json_schema" if dialect == "json_schema" else "tool"


def build_messages_body(
    request: PromptRequest, options: CallOptions, config: ProviderConfig, *, stream: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """The JSON body of one ``POST /v1/messages``, and the ``llm_params`` keys that were refused.

    Settings resolve call options → provider config; ``llm_params`` may add keys (``top_k``,
    ``stop_sequences``, ``metadata``) but never replace what the framework owns (``RESERVED_PARAMS``).
    """
    budget = config.thinking_budget
    body: dict[str, Any] = {}
    temperature = options.temperature if options.temperature is not None else config.temperature
    if temperature is not None and budget is None:  # the API takes no temperature with thinking
        body["temperature"] = temperature
    refused = sorted(k for k in options.extra if k in RESERVED_PARAMS)
    body.update({k: v for k, v in options.extra.items() if k not in RESERVED_PARAMS})
    cap = options.max_tokens if options.max_tokens is not None else config.max_tokens
    body["model"] = options.model or config.model
    body["max_tokens"] = cap or DEFAULT_MAX_TOKENS + (budget or 0)
    system, turns = split_messages(request.messages)
    if system:
        block: dict[str, Any] = {"type": "text", "text": system}
        if config.prompt_caching:
            block["cache_control"] = {"type": "ephemeral"}
        body["system"] = [block]
    body["messages"] = turns
    if budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    if config.constrains_replies and request.response_schema is not None:
        body.update(_schema_fields(structured_mode(config), request.response_schema))
    if stream:
        body["stream"] = True
    return body, refused


def split_messages(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, Any]]]:
    """The leading system text, and the turns that follow with one role per turn."""
    index = 0
    system: list[str] = []
    while index < len(messages) and messages[index].role == "system":
        system.append(messages[index].content)
        index += 1
    turns: list[dict[str, Any]] = []
    for message in messages[index:]:
        role = "assistant" if message.role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + message.content
        else:
            turns.append({"role": role, "content": message.content})
    return "\n\n".join(system), turns


def _schema_fields(mode: Structured, schema: Mapping[str, Any]) -> dict[str, Any]:
    if mode == "json_schema":
        return {"output_config": {"format": {"type": "json_schema", "schema": dict(schema)}}}
    tool = {
        "name": REPLY_TOOL,
        "description": "Give your reply as this tool's input.",
        "input_schema": dict(schema) if _is_object(schema) else _wrap(schema),
    }
    return {"tools": [tool], "tool_choice": {"type": "tool", "name": REPLY_TOOL}}


def _is_object(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object"


def _wrap(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {_WRAPPED: dict(schema)}, "required": [_WRAPPED]}


def tool_reply_text(value: Any, *, wrapped: bool) -> str:
    """The reply a forced tool's input stands for, as the JSON text the parser reads."""
    if wrapped and isinstance(value, dict) and _WRAPPED in value:
        value = value[_WRAPPED]
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def finish_reason(stop_reason: Any) -> str:
    """The API's ``stop_reason`` in the parser's terms (unknown ones pass through)."""
    return _FINISH.get(stop_reason, str(stop_reason or "unknown"))


def usage_of(raw: Any) -> Usage | None:
    """The API's usage: ``input_tokens`` counts only what was not cached, so the prompt is the sum."""
    if not isinstance(raw, dict) or not isinstance(raw.get("output_tokens"), int):
        return None
    read = _int(raw.get("cache_read_input_tokens"))
    written = _int(raw.get("cache_creation_input_tokens"))
    details = raw.get("output_tokens_details")
    return Usage(
        prompt_tokens=_int(raw.get("input_tokens")) + read + written,
        completion_tokens=raw["output_tokens"],
        source="provider",
        cached_prompt_tokens=read,
        thinking_tokens=_int(details.get("thinking_tokens")) if isinstance(details, dict) else 0,
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def read_message(data: Any, *, wrapped: bool = False) -> Completion | str:
    """A Messages response body read, or what is wrong with it (for the caller's error)."""
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        error = data.get("error") if isinstance(data, dict) else None
        return f"carries an error ({error})" if error else "has no `content` list"
    text: list[str] = []
    thinking: list[str] = []
    for block in data["content"]:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            text.append(block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            thinking.append(block["thinking"])
        elif kind == "tool_use" and block.get("name") == REPLY_TOOL:
            text = [tool_reply_text(block.get("input"), wrapped=wrapped)]
            break
    model = data.get("model")
    return Completion(
        text="".join(text),
        thinking="\n\n".join(thinking) or None,
        finish_reason=finish_reason(data.get("stop_reason")),
        model=model if isinstance(model, str) else None,
        usage=usage_of(data.get("usage")),
    )


class EventReader:
    """Gathers one streamed Messages reply (server-sent events), passing each piece on as it arrives.

    ``message_start`` carries the model and the prompt's usage, ``content_block_*`` the blocks (text,
    thinking, the reply tool's input as ``input_json_delta``), ``message_delta`` the stop reason and
    the final output count. Answer text goes through a ``ThinkSplitter`` as the OpenAI reader's does,
    so the pieces add up to the answer the parser sees.
    """

    def __init__(self, on_token: TokenSink, *, wrapped: bool = False) -> None:
        self._on_token = on_token
        self._splitter = ThinkSplitter(on_token)
        self._wrapped = wrapped
        self._kinds: dict[int, str] = {}
        self._text: list[str] = []
        self._tool_json: list[str] = []
        self._thinking: list[str] = []
        self._stop: Any = None
        self._model: str | None = None
        self._usage: dict[str, Any] = {}
        self.received = 0
        """Characters of answer and thinking received so far."""
        self.started = False
        """Whether ``message_start`` arrived."""

    def take(self, event: object) -> None:
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            self.started = True
            message = event["message"]
            self._model = message.get("model") if isinstance(message.get("model"), str) else None
            self._merge_usage(message.get("usage"))
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            block = event["content_block"]
            self._kinds[_int(event.get("index"))] = str(block.get("type"))
            if block.get("type") == "thinking" and self._thinking:
                self._piece("thinking", "\n\n")
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            self._delta(event["delta"])
        elif kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason"):
                self._stop = delta["stop_reason"]
            self._merge_usage(event.get("usage"))

    def _delta(self, delta: Mapping[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            self._piece("answer", delta["text"])
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            self._piece("thinking", delta["thinking"])
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            self._tool_json.append(delta["partial_json"])
            self.received += len(delta["partial_json"])
            if not self._wrapped:  # a wrapped reply is only known whole
                self._splitter.feed(delta["partial_json"])

    def _piece(self, kind: Literal["answer", "thinking"], text: str) -> None:
        if not text:
            return
        self.received += len(text)
        if kind == "thinking":
            self._thinking.append(text)
            self._on_token("thinking", text)
        else:
            self._text.append(text)
            self._splitter.feed(text)

    def _merge_usage(self, raw: Any) -> None:
        """``message_delta`` usage is cumulative: its counts replace ``message_start``'s."""
        if isinstance(raw, dict):
            self._usage.update({k: v for k, v in raw.items() if v is not None})

    def finish(self) -> Completion:
        text = "".join(self._text)
        if self._tool_json:
            raw = "".join(self._tool_json)
            try:
                text = tool_reply_text(json.loads(raw or "{}"), wrapped=self._wrapped)
            except ValueError:
                text = raw  # cut off mid-JSON (max_tokens): the parser sees it as truncated
            if self._wrapped:
                self._splitter.feed(text)
        self._splitter.close()
        return Completion(
            text=text,
            thinking="".join(self._thinking) or None,
            finish_reason=finish_reason(self._stop),
            model=self._model,
            usage=usage_of(self._usage),
        )
