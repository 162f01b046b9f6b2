"""The ``openai`` adapter: any OpenAI-compatible chat endpoint through ``openai.AsyncOpenAI``.

One retry layer, ours: the SDK's own retries are off (``max_retries=0``) and tenacity retries
rate limits, 5xx, timeouts and connection failures (see ``retry``), waiting as long as ``Retry-After``
asks (capped) or an exponential backoff with jitter. A refusal of the request (other 4xx, or a 5xx
carrying a validation error) fails at once. Whatever fails comes out as ``ProviderError`` with the
status, the endpoint, the model and safe response headers, never the API key.

Structured output is sent in the dialect the server speaks (``dialects``): the configured one, or,
with ``auto``, the one a probe on the first structured call found.

The body of a successful reply is read raw and parsed here, so a compatible server's quirks
(``reasoning_content``, missing ``usage``, odd content types) are handled in one place. The request is
built by a pure function (``build_chat_body``). A call given ``on_token`` streams (server-sent events)
and aggregates the chunks into the same ``Completion`` a whole body gives, so what the run receives
does not depend on how the reply travelled.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, cast
from urllib.parse import urlsplit

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from pes_agent.config import ProviderConfig
from pes_agent.config.presets import key_variable
from pes_agent.errors import ProviderError
from pes_agent.llm.chat_body import build_chat_body
from pes_agent.llm.dialects import Dialect, DialectChooser, configured_dialect, probe_body
from pes_agent.llm.repetition import RepetitionGuard, cut_repeat
from pes_agent.llm.retry import (
    describe_failure,
    failure_report,
    is_body_refusal,
    is_retryable,
    wait_seconds,
)
from pes_agent.llm.streaming import ChunkReader, Completion, delta_text, read_completion, replay_reply
from pes_agent.llm.tokens import count_messages, count_tokens
from pes_agent.llm.types import CallOptions, LLMReply, PromptRequest, TokenSink, Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAIProvider"]

_log = logging.getLogger("pes_agent")

_DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIProvider:
    """Provider for an OpenAI-compatible endpoint; safe to share among concurrent runs.

    One ``AsyncOpenAI`` client (and connection pool) per event loop, created on first use there: an
    instance built at service start keeps working under a later ``asyncio.run`` or in a thread with its
    own loop, instead of failing with "Event loop is closed". Clients of closed loops are forgotten.
    """

    def __init__(
        self,
        name: str,
        config: ProviderConfig,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.name = name
        self.config = config
        self._sleep = sleep
        self._clients: dict[asyncio.AbstractEventLoop, AsyncOpenAI] = {}
        self._refused_warned: set[str] = set()
        self._dialects = DialectChooser(name, configured_dialect(config.structured_output_dialect))

    def __repr__(self) -> str:
        return (
            f"OpenAIProvider(name={self.name!r}, model={self.config.model!r}, endpoint={self._endpoint()!r})"
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def complete(
        self, request: PromptRequest, options: CallOptions, *, on_token: TokenSink | None = None
    ) -> LLMReply:
        """One chat completion; with ``on_token``, streamed and reported piece by piece.

        A streamed call is retried like any other until its first token arrives. After that a
        failure is a ``ProviderError`` at once, never a retry: the listener has already been given
        part of a reply, and a second attempt would give it a different one.
        """
        model = options.model or self.config.model
        if not model:
            raise ProviderError(
                f"provider {self.name!r} has no model: set `providers.{self.name}.model` or a "
                "`providerConfig.modelId`",
                provider=self.name,
            )
        timeout = options.timeout_s if options.timeout_s is not None else self.config.timeout_s
        dialect: Dialect | None = None
        if self.config.constrains_replies and request.response_schema is not None:
            probe = partial(self._probe, model=model, timeout=timeout)
            dialect = await self._dialects.dialect(probe, self._where(model))
        body, refused = build_chat_body(
            request, options, self.config, stream=on_token is not None, dialect=dialect
        )
        self._warn_refused(refused)
        send: Callable[[], Awaitable[Completion]] = (
            partial(self._send, body, timeout)
            if on_token is None
            else partial(self._send_streamed, body, timeout, on_token, free=request.phase == "synthesis")
        )
        completion = await self._with_retries(send, model=model, timeout=timeout, dialect=dialect)
        if request.phase == "synthesis":  # the answer, prose: it ends at its first repeat
            text, repeated = cut_repeat(completion.text)
            if repeated:
                completion = replace(completion, text=text, finish_reason="repetition")
        return self._reply(completion, request, model)

    async def aclose(self) -> None:
        """Close this loop's client; clients of other loops can only be closed on their own loop."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def _probe(self, dialect: Dialect, *, model: str, timeout: float) -> Completion:
        """One tiny request in ``dialect``, through the same retries as any call (``dialects``)."""
        send = partial(self._send, probe_body(dialect, model), timeout)
        return await self._with_retries(send, model=model, timeout=timeout)

    # -- transport -------------------------------------------------------------------------------

    def _client_for_loop(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            import openai

            # Not a WeakKeyDictionary: a client refers to its loop, so the key would never die.
            # Forgetting the clients of closed loops when a new loop turns up bounds the map instead.
            for other in list(self._clients):  # list(): other threads' loops may add entries
                if other.is_closed():
                    self._clients.pop(other, None)

            # Our own pool (the SDK's defaults): the SDK's default one, when dropped, schedules its
            # close on whatever loop is running then, which fails for a pool from a finished loop.
            pool = openai.DefaultAsyncHttpxClient(timeout=self.config.timeout_s)
            client = openai.AsyncOpenAI(
                api_key=self._api_key(),
                base_url=self.config.base_url or _DEFAULT_BASE_URL,
                max_retries=0,
                timeout=self.config.timeout_s,
                http_client=pool,
            )
            self._clients[loop] = client
        return client

    def _api_key(self) -> str:
        if self.config.api_key is not None:
            return self.config.api_key.get_secret_value()
        variable = key_variable(self.config)
        from_env = os.environ.get(variable) if variable else None
        if from_env:
            return from_env
        if self.config.base_url and (variable is None or self.config.preset is None):
            return "unused"  # local compatible servers (vLLM, llama.cpp, Ollama) ignore the key
        raise ProviderError(
            f"provider {self.name!r} has no API key for {self._endpoint()}: set the `{variable}` "
            f"environment variable, or `providers.{self.name}.api_key: ${{{variable}}}`"
            + ("" if self.config.base_url else ", or set `base_url` for a server that needs none"),
            provider=self.name,
        )

    async def _send(self, body: dict[str, Any], timeout: float) -> Completion:
        client = self._client_for_loop()
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

        client = self._client_for_loop()
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

    # -- retries and errors ----------------------------------------------------------------------

    async def _with_retries(
        self,
        send: Callable[[], Awaitable[Completion]],
        *,
        model: str,
        timeout: float,
        dialect: Dialect | None = None,
    ) -> Completion:
        import openai

        attempts = 0

        async def attempt() -> Completion:
            nonlocal attempts
            attempts += 1
            return await send()

        retrying = AsyncRetrying(
            stop=stop_after_attempt(1 + self.config.max_retries),
            retry=retry_if_exception(is_retryable),
            wait=wait_seconds,
            sleep=self._sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )
        failure: openai.APIError | None = None
        try:
            return await retrying(attempt)
        except openai.APIError as exc:
            failure = exc
        # Raised outside the `except` block so the SDK error is neither chained nor kept as
        # `__context__`: it repeats the server's text (which may echo the key) and holds the request
        # with its Authorization header. Everything useful is copied into our error, scrubbed.
        raise self._error(failure, model=model, timeout=timeout, attempts=attempts, dialect=dialect)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        _log.info(
            "provider %r: %s; retry %d of %d in %.2fs",
            self.name,
            describe_failure(exc),
            state.attempt_number,
            self.config.max_retries,
            state.upcoming_sleep,
        )

    def _error(
        self,
        exc: Exception,
        *,
        model: str,
        timeout: float,
        attempts: int,
        streamed: int = 0,
        dialect: Dialect | None = None,
    ) -> ProviderError:
        """``dialect``: how the call sent its reply schema, if it did (a refusal may be about that)."""
        report = failure_report(exc, provider=self.name, timeout=timeout)
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        if streamed:
            tries = (
                f" after {streamed} characters of the reply had streamed (not retried: part of it was "
                "already delivered)"
            )
        hint = report.hint
        if dialect is not None and is_body_refusal(report.status, report.retryable):
            hint += (
                f". If it is the reply schema it refused (sent as `{dialect}`), set "
                f"`providers.{self.name}.structured_output_dialect` to the form this server takes "
                "(`auto` finds it; llama-cpp-python's server takes `json_object`), or "
                "`structured_output: false`"
            )
        return ProviderError(
            self._scrub(f"{self._where(model)} failed{tries}: {report.what}; {hint}"),
            provider=self.name,
            status=report.status,
            headers={k: self._scrub(v) for k, v in report.headers.items()},
            retryable=report.retryable,
            server_message=self._scrub(report.said) or None,
        )

    def _where(self, model: str) -> str:
        return f"provider {self.name!r} (POST {self._endpoint()}/chat/completions, model {model!r})"

    def _endpoint(self) -> str:
        """The base URL without credentials or query, safe to show."""
        parts = urlsplit(self.config.base_url or _DEFAULT_BASE_URL)
        host = parts.hostname or "?"
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"

    def _scrub(self, text: str) -> str:
        """Servers sometimes echo the key they were sent; never pass it on."""
        variable = key_variable(self.config)
        secrets = [os.environ.get(variable, "") if variable else ""]
        if self.config.api_key is not None:
            secrets.append(self.config.api_key.get_secret_value())
        for secret in secrets:
            if len(secret) >= 4:
                text = text.replace(secret, "***")
        return text

    def _warn_refused(self, refused: list[str]) -> None:
        new = [k for k in refused if k not in self._refused_warned]
        if new:
            self._refused_warned.update(new)
            _log.warning(
                "provider %r: ignoring llm_params %s: pes-agent sets these itself",
                self.name,
                ", ".join(f"`{k}`" for k in new),
            )
