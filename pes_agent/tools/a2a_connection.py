"""One remote A2A agent for ``pes_agent.tools.a2a``: its card, its client, and one delegated task.

A task is sent as a text message and followed to its end: over the agent's event stream when its card
offers one (and ``streaming`` is on), else by one blocking request; with ``streaming: false`` the send
returns at once and ``GetTask`` is polled until the task ends. The whole exchange is bounded by
``timeout_s``; past it the task is cancelled (best effort) and the step gets a tool error. Every
failure is a ``ToolError`` naming the agent (``describe_agent``); header values and the URL's password
and query are secrets, masked in every message, also in what the SDK or the agent says (``secrets_of``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from a2a.client import A2ACardResolver, A2AClientError, Client, ClientConfig, ClientFactory
from a2a.helpers import get_data_parts, get_text_parts
from a2a.types import a2a_pb2 as a2a
from a2a.utils.constants import TransportProtocol

from pes_agent.config.agents import RemoteAgentConfig
from pes_agent.config.base import shown_url
from pes_agent.errors import ToolError
from pes_agent.secrets import scrub

logger = logging.getLogger("pes_agent.tools.a2a")

_FINISHED = {
    a2a.TASK_STATE_FAILED: "failed",
    a2a.TASK_STATE_CANCELED: "was cancelled",
    a2a.TASK_STATE_REJECTED: "was rejected",
}
_WAITING = {a2a.TASK_STATE_INPUT_REQUIRED: "more input", a2a.TASK_STATE_AUTH_REQUIRED: "authorization"}
_RUNNING = {a2a.TASK_STATE_UNSPECIFIED, a2a.TASK_STATE_SUBMITTED, a2a.TASK_STATE_WORKING}
_POLL_FIRST_S, _POLL_MAX_S = 0.1, 2.0


def describe_agent(agent: RemoteAgentConfig) -> str:
    """How logs and errors name an agent: its id and URL without credentials or query."""
    return f"agent {agent.id!r} ({shown_url(agent.url).rstrip('/')})"


def secrets_of(agent: RemoteAgentConfig) -> list[str]:
    """What no message may show of an agent's config: its header values (and the token after a
    scheme such as ``Bearer``), and its URL's password and query, since the SDK's messages quote the
    URL as given and an agent may echo what it was sent."""
    url = urlsplit(agent.url)
    values = [v.get_secret_value() for v in agent.headers.values()]
    found = [*values, *(v.split()[-1] for v in values if v.split()), url.password or "", url.query]
    return [secret for secret in found if len(secret) >= 4]


class RemoteAgent:
    """A remote agent: the card read at start-up, and a client reused for every task."""

    def __init__(self, config: RemoteAgentConfig) -> None:
        self.config = config
        self.label = describe_agent(config)
        self._secrets = secrets_of(config)
        headers = {k: v.get_secret_value() for k, v in config.headers.items()}
        self._http = httpx.AsyncClient(headers=headers, timeout=config.timeout_s)
        self._client: Client | None = None
        self.card: a2a.AgentCard | None = None

    async def open(self) -> a2a.AgentCard:
        """Read the card and make the client; a ``ConnectionError`` naming the agent when either fails."""
        resolver = A2ACardResolver(self._http, self.config.url, self.config.card_path)
        try:
            async with asyncio.timeout(self.config.timeout_s):
                card = await resolver.get_agent_card()
        except TimeoutError:
            raise ConnectionError(
                f"{self.label}: its card did not come within {self.config.timeout_s:g}s (`timeout_s`)"
            ) from None
        except A2AClientError as exc:
            raise ConnectionError(
                f"{self.label}: its agent card could not be read: {self._scrub(exc)}"
            ) from None
        settings = ClientConfig(
            streaming=self.config.streaming,
            polling=not self.config.streaming,
            httpx_client=self._http,
            supported_protocol_bindings=[TransportProtocol.JSONRPC, TransportProtocol.HTTP_JSON],
        )
        try:
            self._client = ClientFactory(settings).create(card)
        except ValueError as exc:  # no interface of the card speaks a protocol we do
            raise ConnectionError(f"{self.label}: {self._scrub(exc)}") from None
        self.card = card
        return card

    async def ask(self, text: str, *, context_id: str | None = None) -> dict[str, Any]:
        """Send ``text`` as a task and return the answer: ``{"answer": text, "data": [...]}``."""
        client = self._client
        if client is None:
            raise ToolError(f"{self.label} is not connected")
        message = a2a.Message(
            message_id=uuid.uuid4().hex,
            role=a2a.ROLE_USER,
            parts=[a2a.Part(text=text)],
            context_id=context_id or "",
        )
        outcome = _Outcome()
        timeout = self.config.timeout_s
        try:
            async with asyncio.timeout(timeout):
                async for event in client.send_message(a2a.SendMessageRequest(message=message)):
                    outcome.take(event)
                await self._wait(client, outcome)
        except TimeoutError:
            await self._cancel(client, outcome.task_id)
            raise ToolError(
                f"{self.label}: no answer within {timeout:g}s (`timeout_s`); the task was cancelled"
            ) from None
        except (A2AClientError, httpx.HTTPError) as exc:
            raise ToolError(f"{self.label}: the call failed: {self._scrub(_first_line(exc))}") from None
        try:
            return outcome.result(self.label)
        except ToolError as exc:  # the agent's own words, which may quote what it was sent
            raise ToolError(self._scrub(exc)) from None

    async def _wait(self, client: Client, outcome: _Outcome) -> None:
        """Poll the task while it is still running (an agent without streaming may answer early)."""
        delay = _POLL_FIRST_S
        while outcome.message is None and outcome.state in _RUNNING and outcome.task_id:
            await asyncio.sleep(delay)
            delay = min(delay * 2, _POLL_MAX_S)
            outcome.take_task(await client.get_task(a2a.GetTaskRequest(id=outcome.task_id)))

    async def _cancel(self, client: Client, task_id: str) -> None:
        if not task_id:
            return
        try:
            async with asyncio.timeout(5):
                await client.cancel_task(a2a.CancelTaskRequest(id=task_id))
        except Exception as exc:  # noqa: BLE001 -- best effort: the step already failed on the timeout
            logger.info(
                "%s: cancelling task %s failed: %s", self.label, task_id, self._scrub(_first_line(exc))
            )

    def _scrub(self, said: BaseException | str) -> str:
        return scrub(str(said), self._secrets)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()
        await self._http.aclose()


@dataclass
class _Outcome:
    """What the events of one task said so far."""

    task_id: str = ""
    state: a2a.TaskState = a2a.TASK_STATE_UNSPECIFIED
    status_text: str = ""
    artifacts: dict[str, list[a2a.Part]] = field(default_factory=dict)
    message: a2a.Message | None = None

    def take(self, event: a2a.StreamResponse) -> None:
        kind = event.WhichOneof("payload")
        if kind == "task":
            self.take_task(event.task)
        elif kind == "message":
            self.message = event.message
        elif kind == "status_update":
            self.task_id = self.task_id or event.status_update.task_id
            self._status(event.status_update.status)
        elif kind == "artifact_update":
            update = event.artifact_update
            self.task_id = self.task_id or update.task_id
            parts = self.artifacts.setdefault(update.artifact.artifact_id, []) if update.append else []
            parts.extend(update.artifact.parts)
            self.artifacts[update.artifact.artifact_id] = parts

    def take_task(self, task: a2a.Task) -> None:
        self.task_id = task.id
        self._status(task.status)
        if task.artifacts:
            self.artifacts = {a.artifact_id: list(a.parts) for a in task.artifacts}

    def _status(self, status: a2a.TaskStatus) -> None:
        self.state = status.state
        if status.HasField("message"):
            self.status_text = "\n".join(get_text_parts(status.message.parts))

    def result(self, label: str) -> dict[str, Any]:
        if self.message is not None:
            return _answer(list(self.message.parts))
        if self.state == a2a.TASK_STATE_COMPLETED:
            parts = [p for ps in self.artifacts.values() for p in ps]
            return _answer(parts) if parts else {"answer": self.status_text, "data": []}
        said = f": {self.status_text}" if self.status_text else ""
        if self.state in _FINISHED:
            raise ToolError(f"{label}: the task {_FINISHED[self.state]}{said or ' (no reason given)'}")
        if self.state in _WAITING:
            raise ToolError(
                f"{label} needs {_WAITING[self.state]} to go on{said}; send the task again with "
                "everything it needs in the text"
            )
        raise ToolError(
            f"{label}: the answer ended before the task did (state {a2a.TaskState.Name(self.state)})"
        )


def _answer(parts: list[a2a.Part]) -> dict[str, Any]:
    return {"answer": "\n".join(get_text_parts(parts)), "data": get_data_parts(parts)}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def context_for(thread_id: str, agent_id: str) -> str:
    """The A2A context of a thread's conversation with one agent: stable, so the agent keeps the
    thread's earlier tasks as context, and derived, so it learns nothing of our thread ids."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"pes-agent:{agent_id}:{thread_id}").hex
