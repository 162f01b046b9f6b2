"""pes-agent inside a web service: one `ArtInstance` per process, shared by every request.

Run it (see README.md beside this file)::

    pip install -e '.[service]'
    uvicorn examples.service.app:app --port 8000 --timeout-graceful-shutdown 5

(without the timeout, uvicorn waits at shutdown for every client still reading an event stream)

The instance is built once at start-up, from the config file in ``PES_AGENT_CONFIG`` (default: the
repository's ``config/demo.yaml``), and closed at shutdown. Routes:

- ``POST /threads/{id}/messages`` ``{"query": "..."}``: run a query; the body is the final response.
  Every run *status* (``success``, ``partial``, ``needs_input``, ``suspended``, ``error``) is a result
  and comes with 200: a failed run is not a failed request.
- ``GET /threads/{id}/events``: Server-Sent Events of the thread, live; ``?since=<epoch seconds>``
  or a ``Last-Event-ID`` header replays stored events first.
- ``POST /threads/{id}/resume`` ``{"suspension_id": "...", "decision": {...}}``: a person's decision.
- ``GET /threads/{id}``: the saved state and what the thread waits for.

Refusals come back as ``{"error": {"type", "message"}}`` with the library's own message:
404 unknown thread; 409 when the thread's current state forbids the request (busy, waiting for
approval, or not waiting on the suspension named); 422 for a request that cannot be used.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from pes_agent import (
    ArtInstance,
    ConfigError,
    Event,
    EventType,
    InvalidInputError,
    PesAgentError,
    ThreadBusyError,
    ThreadSuspendedError,
    UnknownSuspensionError,
    UnknownThreadError,
    UnknownToolError,
    VersionConflictError,
    create_art_instance,
)

ArtFactory = Callable[[], Awaitable[ArtInstance]]
"""Builds the instance at start-up; tests pass one that injects a `ScriptedProvider`."""

CONFIG_ENV = "PES_AGENT_CONFIG"
DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "config" / "demo.yaml"

log = logging.getLogger("pes_agent.service")

# Most specific first: the first match decides. UnknownSuspensionError is a 409, not a 404: the
# thread exists but waits on another suspension (or none, e.g. one already resolved), so the client
# should look at `GET /threads/{id}` rather than conclude the thread is gone.
_STATUS: tuple[tuple[type[PesAgentError], int], ...] = (
    (UnknownThreadError, 404),
    (ThreadBusyError, 409),
    (ThreadSuspendedError, 409),
    (UnknownSuspensionError, 409),
    (VersionConflictError, 409),
    (InvalidInputError, 422),
    (ConfigError, 422),
    (UnknownToolError, 422),
)

_BODY_EXAMPLES = {
    "/threads/{thread_id}/messages": '{"query": "What is 2 + 40?"}',
    "/threads/{thread_id}/resume": '{"suspension_id": "susp_...", "decision": {"approved": true}}',
}


class MessageIn(BaseModel):
    """A user's message; ``options`` are per-call `ThreadConfig` settings (a public service should
    allow-list them rather than pass a client's choice of provider or limits through)."""

    model_config = ConfigDict(extra="forbid")
    query: str
    options: dict[str, Any] | None = None


class ResumeIn(BaseModel):
    """A decision on a suspension; without ``suspension_id`` it recovers a run that died."""

    model_config = ConfigDict(extra="forbid")
    suspension_id: str | None = None
    decision: dict[str, Any] | None = Field(
        default=None, description="`{approved, reason, modified_args}` or `{values: {...}}`"
    )


@dataclass
class _Holder:
    """The one instance, set by the lifespan; routes read it through `get`."""

    art: ArtInstance | None = None

    def get(self) -> ArtInstance:
        if self.art is None:
            raise RuntimeError("the service's ArtInstance is not running: serve the app with uvicorn")
        return self.art


def create_app(
    config_path: str | os.PathLike[str] | None = None,
    *,
    art_factory: ArtFactory | None = None,
    keepalive_s: float = 15.0,
) -> FastAPI:
    """The service; ``art_factory`` replaces building the instance from ``config_path``."""
    path = Path(config_path or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG)
    factory = art_factory or (lambda: create_art_instance(path))
    holder = _Holder()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        holder.art = await factory()
        try:
            yield
        finally:
            art = holder.get()
            holder.art = None
            await art.aclose()

    app = FastAPI(title="pes-agent service", lifespan=lifespan)
    _add_error_handlers(app)

    @app.post("/threads/{thread_id}/messages")
    async def post_message(thread_id: str, body: MessageIn) -> dict[str, Any]:
        response = await holder.get().process(body.query, thread_id=thread_id, options=body.options)
        return response.to_dict()

    @app.post("/threads/{thread_id}/resume")
    async def resume(thread_id: str, body: ResumeIn) -> dict[str, Any]:
        if body.suspension_id is None and body.decision is not None:
            raise InvalidInputError(
                f"`decision` needs the `suspension_id` it answers; `GET /threads/{thread_id}` shows the "
                "pending one (without both, `resume` recovers an interrupted run)"
            )
        response = await holder.get().resume(thread_id, body.suspension_id, body.decision)
        return response.to_dict()

    @app.get("/threads/{thread_id}")
    async def get_thread(thread_id: str) -> dict[str, Any]:
        art = holder.get()
        state = await art.get_thread_state(thread_id)
        if state is None:
            raise UnknownThreadError(
                f"thread {thread_id!r} has no stored state; start it with `POST /threads/{{id}}/messages`"
            )
        return {
            "thread_id": thread_id,
            "state": state.model_dump(mode="json"),
            "suspension": await art.check_for_suspended_state(thread_id),
        }

    @app.get("/threads/{thread_id}/events")
    async def events(
        thread_id: str,
        since: float | None = None,
        last_event_id: str | None = Header(default=None),
    ) -> StreamingResponse:
        return StreamingResponse(
            event_stream(
                holder.get(), thread_id, since=since, last_id=last_event_id, keepalive_s=keepalive_s
            ),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    return app


# -- Server-Sent Events ---------------------------------------------------------------------------


async def event_stream(
    art: ArtInstance, thread_id: str, *, since: float | None, last_id: str | None, keepalive_s: float
) -> AsyncIterator[str]:
    """The thread's events as SSE frames, until the client leaves.

    It subscribes before reading the backlog, so an event published in between is in the queue
    rather than lost (and skipped there when the backlog already had it). The first frame, a
    comment, tells a client that the subscription is in place. Leaving cancels this generator
    (Starlette does, on disconnect), and `finally` unsubscribes.
    """
    queue: asyncio.Queue[Event] = asyncio.Queue()
    subscription = art.subscribe(queue.put_nowait, thread_id=thread_id)
    try:
        yield f": events of thread {json.dumps(thread_id)}\n\n"
        replayed: set[str] = set()
        for event in await _backlog(art, thread_id, since, last_id):
            replayed.add(event.id)
            yield sse_frame(event)
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), keepalive_s)
            except TimeoutError:
                yield ": keep-alive\n\n"  # proxies close connections that stay silent
                continue
            if event.id not in replayed:
                yield sse_frame(event)
    finally:
        subscription.close()


async def _backlog(art: ArtInstance, thread_id: str, since: float | None, last_id: str | None) -> list[Event]:
    """Stored events to send before live ones: after ``Last-Event-ID`` (a browser reconnecting),
    else after ``since``. An id the store does not hold (a TOKEN, never stored) replays nothing."""
    if last_id is not None:
        stored = await art.get_observations(thread_id)
        ids = [event.id for event in stored]
        return stored[ids.index(last_id) + 1 :] if last_id in ids else []
    if since is not None:
        return await art.get_observations(thread_id, since=since)
    return []


def sse_frame(event: Event) -> str:
    """``id``/``event``/``data`` lines; TOKEN events carry no id, since they cannot be replayed."""
    data = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
    head = "" if event.type is EventType.TOKEN else f"id: {event.id}\n"
    return f"{head}event: {event.type.value}\ndata: {data}\n\n"


# -- errors ---------------------------------------------------------------------------------------


def _error(status: int, kind: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status)


def status_for(exc: PesAgentError) -> int:
    """500 for anything unmapped: such an error escaping a request is a bug, not the client's fault."""
    return next((code for kind, code in _STATUS if isinstance(exc, kind)), 500)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(PesAgentError)
    async def agent_error(_: Request, exc: PesAgentError) -> JSONResponse:
        # The library's messages name the thread, the suspension and what to do, and never a secret.
        return _error(status_for(exc), type(exc).__name__, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        route = request.scope.get("route")
        example = _BODY_EXAMPLES.get(getattr(route, "path", ""))
        return _error(422, "RequestValidationError", validation_message(exc.errors(), example))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = HTTPStatus(exc.status_code).phrase.replace(" ", "")
        return _error(exc.status_code, kind, str(exc.detail))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Its text may hold anything (a DSN in a driver error): it goes to the log, not the client.
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        return _error(500, "InternalError", "internal error; the service log has the details")


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
        elif where == "body" and not field:
            missing = err.get("type") == "missing"
            problems.append("the request body is missing" if missing else f"the request body: {err['msg']}")
        else:
            problems.append(f"`{field}` ({where}): {err.get('msg')}")
    hint = f"; send JSON such as {example}" if example and in_body else ""
    return "invalid request: " + "; ".join(problems) + hint


app = create_app()
"""For ``uvicorn examples.service.app:app``; nothing is built until the server starts."""
