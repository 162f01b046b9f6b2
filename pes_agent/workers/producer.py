"""Handing runs to workers from any process (a web handler, a script): enqueue, resume, handles.

A producer talks only to the DBOS system database (and, for ``resume``, reads the thread from the
store to check the decision answers what the thread waits for); it runs no agent code.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import Mapping
from typing import Any

from dbos import DBOS, DBOSClient

from pes_agent.agent.decision_check import check_kind
from pes_agent.agent.ownership import check_access
from pes_agent.agent.settings import check_suspension, thread_config
from pes_agent.config import ArtInstanceConfig, ThreadConfig
from pes_agent.decision import Decision
from pes_agent.errors import InvalidInputError, UnknownSuspensionError, UnknownThreadError
from pes_agent.state.store import StateStore
from pes_agent.workers.handles import POLL_S, RunHandle
from pes_agent.workers.queues import provider_of, queue_name, queue_options, system_database
from pes_agent.workers.workflow import DECISION_TOPIC, WORKFLOW, ack_key, response_key

__all__ = ["ACK_WAIT_S", "APP_VERSION", "Producer", "RunHandle", "decision_id", "workflow_prefix"]

APP_VERSION = "pes-agent-1"
"""The DBOS application version of every pes-agent workflow: producers and workers must agree on it
(DBOS only runs, and recovers, workflows of its own version). Raise it when a change to the agent
would make a run recorded by the old code replay differently."""

ACK_WAIT_S = 5.0
"""How long ``resume`` waits for a waiting workflow to take a decision before also queuing a resume
job. Only a matter of latency: a workflow that takes it later still carries it (the handle follows)."""


def workflow_prefix(thread_id: str) -> str:
    """Workflow ids of a thread's runs start with this; the length makes it exact (thread ids are
    free text, and attribute filters are PostgreSQL-only in DBOS)."""
    return f"pes-agent:{len(thread_id)}:{thread_id}:"


def decision_id(suspension_id: str, decision: Mapping[str, Any], user_id: str | None) -> str:
    """The same decision, the same id: a resume repeated (a client retrying its request) is the same
    decision, so it joins the run carrying it; a different one for the same suspension loses."""
    text = json.dumps([suspension_id, user_id, decision], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class Producer:
    """Enqueues runs and delivers decisions; one per process, closed with ``aclose``."""

    def __init__(
        self, config: ArtInstanceConfig, client: DBOSClient, store: StateStore | None = None
    ) -> None:
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
            "kind": "process",
            "thread_id": tid,
            "trace_id": trace,
            "query": query,
            "user_id": user_id,
            "options": parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) if parsed else None,
        }
        return await self._submit(
            job, f"{workflow_prefix(tid)}{trace}", provider_of(self.config, parsed), None
        )

    async def resume(
        self,
        thread_id: str,
        suspension_id: str,
        decision: Decision | Mapping[str, Any],
        *,
        user_id: str | None = None,
    ) -> RunHandle:
        """Deliver a decision on a paused thread of ``user_id`` and return a handle on the run that
        carries it: its workflow, when one still waits for it and takes it, else a new job (which
        answers with the waiting workflow's response if that took the decision after all). With
        the store given, checked here first, so a wrong suspension id or another user's thread is
        refused in the caller; so is a decision that lost to another one for the same suspension.
        A waiting workflow acts for the user who started its run (the thread's owner).

        The decision's shape is checked here (`InvalidDecisionError`), and with the store its kind
        against the pause; its values against the tool's schema only where the tools are: on the
        worker, or first with `ArtInstance.check_decision` in a process that has an instance."""
        parsed = Decision.from_mapping(decision)
        if self._store is not None:
            state, _ = await self._store.load(thread_id)
            if state is None:
                raise UnknownThreadError(f"thread {thread_id!r} has no stored state; start it with `enqueue`")
            check_access(thread_id, state, user_id)
            check_suspension(thread_id, state, suspension_id)
            assert state.suspension is not None  # check_suspension passed
            check_kind(thread_id, state.suspension, parsed)
        plain = parsed.to_dict()
        ident = decision_id(suspension_id, plain, user_id)
        message = {"suspension_id": suspension_id, "decision": plain, "decision_id": ident}
        waiting = [
            w.workflow_id
            for w in await self._client.list_workflows_async(
                status="PENDING",
                name=WORKFLOW,
                workflow_id_prefix=workflow_prefix(thread_id),
                load_input=False,
                load_output=False,
            )
        ]
        for workflow_id in waiting:
            await self._client.send_async(workflow_id, message, DECISION_TOPIC)
        job_id = f"{workflow_prefix(thread_id)}resume:{suspension_id}:{ident}"  # a repeat joins it
        taker = await self._taker(thread_id, waiting, suspension_id, ident)
        if taker is not None:  # a job of an identical earlier request may apply it first: followed then
            return RunHandle(
                self._client,
                taker,
                response_key(suspension_id),
                thread_id,
                decision=(suspension_id, ident),
                job=job_id,
            )
        job = {
            "kind": "resume",
            "thread_id": thread_id,
            "trace_id": uuid.uuid4().hex,
            "user_id": user_id,
            "sent_to": waiting,
            **message,
        }
        handle = await self._submit(job, job_id, provider_of(self.config, None), suspension_id)
        return RunHandle(
            self._client,
            handle.workflow_id,
            response_key(suspension_id),
            thread_id,
            watch=waiting,
            decision=(suspension_id, ident),
        )

    async def recover(self, thread_id: str, *, user_id: str | None = None) -> RunHandle:
        """Continue a run that stopped before its end (the database stayed unreachable past
        ``workers.storeOutageS``): a worker resumes it from its first unfinished item; tool calls
        the journal holds as finished never run again, one that was running when the run stopped
        runs again if its tool is idempotent and otherwise pauses for a person. A run stopped before
        its plan was saved is run again from its query (the thread's last failed job, which this
        reads; its user message is not written twice). A thread with nothing to continue is refused
        (``{"refused": ...}``)."""
        stopped = await self._client.list_workflows_async(
            workflow_id_prefix=workflow_prefix(thread_id),
            status="ERROR",
            name=WORKFLOW,
            sort_desc=True,
            limit=1,
            load_output=False,
        )
        inputs = stopped[0].input if stopped else None
        original = inputs["args"][0] if inputs and inputs["args"] else None
        job = {
            "kind": "recover",
            "thread_id": thread_id,
            "trace_id": uuid.uuid4().hex,
            "user_id": user_id,
            "stopped": original if isinstance(original, dict) and original.get("kind") == "process" else None,
            "ended_trace": original.get("trace_id") if isinstance(original, dict) else None,
        }
        workflow_id = f"{workflow_prefix(thread_id)}recover:{job['trace_id']}"
        return await self._submit(job, workflow_id, provider_of(self.config, None), None)

    async def _taker(self, thread_id: str, waiting: list[str], suspension_id: str, ident: str) -> str | None:
        """The workflow among ``waiting`` that took decision ``ident``, once one acks it within
        ``ACK_WAIT_S``; None when none did (each ended without it, or is still busy). An ack of
        another decision means that one won: refused, as the store would refuse it later."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ACK_WAIT_S
        pending = list(waiting)
        while pending:
            ended = await self._ended(pending)  # read before the acks: an ended one without an ack never acks
            for workflow_id in pending:
                took = await self._client.get_event_async(workflow_id, ack_key(suspension_id), 0)
                if took is None:
                    continue
                if took in (ident, True):  # True: acked by a worker older than decision ids
                    return workflow_id
                raise UnknownSuspensionError(
                    f"thread {thread_id!r}: suspension {suspension_id!r} was already decided by another "
                    "decision that reached the run first; reload the thread to see its outcome"
                )
            pending = [w for w in pending if w not in ended]
            if loop.time() >= deadline:
                break
            await asyncio.sleep(POLL_S)
        return None

    async def _ended(self, workflow_ids: list[str]) -> set[str]:
        """Those of ``workflow_ids`` no longer running (ended, failed or cancelled)."""
        statuses = await self._client.list_workflows_async(
            workflow_ids=workflow_ids, load_input=False, load_output=False
        )
        running = {s.workflow_id for s in statuses if s.status in ("PENDING", "ENQUEUED")}
        return set(workflow_ids) - running

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
                "workflow_name": WORKFLOW,
                "queue_name": queue,
                "workflow_id": workflow_id,
                "queue_partition_key": thread_id,
                "app_version": APP_VERSION,
            },
            job,
        )
        return RunHandle(self._client, workflow_id, response_key(suspension_id), thread_id)
