"""The ``llamacpp`` adapter: a GGUF model run in this process by llama-cpp-python, no server to start.

Choices, and why:

- ``llama_cpp`` is an optional extra (``pip install -e '.[local]'``), so it is imported only when the
  model is loaded. Building the provider checks, without importing it, that the extra is installed
  and that the GGUF file exists: ``pes-agent validate`` and the first run fail early with the command
  that fixes it instead of failing mid-run.
- The model is loaded once per provider instance, on the first call, under a lock: loading reads the
  whole file and allocates the context, and two runs starting together must not do it twice.
- Generation runs in a worker thread (``asyncio.to_thread``) so the event loop keeps serving other
  runs, and one generation at a time per model: a llama.cpp context is not thread-safe. Only
  ``threading`` primitives are held, so one provider serves any event loop.
- When a request carries its reply's JSON Schema and the provider sets ``structured_output``, decoding
  is constrained to it (llama.cpp turns the schema into a grammar): a model of 135M parameters cannot
  write a well-formed plan or tool call on its own, but every token it may pick under the grammar keeps
  the reply valid. Lists and strings are bounded too (``llamacpp_schema``) so the reply also *ends*
  within the cap on reply tokens: small models otherwise ramble until it cuts them off.
- With someone listening for tokens, generation streams: llama-cpp-python yields OpenAI-shaped
  chunks in the worker thread, read by the OpenAI adapter's ``ChunkReader``, and each piece is handed
  to the event loop as it is decoded (the stream reports no usage: counted as an estimate).
- A call that times out or is cancelled while it waits for the model never starts generating. One
  already generating runs to its end in the background (llama-cpp-python's chat API has no way to
  stop it), which the reply cap keeps short.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from pes_agent.config import ProviderConfig
from pes_agent.errors import ProviderError
from pes_agent.llm.llamacpp_load import (
    INSTALL_HINT,
    ChatModel,
    Loader,
    LoadSettings,
    load_llama,
    locate_model,
    require_llama_cpp,
)
from pes_agent.llm.repetition import RepetitionGuard
from pes_agent.llm.reply_grammar import DEFAULT_MAX_TOKENS, check_rule_names, grammar_for
from pes_agent.llm.streaming import ChunkReader, Completion, delta_text
from pes_agent.llm.types import CallOptions, LLMReply, PromptRequest, TokenKind, TokenSink, Usage

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "LlamaCppProvider",
    "check_rule_names",
    "generation_kwargs",
    "grammar_for",
    "reply_from_completion",
]

_log = logging.getLogger("pes_agent")

SAMPLING_PARAMS = frozenset(
    {"top_p", "top_k", "min_p", "repeat_penalty", "presence_penalty", "frequency_penalty", "seed", "stop"}
)
"""``llm_params`` keys passed to llama.cpp; others are ignored with a warning (they would raise)."""


def generation_kwargs(
    request: PromptRequest, options: CallOptions, config: ProviderConfig
) -> tuple[dict[str, Any], list[str]]:
    """Keyword arguments of one ``create_chat_completion`` call, and the ``llm_params`` keys ignored.

    Settings resolve call options → provider config → defaults; ``llm_params`` may tune sampling
    (``SAMPLING_PARAMS``) but never the messages, the cap or the reply format.
    """
    temperature = options.temperature if options.temperature is not None else config.temperature
    max_tokens = options.max_tokens if options.max_tokens is not None else config.max_tokens
    kwargs: dict[str, Any] = {
        "messages": [m.to_dict() for m in request.messages],
        "temperature": 0.0 if temperature is None else temperature,
        "max_tokens": max_tokens or DEFAULT_MAX_TOKENS,
    }
    if config.top_p is not None:
        kwargs["top_p"] = config.top_p
    if config.seed is not None:
        kwargs["seed"] = config.seed
    ignored = sorted(k for k in options.extra if k not in SAMPLING_PARAMS)
    kwargs.update({k: v for k, v in options.extra.items() if k in SAMPLING_PARAMS})
    if config.constrains_replies and request.response_schema is not None:
        kwargs["grammar"] = grammar_for(request.response_schema, request.phase, kwargs["max_tokens"])
    return kwargs, ignored


def reply_from_completion(completion: Any, model: str) -> LLMReply:
    """An ``LLMReply`` from llama-cpp-python's OpenAI-shaped completion dict."""
    try:
        choice = completion["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ProviderError(
            f"llama.cpp returned a completion without a message: {str(completion)[:200]}"
        ) from None
    raw_usage = completion.get("usage") or {}
    usage = (
        Usage(
            prompt_tokens=int(raw_usage["prompt_tokens"]),
            completion_tokens=int(raw_usage["completion_tokens"]),
        )
        if "prompt_tokens" in raw_usage and "completion_tokens" in raw_usage
        else Usage(prompt_tokens=0, completion_tokens=0, source="estimate")
    )
    return LLMReply(text=text, finish_reason=choice.get("finish_reason") or "stop", usage=usage, model=model)


def _on_loop(sink: TokenSink) -> TokenSink:
    """A sink the worker thread may call: each piece is passed to ``sink`` on the caller's loop, in
    order, before the call's own result (which comes back through the same loop queue)."""
    loop = asyncio.get_running_loop()

    def deliver(kind: TokenKind, text: str) -> None:
        loop.call_soon_threadsafe(sink, kind, text)

    return deliver


def _streamed_reply(completion: Completion, request: PromptRequest, model: str) -> LLMReply:
    """llama.cpp's stream carries no usage: counted as the non-streamed reply would not need to be,
    by characters / 4, and labelled an estimate."""
    usage = completion.usage or Usage(
        prompt_tokens=sum(len(m.content) for m in request.messages) // 4,
        completion_tokens=(len(completion.text) + len(completion.thinking or "")) // 4,
        source="estimate",
    )
    return LLMReply(
        text=completion.text,
        thinking=completion.thinking,
        finish_reason=completion.finish_reason if completion.finish_reason != "unknown" else "stop",
        usage=usage,
        model=model,
    )


def _discard(kind: TokenKind, text: str) -> None:
    """The token sink of a stream nobody listens to (free text is streamed for its guard)."""


class LlamaCppProvider:
    """Provider for a local GGUF model; safe to share among concurrent runs and event loops.

    ``loader`` builds the model from ``LoadSettings`` (default: llama-cpp-python). Passing one skips
    the check that llama-cpp-python is installed, which is how tests run without it.
    """

    def __init__(self, name: str, config: ProviderConfig, *, loader: Loader | None = None) -> None:
        if loader is None:
            require_llama_cpp(name)
        self.name = name
        self.config = config
        self.settings = LoadSettings(
            model_path=locate_model(name, config),
            n_ctx=config.n_ctx,
            n_threads=config.n_threads,
            seed=config.seed,
        )
        self.model_name = config.model or self.settings.model_path.stem
        self._loader = loader or load_llama
        self._model: ChatModel | None = None
        self._lock = threading.Lock()  # held while loading, generating and closing
        self._warned: set[str] = set()

    def __repr__(self) -> str:
        return f"LlamaCppProvider(name={self.name!r}, model_path={str(self.settings.model_path)!r})"

    async def complete(
        self, request: PromptRequest, options: CallOptions, *, on_token: TokenSink | None = None
    ) -> LLMReply:
        """One generation; with ``on_token``, streamed: each piece is handed to the event loop as the
        worker thread decodes it, and all of them have arrived by the time this returns."""
        kwargs, ignored = generation_kwargs(request, options, self.config)
        self._warn_ignored(ignored)
        timeout = options.timeout_s if options.timeout_s is not None else self.config.timeout_s
        stop = threading.Event()
        generate: Callable[[], Any] = partial(self._generate, kwargs, stop)
        answer = request.phase == "synthesis"  # prose, read as it comes: see `_generate_streamed`
        if on_token is not None or answer:
            sink = _on_loop(on_token) if on_token is not None else _discard
            generate = partial(self._generate_streamed, kwargs, stop, sink, guard=answer)
        try:
            async with asyncio.timeout(timeout):
                completion = await asyncio.to_thread(generate)
        except TimeoutError:
            raise ProviderError(
                f"provider {self.name!r}: no reply from the local model within {timeout:g} s; raise "
                f"`providers.{self.name}.timeout_s` or lower `max_tokens`",
                provider=self.name,
                retryable=True,
            ) from None
        finally:
            stop.set()  # a call still waiting for the model when its caller gave up never starts
        if isinstance(completion, Completion):
            return _streamed_reply(completion, request, self.model_name)
        return reply_from_completion(completion, self.model_name)

    async def aclose(self) -> None:
        """Free the model (after any generation in progress); a later call loads it again."""
        await asyncio.to_thread(self._unload)

    # -- worker-thread side ---------------------------------------------------------------------

    def _generate(self, kwargs: Mapping[str, Any], stop: threading.Event) -> Any:
        with self._lock:
            if stop.is_set():  # gave up while waiting for the model: do not start
                return {"choices": [{"message": {"content": ""}, "finish_reason": "cancelled"}]}
            model = self._loaded()
            try:
                return model.create_chat_completion(**kwargs)
            except Exception as exc:  # llama.cpp raises ValueError/RuntimeError with useful text
                raise ProviderError(self._describe(exc), provider=self.name) from exc

    def _generate_streamed(
        self, kwargs: Mapping[str, Any], stop: threading.Event, on_token: TokenSink, *, guard: bool = False
    ) -> Any:
        """llama-cpp-python streams OpenAI-shaped chunks, read by the OpenAI adapter's own reader.

        With ``guard`` (the answer, prose) the text also passes a ``RepetitionGuard``: at its first
        repeat the stream is closed, which stops generation, and the reply ends before the repeat
        (finish reason ``repetition``). Only the answer: other replies are JSON, whose lines repeat
        by design, free-text plans included.
        """
        with self._lock:
            if stop.is_set():
                return {"choices": [{"message": {"content": ""}, "finish_reason": "cancelled"}]}
            model = self._loaded()
            reader = ChunkReader(on_token)
            repeats = RepetitionGuard() if guard else None
            try:
                stream = model.create_chat_completion(**kwargs, stream=True)
                for chunk in stream:
                    reader.take(chunk)
                    if repeats is not None and repeats.feed(delta_text(chunk)):
                        getattr(stream, "close", lambda: None)()
                        break
            except Exception as exc:
                raise ProviderError(self._describe(exc), provider=self.name) from exc
            completion = reader.finish()
            if repeats is not None and repeats.repeated:
                return replace(completion, text=repeats.text, finish_reason="repetition")
            return completion

    def _loaded(self) -> ChatModel:
        if self._model is None:
            try:
                self._model = self._loader(self.settings)
            except Exception as exc:
                raise ProviderError(
                    f"provider {self.name!r}: cannot load {str(self.settings.model_path)!r}: {exc}. Check "
                    f"that it is a GGUF model llama.cpp supports; reinstall with `{INSTALL_HINT}`",
                    provider=self.name,
                ) from exc
            _log.info("llamacpp provider %r loaded %s", self.name, self.settings.model_path)
        return self._model

    def _unload(self) -> None:
        with self._lock:
            model, self._model = self._model, None
        close = getattr(model, "close", None)
        if callable(close):
            close()

    def _describe(self, exc: Exception) -> str:
        text = str(exc) or type(exc).__name__
        hint = ""
        if "context window" in text or "exceed context" in text:
            hint = f"; raise `providers.{self.name}.n_ctx` (now {self.config.n_ctx}) or shorten the history"
        return f"provider {self.name!r}: llama.cpp failed: {text}{hint}"

    def _warn_ignored(self, ignored: list[str]) -> None:
        fresh = [k for k in ignored if k not in self._warned]
        if fresh:
            self._warned.update(fresh)
            _log.warning(
                "llamacpp provider %r ignores llm_params %s; it passes only %s",
                self.name,
                ", ".join(fresh),
                ", ".join(sorted(SAMPLING_PARAMS)),
            )
