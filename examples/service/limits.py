"""Limits on what one client can ask of the service: body size, request rate, runs at once.

All three live in this process (a deployment with several workers divides them by the number of
workers, or puts the rate limit in its proxy); none needs a dependency.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class TooManyRequests(HTTPException):
    def __init__(self, message: str, retry_after_s: float) -> None:
        wait = max(1, math.ceil(retry_after_s))
        super().__init__(429, f"{message}; retry after {wait} s", headers={"Retry-After": str(wait)})


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    """A token bucket per user: ``burst`` requests at once, refilled at ``per_minute``."""

    def __init__(self, per_minute: int, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = per_minute / 60.0
        self._burst = float(burst)
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def take(self, user: str) -> None:
        """Spend one request of ``user``'s, or raise `TooManyRequests` saying when one is back."""
        now = self._clock()
        bucket = self._buckets.setdefault(user, _Bucket(self._burst, now))
        bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.at) * self._rate)
        bucket.at = now
        if bucket.tokens < 1.0:
            raise TooManyRequests("too many requests from this user", (1.0 - bucket.tokens) / self._rate)
        bucket.tokens -= 1.0


class RunSlots:
    """How many runs each user has in progress; more than ``per_user`` at once is refused."""

    def __init__(self, per_user: int) -> None:
        self._per_user = per_user
        self._running: dict[str, int] = {}

    @contextlib.contextmanager
    def hold(self, user: str) -> Iterator[None]:
        if self._running.get(user, 0) >= self._per_user:
            raise TooManyRequests(
                f"this user already has {self._per_user} runs in progress (the most allowed at once)", 1.0
            )
        self._running[user] = self._running.get(user, 0) + 1
        try:
            yield
        finally:
            self._running[user] -= 1
            if not self._running[user]:
                del self._running[user]


class BodyLimit:
    """ASGI middleware: a request body over ``max_bytes`` gets 413 before any route reads it.

    A declared ``Content-Length`` over the limit is refused at once; a chunked body is read up to
    the limit and refused as soon as it passes it, so a client cannot make the server buffer more.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                await self._refuse(send)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # after the body: only a disconnect can come
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        message = f"the request body is over {self.max_bytes} bytes, the most this service accepts"
        payload = json.dumps({"error": {"type": "PayloadTooLarge", "message": message}}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": payload})
