"""The ``openai`` adapter: any OpenAI-compatible chat endpoint through ``openai.AsyncOpenAI``.

One retry layer, ours (``sdk_adapter``, shared with the ``anthropic`` and ``gemini`` adapters): the
SDK's own retries are off (``max_retries=0``) and tenacity retries rate limits, 5xx, timeouts and
connection failures (see ``retry``), waiting as long as ``Retry-After`` asks (capped) or an
exponential backoff with jitter. A refusal of the request (other 4xx, or a 5xx carrying a validation
error) fails at once. Whatever fails comes out as ``ProviderError`` with the status, the endpoint,
the model and safe response headers, never the API key.

Structured output is sent in the dialect the server speaks (``dialects``): the configured one, or,
with ``auto``, the one a probe on the first structured call to that server in this process found.
A llama.cpp server (the ``grammar`` dialect) gets pes-agent's own grammar, and decodes with the
in-process adapter's defaults (``chat_body.GRAMMAR_DEFAULTS``).

The body of a successful reply is read raw and parsed here, so a compatible server's quirks
(``reasoning_content``, missing ``usage``, odd content types) are handled in one place. The request is
built by a pure function (``build_chat_body``). A call given ``on_token`` streams (server-sent events)
and aggregates the chunks into the same ``Completion`` a whole body gives, so what the run receives
does not depend on how the reply travelled.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from pes_agent.config import ProviderConfig
from pes_agent.config.presets import key_variable
from pes_agent.errors import ProviderError
from pes_agent.llm.chat_body import build_chat_body
from pes_agent.llm.dialects import Dialect, DialectChooser, configured_dialect, probe_body
from pes_agent.llm.repetition import RepetitionGuard, cut_repeat
from pes_agent.llm.sdk_adapter import SdkAdapter
from pes_agent.llm.server_schemas import for_server
from pes_agent.llm.streaming import ChunkReader, Completion, delta_text, read_completion, replay_reply
from pes_agent.llm.tokens import count_messages, count_tokens
from pes_agent.llm.types import CallOptions, LLMReply, PromptRequest, TokenSink, Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAIProvider"]

_DEFAULT_BASE_URL = "https://api.openai.com/v1"
_log = logging.getLogger("pes_agent")


class OpenAIProvider(SdkAdapter["AsyncOpenAI"]):
    """Provider for an OpenAI-compatible endpoint; safe to share among concurrent runs."""

    adapter = "openai"
    sdk_module = "openai"
    default_base_url = _DEFAULT_BASE_URL

    def __init__(self, name: str, config: ProviderConfig, **kwargs: Any) -> None:
        super().__init__(name, config, **kwargs)
        self._dialects = DialectChooser(
            name, configured_dialect(config.structured_output_dialect), config.base_url or _DEFAULT_BASE_URL
        )
        self._cut_said: set[str] = set()

    async def complete(
        self, request: PromptRequest, options: CallOptions, *, on_token: TokenSink | None = None
    ) -> LLMReply:
        """One chat completion; with ``on_token``, streamed and reported piece by piece.

        A streamed call is retried like any other until its first token arrives. After that a
        failure is a ``ProviderError`` at once, never a retry: the listener has already been given
        part of a reply, and a second attempt would give it a different one.
        """
        model = self._model(options.model)
        timeout = self._timeout(options)
        dialect: Dialect | None = None
        if self.config.constrains_replies and request.response_schema is not None:
            probe = partial(self._probe, model=model, timeout=timeout)
            dialect = await self._dialects.dialect(probe, self._where(model))
            self._say_cuts(dialect, request)
        elif self.config.constrains_replies:
            dialect = self._dialects.chosen  # a free call to a llama.cpp server keeps its defaults
        body, refused = build_chat_body(
            request, options, self.config, stream=on_token is not None, dialect=dialect
        )
        self._warn_refused(refused)
        send: Callable[[], Awaitable[Completion]] = (
            partial(self._send, body, timeout)
            if on_token is None
            else partial(self._send_streamed, body, timeout, on_token, free=request.phase == "synthesis")
        )
        completion = await self._with_retries(
            send, model=model, timeout=timeout, refusal_hint=self._dialect_hint(dialect)
        )
        if request.phase == "synthesis":  # the answer, prose: it ends at its first repeat
            text, repeated = cut_repeat(completion.text)
            if repeated:
                completion = replace(completion, text=text, finish_reason="repetition")
        return self._reply(completion, request, model)

    def _say_cuts(self, dialect: Dialect, request: PromptRequest) -> None:
        """Once per provider and kind of cut: what of a reply schema this server's converter does not
        take and is not sent (``server_schemas``)."""
        if dialect == "grammar" or request.response_schema is None:
            return
        fresh = [c for c in for_server(dialect, request.response_schema).changes if c not in self._cut_said]
        if not fresh:
            return
        self._cut_said.update(fresh)
        _log.warning(
            "provider %r: reply schemas go to this server (%s) with %s; replies are still validated "
            "against the full schema%s",
            self.name,
            dialect,
            "; ".join(fresh),
            ""
            if dialect != "json_object"
            else ". A server that takes a `grammar` (llama-cpp-python's, llama-server) gets pes-agent's own "
            "grammar instead: `structured_output_dialect: grammar`",
        )

    async def _probe(self, dialect: Dialect, *, model: str, timeout: float) -> Completion:
        """One tiny request in ``dialect``, through the same retries as any call (``dialects``)."""
        send = partial(self._send, probe_body(dialect, model), timeout)
        return await self._with_retries(send, model=model, timeout=timeout)

    # -- transport -------------------------------------------------------------------------------

    def _new_client(self, api_key: str) -> AsyncOpenAI:
        import openai

        # Our own pool (the SDK's defaults): the SDK's default one, when dropped, schedules its
        # close on whatever loop is running then, which fails for a pool from a finished loop.
        pool = openai.DefaultAsyncHttpxClient(timeout=self.config.timeout_s)
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=self.config.base_url or _DEFAULT_BASE_URL,
            max_retries=0,
            timeout=self.config.timeout_s,
            http_client=pool,
        )

    async def _close_client(self, client: AsyncOpenAI) -> None:
        await client.close()

    def _path(self, model: str, *, stream: bool) -> str:
        return "/chat/completions"

    def _keyless(self) -> str | None:
        """A server of your own (``base_url``) may need no key: vLLM, llama.cpp and Ollama ignore it. A
        preset's service does, unless it names no key variable (``ollama``)."""
        if self.config.base_url and (key_variable(self.config) is None or self.config.preset is None):
            return "unused"
        return None

    async def _send(self, body: dict[str, Any], timeout: float) -> Completion:
        client = self._client()
        params = {k: v for k, v in body.items() if k not in ("model", "messages")}
        raw = await client.chat.completions.with_raw_response.create(
            model=body["model"],
            messages=cast(Any, body["messages"]),
            extra_body=params,
            timeout=timeout,
        )
        return self._parse(raw.content, status=raw.status_code, model=body["model"])

    async def _send_streamed(
        self, body: dict[str, Any], timeout: float, on_token: TokenSink, *, free: bool = False
    ) -> Completion:
        """``free``: the answer, prose read through a ``RepetitionGuard`` (stopped at its first repeat).
        Only the answer: any other reply is JSON, whose lines repeat by design."""
        import openai

        client = self._client()
        model = body["model"]
        params = {k: v for k, v in body.items() if k not in ("model", "messages", "stream")}
        raw = await client.chat.completions.with_raw_response.create(
            model=model,
            messages=cast(Any, body["messages"]),
            stream=True,
            extra_body=params,
            timeout=timeout,
        )
        if "text/event-stream" not in raw.headers.get("content-type", "").lower():
            # A server that ignores `stream` answers with a whole body: take it as one piece.
            completion = self._parse(await raw.http_response.aread(), status=raw.status_code, model=model)
            replay_reply(LLMReply(text=completion.text, thinking=completion.thinking), on_token)
            return completion
        reader = ChunkReader(on_token)
        stream = raw.parse(to=openai.AsyncStream[object])
        cut: openai.APIError | None = None
        not_json = False
        guard = RepetitionGuard() if free else None
        try:
            async for chunk in stream:
                reader.take(chunk)
                if guard is not None and guard.feed(delta_text(chunk)):
                    break  # closing the stream (below) stops a server's generation
        except openai.APIError as exc:
            if not reader.received:
                raise  # nothing delivered yet: the retry layer may try again
            cut = exc
        except ValueError:  # an event whose data is not JSON
            not_json = True
        finally:
            await stream.close()
        if cut is not None:  # raised here, not chained: see `_with_retries`
            raise self._error(cut, model=model, timeout=timeout, attempts=1, streamed=reader.received)
        if not_json or not reader.replied:
            what = "an event that is not JSON" if not_json else "no reply chunk (`choices[0]`)"
            raise ProviderError(
                f"{self._where(model)} streamed {what}; check that `base_url` points at an "
                "OpenAI-compatible `/v1` endpoint",
                provider=self.name,
                status=raw.status_code,
                retryable=False,
            )
        return reader.finish()

    def _parse(self, content: bytes, *, status: int, model: str) -> Completion:
        """Read a chat-completion body; anything unusable is a ProviderError naming what was wrong."""
        read = read_completion(content)
        if isinstance(read, Completion):
            return read
        raise ProviderError(
            self._scrub(
                f"{self._where(model)} answered HTTP {status} with a body that {read}, starting "
                f"{content[:120].decode('utf-8', 'replace')!r}; check that `base_url` points at an "
                "OpenAI-compatible `/v1` endpoint"
            ),
            provider=self.name,
            status=status,
            retryable=False,
        )

    def _reply(self, completion: Completion, request: PromptRequest, model: str) -> LLMReply:
        usage = completion.usage
        if usage is None:
            prompt = count_messages(request.messages)
            answer = count_tokens(completion.text)
            thought = count_tokens(completion.thinking or "")
            exact = prompt.source == answer.source == thought.source == "tiktoken"
            usage = Usage(
                prompt_tokens=prompt.tokens,
                completion_tokens=answer.tokens + thought.tokens,
                source="tiktoken" if exact else "estimate",
            )
        return LLMReply(
            text=completion.text,
            thinking=completion.thinking,
            finish_reason=completion.finish_reason,
            usage=usage,
            model=completion.model or model,
        )

    def _dialect_hint(self, dialect: Dialect | None) -> str:
        """Added to a refusal when the call sent its reply schema (a refusal may be about that)."""
        if dialect is None:
            return ""
        return (
            f". If it is the reply schema it refused (sent as `{dialect}`), set "
            f"`providers.{self.name}.structured_output_dialect` to the form this server takes "
            "(`auto` finds it; llama.cpp's servers take `grammar`, llama-cpp-python's also "
            "`json_object`), or `structured_output: false`"
        )
