"""A strict, recording test double for the Provider protocol."""

from __future__ import annotations

import inspect
import math
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pes_agent.agent.run_thread import current_thread
from pes_agent.errors import ProviderError, ScriptExhaustedError
from pes_agent.llm.streaming import ThinkSplitter
from pes_agent.llm.types import CallOptions, LLMReply, PromptRequest, TokenSink, Usage


@dataclass(frozen=True, kw_only=True)
class ScriptedReply:
    text: str
    thinking: str | None = None
    finish_reason: str = "stop"
    usage: Usage | None = None


@dataclass(frozen=True, kw_only=True)
class ScriptedCall:
    """One request the provider received, as a test wants to inspect it."""

    request: PromptRequest
    options: CallOptions

    @property
    def messages(self) -> list[dict[str, str]]:
        """The request's messages as ``{"role", "content"}`` dicts (made on access, not per call)."""
        return [m.to_dict() for m in self.request.messages]

    @property
    def phase(self) -> str:
        return self.request.phase

    @property
    def step_id(self) -> str | None:
        return self.request.step_id

    @property
    def tools(self) -> tuple[str, ...]:
        return self.request.tools

    @property
    def response_schema(self) -> Mapping[str, Any] | None:
        return self.request.response_schema

    @property
    def text(self) -> str:
        """All message contents joined: handy for `"webSearch" in call.text`."""
        return "\n".join(m.content for m in self.request.messages)


ReplyLike = str | ScriptedReply | BaseException
ScriptEntry = ReplyLike | Callable[[ScriptedCall], Any]


_WORDS = re.compile(r"\s*\S+\s*|\s+")


def _estimate(text: str) -> int:
    return math.ceil(len(text) / 4) if text else 0


def _stream(reply: LLMReply, on_token: TokenSink) -> None:
    """Report a reply the way a streaming server would: thinking first, then the text word by word
    (each word with the whitespace around it), through the same ``<think>`` splitting."""
    for word in _WORDS.findall(reply.thinking or ""):
        on_token("thinking", word)
    splitter = ThinkSplitter(on_token)
    for word in _WORDS.findall(reply.text):
        splitter.feed(word)
    splitter.close()


@dataclass(eq=False)
class ScriptedProvider:
    """Serves scripted replies strictly in order and records every request.

    Entries are strings, ``ScriptedReply`` objects, exceptions (raised as provider errors) or callables
    of the recorded call returning one of those (sync or async). Usage is the reply's own, else a
    labelled character estimate, so scripted runs never load a tokenizer. Given ``on_token``, the
    reply is also reported in word-sized pieces, deterministically, before ``complete`` returns it.
    """

    replies: Sequence[ScriptEntry]
    name: str = "scripted"
    calls: list[ScriptedCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue = list(self.replies)
        self._served = 0

    @property
    def remaining(self) -> int:
        return len(self._queue) - self._served

    async def complete(
        self, request: PromptRequest, options: CallOptions, *, on_token: TokenSink | None = None
    ) -> LLMReply:
        call = ScriptedCall(request=request, options=options)
        self.calls.append(call)
        if self._served >= len(self._queue):
            raise ScriptExhaustedError(
                f"ScriptedProvider {self.name!r} has no reply left for call #{len(self.calls)} "
                f"(phase {request.phase!r}, step {request.step_id!r}); it was given {len(self._queue)}."
            )
        entry = self._queue[self._served]
        self._served += 1
        if callable(entry) and not isinstance(entry, BaseException):
            entry = entry(call)
            if inspect.isawaitable(entry):
                entry = await entry
        reply = self._reply(entry, request)
        if on_token is not None:
            _stream(reply, on_token)
        return reply

    def _reply(self, entry: Any, request: PromptRequest) -> LLMReply:
        if isinstance(entry, BaseException):
            if isinstance(entry, ProviderError):
                raise entry
            raise ProviderError(f"scripted provider error: {entry}", provider=self.name) from entry
        reply = entry if isinstance(entry, ScriptedReply) else ScriptedReply(text=str(entry))
        usage = reply.usage or Usage(
            prompt_tokens=sum(_estimate(m.content) for m in request.messages),
            completion_tokens=_estimate(reply.text),
            source="estimate",
        )
        return LLMReply(
            text=reply.text,
            thinking=reply.thinking,
            finish_reason=reply.finish_reason,
            usage=usage,
            model="scripted",
        )

    def assert_complete(self) -> None:
        """Fail when scripted replies were left unused: the run took a shorter path than scripted."""
        if self.remaining:
            raise AssertionError(
                f"ScriptedProvider {self.name!r}: {self.remaining} of {len(self._queue)} replies unused"
            )

    def phases(self) -> list[tuple[str, str | None]]:
        return [(c.phase, c.step_id) for c in self.calls]

    async def aclose(self) -> None:
        return None


@dataclass(eq=False)
class PerThreadReplay:
    """The same script replayed for every thread: a `ScriptedProvider` per thread, made on the
    thread's first call (`pes_agent.agent.run_thread` says which thread asks). What the ``scripted``
    adapter serves with ``replay: per_thread``, so a demo answers any number of users and runs.

    A thread that has used the whole script starts it again on its next call (a follow-up query
    replays the conversation); its provider is dropped as soon as it is used up, and at most
    ``max_threads`` unfinished ones are kept (the least recently used goes first), so a long-lived
    server does not grow with every thread it ever served.

    A thread this process has not seen may arrive mid-conversation: resumed after a restart, or on
    another worker than the one that paused it. Its replay then starts at the reply the request's
    phase calls for: the first reply of that kind (a plan, an answer in ``<mainContent>``, else a
    step's reply), moved on in a step by the model replies the request already carries.
    """

    replies: Sequence[ScriptEntry]
    name: str = "scripted"
    max_threads: int = 10_000

    def __post_init__(self) -> None:
        self._threads: OrderedDict[str, ScriptedProvider] = OrderedDict()

    async def complete(
        self, request: PromptRequest, options: CallOptions, *, on_token: TokenSink | None = None
    ) -> LLMReply:
        thread = current_thread() or ""
        provider = self._threads.get(thread)
        if provider is None:
            start = _resume_point(self.replies, request)
            provider = self._threads[thread] = ScriptedProvider(self.replies[start:], name=self.name)
            while len(self._threads) > self.max_threads:
                self._threads.popitem(last=False)
        self._threads.move_to_end(thread)
        try:
            return await provider.complete(request, options, on_token=on_token)
        finally:
            if not provider.remaining and self._threads.get(thread) is provider:
                del self._threads[thread]

    async def aclose(self) -> None:
        self._threads.clear()


def _kind(entry: ScriptEntry) -> str:
    """What a recorded reply answers, told by its content: a plan, the final answer, or a step."""
    text = entry.text if isinstance(entry, ScriptedReply) else entry if isinstance(entry, str) else ""
    if "JSON_OUTPUT_START" in text or '"todoList"' in text:
        return "planning"
    if "<mainContent>" in text:
        return "synthesis"
    return "execution"


def _resume_point(replies: Sequence[ScriptEntry], request: PromptRequest) -> int:
    """Where a thread's replay starts: 0 for a new conversation (planning), else the first reply of
    the request's kind, plus, within a step, the model replies the request already holds."""
    if request.phase in ("planning", "refinement"):
        return 0
    wanted = "synthesis" if request.phase == "synthesis" else "execution"
    first = next((n for n, entry in enumerate(replies) if _kind(entry) == wanted), 0)
    if wanted == "execution":
        first += sum(1 for m in request.messages if m.role == "assistant")
    return min(first, len(replies))
