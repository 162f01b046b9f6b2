"""The service's page in a real browser: headless Chromium from the system packages (Debian's
``chromium``), driven by Playwright pointed at that executable (Playwright's own browser downloads
are never used). The service runs as a real uvicorn server on 127.0.0.1 with a ScriptedProvider.

Marked ``browser``; skipped, with the reason, where Chromium or the `browser` extra is missing
(``.ci/run`` installs both). ``PES_AGENT_SCREENSHOT_DIR=<dir>`` also saves the page's screenshot
there (examples/service/page.png in the README was taken so).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from service_harness import (
    ALICE,
    BOB,
    RAN,
    Served,
    answer,
    call,
    done,
    plan,
    serving,
)

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""As root on a machine with no outside network: without the networking flags Chromium keeps
trying (and failing) to reach Google's hosts."""

WAIT_MS = 15_000

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need the `browser` extra: pip install -e '.[browser]'"
)
expect = sync_api.expect
expect.set_options(timeout=WAIT_MS)


@pytest.fixture
def open_page(tmp_path: Path) -> Iterator[Callable[[Served, str, str], Any]]:
    """Opens the service's page in a browser of its own (own profile, own session storage) for a
    user, signed in with their token."""
    if not CHROMIUM.exists():
        pytest.skip("browser tests need Debian's chromium at /usr/bin/chromium: apt-get install chromium")
    contexts: list[Any] = []
    with sync_api.sync_playwright() as playwright:

        def open_as(served: Served, token: str, fragment: str = "") -> Any:
            context = playwright.chromium.launch_persistent_context(
                str(tmp_path / f"profile-{len(contexts)}"),
                executable_path=str(CHROMIUM),
                headless=True,
                args=FLAGS,
                viewport={"width": 1100, "height": 900},
            )
            contexts.append(context)
            context.set_default_timeout(WAIT_MS)
            page = context.pages[0] if context.pages else context.new_page()
            page.goto(f"http://127.0.0.1:{served.client.port}/{fragment}")
            page.fill("#token", token)
            page.click("#sign-in button[type=submit]")
            return page

        yield open_as
        for context in contexts:
            context.close()


APPROVAL = [
    plan("publish_post"),
    call("publish_post", {"title": "Hello", "body": "First post"}),
    done("published"),
    answer("Published 'Hello, world'."),
]


def test_a_user_runs_a_query_watches_it_and_approves_its_pause_with_edited_arguments(
    open_page: Callable[..., Any], tmp_path: Path
) -> None:
    with serving(list(APPROVAL), graceful_s=1) as served:
        page = open_page(served, ALICE)
        expect(page.get_by_test_id("who")).to_have_text("signed in as alice")
        expect(page.get_by_test_id("sign-in")).to_be_hidden()

        page.fill("#query", "Publish a post titled Hello")
        page.get_by_test_id("send").click()

        item = page.get_by_test_id("item")
        expect(item).to_have_count(1)
        expect(item).to_contain_text("use the tool")
        expect(item).to_have_attribute("data-status", "waiting")
        expect(page.get_by_test_id("call")).to_have_attribute("data-tool", "publish_post")
        approval = page.get_by_test_id("approval")
        expect(approval).to_be_visible()
        expect(page.get_by_test_id("approval-tool")).to_have_text("publish_post")
        shown = json.loads(page.get_by_test_id("approval-args").input_value())
        assert shown == {"title": "Hello", "body": "First post"} and RAN == []
        expect(page.get_by_test_id("threads")).to_contain_text("Publish a post titled Hello")
        _screenshot(page, tmp_path)

        page.get_by_test_id("approval-args").fill(json.dumps({"title": "Hello, world", "body": "First post"}))
        page.get_by_test_id("approval-reason").fill("with a comma")
        page.get_by_test_id("approve").click()

        expect(page.get_by_test_id("run-status")).to_have_text("success")
        expect(page.get_by_test_id("answer")).to_have_text("Published 'Hello, world'.")
        expect(approval).to_be_hidden()
        expect(item).to_have_attribute("data-status", "completed")
        call_box = page.get_by_test_id("call")
        expect(call_box).to_have_attribute("data-status", "success")
        expect(call_box).to_contain_text('"published": "Hello, world"')
        usage = page.get_by_test_id("usage")
        for phase in ("planning", "execution", "synthesis"):  # the run before its pause and after it
            expect(usage).to_contain_text(phase)
        expect(page.get_by_test_id("conversation")).to_contain_text("Published 'Hello, world'.")
        assert RAN == [("publish_post", {"title": "Hello, world", "body": "First post"})]
        served.provider.assert_complete()


def test_another_users_page_can_neither_see_nor_resume_the_thread(open_page: Callable[..., Any]) -> None:
    with serving(list(APPROVAL), graceful_s=1) as served:
        status, first = served.client.post("/threads/mine/messages", {"query": "Publish a post titled Hello"})
        assert status == 200 and first["status"] == "suspended"

        page = open_page(served, "tok-wrong")
        expect(page.get_by_test_id("who")).to_have_text("That token is not valid for this service.")
        expect(page.get_by_test_id("sign-in")).to_be_visible()

        page = open_page(served, BOB, "#thread=mine")
        expect(page.get_by_test_id("who")).to_have_text("signed in as bob")
        expect(page.get_by_test_id("notice")).to_have_text(
            "no thread 'mine' of yours; start one with `POST /threads/{id}/messages`"
        )
        expect(page.get_by_test_id("threads").locator("li")).to_have_count(0)
        expect(page.get_by_test_id("approval")).to_be_hidden()
        expect(page.get_by_test_id("plan").locator("li")).to_have_count(0)

        # the page's own credentials cannot steer it either
        tried = page.evaluate(
            """async (suspension) => {
                const token = sessionStorage.getItem("pes-agent-token");
                const res = await fetch("/threads/mine/resume", {method: "POST",
                    headers: {"Authorization": `Bearer ${token}`, "Content-Type": "application/json"},
                    body: JSON.stringify({suspension_id: suspension, decision: {approved: true}})});
                return [res.status, await res.json()];
            }""",
            first["suspension"]["id"],
        )
        assert tried[0] == 404 and tried[1]["error"]["type"] == "UnknownThreadError"
        status, thread = served.client.get("/threads/mine")
        assert thread["suspension"]["suspension_id"] == first["suspension"]["id"] and RAN == []


def test_a_clarification_is_answered_in_its_field_and_the_run_goes_on(open_page: Callable[..., Any]) -> None:
    from tests.recovery_tools import RAN as SENT
    from tests.recovery_tools import send_email

    SENT.clear()
    replies = [
        plan("send_email"),
        call("send_email", {"subject": "Report", "body": "Attached."}),
        done("sent"),
        answer("Sent the report to boss@corp.io."),
    ]
    with serving(replies, graceful_s=1, tools=[send_email]) as served:
        page = open_page(served, ALICE)
        page.fill("#query", "Email the report to my manager")
        page.get_by_test_id("send").click()

        question = page.get_by_test_id("clarification")
        expect(question).to_be_visible()
        expect(page.get_by_test_id("run-status")).to_have_text("needs_input")
        expect(page.get_by_test_id("clarification-text")).to_contain_text("recipient")
        assert SENT == []
        page.get_by_test_id("field-to").fill("boss@corp.io")
        page.get_by_test_id("answer-question").click()

        expect(page.get_by_test_id("run-status")).to_have_text("success")
        expect(page.get_by_test_id("answer")).to_have_text("Sent the report to boss@corp.io.")
        expect(question).to_be_hidden()
        assert SENT == [("send_email", {"to": "boss@corp.io", "subject": "Report", "body": "Attached."})]


MARKUP = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"><b>bold</b>'


def test_markup_in_a_query_and_in_the_answer_is_shown_as_text(open_page: Callable[..., Any]) -> None:
    replies = [plan("add"), call("add", {"a": 2, "b": 40}), done("42"), answer(f"You asked: {MARKUP}")]
    with serving(replies, graceful_s=1) as served:
        page = open_page(served, ALICE)
        page.fill("#query", MARKUP)
        page.get_by_test_id("send").click()

        expect(page.get_by_test_id("run-status")).to_have_text("success")
        expect(page.get_by_test_id("answer")).to_have_text(f"You asked: {MARKUP}")
        expect(page.get_by_test_id("conversation")).to_contain_text(MARKUP)
        expect(page.get_by_test_id("threads")).to_contain_text(MARKUP)
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#app img, #app b, #app script").count() == 0


def _screenshot(page: Any, tmp_path: Path) -> None:
    shot = tmp_path / "page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000, "an empty screenshot"
    target = os.environ.get("PES_AGENT_SCREENSHOT_DIR")
    if target:
        shutil.copyfile(shot, Path(target) / "page.png")
