"""``pes-agent worker`` and ``pes-agent enqueue`` (imported by the CLI only for these commands)."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
from pathlib import Path
from typing import TextIO

from pes_agent.config import load_config
from pes_agent.errors import StoreUnavailableError
from pes_agent.state.factory import open_store
from pes_agent.workers.producer import Producer
from pes_agent.workers.readiness import EXIT_UNREACHABLE
from pes_agent.workers.worker import Worker

_EXIT = {"success": 0, "error": 1, "partial": 3, "needs_input": 3, "suspended": 3}

WAIT_S = 600.0
"""How long ``enqueue --wait`` waits for a worker to reach the run's response."""


async def worker_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Take runs until SIGTERM or SIGINT; runs in flight are recovered when a worker with the same
    ``--id`` starts again. A database still unreachable after ``workers.storeOutageS`` at start is one
    line naming it and exit status ``EXIT_UNREACHABLE`` (75), no traceback."""
    worker = Worker(args.config, concurrency=args.concurrency, executor_id=args.id)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await worker.start()  # waits up to `workers.storeOutageS` for both databases
    except StoreUnavailableError as exc:
        await worker.stop()
        print(f"pes-agent: worker {worker.executor_id} cannot start: {exc}", file=err, flush=True)
        return EXIT_UNREACHABLE
    except BaseException:
        await worker.stop()
        raise  # a ConfigError: one line and exit 2 (`pes_agent.cli.main`)
    print(
        f"[pes-agent] worker {worker.executor_id} taking runs, {worker.concurrency} at a time",
        file=err,
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        await worker.stop()
    return 0


async def enqueue_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    config = load_config(args.config)
    base_dir = str(Path(args.config).resolve().parent)  # where the worker anchors a relative SQLite path
    store = open_store(config.storage, base_dir=base_dir) if args.wait else None
    producer = await Producer.open(config, store=store)
    try:
        handle = await producer.enqueue(args.query, thread_id=args.thread)
        print(f"[pes-agent] queued · thread: {handle.thread_id} · workflow: {handle.workflow_id}", file=err)
        if not args.wait:
            print(handle.thread_id, file=out)
            return 0
        response = await handle.response(timeout_s=WAIT_S)
    finally:
        await producer.aclose()
        if store is not None:
            await store.aclose()
    if response is None:
        print(
            f"pes-agent: no worker reached the run within {WAIT_S:g} s; it stays queued (workflow "
            f"{handle.workflow_id}) until one does: is `pes-agent worker --config {args.config}` running "
            "against the same `workers.systemDatabase`?",
            file=err,
        )
        return 1
    if "refused" in response or "failed" in response:
        print(f"pes-agent: {json.dumps(response)}", file=err)
        return 1
    print(response.get("response", ""), file=out)
    print(f"[pes-agent] status: {response.get('status')} · thread: {handle.thread_id}", file=err)
    return _EXIT.get(str(response.get("status")), 1)
