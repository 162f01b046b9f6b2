"""What every fake server shares: a loopback listener, a script of actions, recorded requests.

``FakeServer`` serves HTTP/1.1 connections (``_http``) and hands each request to the subclass's
``_answer``, which routes it and, for a model request, takes the next scripted action
(``fake_actions``) and performs it in its API's own wire format (``_reply``, ``_error_payload``).
The actions are the same for every API, so one script can be replayed against any of the fakes.
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from contextlib import suppress
from types import TracebackType
from typing import Any, ClassVar, Self

from pes_agent.errors import InvalidInputError
from pes_agent.testing._http import RecordedRequest, _Malformed, read_request, send
from pes_agent.testing.fake_actions import (
    ActionLike,
    FakeAction,
    FakeError,
    FakeHang,
    FakeMalformed,
    FakeReply,
)

__all__ = ["FakeServer", "Handler"]

Handler = Callable[[dict[str, Any]], ActionLike | Awaitable[ActionLike]]


class FakeServer:
    """Loopback-only scripted server; subclasses speak one API.

    Script entries are used in order, one per model request; once they run out ``handler`` (if given)
    decides, else the request fails with HTTP 400 (the API's error shape). Plain strings are replies.
    """

    label: ClassVar[str] = "FakeServer"

    def __init__(
        self,
        replies: Iterable[ActionLike] = (),
        *,
        handler: Handler | None = None,
        latency_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        backlog: int = 2048,
        record: bool = True,
    ) -> None:
        require_loopback(host, self.label)
        self._script: list[ActionLike] = list(replies)
        self._served = 0
        self.handler = handler
        self.latency_s = latency_s
        self.host = host
        self._port = port
        self._backlog = backlog
        self.record = record
        """False keeps memory flat in long benchmarks: requests are counted, not kept."""
        self.requests: list[RecordedRequest] = []
        self.request_count = 0
        self.unscripted = 0
        """Model requests that found neither a script entry nor a handler."""
        self.refused = 0
        """Requests refused before the script was consulted, as the real API validates them first."""
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
    def root_url(self) -> str:
        """``http://127.0.0.1:PORT``, no path."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._port}"

    @property
    def base_url(self) -> str:
        """What a provider's ``base_url`` should be to reach this server (the API root by default)."""
        return self.root_url

    # -- script ----------------------------------------------------------------------------------

    @property
    def remaining(self) -> int:
        return len(self._script) - self._served

    def add(self, *replies: ActionLike) -> None:
        """Append entries to the script (between phases of a test)."""
        self._script.extend(replies)

    def assert_complete(self) -> None:
        """Fail when scripted entries were left unused or requests arrived past the script."""
        if self.remaining or self.unscripted:
            raise AssertionError(
                f"{self.label}: {self.remaining} scripted entries unused, "
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
                if request is None:
                    break
                self.request_count += 1
                if self.record:
                    self.requests.append(request)
                if not await self._answer(request, writer):
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
        raise NotImplementedError

    async def _act(
        self, body: dict[str, Any], writer: asyncio.StreamWriter, keep_alive: bool, **context: Any
    ) -> bool:
        """Take the next action for a model request and perform it; ``context`` goes to ``_reply``."""
        return await self._perform(await self._next_action(body), body, writer, keep_alive, **context)

    async def _perform(
        self,
        action: FakeAction | None,
        body: dict[str, Any],
        writer: asyncio.StreamWriter,
        keep_alive: bool,
        **context: Any,
    ) -> bool:
        """Perform ``action`` (None: the script ran out) in the API's format."""
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        if action is None:
            message = f"{self.label}: no scripted reply left (request #{self.request_count})"
            payload = self._error_payload(400, message, code="fake_script_exhausted")
            await send(writer, 400, payload, keep_alive=keep_alive)
        elif isinstance(action, FakeReply):
            if not await self._reply(action, body, writer, keep_alive, **context):
                return False
        elif isinstance(action, FakeError):
            payload = self._error_payload(action.status, f"fake error {action.status}", action.body)
            await send(writer, action.status, payload, headers=action.headers, keep_alive=keep_alive)
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

    async def _reply(
        self,
        reply: FakeReply,
        body: dict[str, Any],
        writer: asyncio.StreamWriter,
        keep_alive: bool,
        **context: Any,
    ) -> bool:
        """Send ``reply`` in the API's format; False when the connection must be closed (a cut stream)."""
        raise NotImplementedError

    def _error_payload(
        self, status: int, message: str, body: Any = None, *, code: str = "fake_error"
    ) -> bytes:
        """The API's error body; ``body`` given (a ``FakeError``'s) is sent as it is. ``code`` names
        the fake's own errors where the API's body has a place for it."""
        raise NotImplementedError

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids


def require_loopback(host: str, label: str) -> None:
    """Tests must never open a port others can reach: only loopback addresses are accepted."""
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise InvalidInputError(
            f"{label} binds only to loopback, not {host!r}; use `host='127.0.0.1'` (the default)"
        )
