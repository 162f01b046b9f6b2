"""Handing runs to workers from any process (a web handler, a script): enqueue, resume, handles.

A producer talks only to the DBOS system database (and, for ``resume``, reads the thread from the
store to check the decision answers what the thread waits for); it runs no agent code.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Any

from dbos import DBOS, DBOSClient

from pes_agent.agent.ownership import check_access
from pes_agent.agent.settings import check_suspension, thread_config
from pes_agent.config import ArtInstanceConfig, ThreadConfig
from pes_agent.errors import InvalidInputError, UnknownThreadError
from pes_agent.state.store import StateStore
from pes_agent.workers.queues import provider_of, queue_name, queue_options, system_database
from pes_agent.workers.workflow import DECISION_TOPIC, WORKFLOW, ack_key, response_key

APP_VERSION = "pes-agent-1"
"""The DBOS application version of every pes-agent workflow: producers and workers must agree on it
(DBOS only runs, and recovers, workflows of its own version). Raise it when a change to the agent
would make a run recorded by the old code replay differently."""

ACK_WAIT_S = 5.0
"""How long ``resume`` waits for a waiting workflow to take a decision before enqueuing a new job."""


def workflow_prefix(thread_id: str) -> str:
    """Workflow ids of a thread's runs start with this; the length makes it exact (thread ids are
    free text, and attribute filters are PostgreSQL-only in DBOS)."""
    return f"pes-agent:{len(thread_id)}:{thread_id}:"


class RunHandle:
    """A queued run: its workflow id, the response to wait for, and the workflow's final result."""

    def __init__(self, client: DBOSClient, workflow_id: str, key: str, thread_id: str) -> None:
        self._client = client
        self.workflow_id = workflow_id
        self.thread_id = thread_id
        self._key = key

    async def response(self, timeout_s: float = 600.0) -> dict[str, Any] | None:
        """The ``AgentFinalResponse`` (as a dict) this handle's call led to, once a worker reached it
        (an answer, a pause, an error; ``{"refused": ...}`` when the run could not start,
        ``{"failed": ...}`` when it broke on the worker); None when none came within ``timeout_s``."""
        value = await self._client.get_event_async(self.workflow_id, self._key, timeout_seconds=timeout_s)
        return dict(value) if value is not None else None

    async def result(self) -> dict[str, Any]:
        """The last response of the workflow, once it has ended (after any approvals it waited for)."""
        handle: Any = await self._client.retrieve_workflow_async(self.workflow_id)
        return dict(await handle.get_result())


class Producer:
    """Enqueues runs and delivers decisions; one per process, closed with ``aclose``."""

    def __init__(self, config: ArtInstanceConfig, client: DBOSClient, store: StateStore | None = None) -> None:
        self.config = config
        self._client = client
        self._store = store
        self._queues: set[str] = set()

    @classmethod
    async def open(cls, config: ArtInstanceConfig, *, store: StateStore | None = None) -> Producer:
        """Connect to the system database, first making DBOS's tables there if no worker has yet
        (DBOS's client never does, and a run may be queued before any worker starts)."""
        url = system_database(config)
        name = config.workers.app_name

        def connect() -> DBOSClient:
            DBOS.migrate(url)  # what a worker's launch does: nothing when the tables are up to date
            return DBOSClient(system_database_url=url, application_name=name)

        return cls(config, await asyncio.to_thread(connect), store)

    async def enqueue(
        self,
        query: str,
        *,
        thread_id: str | None = None,
        user_id: str | None = None,
        options: ThreadConfig | Mapping[str, Any] | None = None,
    ) -> RunHandle:
        """Queue a run of ``query`` on a thread (new when not given); a worker will run it."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the query is empty; pass the user's request as a non-empty string")
        parsed = thread_config(options)
        tid = thread_id or f"thread_{uuid.uuid4().hex}"
        trace = uuid.uuid4().hex
        job = {
            "kind": "process", "thread_id": tid, "trace_id": trace, "query": query, "user_id": user_id,
            "options": parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) if parsed else None,
        }
        return await self._submit(job, f"{workflow_prefix(tid)}{trace}", provider_of(self.config, parsed), None)

    async def resume(
        self, thread_id: str, suspension_id: str, decision: Mapping[str, Any], *, user_id: str | None = None
    ) -> RunHandle:
        """Deliver a decision on a paused thread of ``user_id``: to its workflow when one still waits
        for it, else as a new job. With the store given, checked here first, so a wrong suspension id
        or another user's thread is refused in the caller. A waiting workflow acts for the user who
        started its run (the thread's owner)."""
        if self._store is not None:
            state, _ = await self._store.load(thread_id)
            if state is None:
                raise UnknownThreadError(f"thread {thread_id!r} has no stored state; start it with `enqueue`")
            check_access(thread_id, state, user_id)
            check_suspension(thread_id, state, suspension_id)
        message = {"suspension_id": suspension_id, "decision": dict(decision)}
        for waiting in await self._client.list_workflows_async(
            status="PENDING", name=WORKFLOW, workflow_id_prefix=workflow_prefix(thread_id), load_input=False,
            load_output=False,
        ):
            await self._client.send_async(waiting.workflow_id, message, DECISION_TOPIC)
            if await self._client.get_event_async(waiting.workflow_id, ack_key(suspension_id), ACK_WAIT_S):
                return RunHandle(self._client, waiting.workflow_id, response_key(suspension_id), thread_id)
        job = {"kind": "resume", "thread_id": thread_id, "trace_id": uuid.uuid4().hex, "user_id": user_id, **message}
        workflow_id = f"{workflow_prefix(thread_id)}resume:{suspension_id}"  # a second resume attaches to it
        return await self._submit(job, workflow_id, provider_of(self.config, None), suspension_id)

    async def aclose(self) -> None:
        await asyncio.to_thread(self._client.destroy)

    async def _submit(
        self, job: dict[str, Any], workflow_id: str, provider: str | None, suspension_id: str | None
    ) -> RunHandle:
        queue = queue_name(provider)
        if queue not in self._queues:  # so a producer may start before any worker; theirs prevail
            options = queue_options(self.config.workers, provider)
            await self._client.register_queue_async(queue, **options, on_conflict="never_update")
            self._queues.add(queue)
        thread_id = str(job["thread_id"])
        await self._client.enqueue_async(
            {
                "workflow_name": WORKFLOW, "queue_name": queue, "workflow_id": workflow_id,
                "queue_partition_key": thread_id, "app_version": APP_VERSION,
            },
            job,
        )
        return RunHandle(self._client, workflow_id, response_key(suspension_id), thread_id)
