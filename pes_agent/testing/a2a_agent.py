"""A small real A2A agent (the SDK's server API) to test delegation against; needs the ``a2a`` extra.

Run it as a remote agent runs: ``python -m pes_agent.testing.a2a_agent --port 9200`` serves the card
at ``http://127.0.0.1:9200/.well-known/agent-card.json`` and JSON-RPC at ``/``. What it does depends on
the task's first word, so one agent covers what a client must handle:

- ``echo TEXT``: completes with ``TEXT`` as a text artifact, after a ``working`` update;
- ``data TEXT``: completes with ``TEXT`` and a data part ``{"length": len(TEXT)}``;
- ``fail REASON``: the task fails with ``REASON``;
- ``ask QUESTION``: the task asks for input with ``QUESTION``;
- ``sleep SECONDS``: works that long, then completes (past a client's timeout; honours cancel);
- ``crash``: ends the server process mid-task (a connection dropped mid-call).

``--no-streaming`` leaves streaming off the card, so clients send one blocking request;
``--bad-card`` serves a card that is no agent card, for the start-up error.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from a2a.helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as a2a
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


class ScriptedAgent(AgentExecutor):
    """Does what the task's first word says (see the module docstring)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.message is None:
            return
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        verb, _, rest = context.get_user_input().strip().partition(" ")
        await updater.start_work(updater.new_agent_message([new_text_part(f"working on {verb}")]))
        if verb == "crash":
            os._exit(3)
        if verb == "sleep":
            await asyncio.sleep(float(rest or "60"))
        if verb == "fail":
            await updater.failed(updater.new_agent_message([new_text_part(rest)]))
        elif verb == "ask":
            await updater.requires_input(updater.new_agent_message([new_text_part(rest)]))
        else:
            parts = [new_text_part(rest or verb)]
            if verb == "data":
                parts.append(new_data_part({"length": len(rest)}))
            await updater.add_artifact(parts, name="answer")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id and context.context_id:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def card(url: str, *, streaming: bool = True) -> a2a.AgentCard:
    return a2a.AgentCard(
        name="Scripted test agent",
        description="Echoes, fails, asks or sleeps as the task's first word says.",
        version="1.0",
        supported_interfaces=[
            a2a.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=a2a.AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            a2a.AgentSkill(
                id="echo",
                name="echo",
                description="Repeat the text after `echo`.",
                tags=["echo"],
                examples=["echo hello"],
            ),
            a2a.AgentSkill(
                id="sleep", name="sleep", description="Work for the given seconds.", tags=["sleep"]
            ),
        ],
    )


def app(url: str, *, streaming: bool = True, bad_card: bool = False) -> Starlette:
    served = card(url, streaming=streaming)
    handler = DefaultRequestHandler(
        agent_executor=ScriptedAgent(), task_store=InMemoryTaskStore(), agent_card=served
    )
    routes = [*create_agent_card_routes(served), *create_jsonrpc_routes(handler, rpc_url="/")]
    if bad_card:

        async def not_a_card(request: Request) -> JSONResponse:
            return JSONResponse({"name": ["not", "a", "name"], "skills": "none"})

        routes = [Route("/.well-known/agent-card.json", not_a_card), *routes[1:]]
    return Starlette(routes=routes)


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=9200)
    parser.add_argument("--no-streaming", action="store_true")
    parser.add_argument("--bad-card", action="store_true")
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}/"
    served = app(url, streaming=not args.no_streaming, bad_card=args.bad_card)
    uvicorn.run(served, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
