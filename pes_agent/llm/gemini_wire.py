"""Gemini's ``generateContent`` on the wire: the request, and replies read whole or streamed.

Pure, no SDK import: ``gemini`` (the adapter) passes what is built here to ``google-genai`` as plain
dicts (the SDK accepts its typed dicts) and hands its response objects to ``GeminiReader``, which
reads them by attribute, so the same code reads a whole reply and each chunk of a stream.

- Leading ``system`` messages become ``system_instruction``; the turns follow as ``contents`` with
  the roles ``user`` and ``model``; a later system message joins the user turn it stands in.
- A reply's schema goes as ``response_json_schema`` with ``response_mime_type: application/json``:
  the JSON Schema as written. (``response_schema`` takes Google's OpenAPI subset, into which the SDK
  converts a dict and where keywords our schemas use, such as ``additionalProperties``, do not fit.)
- ``thinking_budget`` becomes ``thinking_config`` with ``include_thoughts``, so the thinking comes back
  as parts marked ``thought``, read apart from the answer and never joined to it.
- ``finishReason`` ``MAX_TOKENS`` is ``length`` (the gate's truncation rule applies); ``STOP`` is
  ``stop``; safety stops are ``content_filter``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pes_agent.config import ProviderConfig
from pes_agent.llm.streaming import Completion, ThinkSplitter
from pes_agent.llm.types import CallOptions, Message, PromptRequest, TokenSink, Usage

__all__ = ["RESERVED_PARAMS", "GeminiReader", "build_generate_request", "finish_reason", "split_contents"]

RESERVED_PARAMS = frozenset(
    {
        "system_instruction",
        "response_mime_type",
        "response_json_schema",
        "response_schema",
        "thinking_config",
        "http_options",
        "candidate_count",
    }
)
"""Config keys the framework sets itself; ``llm_params`` cannot override them."""

_FINISH = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
}


def build_generate_request(
    request: PromptRequest, options: CallOptions, config: ProviderConfig, *, timeout_s: float
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """``(contents, generation config, refused llm_params keys)`` for one ``generateContent`` call.

    Settings resolve call options → provider config; ``llm_params`` may add config keys (``top_k``,
    ``stop_sequences``, ``seed``) but never replace what the framework owns (``RESERVED_PARAMS``).
    """
    generation: dict[str, Any] = {}
    temperature = options.temperature if options.temperature is not None else config.temperature
    if temperature is not None:
        generation["temperature"] = temperature
    cap = options.max_tokens if options.max_tokens is not None else config.max_tokens
    if cap is not None:
        generation["max_output_tokens"] = cap
    refused = sorted(k for k in options.extra if k in RESERVED_PARAMS)
    generation.update({k: v for k, v in options.extra.items() if k not in RESERVED_PARAMS})
    system, contents = split_contents(request.messages)
    if system:
        generation["system_instruction"] = system
    if config.constrains_replies and request.response_schema is not None:
        generation["response_mime_type"] = "application/json"
        generation["response_json_schema"] = dict(request.response_schema)
    if config.thinking_budget is not None:
        generation["thinking_config"] = {
            "thinking_budget": config.thinking_budget,
            "include_thoughts": config.thinking_budget != 0,
        }
    generation["http_options"] = {"timeout": max(1, round(timeout_s * 1000))}  # milliseconds
    return contents, generation, refused


def split_contents(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, Any]]]:
    """The leading system text, and the turns that follow with one role per turn."""
    index = 0
    system: list[str] = []
    while index < len(messages) and messages[index].role == "system":
        system.append(messages[index].content)
        index += 1
    contents: list[dict[str, Any]] = []
    for message in messages[index:]:
        role = "model" if message.role == "assistant" else "user"
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"][0]["text"] += "\n\n" + message.content
        else:
            contents.append({"role": role, "parts": [{"text": message.content}]})
    return "\n\n".join(system), contents


def finish_reason(reason: Any) -> str:
    """Gemini's ``finishReason`` (an enum or its name) in the parser's terms."""
    name = str(getattr(reason, "value", reason) or "")
    return _FINISH.get(name, name.lower() or "unknown")


class GeminiReader:
    """Reads ``GenerateContentResponse`` objects — one whole reply, or a stream's chunks in order.

    Text parts marked ``thought`` are thinking; the others are the answer, passed through a
    ``ThinkSplitter`` as the other adapters do. Usage is taken from the last chunk that has it
    (each chunk's counts are the totals so far).
    """

    def __init__(self, on_token: TokenSink | None = None) -> None:
        self._on_token = on_token
        self._splitter = ThinkSplitter(on_token) if on_token is not None else None
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._finish: Any = None
        self._model: str | None = None
        self._usage: Usage | None = None
        self.received = 0
        """Characters of answer and thinking received so far."""
        self.replied = False
        """Whether any chunk carried a candidate or usage."""

    def take(self, response: Any) -> str:
        """Read one response (or chunk); returns the answer text it added."""
        added: list[str] = []
        version = getattr(response, "model_version", None)
        if isinstance(version, str) and version:
            self._model = version
        usage = _usage(getattr(response, "usage_metadata", None))
        if usage is not None:
            self._usage = usage
            self.replied = True
        candidates = getattr(response, "candidates", None) or []
        if candidates:
            self.replied = True
            candidate = candidates[0]
            if getattr(candidate, "finish_reason", None) is not None:
                self._finish = candidate.finish_reason
            content = getattr(candidate, "content", None)
            for part in getattr(content, "parts", None) or []:
                text = getattr(part, "text", None)
                if isinstance(text, str) and text:
                    self._part(text, thought=getattr(part, "thought", None) is True, added=added)
        return "".join(added)

    def _part(self, text: str, *, thought: bool, added: list[str]) -> None:
        self.received += len(text)
        if thought:
            self._thinking.append(text)
            if self._on_token is not None:
                self._on_token("thinking", text)
            return
        self._text.append(text)
        added.append(text)
        if self._splitter is not None:
            self._splitter.feed(text)

    def finish(self) -> Completion:
        if self._splitter is not None:
            self._splitter.close()
        return Completion(
            text="".join(self._text),
            thinking="".join(self._thinking) or None,
            finish_reason=finish_reason(self._finish),
            model=self._model,
            usage=self._usage,
        )


def _usage(metadata: Any) -> Usage | None:
    """``prompt_token_count`` includes cached tokens; ``candidates_token_count`` excludes thoughts."""
    if metadata is None:
        return None
    prompt = _count(metadata, "prompt_token_count")
    answer = _count(metadata, "candidates_token_count")
    thoughts = _count(metadata, "thoughts_token_count")
    if prompt == answer == thoughts == 0:
        return None
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=answer + thoughts,
        source="provider",
        cached_prompt_tokens=_count(metadata, "cached_content_token_count"),
        thinking_tokens=thoughts,
    )


def _count(metadata: Any, name: str) -> int:
    value = metadata.get(name) if isinstance(metadata, Mapping) else getattr(metadata, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
