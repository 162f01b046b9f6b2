"""What a PostgreSQL DSN may show and what it must hide.

A DSN usually holds a password, so reprs and errors name ``host:port/database`` only, and any
driver message is scrubbed of the strings listed here before it is shown.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, unquote, urlsplit

from pes_agent.errors import ConfigError


def describe_dsn(dsn: str) -> str:
    """``host:port/database`` of a DSN: what errors and reprs may show. Never the user or password."""
    parts = urlsplit(dsn)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ConfigError(
            "a PostgreSQL DSN must be a URL such as `postgresql://user:password@host:5432/database` "
            "(the value is not shown: it may hold a password).",
            key_path="storage.dsn",
        )
    query = parse_qs(parts.query)
    hosts = parts.netloc.rpartition("@")[2] or ",".join(query.get("host", [])) or "localhost"
    if "," not in hosts and not re.search(r":\d+$", hosts):
        hosts += ":" + (query.get("port") or ["5432"])[0]
    database = unquote(parts.path.lstrip("/")) or (query.get("dbname") or ["(default)"])[0]
    return f"{hosts}/{database}"


def secret_parts(dsn: str) -> list[str]:
    """Strings that must not be shown: the DSN itself and its password, raw and decoded."""
    parts = urlsplit(dsn)
    passwords = [parts.password or "", *parse_qs(parts.query).get("password", [])]
    found = {dsn, *passwords, *(unquote(p) for p in passwords)}
    return sorted((s for s in found if s), key=len, reverse=True)
