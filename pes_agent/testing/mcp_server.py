"""A small real MCP server (the SDK's ``MCPServer``; ``FastMCP`` on mcp 1.x) to test MCP tool sources against.

Needs the ``mcp`` extra, either major: 2.x (``mcp.server.mcpserver``) or 1.x (``mcp.server.fastmcp``).

Run it as the agent would: over stdio (``python -m pes_agent.testing.mcp_server``) or over streamable
HTTP on loopback (``python -m pes_agent.testing.mcp_server --port 8765``: endpoint
``http://127.0.0.1:8765/mcp``). Its tools cover what a tool source must handle:

- ``convert_currency``: a schema with a number and an enum, so a model's ``"12.5"`` or ``"eur"``
  needs the argument gate; returns structured content and declares it (``outputSchema``).
- ``echo``: plain text content, no structured content.
- ``refuse``: always answers with ``isError`` and the reason.
- ``sleep``: sleeps the given seconds (past a timeout), then answers.
- ``crash``: ends the server process mid-call (a dropped connection).

With ``--odd-tools`` it also serves what a client must cope with: ``broken``, whose ``inputSchema`` is
no valid JSON Schema, and ``lookup.v2/beta``, a name providers would refuse as it is. With
``--dynamic`` it also serves ``grow`` and ``shrink``, which add or remove a tool and tell the client
(``notifications/tools/list_changed``). With ``--catalog FILE`` it serves only the tools of a benchmark
catalogue (``{"tools": [{name, description, inputSchema}]}``), for listing: calling one answers that it is a
catalogue entry.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
from typing import Literal, TypedDict

try:  # mcp 2.x
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.tools import Tool

    TRANSPORT_IN_RUN = True  # host and port are arguments of run(), no longer of the constructor
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context  # type: ignore[assignment, attr-defined, no-redef, unused-ignore]
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[assignment, attr-defined, no-redef, unused-ignore]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[assignment, attr-defined, no-redef, unused-ignore]
    from mcp.server.fastmcp.tools import Tool  # type: ignore[assignment, attr-defined, no-redef, unused-ignore]

    TRANSPORT_IN_RUN = False

RATES = {"EUR": 1.08, "GBP": 1.27, "USD": 1.0}


BROKEN_SCHEMA = {"type": "object", "properties": {"x": {"type": "nonsense"}}}


def _broken(x: str) -> str:
    """A tool whose input schema is no valid JSON Schema."""
    return x


def _lookup(key: str) -> str:
    """Look a key up (a tool whose name has a dot, a slash and a space)."""
    return f"value of {key}"


def _catalogued() -> str:
    """A benchmark catalogue entry: listed for its name, description and schema, never meant to run."""
    return "catalogue entry: listing only"


class Converted(TypedDict):
    """What ``convert_currency`` returns: declared to clients as the tool's ``outputSchema``."""

    amount: float
    currency: str
    usd: float


def _new_server(name: str, tools: list[Tool] | None = None, *, port: int | None = None) -> Server:
    if TRANSPORT_IN_RUN or port is None:
        return Server(name, log_level="WARNING", tools=tools)
    return Server(name, host="127.0.0.1", port=port, log_level="WARNING", tools=tools)  # type: ignore[call-arg, unused-ignore]


def serve(server: Server, port: int | None) -> None:
    """Run ``server`` over stdio (``port`` None) or streamable HTTP on ``127.0.0.1:port``."""
    if port is None:
        server.run("stdio")
    elif TRANSPORT_IN_RUN:
        server.run("streamable-http", host="127.0.0.1", port=port)  # type: ignore[call-arg, unused-ignore]
    else:
        server.run("streamable-http")


def catalog_server(path: str | Path, *, port: int | None = None) -> Server:
    """A server whose tools are a benchmark catalogue's, each with the catalogue's own schema."""
    entries = json.loads(Path(path).read_text(encoding="utf-8"))["tools"]
    tools = [
        Tool.from_function(_catalogued, name=t["name"], description=t["description"]).model_copy(
            update={"parameters": t["inputSchema"]}
        )
        for t in entries
    ]
    return _new_server("pes-agent-catalog", tools, port=port)


def build_server(*, port: int | None = None, odd_tools: bool = False, dynamic: bool = False) -> Server:
    """The test server; ``port`` only matters on mcp 1.x, whose constructor takes it (see ``serve``)."""
    odd = (
        [
            Tool.from_function(_broken, name="broken").model_copy(update={"parameters": BROKEN_SCHEMA}),
            Tool.from_function(_lookup, name="lookup.v2/beta"),  # the SDK warns of the name (SEP-986)
        ]
        if odd_tools
        else None
    )
    server = _new_server("pes-agent-test", odd, port=port)

    @server.tool()
    def convert_currency(amount: float, currency: Literal["EUR", "GBP", "USD"]) -> Converted:
        """Convert an amount of money to US dollars.

        Uses fixed test rates; `currency` is the currency the amount is in.
        """
        return Converted(amount=amount, currency=currency, usd=round(amount * RATES[currency], 2))

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Repeat the text back."""
        return text

    @server.tool()
    def refuse(reason: str) -> str:
        """Always fails, with the reason given."""
        raise ToolError(f"refused: {reason}")

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Wait the given number of seconds, then answer."""
        await asyncio.sleep(seconds)
        return f"slept {seconds:g}s"

    @server.tool()
    def crash() -> str:
        """End the server process at once (a connection dropped mid-call)."""
        os._exit(3)

    if dynamic:

        @server.tool(structured_output=False)
        async def grow(name: str, ctx: Context) -> str:  # type: ignore[type-arg, unused-ignore]
            """Add a tool of that name (it echoes its text) and tell the client."""

            def grown(text: str) -> str:
                return f"{name}: {text}"

            server.add_tool(grown, name=name, description=f"Echo the text, prefixed with {name}.")
            await ctx.session.send_tool_list_changed()
            return f"added {name}"

        @server.tool(structured_output=False)
        async def shrink(name: str, ctx: Context) -> str:  # type: ignore[type-arg, unused-ignore]
            """Remove the tool of that name and tell the client."""
            server.remove_tool(name)
            await ctx.session.send_tool_list_changed()
            return f"removed {name}"

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, help="serve streamable HTTP on 127.0.0.1:PORT (default: stdio)")
    parser.add_argument("--odd-tools", action="store_true", help="also serve `broken` and `lookup.v2/beta`")
    parser.add_argument("--dynamic", action="store_true", help="also serve `grow` and `shrink`")
    parser.add_argument("--catalog", help="serve only the tools of this benchmark catalogue (JSON)")
    args = parser.parse_args(argv)
    if args.catalog:
        server = catalog_server(args.catalog, port=args.port)
    else:
        server = build_server(port=args.port, odd_tools=args.odd_tools, dynamic=args.dynamic)
    serve(server, args.port)


if __name__ == "__main__":
    main()
