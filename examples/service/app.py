"""pes-agent inside a web service: one `ArtInstance` per process, shared by every request, each
request on behalf of a user who may see and steer only their own threads.

Run it (see README.md beside this file)::

    pip install -e '.[service]'
    PES_AGENT_TOKENS=tok-ana:ana,tok-ben:ben \\
      uvicorn examples.service.app:app --port 8000 --timeout-graceful-shutdown 5

(without the timeout, uvicorn waits at shutdown for every client still reading an event stream)

The instance is built once at start-up, from the config file in ``PES_AGENT_CONFIG`` (default: the
repository's ``config/demo.yaml``), and closed at shutdown; who may use the service and what a
client may ask come from ``PES_AGENT_SERVICE_CONFIG`` and ``PES_AGENT_TOKENS`` (see settings.py).
Routes (all but the page need ``Authorization: Bearer <token>``):

- ``GET /``: a page to start runs, watch them live and decide their pauses (``/page/*``: its files).
- ``GET /me``: the user the token stands for.
- ``GET /threads``: the user's threads, latest first.
- ``POST /threads/{id}/messages`` ``{"query": "...", "options": {...}}``: run a query; the body is
  the final response. Every run *status* is a result and comes with 200.
- ``GET /threads/{id}/events``: Server-Sent Events of the thread, live; ``?since=<epoch seconds>``
  or a ``Last-Event-ID`` header replays stored events first.
- ``POST /threads/{id}/resume`` ``{"suspension_id": "...", "decision": {...}}``: a person's decision.
- ``GET /threads/{id}``: the saved state, the conversation and what the thread waits for.

Refusals come back as ``{"error": {"type", "message"}}``: 401 without a valid token; 404 for a
thread that does not exist *or is another user's* (the same body for both); 409 when the thread's
state forbids the request; 413 for a body over the limit; 422 for a request that cannot be used
(also options outside the allow-list and an overlong query); 429 with ``Retry-After`` over the rate
limit or the per-user cap on runs in progress.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import Depends, FastAPI, Header, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pes_agent import ArtInstance, ConfigError, InvalidInputError, UnknownThreadError, create_art_instance

from .access import TokenTable, current_user
from .errors import THREAD_ID_PATTERN, THREAD_ID_RULE, add_error_handlers
from .headers import NO_FRAMING, SecurityHeaders
from .limits import AuthThrottle, BodyLimit, RateLimiter, RunSlots
from .options import checked_options, instance_caps
from .settings import ServiceSettings, load_settings
from .sse import event_stream
from .workers import open_producer, response_of

ArtFactory = Callable[[], Awaitable[ArtInstance]]
"""Builds the instance at start-up; tests pass one that injects a `ScriptedProvider`."""

CONFIG_ENV = "PES_AGENT_CONFIG"
DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "config" / "demo.yaml"
PAGE = Path(__file__).resolve().parent / "page"
PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; base-uri "
    f"'none'; {NO_FRAMING}"
)
"""The page's Content-Security-Policy: its own script and style only, so even text that slipped
into the page as HTML could not run a script (it never does: the page sets textContent); and no
other site may frame it (a framed page could be clicked into approving)."""
PUBLIC_PREFIXES = ("/page/",)
"""Served without a token (with ``/`` itself): the page's own files."""


class MessageIn(BaseModel):
    """A user's message; ``options`` are per-call `ThreadConfig` settings, checked against the
    service's allow-list (`options.py`) before the library sees them."""

    model_config = ConfigDict(extra="forbid")
    query: str
    options: dict[str, Any] | None = None


class ResumeIn(BaseModel):
    """A decision on a suspension; without ``suspension_id`` it recovers a run that died."""

    model_config = ConfigDict(extra="forbid")
    suspension_id: str | None = None
    decision: dict[str, Any] | None = Field(
        default=None,
        description="`{approved, reason, modified_args}` or `{values: {...}}`, read as a "
        "`pes_agent.Decision`: "
        "a field of the wrong type or that the pause does not take is a 422 and the pause stands",
    )


@dataclass
class _Holder:
    """The one instance, set by the lifespan; routes read it through `get`."""

    art: ArtInstance | None = None
    producer: Any = None
    """A `pes_agent.workers.Producer` when the config sends runs to workers (`workers.enabled`)."""

    def get(self) -> ArtInstance:
        if self.art is None:
            raise RuntimeError("the service's ArtInstance is not running: serve the app with uvicorn")
        return self.art


def create_app(
    config_path: str | os.PathLike[str] | None = None,
    *,
    art_factory: ArtFactory | None = None,
    settings: ServiceSettings | None = None,
    keepalive_s: float = 15.0,
    clock: Callable[[], float] | None = None,
) -> FastAPI:
    """The service; ``art_factory`` replaces building the instance from ``config_path``, ``settings``
    replaces reading them from ``PES_AGENT_SERVICE_CONFIG``/``PES_AGENT_TOKENS`` at start-up."""
    path = Path(config_path or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG)
    factory = art_factory or (lambda: create_art_instance(path))
    holder = _Holder()
    rules = settings or load_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if not rules.tokens:  # refused at start-up, not at import: `app` below is built on import
            raise ConfigError(
                "no users: set PES_AGENT_TOKENS=token:user,token:user or `tokens` in the service settings"
            )
        holder.art = await factory()
        # SDKs imported and clients made now, not by the first request on the server's event loop
        await holder.art.prepare_providers()
        if holder.art.config.workers.enabled:
            holder.producer = await open_producer(holder.art)
        try:
            yield
        finally:
            art, producer = holder.get(), holder.producer
            holder.art = holder.producer = None
            if producer is not None:
                await producer.aclose()
            await art.aclose()

    docs = {} if rules.docs else {"docs_url": None, "redoc_url": None, "openapi_url": None}
    app = FastAPI(title="pes-agent service", lifespan=lifespan, **docs)  # type: ignore[arg-type]
    app.state.tokens = tokens = TokenTable(rules.tokens)
    app.state.rules = rules
    ticking = clock or time.monotonic
    app.state.rate = RateLimiter(rules.limits.requests_per_minute, rules.limits.burst, ticking)
    app.state.slots = RunSlots(rules.limits.concurrent_runs)
    add_error_handlers(app)
    # the last added runs first: headers on every answer, then failed-auth throttling, then the body limit
    app.add_middleware(BodyLimit, max_bytes=rules.limits.max_body_bytes)
    failures = RateLimiter(rules.limits.auth_failures_per_minute, rules.limits.auth_failure_burst, ticking)
    app.add_middleware(
        AuthThrottle,
        limiter=failures,
        known_token=lambda token: tokens.user(token) is not None,
        public=PUBLIC_PREFIXES,
    )
    app.add_middleware(SecurityHeaders)
    _add_routes(app, holder, keepalive_s)
    app.mount("/page", StaticFiles(directory=PAGE), name="page")
    return app


async def user_within_rate(request: Request, user: Annotated[str, Depends(current_user)]) -> str:
    """The user, once their request fits the rate limit (429 with ``Retry-After`` otherwise)."""
    request.app.state.rate.take(user)
    return user


User = Annotated[str, Depends(user_within_rate)]

ThreadId = Annotated[str, PathParam(pattern=THREAD_ID_PATTERN, description=THREAD_ID_RULE)]

Body = TypeVar("Body", bound=BaseModel)


def json_body(model: type[Body]) -> Callable[..., Awaitable[Body]]:
    """The request body as ``model``, read only once the user is known: a request without a valid
    token is a 401 whatever its body (FastAPI parses a declared body before any dependency)."""

    async def parse(request: Request, user: User) -> Body:
        raw = await request.body()
        if not raw.strip():
            raise RequestValidationError([{"type": "missing", "loc": ("body",), "msg": "Field required"}])
        try:
            return model.model_validate_json(raw)
        except ValidationError as exc:
            errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
            raise RequestValidationError(errors) from None

    return parse


def _body_doc(model: type[BaseModel]) -> dict[str, Any]:
    """The body's schema for /docs (when enabled): the route reads it itself, after authentication."""
    schema = {"content": {"application/json": {"schema": model.model_json_schema()}}, "required": True}
    return {"requestBody": schema}


def _add_routes(app: FastAPI, holder: _Holder, keepalive_s: float) -> None:
    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        """The page itself is public: it asks for a token and sends it with every request."""
        return FileResponse(
            PAGE / "index.html", headers={"Cache-Control": "no-cache", "Content-Security-Policy": PAGE_POLICY}
        )

    @app.get("/me")
    async def me(user: User) -> dict[str, str]:
        return {"user_id": user}

    @app.get("/threads")
    async def threads(user: User) -> dict[str, Any]:
        listed = await holder.get().list_threads(user_id=user)
        return {"threads": [vars(summary) for summary in listed]}

    @app.post("/threads/{thread_id}/messages", openapi_extra=_body_doc(MessageIn))
    async def post_message(
        thread_id: ThreadId,
        request: Request,
        user: User,
        body: Annotated[MessageIn, Depends(json_body(MessageIn))],
    ) -> dict[str, Any]:
        art, rules = holder.get(), request.app.state.rules
        if len(body.query) > rules.limits.max_query_chars:
            raise InvalidInputError(
                f"the query is {len(body.query)} characters; this service accepts at most "
                f"{rules.limits.max_query_chars}"
            )
        options = checked_options(body.options, rules.options, instance_caps(art.config))
        with request.app.state.slots.hold(user):
            if holder.producer is not None:
                return await response_of(
                    holder.producer.enqueue(body.query, thread_id=thread_id, user_id=user, options=options)
                )
            response = await art.process(body.query, thread_id=thread_id, user_id=user, options=options)
        return response.to_dict()

    @app.post("/threads/{thread_id}/resume", openapi_extra=_body_doc(ResumeIn))
    async def resume(
        thread_id: ThreadId,
        request: Request,
        user: User,
        body: Annotated[ResumeIn, Depends(json_body(ResumeIn))],
    ) -> dict[str, Any]:
        if body.suspension_id is None and body.decision is not None:
            raise InvalidInputError(
                f"`decision` needs the `suspension_id` it answers; `GET /threads/{thread_id}` shows the "
                "pending one (without both, `resume` recovers an interrupted run)"
            )
        with request.app.state.slots.hold(user):
            if holder.producer is not None and body.suspension_id is not None:
                # checked here, where the tools are, so a bad decision is a 422 and never reaches a worker
                decision = await holder.get().check_decision(
                    thread_id, body.suspension_id, body.decision, user_id=user
                )
                return await response_of(
                    holder.producer.resume(thread_id, body.suspension_id, decision, user_id=user)
                )
            if holder.producer is not None:
                raise InvalidInputError(
                    "runs on workers are recovered by the workers; name a `suspension_id`"
                )
            response = await holder.get().resume(thread_id, body.suspension_id, body.decision, user_id=user)
        return response.to_dict()

    @app.get("/threads/{thread_id}")
    async def get_thread(thread_id: ThreadId, user: User) -> dict[str, Any]:
        art = holder.get()
        state = await art.get_thread_state(thread_id, user_id=user)
        if state is None:
            raise UnknownThreadError(thread_id)
        history = await art.get_history(thread_id, user_id=user)
        return {
            "thread_id": thread_id,
            "state": state.model_dump(mode="json"),
            "history": [message.model_dump(mode="json") for message in history],
            "suspension": await art.check_for_suspended_state(thread_id, user_id=user),
        }

    @app.get("/threads/{thread_id}/events")
    async def events(
        thread_id: ThreadId,
        user: User,
        since: float | None = None,
        last_event_id: str | None = Header(default=None),
    ) -> StreamingResponse:
        art = holder.get()
        await art.get_thread_state(thread_id, user_id=user)  # another user's thread: 404 before streaming
        return StreamingResponse(
            event_stream(
                art,
                thread_id,
                user,
                since=since,
                last_id=last_event_id,
                keepalive_s=keepalive_s,
                follow=holder.producer is not None,
            ),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )


app = create_app()
"""For ``uvicorn examples.service.app:app``; nothing is built until the server starts."""
