"""A scripted OpenAI-compatible HTTP server on loopback, for tests and benchmarks.

It speaks real HTTP/1.1 (keep-alive, Content-Length or chunked bodies) on asyncio streams, so the
``openai`` client, its connection pool, timeouts and status handling are exercised exactly as against
a real endpoint, with no dependency beyond the standard library. Each chat request takes the next
scripted action (``FakeReply``, ``FakeError``, ``FakeHang``, ``FakeMalformed``, ``FakeDisconnect``),
then asks ``handler``; every request is recorded. ``"stream": true`` requests get server-sent events.
``mimic="llama-cpp-python"`` validates ``response_format`` as that server does (only ``text`` and
``json_object``, the schema beside it; anything else is a validation error served as HTTP 500), so the
structured-output dialects can be tested without it.

    async with FakeOpenAIServer(replies=["hello", FakeError(status=429)]) as server:
        provider = OpenAIProvider("fake", ProviderConfig(base_url=server.base_url, ...))
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import suppress
from types import TracebackType
from typing import Any, Literal, Self

from pes_agent.errors import InvalidInputError
from pes_agent.testing._http import (
    RecordedRequest,
    _Malformed,
    chunked,
    error_body,
    json_bytes,
    read_request,
    response_head,
    send,
    send_error,
    wants_keep_alive,
)
from pes_agent.testing.fake_actions import (
    ActionLike,
    FakeAction,
    FakeDisconnect,
    FakeError,
    FakeHang,
    FakeMalformed,
    FakeReply,
)

__all__ = [
    "FakeAction",
    "FakeDisconnect",
    "FakeError",
    "FakeHang",
    "FakeMalformed",
    "FakeOpenAIServer",
    "FakeReply",
    "Mimic",
    "RecordedRequest",
]


Handler = Callable[[dict[str, Any]], ActionLike | Awaitable[ActionLike]]
Mimic = Literal["openai", "llama-cpp-python"]


class FakeOpenAIServer:
    """Loopback-only fake of ``/v1/chat/completions`` and ``/v1/models``.

    Script entries are used in order, one per chat request; once they run out ``handler`` (if given)
    decides, else the request fails with 400 ``fake_script_exhausted``. Plain strings are replies.
    A request the mimicked server would refuse (``mimic``) is refused before the script is consulted,
    as the real one validates before generating: it is recorded but takes no entry.
    """

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
    ) -> None:
        _require_loopback(host)
        self.mimic = mimic
        self.refused = 0
        """Requests refused as the mimicked server would (see ``mimic``)."""
        self._script: list[ActionLike] = list(replies)
        self._served = 0
        self.handler = handler
        self.latency_s = latency_s
        self.host = host
        self._port = port
        self.models = tuple(models)
        self._backlog = backlog
        self.record = record
        """False keeps memory flat in long benchmarks: requests are counted, not kept."""
        self.requests: list[RecordedRequest] = []
        self.request_count = 0
        self.unscripted = 0
        """Chat requests that found neither a script entry nor a handler."""
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._ids = 0

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> Self:
        self._server = await asyncio.start_server(
            self._serve_connection, self.host, self._port, backlog=self._backlog
        )
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await server.wait_closed()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """What a provider's ``base_url`` should be: ``http://127.0.0.1:PORT/v1``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._port}/v1"

    # -- script ----------------------------------------------------------------------------------

    @property
    def remaining(self) -> int:
        return len(self._script) - self._served

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of the chat-completion requests, in arrival order."""
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]

    def add(self, *replies: ActionLike) -> None:
        """Append entries to the script (between phases of a test)."""
        self._script.extend(replies)

    def assert_complete(self) -> None:
        """Fail when scripted entries were left unused or requests arrived past the script."""
        if self.remaining or self.unscripted:
            raise AssertionError(
                f"FakeOpenAIServer: {self.remaining} scripted entries unused, "
                f"{self.unscripted} requests arrived with no script entry or handler left"
            )

    async def _next_action(self, body: dict[str, Any]) -> FakeAction | None:
        if self._served < len(self._script):
            entry = self._script[self._served]
            self._served += 1
        elif self.handler is not None:
            result = self.handler(body)
            entry = await result if inspect.isawaitable(result) else result
        else:
            self.unscripted += 1
            return None
        return FakeReply(text=entry) if isinstance(entry, str) else entry

    # -- HTTP ------------------------------------------------------------------------------------

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while True:
                request = await read_request(reader)
                if request is None or not await self._answer(request, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, _Malformed):
            pass
        except asyncio.CancelledError:
            # close() cancels open connections; Python 3.11's stream callback would log a cancelled
            # task as an error, so end quietly instead.
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection must be closed afterwards."""
        self.request_count += 1
        if self.record:
            self.requests.append(request)
        keep_alive = wants_keep_alive(request)
        route = request.path.split("?", 1)[0].rstrip("/")
        if (request.method, route) == ("GET", "/v1/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
            await send(writer, 200, json_bytes({"object": "list", "data": data}), keep_alive=keep_alive)
            return keep_alive
        body = request.body
        if (request.method, route) != ("POST", "/v1/chat/completions") or not isinstance(body, dict):
            status = 404 if route != "/v1/chat/completions" else 405 if request.method != "POST" else 400
            problem = "the body is not a JSON object" if status == 400 else "no such route"
            await send_error(writer, status, f"{request.method} {route}: {problem}", keep_alive)
            return keep_alive
        refusal = self._refusal(body)
        if refusal is not None:
            self.refused += 1
            await send(writer, 500, refusal, keep_alive=keep_alive)
            return keep_alive
        action = await self._next_action(body)
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        return await self._perform(action, body, writer, keep_alive)

    def _refusal(self, body: dict[str, Any]) -> bytes | None:
        """llama-cpp-python 0.3's answer to a ``response_format`` its request model does not allow."""
        if self.mimic != "llama-cpp-python":
            return None
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
            f"1 validation error:\n  {problem!r}\n\n  File \"llama_cpp/server/app.py\", line 376, in "
            "create_chat_completion\n    POST /v1/chat/completions"
        )
        error = {"message": message, "type": "internal_server_error", "param": None, "code": None}
        return json_bytes({"error": error})

    async def _perform(
        self, action: FakeAction | None, body: dict[str, Any], writer: asyncio.StreamWriter, keep_alive: bool
    ) -> bool:
        if action is None:
            message = f"FakeOpenAIServer: no scripted reply left (request #{self.request_count})"
            await send_error(writer, 400, message, keep_alive, code="fake_script_exhausted")
        elif isinstance(action, FakeReply):
            if body.get("stream") is True:
                await self._stream(action, body, writer, keep_alive)
            else:
                await send(writer, 200, json_bytes(self._completion(action, body)), keep_alive=keep_alive)
        elif isinstance(action, FakeError):
            await send(
                writer, action.status, _error_payload(action), headers=action.headers, keep_alive=keep_alive
            )
        elif isinstance(action, FakeMalformed):
            payload = action.body.encode()
            await send(
                writer, action.status, payload, content_type=action.content_type, keep_alive=keep_alive
            )
        elif isinstance(action, FakeHang):
            await asyncio.sleep(action.seconds)
            return False
        else:
            return False
        return keep_alive

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
        self._ids += 1
        model = reply.model or body.get("model") or "fake-model"
        return {
            "id": f"chatcmpl-fake-{self._ids}",
            "object": kind,
            "created": int(time.time()),
            "model": model,
        }

    async def _stream(
        self, reply: FakeReply, body: dict[str, Any], writer: asyncio.StreamWriter, keep_alive: bool
    ) -> None:
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
        head = response_head(
            200,
            {
                "Content-Type": "text/event-stream",
                "Transfer-Encoding": "chunked",
                "Cache-Control": "no-cache",
            },
            keep_alive,
        )
        writer.write(head)
        for event in events:
            writer.write(chunked(b"data: " + json_bytes(event) + b"\n\n"))
            await writer.drain()
        writer.write(chunked(b"data: [DONE]\n\n") + b"0\r\n\r\n")
        await writer.drain()


# -- helpers ---------------------------------------------------------------------------------------


def _require_loopback(host: str) -> None:
    """Tests must never open a port others can reach: only loopback addresses are accepted."""
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise InvalidInputError(
            f"FakeOpenAIServer binds only to loopback, not {host!r}; use `host='127.0.0.1'` (the default)"
        )


def _error_payload(error: FakeError) -> bytes:
    if error.body is None:
        return error_body(f"fake error {error.status}", "fake_error")
    return error.body.encode() if isinstance(error.body, str) else json_bytes(error.body)


def _usage(usage: Mapping[str, int]) -> dict[str, int]:
    out = {"prompt_tokens": 0, "completion_tokens": 0, **usage}
    out.setdefault("total_tokens", out["prompt_tokens"] + out["completion_tokens"])
    return out
