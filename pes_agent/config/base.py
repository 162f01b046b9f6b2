"""The ground floor of the config models: the base model and how their checks report problems.

Every check raises one pydantic error of type ``CONFIG_ERROR_TYPE`` carrying its findings, each with
the field it is about and the values allowed; ``errors`` turns them into readable lines.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

CONFIG_ERROR_TYPE = "pes_config"
"""pydantic error type of the checks below; the loader turns each into one line of a ConfigError."""


def problem(field: tuple[str | int, ...], msg: str, allowed: list[str], value: Any = None) -> dict[str, Any]:
    """One finding of a check: ``field`` is its path below the model being validated."""
    found = {"field": field, "msg": msg, "allowed": allowed}
    return found if value is None else {**found, "value": value}


def fail(*problems: dict[str, Any]) -> NoReturn:
    """Raise the checks' findings as one pydantic error that keeps each one's field and allowed."""
    summary = "; ".join(str(p["msg"]) for p in problems)
    raise PydanticCustomError(
        CONFIG_ERROR_TYPE, "{summary}", {"summary": summary, "problems": list(problems)}
    )


def checked_script(value: str, base_dir: str | None) -> str:
    """The absolute path of a reply script that exists and holds a list of replies."""
    path = Path(os.path.normpath(Path(base_dir or Path.cwd()) / Path(value).expanduser()))
    ctx = {"path": str(path)}
    if not path.is_file():
        raise PydanticCustomError(CONFIG_ERROR_TYPE, "script file {path} does not exist", ctx)
    try:
        replies = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise PydanticCustomError(CONFIG_ERROR_TYPE, "script file {path} is not readable JSON", ctx) from None
    if isinstance(replies, dict):
        replies = replies.get("replies")
    if not isinstance(replies, list):
        raise PydanticCustomError(
            CONFIG_ERROR_TYPE,
            "script file {path} must hold a JSON list of replies (or a `replies` list)",
            ctx,
        )
    return str(path)


_NAME_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")


def checked_name_part(value: str, what: str, examples: str) -> str:
    """An id that becomes part of tool names (an MCP server's, a remote agent's): what every provider
    accepts in a tool name, and short."""
    if not _NAME_PART.fullmatch(value):
        raise PydanticCustomError(
            CONFIG_ERROR_TYPE,
            f"this {what} id cannot be part of a tool name: use 1 to 32 letters, digits, `_` and `-`, "
            "starting with a letter or digit",
            {"value": value, "allowed": [examples]},
        )
    return value


def check_unique_ids(ids: Sequence[str], what: str, where: tuple[str | int, ...] = ()) -> None:
    """Ids that name tools (MCP servers', remote agents'): two with one id would be one tool."""
    seen: set[str] = set()
    for i, id_ in enumerate(ids):
        if id_ in seen:
            fail(
                problem(
                    (*where, i, "id"),
                    f"{what} id {id_!r} is used twice; ids name the tools, so each must be unique",
                    ["a unique id"],
                    id_,
                )
            )
        seen.add(id_)


def is_http_url(url: str | None) -> bool:
    """An http(s) URL with a host and a valid port: what a remote server's address must be."""
    if not url or any(c.isspace() for c in url):
        return False
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port that is no number in range
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def shown_url(url: str) -> str:
    """``url`` as logs and errors may show it: scheme, host, port and path, without the password
    or query token a URL can carry."""
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # the config refuses such a URL; never fail while naming a server
        port = ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"


class ConfigModel(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
    )
