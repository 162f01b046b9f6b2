"""Limits on what one client can ask of the service: body size, request rate, runs at once, and
failed authentications per client address.

All live in this process (a deployment with several workers divides them by the number of
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
    """A token bucket per key (a user, a client address): ``burst`` at once, refilled at ``per_minute``."""

    MAX_KEYS = 10_000
    """Past this many keys, those whose bucket has refilled are forgotten (they are as if new), so
    a flood from many addresses cannot grow the table without bound."""

    def __init__(self, per_minute: int, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = per_minute / 60.0
        self._burst = float(burst)
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def take(self, user: str) -> None:
        """Spend one request of ``user``'s, or raise `TooManyRequests` saying when one is back."""
        wait = self.wait_s(user)
        if wait > 0:
            raise TooManyRequests("too many requests from this user", wait)
        self.spend(user)

    def wait_s(self, key: str) -> float:
        """Seconds until ``key`` has one to spend (0: now)."""
        bucket = self._refilled(key)
        return 0.0 if bucket is None or bucket.tokens >= 1.0 else (1.0 - bucket.tokens) / self._rate

    def spend(self, key: str) -> None:
        bucket = self._refilled(key)
        if bucket is None:
            if len(self._buckets) >= self.MAX_KEYS:
                self._forget_full()
            bucket = self._buckets[key] = _Bucket(self._burst, self._clock())
        bucket.tokens = max(0.0, bucket.tokens - 1.0)

    def _refilled(self, key: str) -> _Bucket | None:
        bucket = self._buckets.get(key)
        if bucket is not None:
            now = self._clock()
            bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.at) * self._rate)
            bucket.at = now
        return bucket

    def _forget_full(self) -> None:
        for key in list(self._buckets):
            if (bucket := self._refilled(key)) is not None and bucket.tokens >= self._burst:
                del self._buckets[key]


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
        await refuse(send, 413, "PayloadTooLarge", message)


class AuthThrottle:
    """ASGI middleware: failed authentications (401 answers) are counted per client address in a
    token bucket; once an address has spent it, its requests get 429 with ``Retry-After`` before
    any route, body limit or JSON parser sees them, until the bucket refills. A request with a
    token the service knows always passes (a user behind the same address as a guesser is not
    locked out); so do the page's files, which need no token.

    The address is the connection's peer as uvicorn reports it: behind a proxy, run uvicorn with
    ``--proxy-headers --forwarded-allow-ips=<the proxy>`` so it is the client's, not the proxy's.
    """

    def __init__(
        self, app: ASGIApp, limiter: RateLimiter, known_token: Callable[[str], bool], public: tuple[str, ...]
    ) -> None:
        self.app = app
        self.limiter = limiter
        self.known_token = known_token
        self.public = public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._exempt(scope):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = str(client[0]) if client else "unknown"
        wait = self.limiter.wait_s(address)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            message = f"too many failed authentications from this address; retry after {seconds} s"
            await refuse(send, 429, "TooManyRequests", message, {"Retry-After": str(seconds)})
            return
        status: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        await self.app(scope, receive, watch)
        if status and status[0] == 401:
            self.limiter.spend(address)

    def _exempt(self, scope: Scope) -> bool:
        path = str(scope.get("path", ""))
        if path == "/" or any(path.startswith(prefix) for prefix in self.public):
            return True
        auth = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = auth.partition(" ")
        return scheme.lower() == "bearer" and bool(token.strip()) and self.known_token(token.strip())


async def refuse(
    send: Send, status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> None:
    """A refusal sent from a middleware, in the body every refusal has."""
    payload = json.dumps({"error": {"type": kind, "message": message}}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(name.lower().encode(), value.encode()) for name, value in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})
