"""The service example (examples/service/app.py), served by uvicorn on 127.0.0.1 and driven by a real
HTTP client (the standard library's), with a ScriptedProvider in place of a model: runs, events,
pauses and errors. Who may use it and the limits on what they ask: test_service_access.py."""

from __future__ import annotations

import asyncio
import importlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from service_harness import (
    ADDITION,
    ALICE,
    APP,
    BOB,
    RAN,
    TIMEOUT,
    EventStream,
    answer,
    call,
    done,
    plan,
    service,
    serving,
    settings_module,
    subscriptions,
    uvicorn_serving,
    wait_for,
)

from pes_agent import create_art_instance
from pes_agent.testing.scripted import ScriptEntry

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
    monkeypatch.setenv(settings_module.TOKENS_ENV, f"{ALICE}:alice")
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
            assert subscriptions(served.art) == 1

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
        wait_for(lambda: subscriptions(served.art) == 0, "the stream's subscription to close")

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
        idle = EventStream(served.client.port, "/threads/quiet/events", {"Authorization": f"Bearer {ALICE}"})
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
    assert subscriptions(art) == 0


def test_a_suspended_run_is_resumed_over_http() -> None:
    replies = [
        plan("confirm_publish"),
        call("confirm_publish", {"title": "Hello"}),
        done("published"),
        answer("Published 'Hello'."),
    ]
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
        assert status == 422 and undecided["error"]["type"] == "InvalidDecisionError"
        assert "`decision` must be an object" in undecided["error"]["message"]
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
        call("add", {"a": 1, "b": 1}),
        done("2"),
        answer("It is 2."),  # thread b, after release
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


def test_errors_do_not_echo_secrets() -> None:
    secret = "sk-live-do-not-echo-0123456789"
    options = {"providerConfig": {"providerName": "elsewhere", "adapterOptions": {"apiKey": secret}}}
    with serving([]) as served:
        status, reply = served.client.post("/threads/t/messages", {"query": "hi", "options": options})
        assert status == 422 and reply["error"]["type"] == "InvalidInputError"
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

    monkeypatch.syspath_prepend(str(APP.parents[2]))  # `examples.service.tools`, as uvicorn from the root
    tools = importlib.import_module("examples.service.tools")
    tools.PUBLISHED.clear()
    key = "sk-test-never-echoed-0123456789"
    (tmp_path / "service.yaml").write_text((APP.parent / "service.yaml").read_text(encoding="utf-8"))
    note = {"title": "Hello", "body": "First post"}
    script = [plan("publish_note"), call("publish_note", note), done("done"), answer("Published 'Hello'.")]
    async with FakeOpenAIServer(replies=[FakeReply(text=text) for text in script]) as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.setenv(service.CONFIG_ENV, str(tmp_path / "service.yaml"))
        monkeypatch.setenv(settings_module.TOKENS_ENV, f"{ALICE}:alice")
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


def test_the_approval_demo_config_serves_any_number_of_runs_and_keeps_a_pause_across_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/service/approval-demo.yaml as shipped: what a person tries the page with, no model
    needed. Every thread replays the conversation; the state is in SQLite (here in tmp_path)."""
    monkeypatch.syspath_prepend(str(APP.parents[2]))  # `examples.service.tools`, as uvicorn from the root
    monkeypatch.setenv("PES_AGENT_DEMO_DB", str(tmp_path / "approval-demo.db"))
    tools = importlib.import_module("examples.service.tools")
    tools.PUBLISHED.clear()
    monkeypatch.setenv(service.CONFIG_ENV, str(APP.parent / "approval-demo.yaml"))
    monkeypatch.setenv(settings_module.TOKENS_ENV, f"{ALICE}:alice,{BOB}:bob")
    query = {"query": "Publish a note saying the service is up"}
    with uvicorn_serving(service.create_app()) as client:
        paused = {}
        for thread, token in [("d1", ALICE), ("d2", BOB), ("d3", ALICE)]:
            status, first = client.as_user(token).post(f"/threads/{thread}/messages", query)
            assert status == 200 and first["status"] == "suspended", first
            paused[thread] = first["suspension"]["id"]
        for thread, token in [("d1", ALICE), ("d2", BOB)]:
            decision = {"suspension_id": paused[thread], "decision": {"approved": True}}
            status, final = client.as_user(token).post(f"/threads/{thread}/resume", decision)
            assert status == 200 and final["response"] == "Published the note 'Hello'."
    assert tools.PUBLISHED == [{"title": "Hello", "body": "The service is up."}] * 2
    assert (tmp_path / "approval-demo.db").is_file()

    with uvicorn_serving(service.create_app()) as client:  # a new server: d3's pause is still there
        assert client.get("/threads/d3")[1]["suspension"]["suspension_id"] == paused["d3"]
        decision = {"suspension_id": paused["d3"], "decision": {"approved": True}}
        status, final = client.post("/threads/d3/resume", decision)
        # this process never saw d3's start: its replay picks up at the step's next reply
        assert status == 200 and final["status"] == "success"
        assert final["response"] == "Published the note 'Hello'."
    assert len(tools.PUBLISHED) == 3  # d3's tool ran once, after the restart


def test_the_demo_config_answers_every_run_not_only_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = (
        APP.parents[2] / "config" / "demo.yaml"
    )  # copied, its script made absolute: the database lands here
    raw = yaml.safe_load(shipped.read_text(encoding="utf-8"))
    raw["providers"]["demo"]["script"] = str((shipped.parent / raw["providers"]["demo"]["script"]).resolve())
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    monkeypatch.setenv(service.CONFIG_ENV, str(tmp_path / "demo.yaml"))
    monkeypatch.setenv(settings_module.TOKENS_ENV, f"{ALICE}:alice")
    query = {"query": "Find recent articles about the James Webb Space Telescope's discoveries."}
    with uvicorn_serving(service.create_app()) as client:
        answers = [client.post(f"/threads/j{n}/messages", query) for n in range(3)]
    assert [(status, body["status"]) for status, body in answers] == [(200, "success")] * 3
    assert len({body["response"] for _, body in answers}) == 1


def test_a_bad_decision_is_a_422_the_pause_stands_and_a_proper_one_runs_the_tool_once() -> None:
    replies = [
        plan("publish_post"),
        call("publish_post", {"title": "Hello", "body": "hi"}),
        done("ok"),
        answer("Done."),
    ]
    with serving(replies) as served:
        client = served.client
        status, first = client.post("/threads/p/messages", {"query": "Publish a post titled Hello"})
        assert status == 200 and first["status"] == "suspended"
        suspension_id = first["suspension"]["id"]
        for decision, field in [
            ({"approved": "false"}, "`decision.approved`"),
            ({"approved": True, "modified_args": "oops"}, "`decision.modified_args`"),
            ({"approved": True, "modified_args": {"body": {"not": "text"}}}, "`decision.modified_args.body`"),
        ]:
            status, refused = client.post(
                "/threads/p/resume", {"suspension_id": suspension_id, "decision": decision}
            )
            assert status == 422 and refused["error"]["type"] == "InvalidDecisionError"
            assert field in refused["error"]["message"]
            thread = client.get("/threads/p")[1]
            assert thread["suspension"]["suspension_id"] == suspension_id
            assert thread["state"]["todo_list"][0]["status"] == "waiting" and RAN == []
        approve = {
            "suspension_id": suspension_id,
            "decision": {"approved": True, "modified_args": {"body": "hello"}},
        }
        status, final = client.post("/threads/p/resume", approve)
        assert status == 200 and final["status"] == "success"
        assert RAN == [("publish_post", {"title": "Hello", "body": "hello"})]
        status, _ = client.post("/threads/p/resume", approve)
        assert status == 409 and RAN == [("publish_post", {"title": "Hello", "body": "hello"})]


def test_every_answer_forbids_framing_and_sniffing_and_sends_no_referrer() -> None:
    with serving(list(ADDITION)) as served:
        client = served.client
        page = client.exchange("GET", "/")
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert "script-src 'self'" in page.headers["content-security-policy"]
        replies = [
            page,
            client.exchange("GET", "/page/app.js"),
            client.exchange("GET", "/threads"),
            client.exchange("GET", "/threads/nothing"),
            client.as_user(None).exchange("GET", "/threads"),
            client.exchange("POST", "/threads/t/messages", raw=b"{not json"),
        ]
        for reply in replies:
            assert reply.headers["x-content-type-options"] == "nosniff"
            assert reply.headers["x-frame-options"] == "DENY"
            assert reply.headers["referrer-policy"] == "no-referrer"
            assert "frame-ancestors 'none'" in reply.headers["content-security-policy"]
        with client.stream("/threads/t/events") as events:
            assert events.response.getheader("x-content-type-options") == "nosniff"


def test_the_api_description_is_served_only_when_enabled() -> None:
    with serving([]) as served:
        assert [served.client.exchange("GET", path).status for path in ("/docs", "/openapi.json")] == [
            404,
            404,
        ]
    enabled = settings_module.ServiceSettings(tokens={ALICE: "alice"}, docs=True)
    with serving([], settings=enabled) as served:
        assert served.client.exchange("GET", "/docs").status == 200
        described = served.client.exchange("GET", "/openapi.json").body
        body = described["paths"]["/threads/{thread_id}/messages"]["post"]["requestBody"]
        assert "query" in body["content"]["application/json"]["schema"]["properties"]


def test_a_library_error_without_a_status_is_a_500_with_only_a_request_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with serving([]) as served:  # no reply scripted: the provider raises ScriptExhaustedError
        reply = served.client.exchange("POST", "/threads/t9/messages", {"query": "What is 2 + 40?"})
    request_id = reply.headers["x-request-id"]
    assert reply.status == 500 and reply.body == {
        "error": {
            "type": "InternalError",
            "message": f"internal error; the service log has the details under request id {request_id}",
            "request_id": request_id,
        }
    }
    logged = [r for r in caplog.records if request_id in r.getMessage()]
    assert logged and "ScriptExhaustedError" in logged[0].getMessage() and "'t9'" in logged[0].getMessage()
    assert logged[0].exc_info is not None and "has no reply left" in str(logged[0].exc_info[1])


def test_providers_are_built_and_their_sdk_loaded_at_start_up_not_by_the_first_request() -> None:
    """`import openai` takes about a second; done by the first run, it would stop every request."""
    built: list[Any] = []

    async def factory() -> Any:
        config = {
            "providers": {
                "main": {
                    "adapter": "openai",
                    "model": "m",
                    "base_url": "http://127.0.0.1:9/v1",
                    "api_key": "sk-never-used",
                }
            },
            "storage": {"type": "memory"},
        }
        art = await create_art_instance(config)
        built.append(art)
        return art

    app = service.create_app(
        art_factory=factory, settings=settings_module.ServiceSettings(tokens={ALICE: "alice"})
    )
    with uvicorn_serving(app) as client:
        provider = built[0]._built["main"]  # no public view of a built provider; this is what a run uses
        assert len(provider._clients) == 1, "the server loop's client was made at start-up"
        assert client.get("/me") == (200, {"user_id": "alice"})
