"""A scripted OpenAI-compatible HTTP server on loopback, for tests and benchmarks.

It speaks real HTTP/1.1 (keep-alive, Content-Length or chunked bodies) on asyncio streams, so the
``openai`` client, its connection pool, timeouts and status handling are exercised exactly as against
a real endpoint, with no dependency beyond the standard library. Each chat request takes the next
scripted action (``FakeReply``, ``FakeError``, ``FakeHang``, ``FakeMalformed``, ``FakeDisconnect``),
then asks ``handler``; every request is recorded. ``"stream": true`` requests get server-sent events.
``/v1/embeddings`` answers each input with a deterministic vector (``embed``: by default words
hashed into dimensions, ``fake_embeddings``), after the scripted ``embedding_actions`` (failures to
replay) are used up; its requests are counted apart (``embedding_requests``).
``mimic`` picks whose validation the fake applies before its script, so the structured-output
dialects can be tested without the real servers: ``"openai"`` refuses llama.cpp's own keys
(``grammar``, ``cache_prompt``) with HTTP 400, as OpenAI refuses an unrecognized argument;
``"llama-cpp-python"`` takes only ``text`` and ``json_object`` as ``response_format`` (the schema
beside it; anything else is a validation error served as HTTP 500) and honours ``grammar``. A fake
cannot decode under a grammar, so it answers a grammar whose ``root`` is one string literal (what a
dialect probe sends) with that literal, taking no script entry; any other grammar takes the next
entry, as a model under it would reply. ``ignores`` names body keys the fake does not know, as
Ollama's and vLLM's servers ignore ``grammar``: they reach neither the mimic nor the script's
handler (the recorded request keeps them).

    async with FakeOpenAIServer(replies=["hello", FakeError(status=429)]) as server:
        provider = OpenAIProvider("fake", ProviderConfig(base_url=server.base_url, ...))
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from pes_agent.testing._http import (
    RecordedRequest,
    error_body,
    json_bytes,
    send,
    send_error,
    send_event_stream,
    wants_keep_alive,
)
from pes_agent.testing._server import FakeServer, Handler
from pes_agent.testing.fake_actions import (
    ActionLike,
    FakeAction,
    FakeDisconnect,
    FakeError,
    FakeHang,
    FakeMalformed,
    FakeReply,
)
from pes_agent.testing.fake_embeddings import word_vector

__all__ = [
    "FakeAction",
    "FakeDisconnect",
    "FakeError",
    "FakeHang",
    "FakeMalformed",
    "FakeOpenAIServer",
    "FakeReply",
    "Handler",
    "Mimic",
    "RecordedRequest",
]


Mimic = Literal["openai", "llama-cpp-python"]

_OPENAI_REFUSES = ("grammar", "cache_prompt")
"""llama.cpp's own request keys, which OpenAI's API refuses as unrecognized arguments."""
_ONE_LITERAL = re.compile(r'^root ::= "((?:[^"\\]|\\.)*)"\s*$')


class FakeOpenAIServer(FakeServer):
    """Loopback-only fake of ``/v1/chat/completions`` and ``/v1/models``.

    Script entries are used in order, one per chat request; once they run out ``handler`` (if given)
    decides, else the request fails with 400 ``fake_script_exhausted``. Plain strings are replies.
    A request the mimicked server would refuse (``mimic``) is refused before the script is consulted,
    as the real one validates before generating: it is recorded but takes no entry.
    """

    label = "FakeOpenAIServer"

    def __init__(
        self,
        replies: Iterable[ActionLike] = (),
        *,
        handler: Handler | None = None,
        latency_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Iterable[str] = ("fake-model",),
        backlog: int = 2048,
        record: bool = True,
        mimic: Mimic = "openai",
        embed: Callable[[str], Sequence[float]] = word_vector,
        embedding_models: Iterable[str] = ("fake-embedding",),
        embedding_actions: Iterable[FakeAction] = (),
        ignores: Iterable[str] = (),
    ) -> None:
        super().__init__(
            replies,
            handler=handler,
            latency_s=latency_s,
            host=host,
            port=port,
            backlog=backlog,
            record=record,
        )
        self.mimic = mimic
        self.ignores = frozenset(ignores)
        """Body keys this server does not know and drops before it answers (see the module's text)."""
        self.models = tuple(models)
        self.embed = embed
        """Text to vector, for ``/v1/embeddings`` (deterministic: the same text, the same vector)."""
        self.embedding_models = tuple(embedding_models)
        """Models ``/v1/embeddings`` knows; any other is a 404, as OpenAI answers an unknown model."""
        self.embedding_actions = list(embedding_actions)
        """Taken in order, one per embeddings request, before the vectors are answered
        (``FakeError``, ``FakeHang``, ``FakeDisconnect``, ``FakeMalformed``)."""

    @property
    def base_url(self) -> str:
        """What a provider's ``base_url`` should be: ``http://127.0.0.1:PORT/v1``."""
        return f"{self.root_url}/v1"

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of the embeddings requests, in arrival order."""
        return [r.json for r in self.requests if r.path.split("?", 1)[0].rstrip("/").endswith("/embeddings")]

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of the chat-completion requests, in arrival order."""
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]

    # -- HTTP ------------------------------------------------------------------------------------

    async def _answer(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection must be closed afterwards."""
        keep_alive = wants_keep_alive(request)
        route = request.path.split("?", 1)[0].rstrip("/")
        if (request.method, route) == ("GET", "/v1/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
            await send(writer, 200, json_bytes({"object": "list", "data": data}), keep_alive=keep_alive)
            return keep_alive
        body = request.body
        if (request.method, route) == ("POST", "/v1/embeddings") and isinstance(body, dict):
            action = self.embedding_actions.pop(0) if self.embedding_actions else FakeReply()
            return await self._perform(action, body, writer, keep_alive, embeddings=True)
        if (request.method, route) != ("POST", "/v1/chat/completions") or not isinstance(body, dict):
            status = 404 if route != "/v1/chat/completions" else 405 if request.method != "POST" else 400
            problem = "the body is not a JSON object" if status == 400 else "no such route"
            await send_error(writer, status, f"{request.method} {route}: {problem}", keep_alive)
            return keep_alive
        body = {k: v for k, v in body.items() if k not in self.ignores}
        refusal = self._refusal(body)
        if refusal is not None:
            self.refused += 1
            await send(writer, refusal[0], refusal[1], keep_alive=keep_alive)
            return keep_alive
        forced = _forced_reply(body.get("grammar")) if self.mimic == "llama-cpp-python" else None
        if forced is not None:
            return await self._perform(FakeReply(text=forced), body, writer, keep_alive)
        return await self._act(body, writer, keep_alive)

    def _refusal(self, body: dict[str, Any]) -> tuple[int, bytes] | None:
        """What the mimicked server answers a body it does not accept: OpenAI's 400 for an argument
        it does not know, llama-cpp-python 0.3's 500 for a ``response_format`` it does not allow."""
        if self.mimic == "openai":
            unknown = next((k for k in _OPENAI_REFUSES if k in body), None)
            if unknown is None:
                return None
            message = f"Unrecognized request argument supplied: {unknown}"
            error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
            return 400, json_bytes({"error": error})
        response_format = body.get("response_format")
        kind = response_format.get("type") if isinstance(response_format, dict) else None
        if response_format is None or kind in ("text", "json_object"):
            return None
        problem = {
            "type": "literal_error",
            "loc": ("body", "response_format", "type"),
            "msg": "Input should be 'text' or 'json_object'",
            "input": kind,
            "ctx": {"expected": "'text' or 'json_object'"},
        }
        message = (
            f'1 validation error:\n  {problem!r}\n\n  File "llama_cpp/server/app.py", line 376, in '
            "create_chat_completion\n    POST /v1/chat/completions"
        )
        error = {"message": message, "type": "internal_server_error", "param": None, "code": None}
        return 500, json_bytes({"error": error})

    async def _reply(
        self,
        reply: FakeReply,
        body: dict[str, Any],
        writer: asyncio.StreamWriter,
        keep_alive: bool,
        *,
        embeddings: bool = False,
        **_: Any,
    ) -> bool:
        if embeddings:
            status, payload = self._embeddings(body)
            await send(writer, status, payload, keep_alive=keep_alive)
            return True
        if body.get("stream") is True:
            return await self._stream(reply, body, writer, keep_alive)
        await send(writer, 200, json_bytes(self._completion(reply, body)), keep_alive=keep_alive)
        return True

    def _embeddings(self, body: dict[str, Any]) -> tuple[int, bytes]:
        model = body.get("model")
        if model not in self.embedding_models:
            return 404, error_body(
                f"The model `{model}` does not exist or you do not have access to it.", "model_not_found"
            )
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 400, error_body("`input` must be a string or a list of strings", "invalid_input")
        data = [
            {"object": "embedding", "index": i, "embedding": list(self.embed(t))} for i, t in enumerate(texts)
        ]
        usage = {"prompt_tokens": sum(len(t.split()) for t in texts)}
        return 200, json_bytes(
            {
                "object": "list",
                "data": data,
                "model": model,
                "usage": {**usage, "total_tokens": usage["prompt_tokens"]},
            }
        )

    def _error_payload(
        self, status: int, message: str, body: Any = None, *, code: str = "fake_error"
    ) -> bytes:
        if body is not None:
            return body.encode() if isinstance(body, str) else json_bytes(body)
        return error_body(message, code)

    def _completion(self, reply: FakeReply, body: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.reasoning_content is not None:
            message["reasoning_content"] = reply.reasoning_content
        out: dict[str, Any] = {
            **self._envelope(reply, body, "chat.completion"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}
            ],
        }
        if reply.usage is not None:
            out["usage"] = _usage(reply.usage)
        return out

    def _envelope(self, reply: FakeReply, body: dict[str, Any], kind: str) -> dict[str, Any]:
        model = reply.model or body.get("model") or "fake-model"
        return {
            "id": f"chatcmpl-fake-{self._next_id()}",
            "object": kind,
            "created": int(time.time()),
            "model": model,
        }

    async def _stream(
        self, reply: FakeReply, body: dict[str, Any], writer: asyncio.StreamWriter, keep_alive: bool
    ) -> bool:
        """Server-sent events: role, reasoning and content deltas, the finish reason, usage, [DONE]."""
        envelope = self._envelope(reply, body, "chat.completion.chunk")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**envelope, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        step = max(1, reply.chunk_chars)
        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        reasoning = reply.reasoning_content or ""
        events += [
            chunk({"reasoning_content": reasoning[i : i + step]}) for i in range(0, len(reasoning), step)
        ]
        events += [chunk({"content": reply.text[i : i + step]}) for i in range(0, len(reply.text), step)]
        events.append(chunk({}, reply.finish_reason))
        options = body.get("stream_options")
        if reply.usage is not None and isinstance(options, dict) and options.get("include_usage"):
            events.append({**envelope, "choices": [], "usage": _usage(reply.usage)})
        frames = [b"data: " + json_bytes(event) + b"\n\n" for event in events] + [b"data: [DONE]\n\n"]
        return await send_event_stream(writer, frames, keep_alive=keep_alive, cut_after=reply.cut_after)


# -- helpers ---------------------------------------------------------------------------------------


def _forced_reply(grammar: Any) -> str | None:
    """The one reply a grammar of a single string literal allows, else None."""
    match = _ONE_LITERAL.match(grammar) if isinstance(grammar, str) else None
    return re.sub(r"\\(.)", r"\1", match.group(1)) if match else None


def _usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    out = {"prompt_tokens": 0, "completion_tokens": 0, **usage}
    out.setdefault("total_tokens", out["prompt_tokens"] + out["completion_tokens"])
    return out
