"""The ``mcp`` section: MCP servers whose tools the agent registers (``pes_agent.tools.mcp``)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from pes_agent.config.base import (
    CONFIG_ERROR_TYPE,
    ConfigModel,
    check_unique_ids,
    checked_name_part,
    fail,
    is_http_url,
    problem,
)
from pes_agent.secrets import SecretValue

MCP_TRANSPORTS = ("stdio", "streamable-http")
_TOOL_PREFIX = re.compile(r"[A-Za-z0-9_-]{0,32}")


class McpServerConfig(ConfigModel):
    """One MCP server whose tools the instance registers as ``mcp_<id>_<toolName>``."""

    id: str
    """Short name, part of every tool name: letters, digits, ``_`` and ``-`` (at most 32)."""
    transport: Literal["stdio", "streamable-http"]
    """``stdio``: the instance starts ``command`` and owns the process; ``streamable-http``: ``url``."""
    command: str | None = None
    """stdio: the program to start (``python``, ``npx``, ``uvx``...), looked up on ``PATH``."""
    args: list[str] = Field(default_factory=list)
    """stdio: its arguments."""
    env: dict[str, SecretValue] = Field(default_factory=dict)
    """stdio: extra environment variables for the process (over the SDK's safe default set); values
    are secrets: write ``${TOKEN}``, they are never logged or dumped."""
    cwd: str | None = None
    """stdio: working directory of the process (default: the current one); a relative path is taken
    from the config file's directory and stored absolute."""
    url: str | None = None
    """streamable-http: the endpoint, e.g. ``http://127.0.0.1:8000/mcp``."""
    headers: dict[str, SecretValue] = Field(default_factory=dict)
    """streamable-http: request headers (``Authorization: Bearer ${TOKEN}``); values are secrets."""
    enabled: bool = True
    timeout_s: float = Field(default=30.0, gt=0)
    """Bound on each tool call; a call past it is a tool error."""
    connect_timeout_s: float = Field(default=60.0, gt=0)
    """Bound on starting or reaching the server and on listing its tools: longer than a call's, as a
    stdio server started with ``npx`` or ``uvx`` may first be downloaded, and a busy machine starts
    any process slowly."""
    tool_prefix: str | None = None
    """What goes before each of the server's tool names; None means ``mcp_<id>_`` (the original's
    convention), ``""`` registers the server's own names. The prefix costs about 3.5 planning-prompt
    tokens per tool (some 700 at 200 tools): a large catalogue from one server may do without it."""
    include: list[str] | None = None
    """Only these tools of the server (its own names); None means all."""
    exclude: list[str] = Field(default_factory=list)
    """Tools of the server left out (its own names)."""

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        return checked_name_part(value, "MCP server", "e.g. files, github, my-server")

    @field_validator("cwd")
    @classmethod
    def _resolve_cwd(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        context = info.context if isinstance(info.context, Mapping) else {}
        base = Path(context.get("base_dir") or Path.cwd())
        path = Path(os.path.normpath(base / Path(value).expanduser()))
        if not path.is_dir():
            raise PydanticCustomError(
                CONFIG_ERROR_TYPE, "directory {path} does not exist", {"path": str(path)}
            )
        return str(path)

    @field_validator("tool_prefix")
    @classmethod
    def _check_prefix(cls, value: str | None) -> str | None:
        if value is not None and not _TOOL_PREFIX.fullmatch(value):
            raise PydanticCustomError(
                CONFIG_ERROR_TYPE,
                "a tool name prefix may hold only letters, digits, `_` and `-` (at most 32)",
                {"allowed": ["e.g. gh_, files-, or an empty prefix"]},
            )
        return value

    @model_validator(mode="after")
    def _check_transport_needs(self) -> McpServerConfig:
        stdio_keys = [k for k in ("command", "args", "env", "cwd") if getattr(self, k)]
        http_keys = [k for k in ("url", "headers") if getattr(self, k)]
        if self.transport == "stdio":
            if not self.command:
                fail(
                    problem(
                        ("command",),
                        "transport 'stdio' needs the command that starts the server",
                        ["a program name or path, e.g. `python`"],
                    )
                )
            if http_keys:
                fail(
                    problem(
                        (http_keys[0],),
                        f"`{http_keys[0]}` belongs to transport 'streamable-http'; "
                        "remove it or change `transport`",
                        ["command", "args", "env", "cwd"],
                    )
                )
        else:
            if not is_http_url(self.url):
                fail(
                    problem(
                        ("url",),
                        "transport 'streamable-http' needs the server's http(s) URL",
                        ["http://host:port/mcp", "https://host/mcp"],
                        self.url,
                    )
                )
            if stdio_keys:
                fail(
                    problem(
                        (stdio_keys[0],),
                        f"`{stdio_keys[0]}` belongs to transport 'stdio'; remove it or change `transport`",
                        ["url", "headers"],
                    )
                )
        return self


class McpConfig(ConfigModel):
    """Tools from MCP servers (``pip install 'pes-agent[mcp]'``)."""

    servers: list[McpServerConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_ids(self) -> McpConfig:
        check_unique_ids([server.id for server in self.servers], "MCP server", ("servers",))
        return self
