"""The `pes-agent` command through `pes_agent.cli.main`: run (text and --json), validate, prompts."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import require_tiktoken

from pes_agent.cli import main
from pes_agent.llm.tokens import reset_token_cache

REPO = Path(__file__).resolve().parents[1]
DEMO_CONFIG = REPO / "config" / "demo.yaml"
S1_QUERY = (
    "Find recent articles about the James Webb Space Telescope's discoveries and summarize the key findings."
)


@pytest.fixture
def demo_config(tmp_path: Path) -> Path:
    """config/demo.yaml copied into tmp_path, its replay script made absolute, so the SQLite file
    lands in tmp_path (relative storage paths resolve against the config file's folder)."""
    raw = yaml.safe_load(DEMO_CONFIG.read_text(encoding="utf-8"))
    script = raw["providers"]["demo"]["script"]
    raw["providers"]["demo"]["script"] = str((DEMO_CONFIG.parent / script).resolve())
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


# --- run ------------------------------------------------------------------------------------------


def test_run_prints_the_clean_answer_and_progress_on_stderr(demo_config: Path) -> None:
    db = demo_config.parent / ".pes-agent" / "demo.db"
    assert not db.exists()

    code, out, err = run_cli("run", "--config", str(demo_config), S1_QUERY)

    assert code == 0, err
    assert "Early galaxies formed faster" in out
    assert "<mainContent>" not in out and "<uiMetadata>" not in out and "[pes-agent]" not in out
    assert "[replay]" in err
    progress = [line for line in err.splitlines() if line.startswith("[pes-agent] ")]
    assert any("plan: JWST discoveries summary (2 steps)" in line for line in progress)
    assert "[pes-agent] step_1: webSearch -> success" in progress
    assert "[pes-agent] step_2: webExtract -> success" in progress
    assert "[pes-agent] step_1: completed" in progress and "[pes-agent] step_2: completed" in progress
    assert progress[-1].startswith("[pes-agent] status: success")

    assert db.is_file(), "the demo's SQLite store was not created beside the config"
    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables, "the SQLite file holds no tables"


def test_run_json_prints_the_whole_response(demo_config: Path) -> None:
    code, out, err = run_cli("run", "--config", str(demo_config), "--json", S1_QUERY)

    assert code == 0, err
    data = json.loads(out)
    assert data["status"] == "success"
    assert "Early galaxies formed faster" in data["response"] and "<mainContent>" not in data["response"]
    assert [item["status"] for item in data["todo_list"]] == ["completed", "completed"]
    assert [item["id"] for item in data["todo_list"]] == ["step_1", "step_2"]
    usage = data["usage"]
    assert usage["llm_calls"] == 6 and usage["tool_calls"] == 2
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert data["error"] is None and data["thread_id"]


def test_run_continues_a_named_thread(demo_config: Path) -> None:
    """`--thread` reaches the store: a second run on the same id sees the first in its history."""
    from pes_agent.state.sqlite import SQLiteStore

    for _ in range(2):
        code, out, err = run_cli("run", "--config", str(demo_config), "--thread", "t-cli", "--json", S1_QUERY)
        assert code == 0, err
        assert json.loads(out)["thread_id"] == "t-cli"

    async def history() -> list[str]:
        store = SQLiteStore(str(demo_config.parent / ".pes-agent" / "demo.db"))
        try:
            return [m.role for m in await store.messages("t-cli")]
        finally:
            await store.aclose()

    assert asyncio.run(history()) == ["user", "assistant", "user", "assistant"]


def test_run_with_a_broken_config_exits_2_with_one_message(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(
        "providers:\n  demo:\n    adapter: scripted\n    script: missing.json\n", encoding="utf-8"
    )
    code, out, err = run_cli("run", "--config", str(path), "hello")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("pes-agent: ")
    assert "providers.demo.script" in err and "missing.json" in err


def test_a_failed_run_exits_1_and_says_why_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "replies.json").write_text('["I will not make a plan."]', encoding="utf-8")
    path = tmp_path / "fails.yaml"
    path.write_text(
        "providers:\n  demo: {adapter: scripted, script: replies.json}\nstorage: {type: memory}\n"
        "tools: ['pes_agent.demo.tools:DEMO_TOOLS']\n",
        encoding="utf-8",
    )
    code, out, err = run_cli("run", "--config", str(path), "--json", "hello")
    assert code == 1
    data = json.loads(out)
    assert data["status"] == "error" and data["error"]["phase"] == "planning"
    assert "[pes-agent] error: " in err and "todoList" in err
    assert "status: error" not in err, "--json output carries the status; stderr has progress only"


# --- validate -------------------------------------------------------------------------------------


def test_validate_names_providers_storage_and_tools() -> None:
    code, out, err = run_cli("validate", str(DEMO_CONFIG))
    assert (code, err) == (0, "")
    assert "OK" in out
    assert "providers: demo" in out and "storage: sqlite" in out
    assert "webSearch" in out and "webExtract" in out


def test_validate_reports_an_unknown_key_with_a_suggestion(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(
        "providers:\n  demo: {adapter: scripted}\nexecution:\n  max_iteratons: 3\n", encoding="utf-8"
    )
    code, out, err = run_cli("validate", str(path))
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert str(path) in lines[0]
    assert "execution.max_iteratons" in lines[0]
    assert "did you mean `max_iterations`?" in lines[0]


def test_validate_reports_an_unloadable_tool(tmp_path: Path) -> None:
    path = tmp_path / "tools.yaml"
    path.write_text(
        "providers:\n  demo: {adapter: scripted}\ntools:\n  - pes_agent.demo.tools:no_such_tool\n",
        encoding="utf-8",
    )
    code, _, err = run_cli("validate", str(path))
    assert code == 2
    assert "no_such_tool" in err and err.startswith("pes-agent: ")


def test_validate_rejects_what_run_could_not_start(tmp_path: Path) -> None:
    """A file that loads but names an adapter this install cannot build fails `validate`, not `run`."""
    path = tmp_path / "later.yaml"
    path.write_text(
        "providers:\n  local: {adapter: llamacpp, model_path: /models/x.gguf}\n", encoding="utf-8"
    )
    code, out, err = run_cli("validate", str(path))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith(f"pes-agent: {path}: `providers.local")


# --- prompts --------------------------------------------------------------------------------------


def _prompt_output() -> tuple[int, str, str]:
    return run_cli("prompts", "--config", str(DEMO_CONFIG), S1_QUERY)


def test_prompts_prints_the_planning_prompt_without_schemas() -> None:
    code, out, err = _prompt_output()
    assert code == 0, err
    assert "webSearch" in out and "webExtract" in out
    assert S1_QUERY in out
    assert '"properties"' not in out and "input_schema" not in out, "planning sees a manifesto, not schemas"
    assert out.rstrip().splitlines()[-1].startswith("# planning prompt: ")


@pytest.fixture
def fresh_token_cache() -> Iterator[None]:
    reset_token_cache()
    yield
    reset_token_cache()


def test_prompts_counts_with_o200k_when_the_cache_is_there(fresh_token_cache: None) -> None:
    require_tiktoken()
    code, out, _ = _prompt_output()
    last = out.rstrip().splitlines()[-1]
    assert code == 0 and last.endswith(" tokens (o200k_base)")
    assert int(last.split()[3]) > 0


def test_prompts_labels_an_estimate_without_the_cache(
    fresh_token_cache: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    code, out, _ = _prompt_output()
    last = out.rstrip().splitlines()[-1]
    assert code == 0
    assert last.endswith("tokens (estimate: characters/4, no tokenizer cache)")
    assert int(last.split()[3]) > 0


def test_prompts_does_not_touch_the_configured_store(demo_config: Path) -> None:
    code, _, err = run_cli("prompts", "--config", str(demo_config), S1_QUERY)
    assert code == 0, err
    assert not (demo_config.parent / ".pes-agent").exists()


def test_help_and_usage_errors_are_return_codes_on_the_given_streams() -> None:
    code, out, err = run_cli("--help")
    assert code == 0 and out.startswith("usage: pes-agent") and err == ""

    code, out, err = run_cli("run", "no --config given")
    assert code == 2 and out == ""
    assert "usage: pes-agent run" in err and "--config" in err


def test_default_streams_are_the_current_ones(capsys: pytest.CaptureFixture[str]) -> None:
    """Streams are looked up per call, so redirecting sys.stdout (as capsys does) captures the output."""
    assert main(["validate", str(DEMO_CONFIG)]) == 0
    assert "webSearch" in capsys.readouterr().out


# --- the installed command ------------------------------------------------------------------------


def test_module_entry_point_runs_in_a_fresh_process() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-m", "pes_agent.cli", "--help"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: pes-agent")
    for command in ("run", "validate", "prompts"):
        assert command in done.stdout

    done = subprocess.run(
        [sys.executable, "-m", "pes_agent.cli", "validate", str(DEMO_CONFIG)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "webSearch" in done.stdout


def test_console_script_points_at_a_callable() -> None:
    """`pip install` writes a `pes-agent` script calling this target; a typo would only show there."""
    import importlib
    import tomllib

    target = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"][
        "pes-agent"
    ]
    module, _, attr = target.partition(":")
    assert callable(getattr(importlib.import_module(module), attr))
