"""A scripted Anthropic Messages API on loopback (``POST /v1/messages``), whole or streamed (SSE).

It plays the same scripted actions as ``FakeOpenAIServer`` (``FakeReply``, ``FakeError``,
``FakeHang``, ``FakeMalformed``, ``FakeDisconnect``; strings are replies), answering in the Messages
API's own shapes, so the official ``anthropic`` SDK — and any code built on it — runs against it as
against the real endpoint:

- a reply is ``{"type": "message", "content": [...], "stop_reason", "usage"}``: ``reasoning_content``
  becomes a ``thinking`` block ahead of the answer; when the request forces a tool (``tool_choice:
  {"type": "tool"}``) and the text is a JSON object, the answer is that tool's ``tool_use`` block;
- ``finish_reason`` ``stop`` is ``end_turn`` (``tool_use`` for a forced tool), ``length`` is
  ``max_tokens``; any other value is sent as the stop reason itself (``refusal``);
- ``usage`` may use the API's names (``input_tokens``, ``cache_read_input_tokens``, ...) or OpenAI's
  (``prompt_tokens``/``completion_tokens``, mapped to ``input_tokens``/``output_tokens``);
- ``"stream": true`` gets the event sequence the API sends (``message_start``, ``content_block_start``
  / ``_delta`` / ``_stop``, ``ping``, ``message_delta``, ``message_stop``), each as ``event:`` and
  ``data:`` lines;
- errors are ``{"type": "error", "error": {"type", "message"}}``. Requests the API refuses before
  generating are refused the same way (no key, as ``x-api-key`` or ``Authorization: Bearer``: 401; no
  ``anthropic-version``, no ``model``/``max_tokens``/``messages``, a thinking budget under 1024 or not below
  ``max_tokens``, a forced tool or a temperature with thinking: 400), recorded but taking no script entry.

    async with FakeAnthropicServer(["hello"]) as server:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from pes_agent.testing._http import (
    RecordedRequest,
    json_bytes,
    send,
    send_event_stream,
    wants_keep_alive,
)
from pes_agent.testing._server import FakeServer
from pes_agent.testing.fake_actions import FakeReply

__all__ = ["FakeAnthropicServer", "sent_key"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class FakeAnthropicServer(FakeServer):
    """Loopback-only fake of Anthropic's ``/v1/messages``; see the module docstring."""

    label = "FakeAnthropicServer"

    @property
    def message_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of the ``/v1/messages`` requests, in arrival order."""
        return [r.json for r in self.requests if r.path.split("?", 1)[0].rstrip("/") == "/v1/messages"]

    async def _answer(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> bool:
        keep_alive = wants_keep_alive(request)
        route = request.path.split("?", 1)[0].rstrip("/")
        if route != "/v1/messages" or request.method != "POST":
            status = 404 if route != "/v1/messages" else 405
            await self._refuse(writer, status, f"{request.method} {route}: no such route", keep_alive)
            return keep_alive
        problem = _refusal(request)
        if problem is not None:
            self.refused += 1
            await self._refuse(writer, *problem, keep_alive)
            return keep_alive
        return await self._act(request.json, writer, keep_alive)

    async def _refuse(
        self, writer: asyncio.StreamWriter, status: int, message: str, keep_alive: bool
    ) -> None:
        await send(writer, status, self._error_payload(status, message), keep_alive=keep_alive)

    def _error_payload(
        self, status: int, message: str, body: Any = None, *, code: str = "fake_error"
    ) -> bytes:
        if body is not None:
            return body.encode() if isinstance(body, str) else json_bytes(body)
        kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return json_bytes({"type": "error", "error": {"type": kind, "message": message}})

    async def _reply(
        self, reply: FakeReply, body: dict[str, Any], writer: asyncio.StreamWriter, keep_alive: bool, **_: Any
    ) -> bool:
        message = self._message(reply, body)
        if body.get("stream") is True:
            events = _events(message, reply.chunk_chars)
            frames = [f"event: {name}\ndata: ".encode() + json_bytes(data) + b"\n\n" for name, data in events]
            return await send_event_stream(writer, frames, keep_alive=keep_alive, cut_after=reply.cut_after)
        await send(writer, 200, json_bytes(message), keep_alive=keep_alive)
        return True

    def _message(self, reply: FakeReply, body: dict[str, Any]) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.reasoning_content is not None:
            content.append(
                {"type": "thinking", "thinking": reply.reasoning_content, "signature": "fake-signature"}
            )
        tool = _forced_tool(body)
        value = _json_object(reply.text) if tool else None
        if tool and value is not None:
            content.append(
                {"type": "tool_use", "id": f"toolu_fake_{self._next_id()}", "name": tool, "input": value}
            )
        else:
            content.append({"type": "text", "text": reply.text})
        stop = {"stop": "tool_use" if value is not None else "end_turn", "length": "max_tokens"}
        return {
            "id": f"msg_fake_{self._next_id()}",
            "type": "message",
            "role": "assistant",
            "model": reply.model or body.get("model") or "fake-model",
            "content": content,
            "stop_reason": stop.get(reply.finish_reason, reply.finish_reason),
            "stop_sequence": None,
            "usage": _usage(reply.usage),
        }


def _refusal(request: RecordedRequest) -> tuple[int, str] | None:
    """What the API would refuse before generating, as ``(status, message)``."""
    if not sent_key(request):
        return 401, "x-api-key header is required"
    if not request.headers.get("anthropic-version"):
        return 400, "anthropic-version: header is required"
    body = request.body
    if not isinstance(body, dict):
        return 400, "the body is not a JSON object"
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return 400, f"{key}: Field required"
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return 400, "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if budget >= body["max_tokens"]:
            return 400, "`max_tokens` must be greater than `thinking.budget_tokens`"
        if _forced_tool(body):
            return 400, "Thinking may not be enabled when tool_choice forces tool use."
        if body.get("temperature", 1) != 1:
            return 400, "`temperature` may only be set to 1 when thinking is enabled"
    return None


def sent_key(request: RecordedRequest) -> str | None:
    """The key a request carried: ``x-api-key``, or ``Authorization: Bearer`` (which newer SDKs send)."""
    key = request.headers.get("x-api-key")
    bearer = request.headers.get("authorization", "")
    if not key and bearer.lower().startswith("bearer "):
        key = bearer[len("bearer ") :].strip()
    return key or None


def _forced_tool(body: Mapping[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and isinstance(choice.get("name"), str):
        return str(choice["name"])
    return None


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    given = dict(usage or {})
    out = {
        "input_tokens": given.pop("prompt_tokens", 0),
        "output_tokens": given.pop("completion_tokens", 0),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    out.update(given)
    return out


def _events(message: dict[str, Any], step: int) -> list[tuple[str, dict[str, Any]]]:
    """The Messages API's event sequence for ``message``, as ``(event name, data)``."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message["content"]):
        events += _block_events(index, block, max(1, step))
        if index == 0:
            events.append(("ping", {"type": "ping"}))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _block_events(index: int, block: dict[str, Any], step: int) -> list[tuple[str, dict[str, Any]]]:
    kind = block["type"]
    if kind == "thinking":
        opened: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
        field, delta_type, text = "thinking", "thinking_delta", block["thinking"]
    elif kind == "tool_use":
        opened = {**block, "input": {}}
        field, delta_type, text = "partial_json", "input_json_delta", json.dumps(block["input"])
    else:
        opened = {"type": "text", "text": ""}
        field, delta_type, text = "text", "text_delta", block["text"]
    events: list[tuple[str, dict[str, Any]]] = [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened})
    ]
    for i in range(0, len(text), step):
        delta = {"type": delta_type, field: text[i : i + step]}
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        )
    if kind == "thinking":
        delta = {"type": "signature_delta", "signature": block["signature"]}
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events
