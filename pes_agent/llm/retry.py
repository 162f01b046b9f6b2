"""When a model call fails: whether to retry, how long to wait, and what to tell the user.

Retries are decided by exception type and status code: 408, 409, 429 and 5xx, timeouts and connection
failures may succeed later; other 4xx are the request's fault and would fail again. One exception
reads the body: a 5xx that carries a *validation error* (llama-cpp-python's server answers a body it
does not accept with HTTP 500 and pydantic's report; FastAPI's ``{"detail": [...]}``) is a refusal of
the request, not a fault, and retrying it only turns a clear mistake into "try again later". That
check can only switch retrying off, and it matches pydantic's fixed wording, not free prose.

The wait is the server's ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date), capped, else an
exponential backoff with jitter. The pure parts take headers, attempt and clock as arguments; which
SDK raised a failure is ``failures``' business: every adapter shares this one policy.
"""

from __future__ import annotations

import ast
import math
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

from pes_agent.llm.failures import failure_of

if TYPE_CHECKING:
    from tenacity import RetryCallState

__all__ = [
    "MAX_RETRY_AFTER_S",
    "FailureReport",
    "backoff_seconds",
    "describe_failure",
    "failure_report",
    "is_body_refusal",
    "is_retryable",
    "is_retryable_status",
    "refuses_request",
    "retry_after_seconds",
    "retry_delay_seconds",
    "safe_headers",
    "server_message",
    "wait_seconds",
]

MAX_RETRY_AFTER_S = 60.0
"""A server asking for a longer pause is still retried after this long (the budget stays bounded)."""
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0

_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "api-key", "x-api-key", "openai-api-key"}
)


_TRANSIENT_4XX = frozenset({408, 409, 429})
"""Request timeout, conflict (a lock held elsewhere) and rate limit: the same request may pass later."""

_VALIDATION_PHRASES = ("validation error", "Input should be")
"""pydantic's wording (``1 validation error for ...``, ``Input should be 'text' or 'json_object'``)."""

_PYDANTIC_ITEM = re.compile(
    r"""'loc':\s*\((?P<loc>[^)]*)\),\s*'msg':\s*(?P<msg>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
)
"""One error of pydantic's ``str(ValidationError.errors())`` form, as llama-cpp-python's server sends it."""


def is_retryable_status(status: int) -> bool:
    return status in _TRANSIENT_4XX or 500 <= status <= 599


def refuses_request(status: int, body: object) -> bool:
    """Whether an HTTP error says the request itself is unacceptable, so sending it again is futile.

    Every 4xx but 408/409/429, and a 5xx whose body is a validation error.
    """
    if not is_retryable_status(status):
        return status >= 400
    return status >= 500 and _is_validation_body(body)


def is_body_refusal(status: int | None, retryable: bool) -> bool:
    """Whether a failed call's body was refused (400, 422, or a 5xx validation error).

    401, 403, 404 and the like are also final, but about the key, the model or the URL: another way
    of writing the body would not help.
    """
    return status is not None and not retryable and (status in (400, 422) or status >= 500)


def retry_after_seconds(
    headers: Mapping[str, str], *, now: float, cap: float = MAX_RETRY_AFTER_S
) -> float | None:
    """The wait a server asked for, or None; ``now`` (Unix time) resolves the HTTP-date form."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return min(millis / 1000.0, cap)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is None:
        seconds = _http_date_delta(raw, now=now)
    return None if seconds is None else min(seconds, cap)


def backoff_seconds(
    attempt: int,
    *,
    base: float = BACKOFF_BASE_S,
    cap: float = BACKOFF_CAP_S,
    jitter: Callable[[], float] = random.random,
) -> float:
    """Wait after failed ``attempt`` (1-based): doubling from ``base``, plus up to a quarter, capped.

    The jitter spreads out the retries of many concurrent runs that failed together.
    """
    delay = min(cap, base * 2.0 ** max(attempt - 1, 0))
    return min(cap, delay * (1.0 + 0.25 * jitter()))


def is_retryable(exc: BaseException) -> bool:
    """tenacity ``retry`` predicate over any SDK's failures (``failures.failure_of``)."""
    failure = failure_of(exc)
    if failure is None:
        return False
    if failure.kind == "status" and failure.status is not None:
        return is_retryable_status(failure.status) and not refuses_request(failure.status, failure.body)
    return failure.kind != "status"


def wait_seconds(state: RetryCallState) -> float:
    """tenacity ``wait`` callable: the server's ``Retry-After`` (or Google's ``retryDelay``) if it
    gave one, else backoff."""
    failure = failure_of(state.outcome.exception() if state.outcome else None)
    if failure is not None and failure.kind == "status":
        asked = retry_after_seconds(failure.headers, now=time.time())
        if asked is None:
            asked = retry_delay_seconds(failure.body)
        if asked is not None:
            return asked
    return backoff_seconds(state.attempt_number)


def retry_delay_seconds(body: object, *, cap: float = MAX_RETRY_AFTER_S) -> float | None:
    """Google's wait, given in the error body rather than a header: a ``google.rpc.RetryInfo`` detail
    with ``retryDelay: "30s"``."""
    error = body.get("error", body) if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else ():
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        seconds = _number(delay.removesuffix("s")) if isinstance(delay, str) else None
        if seconds is not None:
            return min(seconds, cap)
    return None


def describe_failure(exc: BaseException | None) -> str:
    """A few words for a log line: ``HTTP 429``, ``timed out``, ``APIConnectionError``."""
    failure = failure_of(exc)
    if failure is not None and failure.kind == "status":
        return f"HTTP {failure.status}"
    if failure is not None and failure.kind == "timeout":
        return "timed out"
    return type(exc).__name__ if exc is not None else "failed"


@dataclass(frozen=True, kw_only=True)
class FailureReport:
    """The parts of a ProviderError that depend on how the call failed."""

    what: str
    hint: str
    retryable: bool
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    said: str = ""
    """The server's own words (``server_message``), empty when it gave none."""


def failure_report(exc: BaseException, *, provider: str, timeout: float) -> FailureReport:
    failure = failure_of(exc)
    if failure is not None and failure.kind == "status" and failure.status is not None:
        status = failure.status
        said = server_message(failure.body)
        refused = refuses_request(status, failure.body)
        return FailureReport(
            what=f"HTTP {status}" + (f" ({said})" if said else ""),
            hint=_status_hint(status, provider, refused=refused),
            retryable=not refused and is_retryable_status(status),
            status=status,
            headers=safe_headers(failure.headers),
            said=said,
        )
    if failure is not None and failure.kind == "timeout":
        return FailureReport(
            what=f"no answer within {timeout:g}s",
            hint=f"raise `providers.{provider}.timeout_s` or check the server's load",
            retryable=True,
        )
    if failure is not None:
        cause = f" ({failure.cause})" if failure.cause else ""
        return FailureReport(
            what=f"could not connect{cause}",
            hint=f"check that `providers.{provider}.base_url` is right and the server is up",
            retryable=True,
        )
    return FailureReport(
        what=f"{type(exc).__name__}: {exc}",
        hint="check that `base_url` points at the API this adapter speaks",
        retryable=False,
    )


def safe_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Response headers minus anything credential-like, fit to keep in an error."""
    return {
        k: v
        for k, v in headers.items()
        if k.lower() not in _SECRET_HEADERS and not k.lower().endswith(("-key", "-secret", "-token"))
    }


def server_message(body: object) -> str:
    """The error text a server put in its body, short: OpenAI's ``{"error": {"message"}}``, FastAPI's
    ``{"detail": [...]}`` or plain text.

    Validation errors are cut down to where and what (``response_format.type: Input should be
    'text' or 'json_object'``): the values they echo (``input``) may be the prompt or worse, and a
    server's traceback helps nobody reading our error.
    """
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and "message" not in error and "detail" in error:
            error = error["detail"]
        message = error.get("message") if isinstance(error, dict) else error
    else:
        message = body
    if isinstance(message, list):
        return _validation_items(message)[:300]
    if not message:
        return ""
    text = str(message)
    found = [
        _where_what(m["loc"].replace("'", "").split(","), _unquote(m["msg"]))
        for m in _PYDANTIC_ITEM.finditer(text)
    ]
    if found:
        return "; ".join(found[:3])[:300]
    text = text.split("\n\n  File ", 1)[0]  # llama-cpp-python appends the server's traceback
    return " ".join(text.split())[:300]


def _is_validation_body(body: object) -> bool:
    if isinstance(body, dict) and isinstance(body.get("detail"), list):
        return True  # FastAPI / pydantic request validation
    if isinstance(body, dict):
        error = body.get("error", body)
        body = error.get("message") if isinstance(error, dict) else error
    return isinstance(body, str) and any(phrase in body for phrase in _VALIDATION_PHRASES)


def _validation_items(items: list[object]) -> str:
    parts = []
    for item in items[:3]:
        if isinstance(item, dict):
            loc = item.get("loc")
            parts.append(_where_what(loc if isinstance(loc, list) else [], str(item.get("msg", ""))))
    return "; ".join(parts)


def _where_what(loc: Sequence[object], msg: str) -> str:
    path = ".".join(str(p).strip() for p in loc if str(p).strip() not in ("", "body"))
    return f"{path}: {msg}" if path else msg


def _unquote(literal: str) -> str:
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return literal.strip("'\"")
    return str(value)


def _status_hint(status: int, provider: str, *, refused: bool = False) -> str:
    if status >= 500 and refused:
        return (
            "the server rejected the request as invalid (a validation error, though sent as a server "
            "error): retrying would not help"
        )
    if status in (401, 403):
        return f"check `providers.{provider}.api_key`"
    if status == 404:
        return f"check `providers.{provider}.model` and `base_url`"
    if status == 429:
        return f"rate limited: lower the concurrency or raise `providers.{provider}.max_retries`"
    if status >= 500:
        return "the server failed; try again later"
    return "the server refused the request as sent"


def _number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    if math.isnan(value) or math.isinf(value) or value < 0:
        return None
    return value


def _http_date_delta(raw: str, *, now: float) -> float | None:
    try:
        when = parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)
