"""What crosses the provider boundary: frozen requests in, frozen replies out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant"]
Phase = Literal["planning", "refinement", "execution", "enforcement", "arg_fill", "synthesis"]
UsageSource = Literal["provider", "tiktoken", "estimate"]
TokenKind = Literal["answer", "thinking"]
TokenSink = Callable[[TokenKind, str], None]
"""Receives a reply while it arrives: ``("answer", text)`` or ``("thinking", text)`` pieces in order.

Synchronous on purpose: it is called once per streamed chunk, and awaiting a coroutine there would
let a slow listener hold back the model's stream."""


@dataclass(frozen=True, kw_only=True)
class Message:
    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, kw_only=True)
class PromptRequest:
    """A prompt as built by the pure builders: everything a provider needs, nothing it must look up.

    ``tools`` names the tools whose full schemas the prompt carries; ``response_schema`` is the JSON
    Schema of the expected reply (sent only by providers configured for structured output).
    """

    phase: Phase
    step_id: str | None
    messages: tuple[Message, ...]
    tools: tuple[str, ...] = ()
    response_schema: Mapping[str, Any] | None = None

    def with_phase(self, phase: Phase) -> PromptRequest:
        return PromptRequest(
            phase=phase,
            step_id=self.step_id,
            messages=self.messages,
            tools=self.tools,
            response_schema=self.response_schema,
        )


@dataclass(frozen=True, kw_only=True)
class CallOptions:
    """Per-call model settings resolved from provider config, thread and call ``llm_params``."""

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_s: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Usage:
    prompt_tokens: int
    """Every prompt token, cached ones included."""
    completion_tokens: int
    """Every reply token, thinking included."""
    source: UsageSource = "provider"
    cached_prompt_tokens: int = 0
    """Of ``prompt_tokens``, those read from the provider's prompt cache (billed at a discount)."""
    thinking_tokens: int = 0
    """Of ``completion_tokens``, those spent thinking (as the provider reports them; 0 if it does not)."""


@dataclass(frozen=True, kw_only=True)
class LLMReply:
    text: str
    thinking: str | None = None
    finish_reason: str = "stop"
    usage: Usage = field(
        default_factory=lambda: Usage(prompt_tokens=0, completion_tokens=0, source="estimate")
    )
    model: str | None = None


@runtime_checkable
class Provider(Protocol):
    """A chat model endpoint. Adapters do I/O; everything else in pes-agent is pure."""

    name: str

    async def complete(self, request: PromptRequest, options: CallOptions) -> LLMReply:
        """Send one request; raise ``ProviderError`` when the endpoint fails after retries."""
        ...

    async def aclose(self) -> None: ...


class StreamingProvider(Provider, Protocol):
    """A provider that can report its reply token by token while it is generated.

    Kept apart from ``Provider`` so adapters written against the plain protocol keep working: the
    run asks for tokens only from providers whose ``complete`` takes ``on_token``
    (``pes_agent.llm.streaming.accepts_token_sink``) and replays a finished reply for the others.
    Whether streamed or not, the returned ``LLMReply`` is the whole reply, as without ``on_token``.
    """

    async def complete(
        self, request: PromptRequest, options: CallOptions, *, on_token: TokenSink | None = None
    ) -> LLMReply:
        """Like ``Provider.complete``; when ``on_token`` is given, report pieces as they arrive."""
        ...
