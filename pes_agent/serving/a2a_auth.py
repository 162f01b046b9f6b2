"""Who is calling a served agent: bearer tokens mapped to user ids, for ``pes_agent.serving.a2a``.

Each token stands for one user; a run started by a task carries that user's id, so the library's
thread ownership applies (another caller's conversation is refused, never continued or shown). The
card stays public, as A2A discovery needs, and says that calls need a bearer token. Tokens are kept
as SHA-256 digests only and never logged; a refused request is told what to send, not what it sent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    SimpleUser,
)
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, Response

from pes_agent.errors import ConfigError

TOKENS_VARIABLE = "PES_AGENT_TOKENS"
"""``token:user,token:user``: the callers a served agent accepts (as in the service example)."""


def parse_tokens(text: str, *, source: str = TOKENS_VARIABLE) -> dict[str, str]:
    """``token:user,...`` → {token: user}; a malformed entry is a ConfigError that never shows a token."""
    tokens: dict[str, str] = {}
    for position, entry in enumerate(filter(None, (e.strip() for e in text.split(","))), 1):
        token, _, user = entry.rpartition(":")
        if not token.strip() or not user.strip():
            raise ConfigError(
                f"entry {position} of {source} is not `token:user`; write token:user,token:user"
            )
        tokens[token.strip()] = user.strip()
    return tokens


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class BearerUsers(AuthenticationBackend):
    """Every path but the public ones needs ``Authorization: Bearer <a known token>``."""

    def __init__(self, tokens: Mapping[str, str], *, public: frozenset[str]) -> None:
        self._users = {_digest(token): user for token, user in tokens.items()}
        self._public = public

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, SimpleUser] | None:
        if conn.url.path in self._public:
            return None
        scheme, _, token = conn.headers.get("authorization", "").partition(" ")
        user = self._users.get(_digest(token.strip())) if scheme.lower() == "bearer" else None
        if user is None:
            raise AuthenticationError(
                "this agent needs `Authorization: Bearer <token>` with a token it knows"
            )
        return AuthCredentials(["authenticated"]), SimpleUser(user)


def refuse(conn: HTTPConnection, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
