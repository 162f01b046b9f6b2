"""A worker process: DBOS launched on this event loop, the queues of a config, an instance whose
calls and store are durable, until it is told to stop.

Recovery: DBOS recovers, at launch, the unfinished workflows of the worker's own ``executor_id``.
Give each worker a stable id (``--id``; a supervisor restarting a dead worker with the same id
resumes its runs), or call ``recover(ids)`` from a live worker for workers that will not return.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dbos import DBOS

from pes_agent.config import ArtInstanceConfig, load_config
from pes_agent.errors import ConfigError
from pes_agent.factory import create_art_instance
from pes_agent.instance import ArtInstance
from pes_agent.llm.types import Provider
from pes_agent.state.factory import open_store
from pes_agent.state.store import StateStore
from pes_agent.tools.spec import ToolSpec
from pes_agent.workers.producer import APP_VERSION
from pes_agent.workers.queues import queue_name, queue_names, queue_options, system_database
from pes_agent.workers.readiness import store_answers, system_database_answers, unreachable_at_launch
from pes_agent.workers.steps import DbosSteps
from pes_agent.workers.store import DurableStore
from pes_agent.workers.workflow import install, uninstall


def default_executor_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class Worker:
    """Runs queued pes-agent jobs in this process (one ``Worker`` per process: DBOS is global)."""

    def __init__(
        self,
        config: ArtInstanceConfig | str | os.PathLike[str],
        *,
        concurrency: int | None = None,
        executor_id: str | None = None,
        tools: Sequence[ToolSpec] | None = None,
        providers: Mapping[str, Provider] | None = None,
        store: StateStore | None = None,
    ) -> None:
        self._source = None if isinstance(config, ArtInstanceConfig) else str(config)
        self.config = config if isinstance(config, ArtInstanceConfig) else load_config(config)
        self.concurrency = concurrency or self.config.workers.concurrency
        self.executor_id = executor_id or default_executor_id()
        self._tools, self._providers, self._store = tools, providers, store
        self.art: ArtInstance | None = None
        self._inner: StateStore | None = None

    async def start(self) -> None:
        """Wait for both databases (``workers.storeOutageS``; ``StoreUnavailableError`` past it), build
        the instance, launch DBOS (recovering this executor's unfinished runs) and start taking jobs
        from the config's queues."""
        cfg = self.config
        url = system_database(cfg, self._source)
        unknown = sorted(
            name for name in cfg.workers.providers if cfg.providers and name not in cfg.providers
        )
        if unknown:
            raise ConfigError(
                f"`workers.providers` names providers that are not configured: {', '.join(unknown)}",
                source=self._source,
                key_path="workers.providers",
                allowed=sorted(cfg.providers),
            )
        base_dir = str(Path(self._source).resolve().parent) if self._source else None
        window = cfg.workers.store_outage_s
        self._inner = self._store or open_store(cfg.storage, base_dir=base_dir)
        await store_answers(self._inner, window)
        await system_database_answers(url, window)
        durable = DurableStore(self._inner, outage_s=window)
        art = await create_art_instance(cfg, tools=self._tools, providers=self._providers, store=durable)
        art.steps = DbosSteps()
        self.art = art
        install(art, approval_wait_s=cfg.workers.approval_wait_s, store=self._inner, store_outage_s=window)
        DBOS(config=self._dbos_config(url))
        DBOS.listen_queues(queue_names(cfg))
        try:
            DBOS.launch()  # inside the running loop: DBOS runs the workflows on it
        except Exception as exc:  # the database went away between the check and the launch, or refuses DBOS
            DBOS.destroy()
            raise unreachable_at_launch(url, exc) from None  # not chained: DBOS's errors may hold the URL
        providers: list[str | None] = [*sorted(cfg.providers)] or [None]
        for provider in providers:
            options = queue_options(cfg.workers, provider, concurrency=self.concurrency)
            await DBOS.register_queue_async(queue_name(provider), **options, on_conflict="always_update")

    async def recover(self, executor_ids: Sequence[str]) -> int:
        """Re-queue the unfinished runs of workers that will not come back; returns how many.

        DBOS 3.4 offers this only as ``DBOS._recover_pending_workflows`` (underscored: it may move in
        a later release; tests/test_workers_recovery.py would say so)."""
        handles = await asyncio.to_thread(DBOS._recover_pending_workflows, list(executor_ids))
        return len(handles)

    async def stop(self) -> None:
        """Stop taking jobs and close everything; runs in flight are recovered by the next start."""
        DBOS.destroy()
        uninstall()
        if self.art is not None:
            await self.art.aclose()
        if self._inner is not None and self._store is None:
            await self._inner.aclose()

    def _dbos_config(self, url: str) -> Any:
        return {
            "name": self.config.workers.app_name,
            "system_database_url": url,
            "executor_id": self.executor_id,
            "application_version": APP_VERSION,
            "log_level": "WARNING",
            "notification_listener_polling_interval_sec": 0.1,
            # DBOS's default pool is 20 connections per process; a run holds at most one at a time,
            # plus the queue, recovery and notification threads: keeps N workers inside PostgreSQL's
            # max_connections (100 by default).
            "sys_db_pool_size": 2 * self.concurrency + 4,
        }
