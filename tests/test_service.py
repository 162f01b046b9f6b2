"""The service example (examples/service/app.py), served by uvicorn on 127.0.0.1 and driven by a real
HTTP client (the standard library's), with a ScriptedProvider in place of a model."""

from __future__ import annotations

import asyncio
import http.client
import importlib.util
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

_NEEDS = "the service example needs the `service` extra: pip install -e '.[service]'"
pytest.importorskip("fastapi", reason=_NEEDS)
uvicorn = pytest.importorskip("uvicorn", reason=_NEEDS)

from pes_agent import ArtInstance, ToolResult, create_art_instance, tool  # noqa: E402
from pes_agent.testing import ScriptedProvider  # noqa: E402
from pes_agent.testing.scripted import ScriptEntry  # noqa: E402

TIMEOUT = 15.0
"""Upper bound on any wait (a socket read, start-up, shutdown): a hang fails instead of stalling CI."""

_APP = Path(__file__).resolve().parents[1] / "examples" / "service" / "app.py"


def _load_service() -> ModuleType:
    """By file path: `examples/` is not a package, and the test must not depend on the working dir."""
    spec = importlib.util.spec_from_file_location("pes_agent_service_example", _APP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


service = _load_service()


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


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def plan(tool_name: str) -> str:
    body = {
        "title": "t", "intent": "i", "plan": "p",
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


@dataclass
class Client:
    port: int

    def request(
        self, method: str, path: str, body: Any = None, *, raw: bytes | None = None
    ) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        try:
            payload = raw if raw is not None else (None if body is None else json.dumps(body).encode())
            headers = {"Content-Type": "application/json"} if payload is not None else {}
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            return response.status, json.loads(response.read())
        finally:
            conn.close()

    def post(self, path: str, body: Any = None, *, raw: bytes | None = None) -> tuple[int, Any]:
        return self.request("POST", path, body, raw=raw)

    def get(self, path: str) -> tuple[int, Any]:
        return self.request("GET", path)

    @contextmanager
    def stream(self, path: str, headers: Mapping[str, str] | None = None) -> Iterator[EventStream]:
        events = EventStream(self.port, path, headers)
        try:
            yield events
        finally:
            events.close()


@dataclass
class Served:
    client: Client
    provider: ScriptedProvider
    arts: list[ArtInstance]

    @property
    def art(self) -> ArtInstance:
        assert len(self.arts) == 1, "the service builds exactly one instance"
        return self.arts[0]


@contextmanager
def serving(
    replies: Sequence[ScriptEntry], *, graceful_s: int | None = None, **app_options: Any
) -> Iterator[Served]:
    """The example app on a free loopback port, in a thread with its own event loop (as in production,
    the server's loop is not the test's); stopped, and its instance closed, on exit. ``graceful_s`` is
    uvicorn's `--timeout-graceful-shutdown`."""
    provider = ScriptedProvider(replies, name="s")
    arts: list[ArtInstance] = []
    closed: list[ArtInstance] = []

    async def factory() -> ArtInstance:
        art = await create_art_instance(
            {"storage": {"type": "memory"}}, tools=[add, confirm_publish], providers={"s": provider}
        )
        close = art.aclose

        async def aclose() -> None:
            closed.append(art)
            await close()

        art.aclose = aclose  # type: ignore[method-assign]
        arts.append(art)
        return art

    with uvicorn_serving(service.create_app(art_factory=factory, **app_options), graceful_s) as client:
        yield Served(client, provider, arts)
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
        _wait_for(lambda: server.started or not thread.is_alive(), "the server to start")
        assert server.started, "the service did not start (its start-up error is in the captured log)"
        yield Client(sock.getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(TIMEOUT)
        sock.close()
    assert not thread.is_alive(), "the server did not shut down"


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _subscriptions(art: ArtInstance) -> int:
    return len(art.bus._subs)  # no public count; a leak here grows with every client that ever left


# -- tests ----------------------------------------------------------------------------------------


def test_a_query_returns_the_final_response() -> None:
    with serving(list(ADDITION)) as served:
        status, body = served.client.post("/threads/t1/messages", {"query": "What is 2 + 40?"})
        assert status == 200
        assert body["status"] == "success" and body["response"] == "The answer is 42."
        assert body["thread_id"] == "t1"
        assert [item["status"] for item in body["todo_list"]] == ["completed"]
        assert body["usage"]["tool_calls"] == 1
        assert RAN == [("add", {"a": 2, "b": 40})]

        status, thread = served.client.get("/threads/t1")
        assert status == 200
        assert thread["suspension"] is None and thread["state"]["query"] == "What is 2 + 40?"
        served.provider.assert_complete()


def test_the_instance_is_built_from_the_config_file_named_in_pes_agent_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replies = [plan("calculator"), call("calculator", {"expression": "2 + 40"}), done("42"), answer("42.")]
    (tmp_path / "replies.json").write_text(json.dumps(replies), encoding="utf-8")
    (tmp_path / "service.yaml").write_text(
        "providers: {main: {adapter: scripted, script: replies.json}}\n"
        "storage: {type: memory}\n"
        "tools: [pes_agent.demo.tools:calculator]\n",
        encoding="utf-8",
    )
    monkeypatch.setenv(service.CONFIG_ENV, str(tmp_path / "service.yaml"))
    with uvicorn_serving(service.create_app()) as client:
        status, body = client.post("/threads/t1/messages", {"query": "What is 2 + 40?"})
    assert status == 200 and body["status"] == "success" and body["response"] == "42."
    assert body["todo_list"][0]["tool_results"][0]["output"] == 42


def test_a_failed_run_is_a_result_not_an_http_error() -> None:
    with serving([RuntimeError("endpoint down")]) as served:
        status, body = served.client.post("/threads/t1/messages", {"query": "What is 2 + 40?"})
        assert status == 200
        assert body["status"] == "error"
        assert body["error"]["code"] == "provider_error" and body["error"]["phase"] == "planning"
        assert "endpoint down" in body["response"]


def test_the_event_stream_delivers_the_runs_events_live_and_in_order() -> None:
    with serving(list(ADDITION)) as served:
        client = served.client
        with client.stream("/threads/t1/events") as live:
            opening = live.frame()
            assert opening.event is None and opening.comments, "the stream opens with a comment"
            status, body = client.post("/threads/t1/messages", {"query": "What is 2 + 40?"})
            assert status == 200
            frames = live.events_until("FINAL_RESPONSE")
            assert _subscriptions(served.art) == 1

        kinds = [f.event for f in frames]
        order = [kinds.index(k) for k in ("PLAN", "ITEM_STATUS", "TOOL_EXECUTION", "FINAL_RESPONSE")]
        assert order == sorted(order), kinds
        assert kinds.count("FINAL_RESPONSE") == 1
        assert "TOKEN" in kinds  # tokens stream live (never stored, so they carry no id)
        for frame in frames:
            assert frame.data is not None
            assert frame.data["type"] == frame.event
            assert frame.data["id"] == frame.id or frame.event == "TOKEN"
            assert frame.data["thread_id"] == "t1" and frame.data["trace_id"] == body["trace_id"]
        execution = next(f.data for f in frames if f.event == "TOOL_EXECUTION")
        assert execution is not None and "42" in json.dumps(execution["data"])
        final = frames[-1].data
        assert final is not None and final["data"]["response"] == body["response"]
        # the client left: its subscription goes with it
        _wait_for(lambda: _subscriptions(served.art) == 0, "the stream's subscription to close")

        # what was live is what was stored: a replay from the start gives the same events
        with client.stream("/threads/t1/events?since=0") as replay:
            replayed = replay.events_until("FINAL_RESPONSE")
        assert [f.id for f in replayed] == [f.id for f in frames if f.event != "TOKEN"]


def test_a_reconnecting_client_gets_only_what_it_missed() -> None:
    with serving(list(ADDITION)) as served:
        served.client.post("/threads/t1/messages", {"query": "What is 2 + 40?"})
        with served.client.stream("/threads/t1/events?since=0") as first:
            everything = first.events_until("FINAL_RESPONSE")
        seen = everything[0]
        assert seen.event == "PLAN" and seen.id is not None
        with served.client.stream("/threads/t1/events", {"Last-Event-ID": seen.id}) as again:
            rest = again.events_until("FINAL_RESPONSE")
        assert [f.id for f in rest] == [f.id for f in everything[1:]]


def test_an_idle_stream_sends_keep_alive_comments_and_ends_when_the_server_stops() -> None:
    with serving([], keepalive_s=0.05, graceful_s=1) as served:
        idle = EventStream(served.client.port, "/threads/quiet/events")
        idle.frame()  # the opening comment
        assert idle.frame().comments == ["keep-alive"]
        art = served.art
    # `serving` stopped the server, and asserted that it did, with this client still attached: the
    # stream was ended (uvicorn's graceful-shutdown timeout), unsubscribed, and the instance closed
    try:
        while idle.response.readline():
            pass  # keep-alives sent before the end
    finally:
        idle.close()
    assert _subscriptions(art) == 0


def test_a_suspended_run_is_resumed_over_http() -> None:
    replies = [plan("confirm_publish"), call("confirm_publish", {"title": "Hello"}), done("published"),
               answer("Published 'Hello'.")]
    with serving(replies) as served:
        client = served.client
        status, first = client.post("/threads/p/messages", {"query": "Publish a post titled Hello"})
        assert status == 200 and first["status"] == "suspended"
        suspension = first["suspension"]
        assert suspension["tool"] == "confirm_publish" and suspension["message"] == "Publish 'Hello'?"

        status, thread = client.get("/threads/p")
        assert status == 200
        assert thread["suspension"]["suspension_id"] == suspension["id"]
        assert thread["suspension"]["arguments"] == {"title": "Hello"}

        status, busy = client.post("/threads/p/messages", {"query": "Something else"})
        assert status == 409 and busy["error"]["type"] == "ThreadSuspendedError"
        assert suspension["id"] in busy["error"]["message"]

        approve = {"approved": True}
        status, wrong = client.post("/threads/p/resume", {"suspension_id": "susp_wrong", "decision": approve})
        assert status == 409 and wrong["error"]["type"] == "UnknownSuspensionError"
        assert suspension["id"] in wrong["error"]["message"] and "susp_wrong" in wrong["error"]["message"]
        status, undecided = client.post("/threads/p/resume", {"suspension_id": suspension["id"]})
        assert status == 422 and "decision must be a mapping" in undecided["error"]["message"]
        assert RAN == [("confirm_publish", {"title": "Hello"})]

        decided = {"suspension_id": suspension["id"], "decision": approve}
        status, final = client.post("/threads/p/resume", decided)
        assert status == 200
        assert final["status"] == "success" and final["response"] == "Published 'Hello'."
        assert RAN == [("confirm_publish", {"title": "Hello"})]  # asked once, never run again

        status, thread = client.get("/threads/p")
        assert thread["suspension"] is None
        assert [item["status"] for item in thread["state"]["todo_list"]] == ["completed"]
        served.provider.assert_complete()


def test_a_second_post_on_a_busy_thread_gets_409_while_other_threads_run() -> None:
    entered, release = threading.Event(), threading.Event()

    async def held_plan(_: Any) -> str:
        entered.set()
        await asyncio.to_thread(release.wait, TIMEOUT)
        return plan("add")

    replies: list[ScriptEntry] = [
        held_plan,  # thread b, held until released
        *ADDITION,  # thread c, meanwhile
        call("add", {"a": 1, "b": 1}), done("2"), answer("It is 2."),  # thread b, after release
    ]
    with serving(replies) as served, ThreadPoolExecutor(max_workers=1) as pool:
        client = served.client
        first = pool.submit(client.post, "/threads/b/messages", {"query": "What is 1 + 1?"})
        try:
            assert entered.wait(TIMEOUT), "the first run never reached the model"
            status, busy = client.post("/threads/b/messages", {"query": "What is 1 + 1?"})
            assert status == 409 and busy["error"]["type"] == "ThreadBusyError"
            assert "'b' is busy" in busy["error"]["message"]

            status, other = client.post("/threads/c/messages", {"query": "What is 2 + 40?"})
            assert status == 200 and other["response"] == "The answer is 42."
        finally:
            release.set()
        status, body = first.result(TIMEOUT)
        assert status == 200 and body["response"] == "It is 2."
        served.provider.assert_complete()


MESSAGES = "/threads/t/messages"
BAD_REQUESTS = [
    pytest.param("POST", MESSAGES, {}, None, 422, "`query`", id="missing-query"),
    pytest.param("POST", MESSAGES, {"query": ""}, None, 422, "the query is empty", id="empty-query"),
    pytest.param("POST", MESSAGES, {"query": 7}, None, 422, "valid string", id="query-not-text"),
    pytest.param("POST", MESSAGES, None, b"{not json", 422, "not valid JSON", id="not-json"),
    pytest.param("POST", MESSAGES, {"query": "hi", "qeury": "hi"}, None, 422, "`qeury`", id="typo"),
    pytest.param("GET", "/threads/nobody", None, None, 404, "'nobody' has no stored state", id="no-thread"),
    pytest.param(
        "POST", "/threads/nobody/resume", {"suspension_id": "s", "decision": {}}, None, 404, "'nobody'",
        id="resume-unknown-thread",
    ),
    pytest.param(
        "POST", "/threads/t/resume", {"decision": {"approved": True}}, None, 422, "`suspension_id`",
        id="decision-without-suspension",
    ),
    pytest.param("GET", "/threads/t/events?since=yesterday", None, None, 422, "`since`", id="bad-since"),
]


@pytest.mark.parametrize(("method", "path", "body", "raw", "code", "says"), BAD_REQUESTS)
def test_a_bad_request_gets_a_4xx_with_a_clear_message(
    method: str, path: str, body: Any, raw: bytes | None, code: int, says: str
) -> None:
    with serving([]) as served:
        status, reply = served.client.request(method, path, body, raw=raw)
        assert status == code
        assert set(reply) == {"error"} and set(reply["error"]) == {"type", "message"}
        assert says in reply["error"]["message"]
        assert served.provider.calls == []


def test_errors_do_not_echo_secrets() -> None:
    secret = "sk-live-do-not-echo-0123456789"
    options = {"providerConfig": {"providerName": "elsewhere", "adapterOptions": {"apiKey": secret}}}
    with serving([]) as served:
        status, reply = served.client.post("/threads/t/messages", {"query": "hi", "options": options})
        assert status == 422 and reply["error"]["type"] == "ConfigError"
        assert "elsewhere" in reply["error"]["message"]
        assert secret not in json.dumps(reply)

        status, reply = served.client.post(MESSAGES, {"query": "hi", "options": {"apiKey": secret}})
        assert status == 422 and secret not in json.dumps(reply)


def test_an_unexpected_failure_is_a_500_that_keeps_its_details_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    dsn = "postgresql://app:hunter2-secret@db.internal:5432/pes"

    async def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError(f"could not connect to {dsn}")

    with serving([]) as served:
        served.art.process = broken  # type: ignore[method-assign]
        status, reply = served.client.post("/threads/t/messages", {"query": "hi"})
    assert status == 500 and reply["error"]["type"] == "InternalError"
    assert "hunter2" not in json.dumps(reply)
    assert any("POST /threads/t/messages" in r.getMessage() for r in caplog.records)


async def test_the_shipped_config_runs_an_approval_over_http_against_an_openai_compatible_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/service/service.yaml as shipped (copied, so its SQLite file lands in tmp_path), the real
    OpenAI adapter against a loopback fake endpoint, and its approval tool decided over HTTP."""
    from pes_agent.testing.fake_openai import FakeOpenAIServer, FakeReply

    monkeypatch.syspath_prepend(str(_APP.parents[2]))  # `examples.service.tools`, as uvicorn from the root
    tools = importlib.import_module("examples.service.tools")
    tools.PUBLISHED.clear()
    key = "sk-test-never-echoed-0123456789"
    (tmp_path / "service.yaml").write_text((_APP.parent / "service.yaml").read_text(encoding="utf-8"))
    note = {"title": "Hello", "body": "First post"}
    script = [plan("publish_note"), call("publish_note", note), done("done"), answer("Published 'Hello'.")]
    async with FakeOpenAIServer(replies=[FakeReply(text=text) for text in script]) as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.setenv(service.CONFIG_ENV, str(tmp_path / "service.yaml"))
        with uvicorn_serving(service.create_app()) as client:
            query = {"query": "Post a note titled Hello"}
            status, first = await asyncio.to_thread(client.post, "/threads/n/messages", query)
            assert status == 200 and first["status"] == "suspended", first
            assert first["suspension"]["tool"] == "publish_note" and tools.PUBLISHED == []
            _, thread = await asyncio.to_thread(client.get, "/threads/n")
            decision = {"suspension_id": first["suspension"]["id"], "decision": {"approved": True}}
            status, final = await asyncio.to_thread(client.post, "/threads/n/resume", decision)
        endpoint.assert_complete()
    assert status == 200 and final["status"] == "success" and final["response"] == "Published 'Hello'."
    assert tools.PUBLISHED == [note]
    assert key not in json.dumps([first, thread, final])
    assert all(r.headers.get("authorization") == f"Bearer {key}" for r in endpoint.requests)
