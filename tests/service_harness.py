"""The service example (examples/service/) served by uvicorn on 127.0.0.1, a real HTTP client for it
(the standard library's), and the scripts and tools its tests run with a ScriptedProvider in place of
a model. Shared by tests/test_service*.py and the browser tests."""

from __future__ import annotations

import http.client
import importlib
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

_NEEDS = "the service example needs the `service` extra: pip install -e '.[service]'"
pytest.importorskip("fastapi", reason=_NEEDS)
uvicorn = pytest.importorskip("uvicorn", reason=_NEEDS)

from pes_agent import ArtInstance, ToolResult, create_art_instance, tool
from pes_agent.testing import ScriptedProvider
from pes_agent.testing.scripted import ScriptEntry

TIMEOUT = 15.0
"""Upper bound on any wait (a socket read, start-up, shutdown): a hang fails instead of stalling CI."""

APP = Path(__file__).resolve().parents[1] / "examples" / "service" / "app.py"


def _load_service() -> ModuleType:
    """As uvicorn imports it from the repository root (`examples.service.app`), whatever the working
    directory: the app's modules import each other relatively."""
    root = str(APP.parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)
    return importlib.import_module("examples.service.app")


service = _load_service()
settings_module = importlib.import_module("examples.service.settings")
ServiceSettings = settings_module.ServiceSettings

ALICE, BOB = "tok-alice-0123456789", "tok-bob-9876543210"
TOKENS = {ALICE: "alice", BOB: "bob"}
SETTINGS = ServiceSettings(tokens=TOKENS)


# -- tools and scripts ----------------------------------------------------------------------------

RAN: list[tuple[str, dict[str, Any]]] = []


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    RAN.append(("add", {"a": a, "b": b}))
    return a + b


@tool
def confirm_publish(title: str) -> ToolResult:
    """Ask a person to confirm publishing a post with this title."""
    RAN.append(("confirm_publish", {"title": title}))
    return ToolResult.suspended(f"Publish {title!r}?", {"title": title})


@tool(requires_approval=True, side_effects=True)
def publish_post(title: str, body: str) -> dict[str, str]:
    """Publish a post with a title and a body, once a person has approved it."""
    RAN.append(("publish_post", {"title": title, "body": body}))
    return {"published": title}


def plan(tool_name: str) -> str:
    body = {
        "title": "t",
        "intent": "i",
        "plan": "p",
        "todoList": [
            {"id": "step_1", "description": "use the tool", "stepType": "tool", "requiredTools": [tool_name]}
        ],
    }
    return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"


def call(tool_name: str, arguments: dict[str, Any]) -> str:
    body = {"toolCalls": [{"toolName": tool_name, "arguments": arguments}]}
    return "```json\n" + json.dumps(body) + "\n```"


def done(text: str) -> str:
    return "```json\n" + json.dumps({"content": text}) + "\n```"


def answer(text: str) -> str:
    return f"<mainContent>{text}</mainContent>"


ADDITION = [plan("add"), call("add", {"a": 2, "b": 40}), done("2 + 40 = 42"), answer("The answer is 42.")]


# -- the server and the client --------------------------------------------------------------------


@dataclass
class Frame:
    """One Server-Sent Events frame: comment lines, or an event with its id and JSON data."""

    comments: list[str] = field(default_factory=list)
    event: str | None = None
    id: str | None = None
    data: dict[str, Any] | None = None


class EventStream:
    def __init__(self, port: int, path: str, headers: Mapping[str, str] | None = None) -> None:
        self._conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        self._conn.request("GET", path, headers=dict(headers or {}))
        self.response = self._conn.getresponse()

    def frame(self) -> Frame:
        frame, seen = Frame(), False
        while True:
            raw = self.response.readline()
            assert raw, "the event stream ended"
            line = raw.decode("utf-8").rstrip("\r\n")
            if not line:
                if seen:
                    return frame
                continue
            seen = True
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "":
                frame.comments.append(value)
            elif name == "event":
                frame.event = value
            elif name == "id":
                frame.id = value
            elif name == "data":
                frame.data = json.loads(value)

    def events_until(self, kind: str) -> list[Frame]:
        """Event frames (comments skipped) up to and including the first of type ``kind``."""
        frames: list[Frame] = []
        while not frames or frames[-1].event != kind:
            frame = self.frame()
            if frame.event is not None:
                frames.append(frame)
        return frames

    def close(self) -> None:
        self._conn.close()


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: Any


@dataclass
class Client:
    """Speaks for one user: every request carries ``token`` unless told otherwise."""

    port: int
    token: str | None = ALICE

    def as_user(self, token: str | None) -> Client:
        return Client(self.port, token)

    def exchange(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        try:
            payload = raw if raw is not None else (None if body is None else json.dumps(body).encode())
            sent = {"Content-Type": "application/json"} if payload is not None else {}
            if self.token is not None:
                sent["Authorization"] = f"Bearer {self.token}"
            conn.request(method, path, body=payload, headers={**sent, **(headers or {})})
            response = conn.getresponse()
            text = response.read()
            content = json.loads(text) if response.getheader("content-type") == "application/json" else text
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, content)
        finally:
            conn.close()

    def request(
        self, method: str, path: str, body: Any = None, *, raw: bytes | None = None
    ) -> tuple[int, Any]:
        reply = self.exchange(method, path, body, raw=raw)
        return reply.status, reply.body

    def post(self, path: str, body: Any = None, *, raw: bytes | None = None) -> tuple[int, Any]:
        return self.request("POST", path, body, raw=raw)

    def get(self, path: str) -> tuple[int, Any]:
        return self.request("GET", path)

    @contextmanager
    def stream(self, path: str, headers: Mapping[str, str] | None = None) -> Iterator[EventStream]:
        auth = {"Authorization": f"Bearer {self.token}"} if self.token is not None else {}
        events = EventStream(self.port, path, {**auth, **(headers or {})})
        try:
            yield events
        finally:
            events.close()


@dataclass
class Served:
    client: Client
    provider: ScriptedProvider
    arts: list[ArtInstance]
    app: Any

    @property
    def art(self) -> ArtInstance:
        assert len(self.arts) == 1, "the service builds exactly one instance"
        return self.arts[0]


@contextmanager
def serving(
    replies: Sequence[ScriptEntry],
    *,
    graceful_s: int | None = None,
    tools: Sequence[Any] = (),
    **app_options: Any,
) -> Iterator[Served]:
    """The example app on a free loopback port, in a thread with its own event loop (as in production,
    the server's loop is not the test's); stopped, and its instance closed, on exit. ``graceful_s`` is
    uvicorn's `--timeout-graceful-shutdown`; ``tools`` join the harness's own."""
    RAN.clear()
    provider = ScriptedProvider(replies, name="s")
    arts: list[ArtInstance] = []
    closed: list[ArtInstance] = []

    async def factory() -> ArtInstance:
        art = await create_art_instance(
            {"storage": {"type": "memory"}},
            tools=[add, confirm_publish, publish_post, *tools],
            providers={"s": provider},
        )
        close = art.aclose

        async def aclose() -> None:
            closed.append(art)
            await close()

        art.aclose = aclose  # type: ignore[method-assign]
        arts.append(art)
        return art

    app_options.setdefault("settings", SETTINGS)
    app = service.create_app(art_factory=factory, **app_options)
    with uvicorn_serving(app, graceful_s) as client:
        yield Served(client, provider, arts, app)
    assert closed == arts, "the instance is closed at shutdown"


@contextmanager
def uvicorn_serving(app: Any, graceful_s: int | None = None) -> Iterator[Client]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, lifespan="on", log_level="warning", timeout_graceful_shutdown=graceful_s)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started or not thread.is_alive(), "the server to start")
        assert server.started, "the service did not start (its start-up error is in the captured log)"
        yield Client(sock.getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(TIMEOUT)
        sock.close()
    assert not thread.is_alive(), "the server did not shut down"


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def subscriptions(art: ArtInstance) -> int:
    return len(art.bus._subs)  # no public count; a leak here grows with every client that ever left
