"""Tools from MCP servers, on the official ``mcp`` SDK (``pip install 'pes-agent[mcp]'``).

Only imported when the config has an enabled ``mcp`` server, so nothing else pays for the SDK.

At instance start each enabled server gets a connection (stdio: the instance starts the command and
owns the process; streamable HTTP: a URL with optional headers), its tools are listed (again whenever
the server sends ``notifications/tools/list_changed``: tools are then added, replaced or removed) and
each becomes an ordinary ``ToolSpec`` named ``mcp_<serverId>_<toolName>`` (or with the server's
``toolPrefix``): the manifesto shows the first line of its description, a step gets the server's
``inputSchema`` in full, the tool's ``outputSchema`` (when the server declares one) becomes its
``output_schema``, and the argument gate applies unchanged. A call maps the MCP result to a tool
result: ``structuredContent`` when the server sent it, else the text contents joined; ``isError``, a
timeout and a dropped connection are tool errors (the TAEF loop sees them like any other), and after
a dropped connection the next call reconnects. Both SDK majors (1.x, 2.x) work: see ``mcp_connection``.

Each server's session lives in ``mcp_connection``.

A server that cannot be reached at start-up is logged (a warning naming it) and contributes no tools;
the instance starts with the others. Header and environment values are secrets: never logged.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp import types as mcp_types

from pes_agent.config.mcp import McpConfig, McpServerConfig
from pes_agent.errors import ConfigError, ToolDefinitionError
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.mcp_connection import (
    MCP_ERROR,
    McpConnection,
    describe_server,
    first_error,
    sdk_field,
)
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.spec import ToolSpec
from pes_agent.tools.validation import SchemaValidator

logger = logging.getLogger(__name__)

_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64


def mcp_tool_name(server_id: str, tool_name: str, *, prefix: str | None = None) -> str:
    """``mcp_<serverId>_<toolName>`` (or ``<prefix><toolName>``) in the characters every provider
    accepts, at most 64 of them."""
    head = f"mcp_{server_id}_" if prefix is None else prefix
    return _NOT_NAME.sub("_", f"{head}{tool_name}")[:_MAX_NAME] or "_"


@dataclass(eq=False)
class McpTools:
    """What the configured servers yield: tool specs, where each came from, and the open connections."""

    specs: list[ToolSpec] = field(default_factory=list)
    server_of: dict[str, str] = field(default_factory=dict)
    """Tool name → server id."""
    failures: dict[str, str] = field(default_factory=dict)
    """Server id → why it contributed no tools (unreachable at start-up)."""
    connections: list[McpConnection] = field(default_factory=list)
    _registry: ToolRegistry | None = None
    _sources: dict[str, str] | None = None
    _refreshing: set[asyncio.Task[None]] = field(default_factory=set)

    def follow(self, registry: ToolRegistry, sources: dict[str, str] | None = None) -> None:
        """Keep ``registry`` (and ``sources``, tool name → source) in step with the servers: when one
        says its tool list changed, it is listed again and its tools added, replaced or removed."""
        self._registry, self._sources = registry, sources
        for connection in self.connections:
            connection.on_tools_changed = functools.partial(self._changed, connection)

    def _changed(self, connection: McpConnection) -> None:
        task = asyncio.create_task(self._refresh(connection), name=f"pes-agent relist {connection.label}")
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    async def _refresh(self, connection: McpConnection) -> None:
        registry, server = self._registry, connection.server
        if registry is None:
            return
        try:
            listed = await connection.list_tools()
        except (ConnectionError, MCP_ERROR, TimeoutError) as exc:
            logger.warning(
                "%s: listing its changed tools failed (%s); keeping the old list",
                connection.label,
                first_error(exc),
            )
            return
        current = {name for name, sid in self.server_of.items() if sid == server.id}
        fresh: dict[str, ToolSpec] = {}
        for item in _selected(listed, server):
            name = mcp_tool_name(server.id, item.name, prefix=server.tool_prefix)
            here = f"tool {item.name!r} of {connection.label}"
            if name in fresh or (name in registry and name not in current):
                logger.warning("%s is left out: another tool is already named %r", here, name)
                continue
            try:
                fresh[name] = _spec(connection, item, name)
                SchemaValidator(fresh[name].input_schema, tool_name=name)
            except ToolDefinitionError as exc:
                fresh.pop(name, None)
                logger.warning("%s is left out: its input schema cannot be used (%s)", here, exc)
        gone = current - fresh.keys()
        for name in gone:
            registry.unregister(name)
            del self.server_of[name]
            if self._sources is not None:
                self._sources.pop(name, None)
        changed = 0
        for name, spec in fresh.items():
            if name in current:
                old = registry.get(name)
                if old is None or (old.description, old.input_schema) != (
                    spec.description,
                    spec.input_schema,
                ):
                    registry.replace(spec)
                    changed += 1
                continue
            registry.register(spec)
            self.server_of[name] = server.id
            if self._sources is not None:
                self._sources[name] = f"mcp:{server.id}"
        added = len(fresh.keys() - current)
        logger.info(
            "%s: tool list changed: %d added, %d removed, %d updated",
            connection.label,
            added,
            len(gone),
            changed,
        )

    async def aclose(self) -> None:
        for task in list(self._refreshing):
            task.cancel()
        await asyncio.gather(*self._refreshing, return_exceptions=True)
        for connection in self.connections:
            await connection.aclose()


async def open_mcp_tools(
    config: McpConfig, *, taken: Collection[str] = (), source: str | None = None
) -> McpTools:
    """Connect to every enabled server (all at once: start-up waits for the slowest, not the sum) and
    build their tools, in config order. Name collisions (with each other or with ``taken``, the names
    already registered) are a ``ConfigError`` naming both; the connections opened are closed first."""
    found = McpTools()
    enabled = [
        (index, McpConnection(server)) for index, server in enumerate(config.servers) if server.enabled
    ]
    found.connections = [connection for _, connection in enabled]
    owner: dict[str, str] = {name: f"tool {name!r}" for name in taken}
    try:
        listings = await asyncio.gather(*(_listing(connection) for _, connection in enabled))
        for (index, connection), listed in zip(enabled, listings, strict=True):
            if isinstance(listed, str):
                found.failures[connection.server.id] = listed
            else:
                _add_tools(found, connection, listed, index, owner, source)
    except BaseException:
        await found.aclose()
        raise
    return found


async def _listing(connection: McpConnection) -> list[mcp_types.Tool] | str:
    """The server's tools, or why it has none to give (after closing what was opened)."""
    try:
        return await connection.list_tools()
    except (ConnectionError, MCP_ERROR, TimeoutError) as exc:
        await connection.aclose()
        why = str(exc)
        if not isinstance(exc, ConnectionError):
            why = f"{connection.label}: listing its tools failed ({first_error(exc)})"
        logger.warning("%s; its tools are left out", why)
        return why


def _add_tools(
    found: McpTools,
    connection: McpConnection,
    listed: Sequence[mcp_types.Tool],
    index: int,
    owner: dict[str, str],
    source: str | None,
) -> None:
    server = connection.server
    count = 0
    for item in _selected(listed, server):
        name = mcp_tool_name(server.id, item.name, prefix=server.tool_prefix)
        here = f"tool {item.name!r} of {connection.label}"
        if name in owner:
            raise ConfigError(
                f"two tools would both be named {name!r}: {owner[name]} and {here}; leave one out with "
                "`include`/`exclude` or change the server's `id` or `toolPrefix`",
                source=source,
                key_path=f"mcp.servers[{index}]",
                value=item.name,
            )
        try:
            spec = _spec(connection, item, name)
            SchemaValidator(spec.input_schema, tool_name=name)
        except ToolDefinitionError as exc:
            logger.warning("%s is left out: its input schema cannot be used (%s)", here, exc)
            continue
        owner[name] = here
        found.specs.append(spec)
        found.server_of[name] = server.id
        count += 1
    logger.info("%s: %d tool(s) registered", connection.label, count)


def _selected(listed: Sequence[mcp_types.Tool], server: McpServerConfig) -> list[mcp_types.Tool]:
    names = {t.name for t in listed}
    for wanted in [*(server.include or []), *server.exclude]:
        if wanted not in names:
            logger.warning(
                "%s has no tool %r (named in `include`/`exclude`)", describe_server(server), wanted
            )
    chosen = [t for t in listed if server.include is None or t.name in server.include]
    return [t for t in chosen if t.name not in server.exclude]


def _spec(connection: McpConnection, item: mcp_types.Tool, name: str) -> ToolSpec:
    remote = item.name

    async def call(**arguments: Any) -> Any:
        return await connection.call(remote, arguments)

    hints = item.annotations
    return tool_from_schema(
        name,
        _description(item, connection.server.id),
        sdk_field(item, "input_schema"),
        call,
        # the fields a result holds, when the server declares them (MCP `outputSchema`): planning wires
        # them to later steps
        output_schema=sdk_field(item, "output_schema"),
        # the connection bounds the call (and a reconnect before it); this is only a backstop
        timeout=connection.server.connect_timeout_s + connection.server.timeout_s + 5,
        side_effects=not (hints is not None and sdk_field(hints, "read_only_hint")),
        idempotent=bool(hints is not None and sdk_field(hints, "idempotent_hint")),
        deterministic=False,  # a remote tool may read changing state: an identical call runs again
    )


def _description(item: mcp_types.Tool, server_id: str) -> str:
    """The server's description with its first line made a sentence: the manifesto shows that line."""
    text = (item.description or "").strip()
    if not text:
        return f"Tool {item.name!r} of MCP server {server_id!r}."
    first, _, rest = text.partition("\n")
    first = first.strip()
    if first[-1] not in ".!?":
        first += "."
    return f"{first}\n{rest.strip()}" if rest.strip() else first
