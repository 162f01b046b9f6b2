"""An instance served as an A2A agent, on the official ``a2a-sdk`` (``pip install 'pes-agent[a2a]'``).

``a2a_app(art, url=...)`` is an ASGI app (Starlette) with the agent card at
``/.well-known/agent-card.json`` and the JSON-RPC endpoint at ``/``; ``pes-agent serve-a2a`` runs it
with uvicorn. Each A2A context is one thread (``a2a-<contextId>``), so a client's follow-up messages
continue the conversation. A task runs the whole plan-execute-synthesize run:

- progress: every todo item that finishes is a ``working`` status update with its description;
- ``success``/``partial``: the answer is the task's artifact and the task is completed (the metadata
  says which: a partial answer states what is missing in its text);
- ``needs_input`` (a clarification) and ``suspended`` (a tool waiting for approval): the task asks for
  input. A clarification is answered with text; an approval with a data part
  ``{"approved": true|false, "reason": "...", "modified_args": {...}}`` (a `Decision`: one that does
  not fit the pause fails the task with the field it refuses, and the pause waits for the next);
- ``error`` and refusals (a busy thread, bad input, another caller's conversation): the task fails
  with the reason.

With ``tokens`` (``pes-agent serve-a2a`` reads ``PES_AGENT_TOKENS``) every call needs a bearer token
and runs as its user (``a2a_auth``); without, anyone who reaches the address may use any conversation
whose id they know, so the command serves open only on loopback unless told ``--open``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from a2a.helpers import get_data_parts, new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as a2a
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware

from pes_agent.agent.response import AgentFinalResponse
from pes_agent.decision import Decision
from pes_agent.errors import PesAgentError
from pes_agent.events import Event, EventType
from pes_agent.instance import ArtInstance
from pes_agent.serving.a2a_auth import BearerUsers, refuse

MAX_SKILLS = 32
"""A card lists at most this many tools as skills; a planner reading it needs the gist, not a catalogue."""


def agent_card(
    art: ArtInstance,
    *,
    url: str,
    name: str | None = None,
    description: str | None = None,
    bearer: bool = False,
) -> a2a.AgentCard:
    """The card: the instance's persona as the agent, one skill per tool (what a calling planner reads)."""
    tools = list(art.registry)[:MAX_SKILLS]
    skills = [
        a2a.AgentSkill(
            id=spec.name,
            name=spec.name,
            description=spec.summary,
            tags=list(spec.capabilities) or [spec.name],
        )
        for spec in tools
    ]
    about = description or (
        f"A plan-execute agent with {len(list(art.registry))} tool(s); send a task in words, get an answer."
    )
    card = a2a.AgentCard(
        name=name or art.config.persona.name,
        description=about,
        version="1.0",
        supported_interfaces=[
            a2a.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=a2a.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )
    if bearer:
        card.security_schemes["bearer"].http_auth_security_scheme.scheme = "Bearer"
        card.security_requirements.add().schemes["bearer"].SetInParent()
    return card


def a2a_app(
    art: ArtInstance,
    *,
    url: str,
    name: str | None = None,
    description: str | None = None,
    tokens: Mapping[str, str] | None = None,
) -> Starlette:
    """The ASGI app serving ``art`` at ``url`` (the address clients reach it by, put in the card);
    ``tokens`` (token → user id) makes every call but the card's need a bearer token."""
    card = agent_card(art, url=url, name=name, description=description, bearer=bool(tokens))
    handler = DefaultRequestHandler(
        agent_executor=PesAgentExecutor(art), task_store=InMemoryTaskStore(), agent_card=card
    )
    card_routes = create_agent_card_routes(card)
    middleware = []
    if tokens:
        public = frozenset(route.path for route in card_routes)
        backend = BearerUsers(tokens, public=public)
        middleware.append(Middleware(AuthenticationMiddleware, backend=backend, on_error=refuse))
    return Starlette(
        routes=[*card_routes, *create_jsonrpc_routes(handler, rpc_url="/")], middleware=middleware
    )


class PesAgentExecutor(AgentExecutor):
    """One A2A task = one run of the instance on the context's thread."""

    def __init__(self, art: ArtInstance) -> None:
        self.art = art
        self._runs: dict[str, asyncio.Task[AgentFinalResponse]] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.message is None:
            return
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        thread_id = f"a2a-{task.context_id}"
        progress = _Progress(updater)
        subscription = self.art.subscribe(progress, thread_id=thread_id, types=[EventType.ITEM_STATUS])
        user = context.call_context.user
        user_id = user.user_name if user.is_authenticated else None  # with tokens: always known
        run = asyncio.ensure_future(self._answer(context, thread_id, user_id))
        self._runs[task.id] = run
        try:
            response = await run
        except PesAgentError as exc:
            await progress.flush()
            await updater.failed(updater.new_agent_message([new_text_part(str(exc))]))
            return
        finally:
            subscription.close()
            self._runs.pop(task.id, None)
        await progress.flush()
        pending = (
            await self.art.check_for_suspended_state(thread_id, user_id=user_id)
            if response.suspension
            else None
        )
        await _report(updater, response, pending)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        run = self._runs.get(context.task_id or "")
        if run is not None:
            run.cancel()
        if context.task_id and context.context_id:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    async def _answer(
        self, context: RequestContext, thread_id: str, user_id: str | None
    ) -> AgentFinalResponse:
        """A decision for a pending approval resumes it; any other message is a query (or the answer to
        the thread's clarification question, which ``process`` takes as such)."""
        message = context.message
        assert message is not None
        pending = await self.art.check_for_suspended_state(thread_id, user_id=user_id)
        decisions = [
            d for d in get_data_parts(list(message.parts)) if isinstance(d, dict) and "approved" in d
        ]
        if pending is not None and pending.get("kind") == "approval":
            if not decisions:
                raise _NeedsDecision(pending)
            # checked whole (`InvalidDecisionError` fails the task; the pause stands for the next one)
            decision = Decision.from_mapping(decisions[-1])
            return await self.art.resume(thread_id, pending["suspension_id"], decision, user_id=user_id)
        return await self.art.process(context.get_user_input(), thread_id=thread_id, user_id=user_id)


class _NeedsDecision(PesAgentError):
    def __init__(self, pending: dict[str, Any]) -> None:
        super().__init__(
            f"the thread waits for approval of tool {pending.get('tool')!r}; answer with a data part "
            '{"approved": true} or {"approved": false, "reason": "..."}'
        )


class _Progress:
    """Each finished todo item as a ``working`` status update, so the caller sees the run advance.

    The bus calls listeners synchronously; the updates are sent as tasks, all awaited before the task's
    end is reported (an update after the end would be refused)."""

    def __init__(self, updater: TaskUpdater) -> None:
        self.updater = updater
        self.sent: list[asyncio.Task[None]] = []

    def __call__(self, event: Event) -> None:
        status = event.data.get("status")
        if status in ("completed", "failed"):
            message = self.updater.new_agent_message([new_text_part(f"Step {event.step_id} {status}.")])
            self.sent.append(
                asyncio.ensure_future(self.updater.update_status(a2a.TASK_STATE_WORKING, message))
            )

    async def flush(self) -> None:
        await asyncio.gather(*self.sent, return_exceptions=True)


async def _report(updater: TaskUpdater, response: AgentFinalResponse, pending: dict[str, Any] | None) -> None:
    """The run's outcome as the task's end, or its request for input with what the thread waits for
    (``check_for_suspended_state``: the suspension id, kind, tool, arguments and fields asked)."""
    meta = {"pes_agent_status": response.status, "thread_id": response.thread_id}
    if response.status in ("success", "partial"):
        await updater.add_artifact([new_text_part(response.response)], name="answer", metadata=meta)
        await updater.complete()
    elif response.status in ("needs_input", "suspended"):
        parts = [new_text_part(response.response), new_data_part(_plain(pending or {}))]
        await updater.requires_input(updater.new_agent_message(parts, metadata=meta))
    else:
        await updater.failed(updater.new_agent_message([new_text_part(response.response)], metadata=meta))


def _plain(data: Any) -> Any:
    """JSON values only (a data part is a protobuf Value)."""
    return json.loads(json.dumps(data, default=str))
