"""One MCP server's session for ``pes_agent.tools.mcp``: opened, held and closed by a task of its own.

The SDK's transports are anyio task groups, which must be entered and left by the same task. So each
connection is held open by a task of its own, and calls (from whatever task runs the step) only send
requests through its session; ``aclose`` asks that task to leave, which ends the server process.
A dropped connection is reopened on the next call. Header and environment values are secrets: a
server is named by its id and where it runs only (``describe_server``).

Both SDK majors are supported, 1.x (from 1.22) and 2.x; what differs between them is kept here, in
the few helpers below (``MCP_ERROR``, ``sdk_field``, ``error_code``): 2.x renamed ``McpError`` to
``MCPError``, the fields of its types to snake_case (``input_schema``, ``structured_content``,
``is_error``, ``next_cursor``), takes timeouts as float seconds, reports its own read timeout as
JSON-RPC ``-32001`` rather than ``408``, hands notifications over unwrapped, and its streamable HTTP
client yields two streams, not three. The session is opened with ``initialize()``, the 2025-era
handshake both majors' servers answer, on which a server still pushes ``tools/list_changed``.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import inspect
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from typing import Any, cast

import mcp
import mcp.client.streamable_http as mcp_http
from mcp import ClientSession
from mcp import types as mcp_types
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from pes_agent.config.base import shown_url
from pes_agent.config.mcp import McpServerConfig
from pes_agent.errors import ToolError

logger = logging.getLogger("pes_agent.tools.mcp")  # one logger for everything MCP, as users filter it

MCP_MAJOR = int(importlib.metadata.version("mcp").split(".")[0])
MCP_ERROR = cast("type[Exception]", getattr(mcp, "MCPError", None) or getattr(mcp, "McpError", None))
"""The SDK's protocol error: ``MCPError`` in 2.x, ``McpError`` in 1.x."""
_TIMEOUT_CODES = frozenset({408, getattr(mcp_types, "REQUEST_TIMEOUT", 408)})  # 1.x: 408; 2.x: -32001
_PAGED = "params" in inspect.signature(ClientSession.list_tools).parameters  # `cursor=` alone before


def sdk_field(value: Any, name: str) -> Any:
    """A field of an SDK type by its 2.x name (snake_case), read under its 1.x camelCase name there."""
    if hasattr(value, name):
        return getattr(value, name)
    head, *rest = name.split("_")
    return getattr(value, head + "".join(part.title() for part in rest), None)


def error_code(exc: BaseException) -> int | None:
    """The JSON-RPC code of an ``MCP_ERROR``."""
    code = getattr(getattr(exc, "error", None), "code", None)
    return code if isinstance(code, int) else None


def describe_server(server: McpServerConfig) -> str:
    """How logs and errors name a server: its id and where it runs, never a header or env value."""
    if server.transport == "stdio":
        return f"MCP server {server.id!r} (stdio: `{' '.join([server.command or '', *server.args])}`)"
    return f"MCP server {server.id!r} ({shown_url(server.url or '')})"


class McpConnection:
    """One server's session, held open by a task of its own and reopened after it drops."""

    def __init__(self, server: McpServerConfig) -> None:
        self.server = server
        self.label = describe_server(server)
        self._session: ClientSession | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self.on_tools_changed: Callable[[], None] | None = None
        """Called when the server says its tool list changed (``notifications/tools/list_changed``)."""

    async def session(self) -> ClientSession:
        async with self._lock:
            if self._session is None:
                self._session = await self._open()
            return self._session

    async def list_tools(self) -> list[mcp_types.Tool]:
        session = await self.session()
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        async with asyncio.timeout(self.server.connect_timeout_s):
            while True:
                if not cursor:
                    page = await session.list_tools()
                elif _PAGED:
                    page = await session.list_tools(params=mcp_types.PaginatedRequestParams(cursor=cursor))
                else:
                    page = await session.list_tools(cursor=cursor)  # type: ignore[call-arg, unused-ignore]
                tools.extend(page.tools)
                cursor = sdk_field(page, "next_cursor")
                if not cursor:
                    return tools

    async def call(self, tool_name: str, arguments: Mapping[str, Any]) -> Any:
        """Call a tool and return its output; every failure is a ``ToolError`` naming the server."""
        where = f"MCP server {self.server.id!r}, tool {tool_name!r}"
        try:
            session = await self.session()
        except ConnectionError as exc:
            raise ToolError(f"{exc}; the next call tries again") from None
        timeout = self.server.timeout_s
        read_timeout: Any = timeout if MCP_MAJOR >= 2 else timedelta(seconds=timeout)
        try:
            result = await session.call_tool(tool_name, dict(arguments), read_timeout_seconds=read_timeout)
        except MCP_ERROR as exc:
            code, message = error_code(exc), getattr(getattr(exc, "error", None), "message", str(exc))
            if code in _TIMEOUT_CODES:  # the SDK's own read timeout
                if self.server.transport != "stdio":
                    # Over HTTP a server that went away shows only as silence: start afresh next time.
                    # A stdio server's death is seen (CONNECTION_CLOSED), so its process is kept.
                    await self._drop(session)
                raise ToolError(f"{where}: no answer within {timeout:g}s (`timeout_s`)") from None
            if code == mcp_types.CONNECTION_CLOSED:
                await self._drop(session)
                raise ToolError(
                    f"{where}: the connection closed during the call; the next call reconnects"
                ) from None
            raise ToolError(f"{where}: the server refused the call: {message}") from None
        except Exception as exc:  # noqa: BLE001 -- whatever broke the transport, reconnect on the next call
            await self._drop(session)
            raise ToolError(
                f"{where}: the connection failed ({first_error(exc)}); the next call reconnects"
            ) from None
        return tool_output(result, where)

    async def aclose(self) -> None:
        async with self._lock:
            await self._drop()

    async def _drop(self, failed: ClientSession | None = None) -> None:
        """Leave the session (ending a stdio server's process); the next use opens a new one.

        ``failed``: the session a call failed on; if another call already replaced it, nothing to do."""
        if failed is not None and failed is not self._session:
            return
        holder, stop = self._holder, self._stop
        self._session = self._holder = self._stop = None
        if holder is None or stop is None:
            return
        stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(holder), timeout=self.server.timeout_s + 5)
        except TimeoutError:
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)
        except Exception as exc:  # noqa: BLE001 -- the session is being left; how it ended is only news
            logger.debug("%s: leaving the session raised %s", self.label, first_error(exc))

    async def _open(self) -> ClientSession:
        ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()
        holder = asyncio.create_task(self._hold(ready, stop), name=f"pes-agent {self.label}")
        try:
            async with asyncio.timeout(self.server.connect_timeout_s):
                session = await asyncio.shield(ready)
        except TimeoutError:
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)
            raise ConnectionError(
                f"{self.label} did not answer within {self.server.connect_timeout_s:g}s (`connect_timeout_s`)"
            ) from None
        except ConnectionError:
            await asyncio.gather(holder, return_exceptions=True)
            raise
        self._holder, self._stop = holder, stop
        return session

    async def _hold(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        """Enter the transport and the session, hand the session over, wait to be told to leave."""
        try:
            async with (
                self._streams() as (read, write),
                ClientSession(read, write, message_handler=self._on_message) as session,
            ):
                await session.initialize()
                ready.set_result(session)
                await stop.wait()
        except Exception as exc:  # noqa: BLE001 -- any failure to connect is reported naming the server
            if not ready.done():
                ready.set_exception(ConnectionError(f"{self.label} could not be reached: {first_error(exc)}"))
            else:
                logger.debug("%s: the session ended with %s", self.label, first_error(exc))
        finally:
            if not ready.done():
                ready.cancel()

    async def _on_message(self, message: Any) -> None:
        """Runs in the session's receive loop: may only start work, never wait for the server."""
        root = getattr(message, "root", message)  # 1.x wraps a notification; 2.x hands it over as is
        if isinstance(root, mcp_types.ToolListChangedNotification) and self.on_tools_changed is not None:
            self.on_tools_changed()

    @asynccontextmanager
    async def _streams(
        self,
    ) -> AsyncIterator[tuple[Any, Any]]:
        server = self.server
        if server.transport == "stdio":
            env = None
            if server.env:
                env = {
                    **get_default_environment(),
                    **{k: v.get_secret_value() for k, v in server.env.items()},
                }
            params = StdioServerParameters(
                command=server.command or "", args=list(server.args), env=env, cwd=server.cwd
            )
            async with stdio_client(params) as (read, write):
                yield read, write
            return
        url = server.url or ""
        headers = {k: v.get_secret_value() for k, v in server.headers.items()}
        async with AsyncExitStack() as stack:
            modern = getattr(mcp_http, "streamable_http_client", None)  # mcp >= 1.24: takes an httpx client
            if modern is not None:
                from mcp.shared._httpx_utils import create_mcp_http_client

                client = await stack.enter_async_context(create_mcp_http_client(headers=headers or None))
                streams = await stack.enter_async_context(modern(url, http_client=client))
                read, write = streams[0], streams[1]  # 1.x adds a session-id getter; 2.x yields two
            else:
                # mcp < 1.24; gone in 2.x (which takes the branch above), so not named as an attribute
                legacy = getattr(mcp_http, "streamablehttp_client")  # noqa: B009
                read, write, _ = await stack.enter_async_context(legacy(url, headers=headers or None))
            yield read, write


def first_error(exc: BaseException) -> str:
    """The first real error inside anyio's exception groups, as ``Type: message``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def tool_output(result: mcp_types.CallToolResult, where: str) -> Any:
    texts = [c.text for c in result.content if isinstance(c, mcp_types.TextContent)]
    others = sorted({c.type for c in result.content if not isinstance(c, mcp_types.TextContent)})
    if others:
        texts.append(f"[{', '.join(others)} content not shown]")
    text = "\n".join(texts)
    if sdk_field(result, "is_error"):
        raise ToolError(f"{where}: {text or 'the server reported an error'}")
    structured = sdk_field(result, "structured_content")
    return text if structured is None else structured
