"""The child process of the worker tests: one pes-agent worker (DBOS) that may die on cue.

Run as ``python tests/dbos_worker.py '<job json>'`` (the parent sets ``PYTHONPATH`` to the repo).
The job names the databases (``storage``, ``system_database``), the worker's ``executor_id`` and
``concurrency``, and the model: ``replies`` (a script served in order, for one run) or
``responder: "generic"`` (any number of runs of the one-tool plan below, answered by phase).

Tools: ``tool_a``/``tool_b``/``tool_c`` append ``A n=1`` lines to the ``effects`` file; with
``kill: "inside_b"`` tool B SIGKILLs the process after its effect, before it returns; the letters
in ``approval`` need a person's approval. With ``ack_delay_s``, the worker acks each decision it
takes that much later (a loaded machine). With
``record_dsn``, ``tool_rec`` inserts one row per execution (thread, call, pid) into ``tool_runs``
of that PostgreSQL database, then sleeps ``tool_s``: the side-effect counter of the kill test (with
``record_file``, a line per execution in that file instead). ``store_outage_s`` sets
``workers.storeOutageS``.

With ``recover: [ids]`` the worker first re-queues the unfinished runs of those dead workers. It
prints READY once it takes jobs, and stops cleanly on a line on stdin.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from pes_agent.config import config_from_dict
from pes_agent.testing import ScriptedCall, ScriptedProvider
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.spec import ToolContext, ToolSpec
from pes_agent.workers import Worker

READY = "READY"
_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def letter_tools(job: dict[str, Any]) -> list[ToolSpec]:
    effects = Path(job["effects"])

    def make(letter: str) -> ToolSpec:
        def write(n: int) -> dict[str, Any]:
            with effects.open("a", encoding="utf-8") as out:
                out.write(f"{letter} n={n}\n")
            if letter == "B" and job.get("kill") == "inside_b":
                os.kill(os.getpid(), signal.SIGKILL)
            return {"written": letter, "n": n}

        idempotent = letter == "B" and bool(job.get("idempotent_b"))
        return tool_from_schema(
            f"tool_{letter.lower()}",
            f"Append one {letter} line.",
            _SCHEMA,
            write,
            side_effects=True,
            idempotent=idempotent,
            requires_approval=letter in job.get("approval", ""),
        )

    return [make(letter) for letter in "ABC"]


def record_tool(dsn: str | None, tool_s: float, path: str | None = None) -> ToolSpec:
    """Counts its executions in ``tool_runs`` of ``dsn``, or, with ``path``, as lines of that file (for
    the database fault tests: a tool's own effect must not depend on the database going away)."""

    async def record(n: int, context: ToolContext) -> dict[str, Any]:
        if path is not None:
            with open(path, "a", encoding="utf-8") as out:  # one short append per line: atomic
                out.write(f"{context.thread_id} {context.call_id} {os.getpid()}\n")
        else:
            import asyncpg

            conn = await asyncpg.connect(dsn)
            try:
                await conn.execute(
                    "INSERT INTO tool_runs (thread_id, call_id, pid) VALUES ($1, $2, $3)",
                    context.thread_id,
                    context.call_id,
                    os.getpid(),
                )
            finally:
                await conn.close()
        await asyncio.sleep(tool_s)
        return {"recorded": n}

    # Idempotent: a call cut short by a dead worker is run again without asking a person.
    return tool_from_schema(
        "tool_rec",
        "Record one row.",
        _SCHEMA,
        record,
        side_effects=True,
        idempotent=True,
        context_param="context",
    )


def generic(call: ScriptedCall) -> str:
    """Plan one tool step; call the tool, then close the step; answer."""
    request = call.request
    if request.phase == "planning":
        step = {"id": "step_1", "description": "record", "stepType": "tool", "requiredTools": ["tool_rec"]}
        body = {"title": "Record", "intent": "record", "plan": "one step", "todoList": [step]}
        return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"
    if request.phase == "synthesis":
        return "<mainContent>recorded</mainContent>"
    if any(m.role == "assistant" for m in request.messages):
        return (
            "```json\n" + json.dumps({"content": "recorded", "nextStepDecision": "complete_item"}) + "\n```"
        )
    return (
        "```json\n" + json.dumps({"toolCalls": [{"toolName": "tool_rec", "arguments": {"n": 1}}]}) + "\n```"
    )


def slow_acks(delay_s: float) -> None:
    from pes_agent.workers import workflow

    ack = workflow.acknowledge

    async def slow(suspension_id: str, decision_id: str | None) -> None:
        await asyncio.sleep(delay_s)
        await ack(suspension_id, decision_id)

    workflow.acknowledge = slow  # type: ignore[assignment]


async def main(job: dict[str, Any]) -> None:
    if job.get("ack_delay_s"):
        slow_acks(float(job["ack_delay_s"]))
    config = config_from_dict(
        {
            "storage": job["storage"],
            "workers": {
                "systemDatabase": job["system_database"],
                "approvalWaitS": job.get("approval_wait_s", 60),
                "storeOutageS": job.get("store_outage_s", 60),
            },
        }
    )
    if job.get("responder") == "generic":
        provider = ScriptedProvider([generic] * 100_000)
        tools = [record_tool(job.get("record_dsn"), float(job.get("tool_s", 0.05)), job.get("record_file"))]
    else:
        provider = ScriptedProvider(job["replies"])
        tools = letter_tools(job)
    worker = Worker(
        config,
        tools=tools,
        providers={"scripted": provider},
        executor_id=job["executor_id"],
        concurrency=job.get("concurrency"),
    )
    await worker.start()
    if job.get("recover"):  # workers that will not come back: their runs are taken over here
        await worker.recover(job["recover"])
    print(READY, flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    await worker.stop()
    print(json.dumps({"model_calls": len(provider.calls), "unused_replies": provider.remaining}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
