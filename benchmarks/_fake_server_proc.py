"""The fake OpenAI server in a process of its own, answering the S1 scenario by reading each request.

The runtime benchmarks time a client; a server sharing its event loop (and its core) would bill its
own CPU to the client. So the server runs here, in a child process, and the parent talks to it over
pipes: the child prints ``{"port": N}`` once it listens, then reads one command a line on stdin
(``stats`` prints the counters as one JSON line, ``reset`` prints then zeroes them, ``faults on`` /
``faults off`` switch the fault mix) and shuts down at EOF.

    python benchmarks/_fake_server_proc.py --latency-ms 50 [--p429 0.1 --p500 0.1 --phang 0.1]

The phase of a call is not on the wire, so ``S1Router`` decides from the messages, by what the run
has already produced rather than by the templates' wording (which may change): no step described
yet → the plan; a tool call already in the conversation → that step's closing reply; step 2's result
present → the answer; else the tool call of the latest step described. Retries send the same
messages and so get the same reply.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent` and `tests` importable
    sys.path.insert(0, _ROOT)

from pes_agent.testing.fake_openai import FakeAction, FakeError, FakeHang, FakeOpenAIServer, FakeReply

SCENARIO = Path(_ROOT) / "tests" / "fixtures" / "scenarios" / "S1.json"
_PLAN = re.compile(r"---JSON_OUTPUT_START---(.*)---JSON_OUTPUT_END---", re.DOTALL)
_FENCE = re.compile(r"```json(.*)```", re.DOTALL)


# --- what to answer ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class S1Router:
    """Picks S1's scripted reply for a request from the content of its messages."""

    replies: tuple[str, ...]
    step_descriptions: tuple[str, str]
    last_step_result: str
    tool_names: tuple[str, str]

    @classmethod
    def from_scenario(cls, scenario: Mapping[str, Any]) -> S1Router:
        texts = tuple(r["text"] for r in scenario["scriptedResponses"])
        if len(texts) != 6:
            raise ValueError(f"S1 should script 6 replies, found {len(texts)}")
        plan = json.loads(_match(_PLAN, texts[0]))
        first, second = (item["description"] for item in plan["todoList"])
        tools = tuple(item["requiredTools"][0] for item in plan["todoList"])
        result = json.loads(_match(_FENCE, texts[4]))["content"]
        return cls(
            replies=texts,
            step_descriptions=(first, second),
            last_step_result=result,
            tool_names=(tools[0], tools[1]),
        )

    def index(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """0 plan, 1/3 the tool call of step 1/2, 2/4 their closing replies, 5 the answer."""
        assistant = [str(m.get("content") or "") for m in messages if m.get("role") == "assistant"]
        if assistant:  # a step whose tool call is already in the conversation: close it
            return 4 if self.tool_names[1] in assistant[-1] else 2
        text = "\n".join(str(m.get("content") or "") for m in messages)
        if self.last_step_result in text:
            return 5
        if self.step_descriptions[1] in text:
            return 3
        if self.step_descriptions[0] in text:
            return 1
        return 0

    def reply(self, body: Mapping[str, Any]) -> tuple[int, FakeReply]:
        messages = body.get("messages")
        index = self.index(messages if isinstance(messages, list) else [])
        text = self.replies[index]
        prompt = sum(len(str(m.get("content") or "")) for m in messages or [] if isinstance(m, dict))
        # Real endpoints report usage; without it the client would count tokens with tiktoken itself.
        usage = {"prompt_tokens": math.ceil(prompt / 4), "completion_tokens": math.ceil(len(text) / 4)}
        return index, FakeReply(text=text, usage=usage)


def _match(pattern: re.Pattern[str], text: str) -> str:
    found = pattern.search(text)
    if found is None:
        raise ValueError(f"S1 reply does not match {pattern.pattern!r}: {text[:80]!r}")
    return found.group(1)


def load_router(path: Path = SCENARIO) -> S1Router:
    return S1Router.from_scenario(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True, kw_only=True)
class FaultMix:
    """Share of chat requests answered with 429 (``Retry-After``), 500, or silence past the client's
    timeout; the rest get S1's reply. Drawn from a seeded generator, so a run is repeatable."""

    p429: float = 0.0
    p500: float = 0.0
    phang: float = 0.0
    hang_s: float = 30.0
    retry_after: str = "0"
    seed: int = 1

    def args(self) -> list[str]:
        return [
            f"--p429={self.p429}",
            f"--p500={self.p500}",
            f"--phang={self.phang}",
            f"--hang-s={self.hang_s}",
            f"--retry-after={self.retry_after}",
            f"--seed={self.seed}",
        ]


class S1Handler:
    """The server's ``handler``: a fault or the routed reply, with counters the parent can read."""

    def __init__(self, router: S1Router, faults: FaultMix) -> None:
        self.router = router
        self.faults = faults
        self._rng = random.Random(faults.seed)
        self.faulty = True
        self.counts: Counter[str] = Counter()
        self._cpu0 = time.process_time()

    def __call__(self, body: dict[str, Any]) -> FakeAction:
        draw, f = (self._rng.random() if self.faulty else 1.0), self.faults
        if draw < f.p429:
            self.counts["429"] += 1
            return FakeError(status=429, headers={"Retry-After": f.retry_after})
        if draw < f.p429 + f.p500:
            self.counts["500"] += 1
            return FakeError(status=500)
        if draw < f.p429 + f.p500 + f.phang:
            self.counts["hang"] += 1
            return FakeHang(seconds=f.hang_s)
        index, reply = self.router.reply(body)
        self.counts["reply"] += 1
        self.counts[f"reply_{index}"] += 1
        return reply

    def stats(self) -> dict[str, Any]:
        return {
            **self.counts,
            "requests": sum(self.counts[k] for k in ("429", "500", "hang", "reply")),
            "cpu_s": round(time.process_time() - self._cpu0, 3),
        }

    def reset(self) -> None:
        self.counts.clear()
        self._cpu0 = time.process_time()


# --- the child process ------------------------------------------------------------------------------


async def serve(latency_s: float, faults: FaultMix) -> None:
    handler = S1Handler(load_router(), faults)
    async with FakeOpenAIServer(handler=handler, latency_s=latency_s, record=False, backlog=4096) as server:
        print(json.dumps({"port": server.port}), flush=True)
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            command = line.strip()
            answer: dict[str, Any] = {"unknown": command}
            if command in ("stats", "reset"):
                answer = handler.stats()
            if command == "reset":
                handler.reset()
            elif command in ("faults on", "faults off"):
                handler.faulty = command == "faults on"
                answer = {"faulty": handler.faulty}
            print(json.dumps(answer), flush=True)


def _child_main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="S1 fake OpenAI server on 127.0.0.1 (benchmarks)")
    p.add_argument("--latency-ms", type=float, default=50.0)
    p.add_argument("--p429", type=float, default=0.0)
    p.add_argument("--p500", type=float, default=0.0)
    p.add_argument("--phang", type=float, default=0.0)
    p.add_argument("--hang-s", type=float, default=30.0)
    p.add_argument("--retry-after", default="0")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    mix = FaultMix(
        p429=a.p429, p500=a.p500, phang=a.phang, hang_s=a.hang_s, retry_after=a.retry_after, seed=a.seed
    )
    asyncio.run(serve(a.latency_ms / 1000.0, mix))
    return 0


# --- the parent's handle ----------------------------------------------------------------------------


class FakeServerProcess:
    """Starts the child, knows its URL, reads its counters; closing stdin stops it."""

    def __init__(self, latency_s: float, faults: FaultMix | None = None) -> None:
        self.latency_s = latency_s
        self.faults = faults or FaultMix()
        self._proc: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> Self:
        cmd = [sys.executable, __file__, f"--latency-ms={self.latency_s * 1000.0}", *self.faults.args()]
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=_ROOT
        )
        first = self._stdout().readline()
        if not first:
            code = self._proc.wait(timeout=10)
            raise RuntimeError(f"the fake server process exited with code {code} before listening")
        self.port = int(json.loads(first)["port"])
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, Any]:
        return self._command("stats")

    def reset(self) -> dict[str, Any]:
        """Zero the counters; returns them as they were."""
        return self._command("reset")

    def set_faults(self, on: bool) -> None:
        """Off: every request gets its reply (warm-ups); on: the fault mix applies again."""
        self._command("faults on" if on else "faults off")

    def _command(self, command: str) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdin is not None, "the server is not running"
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self._stdout().readline())
        return answer

    def _stdout(self) -> IO[str]:
        assert self._proc is not None and self._proc.stdout is not None
        return self._proc.stdout


if __name__ == "__main__":
    sys.exit(_child_main())
