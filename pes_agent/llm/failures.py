"""What a failed SDK call was, whichever official SDK made it: one shape for the one retry policy.

The ``openai`` and ``anthropic`` SDKs raise the same family (``APIStatusError`` with ``status_code``,
``body`` and ``response``; ``APITimeoutError``; ``APIConnectionError``); ``google-genai`` raises
``errors.APIError`` with ``code`` and ``details`` and lets the HTTP client's own timeouts and
connection errors through (``httpx``, or its fork ``httpx2``). ``failure_of`` reads each into a
``CallFailure``, so ``retry`` decides and reports by status and kind alone, never by SDK.

No SDK is imported here: an exception can only come from a module already loaded, so each is looked
up in ``sys.modules`` and a missing extra is simply not one of the candidates.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["CallFailure", "failure_of"]

FailureKind = Literal["status", "timeout", "connection"]

_STAINLESS_SDKS = ("openai", "anthropic")
"""SDKs generated from one template: the same exception classes under each name."""
_HTTP_CLIENTS = ("httpx", "httpx2")
_STREAM_ERRORS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429, "timeout_error": 504}
"""Anthropic's ``error`` events inside a 200 stream, by type, as the status each has outside one."""


@dataclass(frozen=True, kw_only=True)
class CallFailure:
    kind: FailureKind
    status: int | None = None
    body: object = None
    """The error body as the SDK parsed it (JSON), or its text."""
    headers: Mapping[str, str] = field(default_factory=dict)
    cause: str | None = None
    """The type name of what broke a connection (``ConnectError``), for the message."""


def failure_of(exc: BaseException | None) -> CallFailure | None:
    """The failure ``exc`` reports, or None when it is not an SDK's transport or status error."""
    if exc is None:
        return None
    for name in _STAINLESS_SDKS:
        sdk = sys.modules.get(name)
        if sdk is None:
            continue
        if isinstance(exc, sdk.APIStatusError):
            return CallFailure(
                kind="status",
                status=_status(exc.status_code, exc.body),
                body=exc.body,
                headers=_headers(exc.response),
            )
        if isinstance(exc, sdk.APITimeoutError):
            return CallFailure(kind="timeout")
        if isinstance(exc, sdk.APIConnectionError):
            return CallFailure(kind="connection", cause=_cause(exc))
    genai_errors = sys.modules.get("google.genai.errors")
    if genai_errors is not None and isinstance(exc, genai_errors.APIError):
        return CallFailure(
            kind="status",
            status=int(exc.code),
            body=exc.details,
            headers=_headers(getattr(exc, "response", None)),
        )
    for name in _HTTP_CLIENTS:
        client = sys.modules.get(name)
        if client is None:
            continue
        if isinstance(exc, client.TimeoutException):
            return CallFailure(kind="timeout")
        if isinstance(exc, client.TransportError):
            return CallFailure(kind="connection", cause=type(exc).__name__)
    return None


def _status(status: int, body: object) -> int:
    """A stream that failed after its 200 (an ``error`` event) has the status of its error's type."""
    if status != 200 or not isinstance(body, dict):
        return status
    error = body.get("error")
    kind = error.get("type") if isinstance(error, dict) else None
    return _STREAM_ERRORS.get(kind, status) if isinstance(kind, str) else status


def _headers(response: Any) -> dict[str, str]:
    headers = getattr(response, "headers", None)
    try:
        return {str(k): str(v) for k, v in headers.items()} if headers is not None else {}
    except (AttributeError, TypeError):
        return {}


def _cause(exc: BaseException) -> str | None:
    return type(exc.__cause__).__name__ if exc.__cause__ is not None else None
