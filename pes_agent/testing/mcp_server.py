"""A small real MCP server (the SDK's ``FastMCP``) to test MCP tool sources against; needs the ``mcp`` extra.

Run it as the agent would: over stdio (``python -m pes_agent.testing.mcp_server``) or over streamable
HTTP on loopback (``python -m pes_agent.testing.mcp_server --port 8765``: endpoint
``http://127.0.0.1:8765/mcp``). Its tools cover what a tool source must handle:

- ``convert_currency``: a schema with a number and an enum, so a model's ``"12.5"`` or ``"eur"``
  needs the argument gate; returns structured content.
- ``echo``: plain text content, no structured content.
- ``refuse``: always answers with ``isError`` and the reason.
- ``sleep``: sleeps the given seconds (past a timeout), then answers.
- ``crash``: ends the server process mid-call (a dropped connection).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Literal

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError

RATES = {"EUR": 1.08, "GBP": 1.27, "USD": 1.0}


def build_server(*, port: int = 8000) -> FastMCP:
    server = FastMCP("pes-agent-test", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool()
    def convert_currency(amount: float, currency: Literal["EUR", "GBP", "USD"]) -> dict[str, object]:
        """Convert an amount of money to US dollars.

        Uses fixed test rates; `currency` is the currency the amount is in.
        """
        return {"amount": amount, "currency": currency, "usd": round(amount * RATES[currency], 2)}

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

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, help="serve streamable HTTP on 127.0.0.1:PORT (default: stdio)")
    args = parser.parse_args(argv)
    if args.port is None:
        build_server().run("stdio")
    else:
        build_server(port=args.port).run("streamable-http")


if __name__ == "__main__":
    main()
