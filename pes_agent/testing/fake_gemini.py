"""A scripted Gemini API on loopback: ``models/{model}:generateContent`` and ``:streamGenerateContent``.

It plays the same scripted actions as ``FakeOpenAIServer`` (``FakeReply``, ``FakeError``,
``FakeHang``, ``FakeMalformed``, ``FakeDisconnect``; strings are replies), answering in the Gemini
API's own JSON (camelCase), so the official ``google-genai`` SDK — and any code built on it — runs
against it as against the real endpoint:

- a reply is ``{"candidates": [{"content": {"role": "model", "parts": [...]}, "finishReason"}],
  "usageMetadata", "modelVersion", "responseId"}``; ``reasoning_content`` becomes a part marked
  ``"thought": true`` ahead of the answer's part;
- ``finish_reason`` ``stop`` is ``STOP``, ``length`` is ``MAX_TOKENS``; any other value is sent
  upper-cased (``SAFETY``);
- ``usage`` may use the API's names (``promptTokenCount``, ``cachedContentTokenCount``,
  ``thoughtsTokenCount``, ...) or OpenAI's (``prompt_tokens``/``completion_tokens``);
- ``:streamGenerateContent?alt=sse`` gets ``data:`` events, each a response holding the next piece of
  text, the last with the finish reason and the usage, as the API sends them;
- errors are ``{"error": {"code", "message", "status"}}``. A request without a key
  (``x-goog-api-key`` or ``?key=``) is refused with 403 ``PERMISSION_DENIED`` and one that is not
  JSON or has no ``contents`` with 400 ``INVALID_ARGUMENT``, recorded but taking no script entry.
  ``/v1`` and ``/v1beta`` are both served.

    async with FakeGeminiServer(["hello"]) as server:
        client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=server.base_url))
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pes_agent.testing._http import (
    RecordedRequest,
    json_bytes,
    send,
    send_event_stream,
    wants_keep_alive,
)
from pes_agent.testing._server import FakeServer
from pes_agent.testing.fake_actions import FakeReply

__all__ = ["FakeGeminiServer", "sent_key"]

_ROUTE = re.compile(
    r"^/(?P<version>v1|v1beta|v1alpha)/models/(?P<model>[^/:]+):(?P<verb>generateContent|streamGenerateContent)$"
)
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_OPENAI_USAGE = {"prompt_tokens": "promptTokenCount", "completion_tokens": "candidatesTokenCount"}


class FakeGeminiServer(FakeServer):
    """Loopback-only fake of the Gemini API's content generation; see the module docstring."""

    label = "FakeGeminiServer"

    @property
    def generate_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of the generation requests (whole or streamed), in arrival order."""
        return [r.json for r in self.requests if _ROUTE.match(urlsplit(r.path).path)]

    async def _answer(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> bool:
        keep_alive = wants_keep_alive(request)
        route = _ROUTE.match(urlsplit(request.path).path)
        if route is None or request.method != "POST":
            status = 404 if route is None else 405
            await self._refuse(writer, status, f"{request.method} {request.path}: no such route", keep_alive)
            return keep_alive
        problem = _refusal(request)
        if problem is not None:
            self.refused += 1
            await self._refuse(writer, *problem, keep_alive)
            return keep_alive
        stream = route["verb"] == "streamGenerateContent"
        return await self._act(request.json, writer, keep_alive, model=route["model"], stream=stream)

    async def _refuse(
        self, writer: asyncio.StreamWriter, status: int, message: str, keep_alive: bool
    ) -> None:
        await send(writer, status, self._error_payload(status, message), keep_alive=keep_alive)

    def _error_payload(
        self, status: int, message: str, body: Any = None, *, code: str = "fake_error"
    ) -> bytes:
        if body is not None:
            return body.encode() if isinstance(body, str) else json_bytes(body)
        kind = _STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
        return json_bytes({"error": {"code": status, "message": message, "status": kind}})

    async def _reply(
        self,
        reply: FakeReply,
        body: dict[str, Any],
        writer: asyncio.StreamWriter,
        keep_alive: bool,
        *,
        model: str = "fake-model",
        stream: bool = False,
        **_: Any,
    ) -> bool:
        envelope = {"modelVersion": reply.model or model, "responseId": f"fake-{self._next_id()}"}
        finish = {"stop": "STOP", "length": "MAX_TOKENS"}.get(
            reply.finish_reason, reply.finish_reason.upper()
        )
        if not stream:
            parts = _parts(reply.reasoning_content, thought=True) + _parts(reply.text, thought=False)
            payload = {
                "candidates": [_candidate(parts, finish)],
                "usageMetadata": _usage(reply.usage),
                **envelope,
            }
            await send(writer, 200, json_bytes(payload), keep_alive=keep_alive)
            return True
        step = max(1, reply.chunk_chars)
        pieces = [(t, True) for t in _split(reply.reasoning_content or "", step)]
        pieces += [(t, False) for t in _split(reply.text, step)] or [("", False)]
        frames: list[bytes] = []
        for index, (text, thought) in enumerate(pieces):
            last = index == len(pieces) - 1
            chunk: dict[str, Any] = {
                "candidates": [
                    _candidate(_parts(text, thought=thought) or [{"text": ""}], finish if last else None)
                ],
                **envelope,
            }
            if last:
                chunk["usageMetadata"] = _usage(reply.usage)
            frames.append(b"data: " + json_bytes(chunk) + b"\r\n\r\n")
        return await send_event_stream(writer, frames, keep_alive=keep_alive, cut_after=reply.cut_after)


def sent_key(request: RecordedRequest) -> str | None:
    """The key a request carried: the ``x-goog-api-key`` header, or the ``key`` query parameter."""
    key = request.headers.get("x-goog-api-key")
    if not key:
        key = next(iter(parse_qs(urlsplit(request.path).query).get("key", [])), None)
    return key or None


def _refusal(request: RecordedRequest) -> tuple[int, str] | None:
    if not sent_key(request):
        return 403, "Method doesn't allow unregistered callers (callers without established identity)."
    body = request.body
    if not isinstance(body, dict):
        return 400, "Invalid JSON payload received."
    if not body.get("contents"):
        return 400, "* GenerateContentRequest.contents: contents is not specified"
    return None


def _parts(text: str | None, *, thought: bool) -> list[dict[str, Any]]:
    if not text:
        return []
    return [{"text": text, "thought": True}] if thought else [{"text": text}]


def _candidate(parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return candidate


def _split(text: str, step: int) -> list[str]:
    return [text[i : i + step] for i in range(0, len(text), step)]


def _usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"promptTokenCount": 0, "candidatesTokenCount": 0}
    for key, value in (usage or {}).items():
        out[_OPENAI_USAGE.get(key, key)] = value
    out.setdefault(
        "totalTokenCount",
        out["promptTokenCount"] + out["candidatesTokenCount"] + out.get("thoughtsTokenCount", 0),
    )
    return out
