"""How refusals look: ``{"error": {"type", "message"}}`` with the library's own message, and the
HTTP status each kind of refusal gets."""

from __future__ import annotations

import logging
import uuid
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pes_agent import (
    ConfigError,
    InvalidInputError,
    PesAgentError,
    ThreadAccessError,
    ThreadBusyError,
    ThreadSuspendedError,
    UnknownSuspensionError,
    UnknownThreadError,
    UnknownToolError,
    VersionConflictError,
)

log = logging.getLogger("pes_agent.service")

# Most specific first: the first match decides. UnknownSuspensionError is a 409, not a 404: the
# thread exists but waits on another suspension (or none, e.g. one already resolved), so the client
# should look at `GET /threads/{id}` rather than conclude the thread is gone.
_STATUS: tuple[tuple[type[PesAgentError], int], ...] = (
    (UnknownThreadError, 404),
    (ThreadAccessError, 404),
    (ThreadBusyError, 409),
    (ThreadSuspendedError, 409),
    (UnknownSuspensionError, 409),
    (VersionConflictError, 409),
    (InvalidInputError, 422),
    (ConfigError, 422),
    (UnknownToolError, 422),
)

THREAD_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,128}$"
THREAD_ID_RULE = "a thread id is 1 to 128 letters, digits, `.`, `_`, `:` or `-` (the page uses a UUID)"
"""Thread ids are chosen by clients and stored, listed and logged: bounded, and no control characters."""

BODY_EXAMPLES = {
    "/threads/{thread_id}/messages": '{"query": "What is 2 + 40?"}',
    "/threads/{thread_id}/resume": '{"suspension_id": "susp_...", "decision": {"approved": true}}',
}


def error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status, headers=headers)


def not_found(thread_id: str) -> str:
    """One message for a thread that does not exist and one that is another user's, so that a
    reply never tells them apart (404, not 403: the thread's existence does not leak by its body)."""
    return f"no thread {thread_id!r} of yours; start one with `POST /threads/{{id}}/messages`"


def status_for(exc: PesAgentError) -> int:
    """500 for anything unmapped: such an error escaping a request is a bug, not the client's fault."""
    return next((code for kind, code in _STATUS if isinstance(exc, kind)), 500)


def internal_error(request: Request, exc: BaseException) -> JSONResponse:
    """A 500: the client gets a request id and nothing of the error (its text may hold anything, a
    DSN in a driver error); the log gets the error with the request id and the thread."""
    request_id = uuid.uuid4().hex[:16]
    thread_id = request.path_params.get("thread_id")
    log.error(
        "request %s: unhandled %s on %s %s (thread %r, user %r)",
        request_id,
        type(exc).__name__,
        request.method,
        request.url.path,
        thread_id,
        getattr(request.state, "user", None),
        exc_info=exc,
    )
    message = f"internal error; the service log has the details under request id {request_id}"
    response = JSONResponse(
        {"error": {"type": "InternalError", "message": message, "request_id": request_id}}, status_code=500
    )
    response.headers["X-Request-ID"] = request_id
    return response


def add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(PesAgentError)
    async def agent_error(request: Request, exc: PesAgentError) -> JSONResponse:
        if isinstance(exc, (UnknownThreadError, ThreadAccessError)):
            return error(404, "UnknownThreadError", not_found(str(request.path_params.get("thread_id"))))
        status = status_for(exc)
        if status == 500:  # a library error with no status here (ScriptExhaustedError, ...): a bug of ours
            return internal_error(request, exc)
        # The library's messages name the thread, the suspension and what to do, and never a secret.
        return error(status, type(exc).__name__, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        route = request.scope.get("route")
        example = BODY_EXAMPLES.get(getattr(route, "path", ""))
        return error(422, "RequestValidationError", validation_message(exc.errors(), example))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = HTTPStatus(exc.status_code).phrase.replace(" ", "")
        return error(exc.status_code, kind, str(exc.detail), headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return internal_error(request, exc)


def validation_message(errors: Any, example: str | None) -> str:
    """One clause per problem, naming the field; the rejected values are not echoed."""
    problems: list[str] = []
    in_body = False
    for err in errors:
        loc = [str(part) for part in err.get("loc", ())]
        where, field = (loc[0], ".".join(loc[1:])) if loc else ("request", "")
        in_body = in_body or where == "body"
        if err.get("type") == "json_invalid":
            problems.append("the request body is not valid JSON")
        elif loc == ["path", "thread_id"]:  # the id itself is not echoed: it may be huge, or hold a NUL
            problems.append(f"`thread_id` (path): {THREAD_ID_RULE}")
        elif where == "body" and not field:
            missing = err.get("type") == "missing"
            problems.append("the request body is missing" if missing else f"the request body: {err['msg']}")
        else:
            problems.append(f"`{field}` ({where}): {err.get('msg')}")
    hint = f"; send JSON such as {example}" if example and in_body else ""
    return "invalid request: " + "; ".join(problems) + hint
