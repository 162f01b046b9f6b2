"""The child process of the crash tests: one run of a thread, which may die on cue.

Run as ``python tests/crash_worker.py '<job json>'`` (the parent sets ``PYTHONPATH`` to the repo).
The job says what to do (``mode``), where the state lives (``storage``, a config section), which
replies the scripted model gives, and whether to die: ``kill: "after_step_2"`` SIGKILLs the process
on the ``TOOL_EXECUTION`` event of step_2 (emitted once the result is saved), ``kill: "inside_b"``
makes tool B SIGKILL the process after its side effect but before it returns. A ``hold`` job stops
in the planning call, prints ``READY`` and waits for a line on stdin, so the parent can act while this
process holds the thread.

Tools ``tool_a``, ``tool_b``, ``tool_c`` append one line per call (``A n=1``) to the ``effects``
file: the side-effect counter the parent reads. On a normal exit the last stdout line is JSON:
the ``AgentFinalResponse`` and the model calls this process made.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pes_agent import Event, EventType, create_art_instance
from pes_agent.agent.response import AgentFinalResponse
from pes_agent.testing import ScriptedCall, ScriptedProvider
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.spec import ToolSpec

READY = "READY"
_SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer", "description": "Which write this is."}},
    "required": ["n"],
    "additionalProperties": False,
}


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def make_tool(letter: str, effects: Path, *, kill_after_effect: bool, idempotent: bool) -> ToolSpec:
    def write(n: int) -> dict[str, Any]:
        with effects.open("a", encoding="utf-8") as out:
            out.write(f"{letter} n={n}\n")
        if kill_after_effect:
            die()
        return {"written": letter, "n": n}

    return tool_from_schema(
        f"tool_{letter.lower()}",
        f"Append one {letter} line to the side-effect file.",
        _SCHEMA,
        write,
        side_effects=True,
        idempotent=idempotent,
    )


def hold_first(replies: list[Any]) -> list[Any]:
    """The first reply waits for the parent: READY on stdout, then one line on stdin."""

    async def held(_: ScriptedCall) -> Any:
        print(READY, flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        return replies[0]

    return [held, *replies[1:]]


def killer(step_id: str) -> Callable[[Event], None]:
    def on_event(event: Event) -> None:
        if event.step_id == step_id:
            die()

    return on_event


async def run(job: dict[str, Any]) -> dict[str, Any]:
    effects = Path(job["effects"])
    tools = [
        make_tool(
            letter,
            effects,
            kill_after_effect=letter == "B" and job.get("kill") == "inside_b",
            idempotent=letter == "B" and bool(job.get("idempotent_b")),
        )
        for letter in "ABC"
    ]
    replies = list(job["replies"])
    provider = ScriptedProvider(hold_first(replies) if job.get("hold") else replies)
    config = {"storage": job["storage"], **job.get("config", {})}
    art = await create_art_instance(config, tools=tools, providers={"scripted": provider})
    if job.get("kill") == "after_step_2":
        art.subscribe(killer("step_2"), types=[EventType.TOOL_EXECUTION])
    async with art:
        response = await dispatch(art, job)
    return {
        "response": response.to_dict(),
        "calls": [{"phase": c.phase, "step_id": c.step_id, "text": c.text} for c in provider.calls],
        "unused_replies": provider.remaining,
    }


async def dispatch(art: Any, job: dict[str, Any]) -> AgentFinalResponse:
    thread_id = job["thread_id"]
    mode = job["mode"]
    if mode == "process":
        result: AgentFinalResponse = await art.process(job["query"], thread_id=thread_id)
    elif mode == "recover":
        result = await art.resume(thread_id)
    elif mode == "decide":
        result = await art.resume(thread_id, job["suspension_id"], job["decision"])
    else:
        raise SystemExit(f"crash_worker: unknown mode {mode!r}; use process, recover or decide")
    return result


def main() -> None:
    job = json.loads(sys.argv[1])
    print(json.dumps(asyncio.run(run(job))), flush=True)


if __name__ == "__main__":
    main()
