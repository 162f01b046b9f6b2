"""HTTP/1.1 on asyncio streams, just enough for the fake servers: read a request, write a response.

Requests may use keep-alive and Content-Length or chunked bodies; responses are written with a
Content-Length, or framed as chunks by the caller (server-sent events). Standard library only.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    """Lower-cased names."""
    body: Any
    """The parsed JSON body (None when there was none or it was not JSON)."""
    raw: bytes = b""
    version: str = "HTTP/1.1"

    @property
    def json(self) -> dict[str, Any]:
        """The body as a dict (``{}`` when it was not a JSON object)."""
        return self.body if isinstance(self.body, dict) else {}


class _Malformed(Exception):
    """A request the server cannot parse; the connection is dropped."""


async def read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise _Malformed("connection closed inside a request head") from exc
        return None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise _Malformed(f"bad request line {lines[0]!r}")
    method, path, version = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raw = await _read_chunked(reader)
    else:
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError as exc:
            raise _Malformed("bad Content-Length") from exc
        raw = await reader.readexactly(length) if length > 0 else b""
    return RecordedRequest(
        method=method, path=path, version=version, headers=headers, body=_parse_json(raw), raw=raw
    )


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError as exc:
            raise _Malformed("bad chunk size") from exc
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def wants_keep_alive(request: RecordedRequest) -> bool:
    connection = request.headers.get("connection", "").lower()
    if request.version == "HTTP/1.0":
        return connection == "keep-alive"
    return connection != "close"


def _parse_json(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def json_bytes(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def error_body(message: str, code: str) -> bytes:
    return json_bytes(
        {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
    )


def response_head(status: int, headers: Mapping[str, str], keep_alive: bool) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Status"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append(f"Connection: {'keep-alive' if keep_alive else 'close'}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunked(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def send(
    writer: asyncio.StreamWriter,
    status: int,
    payload: bytes,
    *,
    headers: Mapping[str, str] | None = None,
    content_type: str = "application/json",
    keep_alive: bool = True,
) -> None:
    all_headers = {"Content-Type": content_type, "Content-Length": str(len(payload)), **(headers or {})}
    writer.write(response_head(status, all_headers, keep_alive) + payload)
    await writer.drain()


async def send_error(
    writer: asyncio.StreamWriter, status: int, message: str, keep_alive: bool, *, code: str = "fake_error"
) -> None:
    await send(writer, status, error_body(message, code), keep_alive=keep_alive)


async def send_event_stream(
    writer: asyncio.StreamWriter, frames: list[bytes], *, keep_alive: bool, cut_after: int | None = None
) -> bool:
    """Server-sent events, one HTTP chunk per frame; False when the connection must now be closed.

    ``cut_after``: hang up after that many frames, before the stream's end (a connection lost while a
    reply streams), so the caller closes the connection.
    """
    head = {"Content-Type": "text/event-stream", "Transfer-Encoding": "chunked", "Cache-Control": "no-cache"}
    writer.write(response_head(200, head, keep_alive))
    for index, frame in enumerate(frames):
        if cut_after is not None and index >= cut_after:
            await writer.drain()
            return False
        writer.write(chunked(frame))
        await writer.drain()
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return True
