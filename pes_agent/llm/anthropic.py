"""The ``anthropic`` adapter: Claude through the official SDK's Messages API (the ``anthropic`` extra).

The body is built by ``anthropic_wire.build_messages_body`` (pure) and sent through
``AsyncAnthropic.messages.with_raw_response.create``: the SDK does the transport (headers, the API
version, connection pool, timeouts) and raises its typed errors; the reply's JSON is read by
``anthropic_wire``, so thinking, the reply tool's input, the stop reason and usage (cache reads and
thinking tokens included) are read in one place for whole and streamed replies. Clients, keys,
retries and errors are ``sdk_adapter``'s, shared with the ``gemini`` adapter.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from pes_agent.config import ProviderConfig
from pes_agent.llm.anthropic_wire import EventReader, build_messages_body, read_message, structured_mode
from pes_agent.llm.repetition import RepetitionGuard, cut_repeat
from pes_agent.llm.sdk_adapter import SdkAdapter
from pes_agent.llm.streaming import Completion, replay_reply
from pes_agent.llm.types import CallOptions, LLMReply, PromptRequest, TokenSink, Usage

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["AnthropicProvider"]


class AnthropicProvider(SdkAdapter["AsyncAnthropic"]):
    """Provider for Anthropic's Messages API; safe to share among concurrent runs."""

    adapter = "anthropic"
    sdk_module = "anthropic"
    default_base_url = "https://api.anthropic.com"

    async def complete(
        self, request: PromptRequest, options: CallOptions, *, on_token: TokenSink | None = None
    ) -> LLMReply:
        """One Messages call; with ``on_token``, streamed and reported piece by piece."""
        model = self._model(options.model)
        timeout = self._timeout(options)
        body, refused = build_messages_body(request, options, self.config, stream=on_token is not None)
        body["model"] = model
        self._warn_refused(refused)
        wrapped = _wrapped(request, self.config)
        send: Callable[[], Awaitable[Completion]] = (
            partial(self._send, body, timeout, wrapped)
            if on_token is None
            else partial(
                self._send_streamed, body, timeout, wrapped, on_token, free=request.phase == "synthesis"
            )
        )
        completion = await self._with_retries(send, model=model, timeout=timeout, stream=on_token is not None)
        if request.phase == "synthesis":  # the answer, prose: it ends at its first repeat
            text, repeated = cut_repeat(completion.text)
            if repeated:
                completion = replace(completion, text=text, finish_reason="repetition")
        usage = completion.usage or Usage(prompt_tokens=0, completion_tokens=0, source="estimate")
        return LLMReply(
            text=completion.text,
            thinking=completion.thinking,
            finish_reason=completion.finish_reason,
            usage=usage,
            model=completion.model or model,
        )

    # -- transport -------------------------------------------------------------------------------

    def _new_client(self, api_key: str) -> AsyncAnthropic:
        import anthropic

        # Our own pool: the SDK's default one, when dropped, schedules its close on whatever loop
        # is running then, which fails for a pool from a finished loop.
        pool = anthropic.DefaultAsyncHttpxClient(timeout=self.config.timeout_s)
        return anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=self.config.base_url or self.default_base_url,
            max_retries=0,
            timeout=self.config.timeout_s,
            http_client=pool,
        )

    async def _close_client(self, client: AsyncAnthropic) -> None:
        await client.close()

    def _path(self, model: str, *, stream: bool) -> str:
        return "/v1/messages"

    def _call(self, body: dict[str, Any], timeout: float) -> Any:
        """The raw-response call: the SDK's required arguments by name, the rest as extra body."""
        rest = {k: v for k, v in body.items() if k not in ("model", "max_tokens", "messages", "stream")}
        create: Any = self._client().messages.with_raw_response.create
        extra = {"stream": True} if body.get("stream") else {}
        return create(
            model=body["model"],
            max_tokens=body["max_tokens"],
            messages=cast(Any, body["messages"]),
            extra_body=rest,
            timeout=timeout,
            **extra,
        )

    async def _send(self, body: dict[str, Any], timeout: float, wrapped: bool) -> Completion:
        raw = await self._call(body, timeout)
        read = read_message(_json(await raw.read()), wrapped=wrapped)
        if isinstance(read, Completion):
            return read
        raise self._unusable(body["model"], read, status=raw.status_code)

    async def _send_streamed(
        self,
        body: dict[str, Any],
        timeout: float,
        wrapped: bool,
        on_token: TokenSink,
        *,
        free: bool = False,
    ) -> Completion:
        """``free``: the answer, prose read through a ``RepetitionGuard`` (stopped at its first repeat)."""
        import anthropic

        model = body["model"]
        raw = await self._call(body, timeout)
        if "text/event-stream" not in raw.headers.get("content-type", "").lower():
            completion = read_message(_json(await raw.read()), wrapped=wrapped)
            if not isinstance(completion, Completion):
                raise self._unusable(model, completion, status=raw.status_code, stream=True)
            replay_reply(LLMReply(text=completion.text, thinking=completion.thinking), on_token)
            return completion
        reader = EventReader(on_token, wrapped=wrapped)
        stream = await raw.parse(to=anthropic.AsyncStream[object])
        guard = RepetitionGuard() if free else None
        cut: Exception | None = None
        not_json = False
        try:
            async for event in stream:
                before = reader.received
                reader.take(event)
                if guard is not None and reader.received > before and guard.feed(_answer_piece(event)):
                    break  # closing the stream (below) stops the generation
        except ValueError:  # an event whose data is not JSON
            not_json = True
        except Exception as exc:  # the SDK's error, or the HTTP client's (a connection lost mid-stream)
            if not reader.received or not self._is_sdk_error(exc):
                raise  # nothing delivered yet: the retry layer may try again
            cut = exc
        finally:
            await stream.close()
        if not_json:
            raise self._unusable(
                model, "streamed an event that is not JSON", status=raw.status_code, stream=True
            )
        if cut is not None:
            raise self._error(cut, model=model, timeout=timeout, streamed=reader.received, stream=True)
        if not reader.started:
            raise self._unusable(
                model, "streamed no `message_start` event", status=raw.status_code, stream=True
            )
        return reader.finish()


def _wrapped(request: PromptRequest, config: ProviderConfig) -> bool:
    """Whether the reply comes back inside the one property a non-object schema is wrapped in."""
    schema = request.response_schema
    return (
        config.constrains_replies
        and schema is not None
        and structured_mode(config) == "tool"
        and schema.get("type") != "object"
    )


def _answer_piece(event: Any) -> str:
    delta = event.get("delta") if isinstance(event, dict) else None
    text = delta.get("text") if isinstance(delta, dict) and delta.get("type") == "text_delta" else None
    return text if isinstance(text, str) else ""


def _json(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return None
