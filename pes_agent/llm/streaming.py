"""Replies in the OpenAI chat format, whole or streamed, and thinking told apart from the answer.

``ChunkReader`` gathers the chunks of a streamed reply (the ``choices[0].delta`` format that OpenAI,
vLLM, llama.cpp's server and llama-cpp-python all emit) into the same ``Completion`` a whole body
gives, reporting each piece to a ``TokenSink`` as it arrives.

Reasoning models put their thinking either in a separate field (``reasoning_content``), which a
provider reports as thinking directly, or inline in ``<think>…</think>`` blocks. ``ThinkSplitter``
routes inline blocks as chunks arrive, even when a tag is cut across two chunks, and follows the
rules of ``markers.split_thinking`` so the answer pieces add up to the answer the parser will see:
blocks are thinking, an unclosed block runs to the end, stray closing tags are dropped, and the
answer's surrounding whitespace is left out.

One case cannot be decided incrementally: a ``</think>`` with no opening tag (a chat template that
opened the block inside the prompt) makes everything before it thinking, but that text has already
been reported as answer by the time the tag arrives. The final reply is parsed whole, so only the
live tokens are affected.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard
from weakref import WeakKeyDictionary

from pes_agent.llm.markers import THINK_CLOSE_RE
from pes_agent.llm.retry import server_message
from pes_agent.llm.types import LLMReply, Provider, StreamingProvider, TokenSink, Usage

__all__ = [
    "ChunkReader",
    "Completion",
    "ThinkSplitter",
    "accepts_token_sink",
    "delta_text",
    "first_str",
    "read_completion",
    "replay_reply",
    "text_of",
    "usage_of",
]

_ANY_TAG_RE = re.compile(r"<\s*(/)?\s*think(?:ing)?\s*>", re.IGNORECASE)
_PARTIAL_TAG_RE = re.compile(r"<\s*(?:/\s*)?([A-Za-z]*)(\s*)\Z")
_MAX_HELD = 32
"""Longest tail held back as a possible tag start; a longer one cannot be a tag worth waiting for."""


class ThinkSplitter:
    """Feeds answer text to a sink as ``answer`` or ``thinking`` pieces, ``<think>`` blocks apart.

    Only a tail that may still become a tag (``<thi``) is held back until the next chunk, so answer
    text reaches the sink as soon as it arrives. Call ``close()`` at the end of the reply.
    """

    def __init__(self, sink: TokenSink) -> None:
        self._sink = sink
        self._pending = ""
        self._thinking = False
        self._answer_started = False
        self._thought = False
        """Whether a block has given thinking yet: the next block's text starts on a new paragraph."""
        self._new_block = False
        self._space = ""
        """Whitespace after the last answer piece: passed on only if more answer follows."""

    def feed(self, text: str) -> None:
        rest = self._pending + text
        while True:
            tag = (THINK_CLOSE_RE if self._thinking else _ANY_TAG_RE).search(rest)
            if tag is None:
                break
            self._emit(rest[: tag.start()])
            if self._thinking:
                self._thinking = False
            elif tag.group(1) is None:
                self._thinking = True
                self._new_block = self._thought
            # else: a closing tag outside a block is dropped, as the parser drops it
            rest = rest[tag.end() :]
        keep = _held_tail_start(rest)
        self._emit(rest[:keep])
        self._pending = rest[keep:]

    def close(self) -> None:
        """The reply ended: a held tail was never a tag after all; trailing answer space is dropped."""
        pending, self._pending = self._pending, ""
        self._emit(pending)
        self._space = ""

    def _emit(self, text: str) -> None:
        if not text:
            return
        if self._thinking:
            if self._new_block:
                text, self._new_block = "\n\n" + text, False
            self._sink("thinking", text)
            self._thought = True
            return
        if not self._answer_started:
            text = text.lstrip()
            if not text:
                return
            self._answer_started = True
        body = text.rstrip()
        if body:
            self._sink("answer", self._space + body)
            self._space = text[len(body) :]
        else:
            self._space += text


def _held_tail_start(text: str) -> int:
    """Where a possible, still incomplete tag starts at the end of ``text`` (``len(text)`` if none)."""
    start = text.rfind("<")
    if start < 0 or len(text) - start > _MAX_HELD:
        return len(text)
    partial = _PARTIAL_TAG_RE.match(text, start)
    if partial is None:
        return len(text)
    name, space = partial.group(1).lower(), partial.group(2)
    could_be = name in ("think", "thinking") if space and name else "thinking".startswith(name)
    return start if could_be else len(text)


def replay_reply(reply: LLMReply, sink: TokenSink) -> None:
    """Report a reply that arrived whole as if it had streamed: thinking first, then the answer.

    Listeners then see the same TOKEN events whichever provider served the call, one piece per kind.
    """
    if reply.thinking:
        sink("thinking", reply.thinking)
    splitter = ThinkSplitter(sink)
    splitter.feed(reply.text)
    splitter.close()


_ACCEPTS: WeakKeyDictionary[Callable[..., Any], bool] = WeakKeyDictionary()


def accepts_token_sink(provider: Provider) -> TypeGuard[StreamingProvider]:
    """Whether ``provider.complete`` takes ``on_token`` (looked up once per implementation)."""
    method = provider.complete
    function = getattr(method, "__func__", method)
    try:
        return _ACCEPTS[function]
    except (KeyError, TypeError):
        pass
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        accepts = False
    else:
        accepts = any(
            p.kind is inspect.Parameter.VAR_KEYWORD
            or (p.name == "on_token" and p.kind is not inspect.Parameter.POSITIONAL_ONLY)
            for p in parameters
        )
    try:
        _ACCEPTS[function] = accepts
    except TypeError:  # not weak-referenceable: just look it up again next time
        pass
    return accepts


@dataclass(frozen=True, kw_only=True)
class Completion:
    """What we keep of one successful response, however it arrived (whole body or stream)."""

    text: str
    thinking: str | None
    finish_reason: str
    model: str | None
    usage: Usage | None


class ChunkReader:
    """Gathers the chunks of one streamed reply, passing each piece on as it arrives.

    Only choice 0 counts (``n`` is reserved, so there is no other); usage comes from the chunk
    that carries it, normally the last, and the finish reason from the last choice that has one.
    """

    def __init__(self, on_token: TokenSink) -> None:
        self._on_token = on_token
        self._splitter = ThinkSplitter(on_token)
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._finish_reason: str | None = None
        self._model: str | None = None
        self._usage: Usage | None = None
        self.replied = False
        """Whether any chunk carried choice 0."""
        self.received = 0
        """Characters of answer and thinking received so far."""

    def take(self, chunk: object) -> None:
        if not isinstance(chunk, dict):
            return
        model = chunk.get("model")
        if isinstance(model, str) and model:
            self._model = model
        usage = usage_of(chunk.get("usage"))
        if usage is not None:
            self._usage = usage
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._take_choice(choice)

    def _take_choice(self, choice: Mapping[str, Any]) -> None:
        self.replied = True
        delta = choice.get("delta")
        if isinstance(delta, dict):
            thinking = first_str(delta, "reasoning_content", "reasoning")
            if thinking:
                self.received += len(thinking)
                self._thinking.append(thinking)
                self._on_token("thinking", thinking)
            text = text_of(delta.get("content"))
            if text:
                self.received += len(text)
                self._text.append(text)
                self._splitter.feed(text)
        if choice.get("finish_reason"):
            self._finish_reason = str(choice["finish_reason"])

    def finish(self) -> Completion:
        self._splitter.close()
        return Completion(
            text="".join(self._text),
            thinking="".join(self._thinking) or None,
            finish_reason=self._finish_reason or "unknown",
            model=self._model,
            usage=self._usage,
        )


def delta_text(chunk: Any) -> str:
    """The answer text a stream chunk adds (an OpenAI-shaped dict), or ``""``."""
    try:
        return str(chunk["choices"][0]["delta"].get("content") or "")
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""


def read_completion(content: bytes) -> Completion | str:
    """A chat-completion body read, or what is wrong with it (for the caller's error)."""
    try:
        data: Any = json.loads(content)
    except ValueError:
        return "is not JSON"
    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(data, dict) or not isinstance(first, dict) or not isinstance(message, dict):
        error = data.get("error") if isinstance(data, dict) else None
        # some gateways report failures inside a 200 body
        return f"carries an error ({server_message(error)})" if error else "has no `choices[0].message`"
    return Completion(
        text=text_of(message.get("content")),
        thinking=first_str(message, "reasoning_content", "reasoning"),
        finish_reason=str(first.get("finish_reason") or "unknown"),
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        usage=usage_of(data.get("usage")),
    )


def text_of(content: Any) -> str:
    """``content`` is a string, null (tool calls only) or, on some servers, a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def first_str(message: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def usage_of(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    prompt, completion = raw.get("prompt_tokens"), raw.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    cached = _count(raw.get("prompt_tokens_details"), "cached_tokens")
    thinking = _count(raw.get("completion_tokens_details"), "reasoning_tokens")
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        source="provider",
        cached_prompt_tokens=cached,
        thinking_tokens=thinking,
    )


def _count(details: Any, key: str) -> int:
    """A count inside OpenAI's usage details (``prompt_tokens_details.cached_tokens``), else 0."""
    value = details.get(key) if isinstance(details, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
