"""Headers every response carries, so a browser treats the service's answers as what they are.

- ``X-Content-Type-Options: nosniff``: a JSON body (which may quote a model or a user) is never
  sniffed into HTML or script.
- ``Content-Security-Policy`` with ``frame-ancestors 'none'`` (and ``X-Frame-Options: DENY`` for
  older browsers): no other site can frame the page and trick a signed-in user into clicking
  "approve". Responses other than the page get ``default-src 'none'``: they load nothing.
- ``Referrer-Policy: no-referrer``: thread ids in the page's address are not sent to other sites.

A pure ASGI middleware (not Starlette's ``BaseHTTPMiddleware``), so event streams pass untouched.
"""

from __future__ import annotations

from .limits import ASGIApp, Message, Receive, Scope, Send

NO_FRAMING = "frame-ancestors 'none'"
DEFAULT_POLICY = f"default-src 'none'; {NO_FRAMING}"
"""For everything but the page, which sends its own policy (`app.PAGE_POLICY`, also unframeable)."""

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                for name, value in SECURITY_HEADERS.items():
                    if name.lower().encode() not in present:
                        headers.append((name.lower().encode(), value.encode()))
                if b"content-security-policy" not in present:
                    headers.append((b"content-security-policy", DEFAULT_POLICY.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
