"""The ``gemini`` adapter: Gemini through the official ``google-genai`` SDK (the ``gemini`` extra).

``client.aio.models.generate_content`` (or ``generate_content_stream`` when tokens are listened
for) with the contents and config built by ``gemini_wire.build_generate_request`` (pure); the
response objects are read by ``gemini_wire.GeminiReader``. The SDK's own retries are off
(``HttpRetryOptions(attempts=1)``, which also turns off its implicit retry of connection errors);
clients, keys, retries and errors are ``sdk_adapter``'s, shared with the ``anthropic`` adapter.
The key is sent as the ``x-goog-api-key`` header, never in the URL.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from pes_agent.errors import ProviderError
from pes_agent.llm.gemini_wire import GeminiReader, build_generate_request
from pes_agent.llm.repetition import RepetitionGuard, cut_repeat
from pes_agent.llm.sdk_adapter import SdkAdapter
from pes_agent.llm.streaming import Completion
from pes_agent.llm.types import CallOptions, LLMReply, PromptRequest, TokenSink, Usage

if TYPE_CHECKING:
    from google.genai import Client

__all__ = ["GeminiProvider"]


class GeminiProvider(SdkAdapter["Client"]):
    """Provider for the Gemini API (``generateContent``); safe to share among concurrent runs."""

    adapter = "gemini"
    sdk_module = "google.genai"
    default_base_url = "https://generativelanguage.googleapis.com"

    async def complete(
        self, request: PromptRequest, options: CallOptions, *, on_token: TokenSink | None = None
    ) -> LLMReply:
        """One ``generateContent`` call; with ``on_token``, streamed and reported piece by piece."""
        model = self._model(options.model)
        timeout = self._timeout(options)
        contents, settings, refused = build_generate_request(request, options, self.config, timeout_s=timeout)
        self._warn_refused(refused)
        generation = self._typed(settings, model)
        call = partial(self._send, model, contents, generation)
        send: Callable[[], Awaitable[Completion]] = (
            call
            if on_token is None
            else partial(
                self._send_streamed,
                model,
                contents,
                generation,
                on_token,
                timeout,
                free=request.phase == "synthesis",
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

    def _new_client(self, api_key: str) -> Client:
        from google.genai import Client, types

        options = types.HttpOptions(
            base_url=self.config.base_url or None,
            timeout=max(1, round(self.config.timeout_s * 1000)),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        return Client(api_key=api_key, vertexai=False, http_options=options)

    async def _close_client(self, client: Client) -> None:
        await client.aio.aclose()

    def _path(self, model: str, *, stream: bool) -> str:
        verb = "streamGenerateContent" if stream else "generateContent"
        return f"/models/{model}:{verb}"  # below the SDK's API version (v1 or v1beta)

    def _typed(self, settings: dict[str, Any], model: str) -> Any:
        """The SDK's ``GenerateContentConfig``: sent in the API's own spelling (camelCase all the way
        down, nested settings included), and ``llm_params`` it does not know refused before sending."""
        from google.genai import types

        try:
            return types.GenerateContentConfig.model_validate(settings)
        except ValueError as exc:
            problem = str(exc).splitlines()[1:2] or ["invalid"]
            raise ProviderError(
                f"{self._where(model)}: the request's settings were refused by google-genai before "
                f"sending ({problem[0].strip()}); check `llm_params`",
                provider=self.name,
                retryable=False,
            ) from None

    async def _send(self, model: str, contents: list[dict[str, Any]], generation: Any) -> Completion:
        try:
            response = await self._client().aio.models.generate_content(
                model=model, contents=cast(Any, contents), config=generation
            )
        except ValueError as exc:  # a body the SDK cannot read
            raise self._unusable(model, _first_line(exc)) from None
        reader = GeminiReader()
        reader.take(response)
        if not reader.replied:
            raise self._unusable(model, "has no `candidates` and no `usageMetadata`")
        return reader.finish()

    async def _send_streamed(
        self,
        model: str,
        contents: list[dict[str, Any]],
        generation: Any,
        on_token: TokenSink,
        timeout: float,
        *,
        free: bool = False,
    ) -> Completion:
        """``free``: the answer, prose read through a ``RepetitionGuard`` (stopped at its first repeat)."""
        try:
            stream = await self._client().aio.models.generate_content_stream(
                model=model, contents=cast(Any, contents), config=generation
            )
        except ValueError as exc:
            raise self._unusable(model, _first_line(exc), stream=True) from None
        reader = GeminiReader(on_token)
        guard = RepetitionGuard() if free else None
        cut: Exception | None = None
        try:
            async for chunk in stream:
                added = reader.take(chunk)
                if guard is not None and added and guard.feed(added):
                    break
        except ValueError as exc:  # a chunk that is not JSON
            raise self._unusable(model, f"streamed a chunk that {_first_line(exc)}", stream=True) from None
        except Exception as exc:  # the SDK's error, or the HTTP client's (a connection lost mid-stream)
            if not reader.received or not self._is_sdk_error(exc):
                raise  # nothing delivered yet: the retry layer may try again
            cut = exc
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        if cut is not None:
            raise self._error(cut, model=model, timeout=timeout, streamed=reader.received, stream=True)
        if not reader.replied:
            raise self._unusable(model, "streamed no chunk with `candidates`", stream=True)
        return reader.finish()


def _first_line(exc: BaseException) -> str:
    """What the SDK could not read, in a few words (its first line, without the values it echoes)."""
    first = (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"google-genai cannot read ({first[:120]})"
