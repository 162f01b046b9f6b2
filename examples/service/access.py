"""Who is asking: a bearer token mapped to a user id.

Every route depends on `current_user`. To put your own authentication in front (an OAuth proxy's
header, a session cookie, a JWT), replace it::

    app = create_app()
    app.dependency_overrides[current_user] = my_user   # async def my_user(request) -> str

Whatever it returns is the ``user_id`` the library checks thread ownership against.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from fastapi import Request
from starlette.exceptions import HTTPException


class Unauthorized(HTTPException):
    """401 with the ``WWW-Authenticate`` challenge RFC 6750 asks for."""

    def __init__(self, message: str) -> None:
        super().__init__(401, message, headers={"WWW-Authenticate": 'Bearer realm="pes-agent"'})


class TokenTable:
    """Tokens kept only as SHA-256 digests: a lookup compares digests, so neither timing nor a
    memory dump of the table gives a token away."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._users = {_digest(token): user for token, user in tokens.items()}

    def __len__(self) -> int:
        return len(self._users)

    def __repr__(self) -> str:
        return f"TokenTable({len(self._users)} tokens)"

    def user(self, token: str) -> str | None:
        return self._users.get(_digest(token))


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


async def current_user(request: Request) -> str:
    """The user id behind the request's ``Authorization: Bearer <token>``; 401 without one."""
    table: TokenTable = request.app.state.tokens
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("missing bearer token: send `Authorization: Bearer <token>`")
    user = table.user(token.strip())
    if user is None:
        raise Unauthorized("the bearer token is not valid for this service")
    request.state.user = user  # for the rate limiter's log line and the routes
    return user
