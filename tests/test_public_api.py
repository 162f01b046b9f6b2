"""The public surface: what `import pes_agent` offers, the exception tree, lazy imports, test doubles."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import pes_agent
import pes_agent.errors
from pes_agent.errors import PesAgentError, ProviderError, ScriptExhaustedError, ToolError
from pes_agent.llm.types import CallOptions, Message, PromptRequest, Usage

REPO = Path(__file__).resolve().parents[1]

DOCUMENTED = {
    # building and running (docs/architecture.md §3)
    "load_config",
    "create_art_instance",
    "ArtInstance",
    "ArtInstanceConfig",
    "ThreadConfig",
    "AgentProps",
    "AgentFinalResponse",
    "Decision",
    "RunUsage",
    "RunErrorInfo",
    # events
    "Event",
    "EventType",
    # tools
    "tool",
    "ToolSpec",
    "ToolCall",
    "ToolResult",
    "ToolContext",
    "ToolError",
    # the exception tree (pes_agent/errors.py)
    "PesAgentError",
    "ConfigError",
    "ThreadAccessError",
    "ThreadBusyError",
    "ThreadSuspendedError",
    "UnknownSuspensionError",
    "UnknownThreadError",
    "VersionConflictError",
    "StoreUnavailableError",
    "ToolDefinitionError",
    "UnknownToolError",
    "InvalidInputError",
    "InvalidDecisionError",
    "ScriptExhaustedError",
    "RunError",
    "ProviderError",
    "EmbeddingsRefusedError",
    "ParseError",
    "ToolValidationError",
    "ToolExecutionError",
    "BudgetExhaustedError",
}
"""Adding or removing a public name is an API change: it must be made here too, deliberately."""

INTERNAL_EXCEPTIONS = {"pes_agent.agent.context.PhaseFailure", "pes_agent.workers.steps.CallInterrupted"}
"""Exceptions used for control flow inside a run and always caught there; users never see them."""


def test_all_is_exactly_the_documented_names() -> None:
    assert len(pes_agent.__all__) == len(set(pes_agent.__all__)), "a name is listed twice in __all__"
    assert set(pes_agent.__all__) == DOCUMENTED


def test_every_exported_name_is_importable_from_the_top_level() -> None:
    missing = [name for name in pes_agent.__all__ if getattr(pes_agent, name, None) is None]
    assert missing == []


def _error_classes() -> dict[str, type[BaseException]]:
    return {
        name: obj
        for name, obj in vars(pes_agent.errors).items()
        if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == "pes_agent.errors"
    }


def test_every_error_is_a_pes_agent_error_and_exported() -> None:
    classes = _error_classes()
    assert len(classes) >= 15, "the exception tree was not found"
    for name, cls in classes.items():
        assert getattr(pes_agent, name) is cls, f"{name} is not exported from `pes_agent`"
        assert name in pes_agent.__all__
        if cls is ToolError:
            continue
        assert issubclass(cls, PesAgentError), f"{name} does not derive from PesAgentError"


def test_tool_error_is_deliberately_outside_the_tree() -> None:
    """Tool authors raise it for an expected failure; it must not be caught as a framework error."""
    assert issubclass(ToolError, Exception)
    assert not issubclass(ToolError, PesAgentError)


OPTIONAL_EXTRA_PACKAGES = {
    "opentelemetry",
    "asyncpg",
    "fastapi",
    "uvicorn",
    "llama_cpp",
    "mcp",
    "dbos",
    "a2a",
    "starlette",
    "anthropic",
    "google",
    "bm25s",
    "httpx",
}
"""Imported only by the modules of pyproject's extras (otel, postgres, service, local, mcp, dbos, a2a,
anthropic, gemini, retrieval)."""


def test_exceptions_are_defined_only_in_the_errors_module() -> None:
    """A new error class elsewhere would escape `except PesAgentError` and the documented tree."""
    found: set[str] = set()
    for info in pkgutil.walk_packages(pes_agent.__path__, prefix="pes_agent."):
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as exc:  # a module of an extra that is not installed here;
            if (exc.name or "").split(".")[0] in OPTIONAL_EXTRA_PACKAGES:  # .ci/run installs them all
                continue
            raise
        for obj in vars(module).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == info.name
                and not obj.__name__.startswith("_")
            ):
                found.add(f"{obj.__module__}.{obj.__qualname__}")
    stray = found - {f"pes_agent.errors.{n}" for n in _error_classes()} - INTERNAL_EXCEPTIONS
    assert stray == set(), "exception classes outside pes_agent/errors.py"


def test_importing_pes_agent_loads_no_heavy_dependency() -> None:
    heavy = [
        "openai",
        "tiktoken",
        "httpx",
        "llama_cpp",
        "psycopg",
        "psycopg2",
        "asyncpg",
        "opentelemetry",
        "mcp",
        "dbos",
    ]
    code = (
        "import json, sys\nfrom pes_agent import *\nimport pes_agent.testing\n"
        f"print(json.dumps({{m: m in sys.modules for m in {heavy!r}}}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == {m: False for m in heavy}


# --- pes_agent.testing ---------------------------------------------------------------------------


def _request(text: str = "hello") -> PromptRequest:
    return PromptRequest(phase="planning", step_id=None, messages=(Message(role="user", content=text),))


def test_testing_exports_the_scripted_double() -> None:
    from pes_agent import testing

    assert set(testing.__all__) >= {"ScriptedProvider", "ScriptedReply", "ScriptedCall"}
    for name in ("ScriptedProvider", "ScriptedReply", "ScriptedCall"):
        assert inspect.isclass(getattr(testing, name))


async def test_scripted_provider_serves_in_order_and_records_each_call() -> None:
    from pes_agent.testing import ScriptedProvider, ScriptedReply

    provider = ScriptedProvider(
        ["first", ScriptedReply(text="second", usage=Usage(prompt_tokens=7, completion_tokens=3))]
    )
    one = await provider.complete(_request("a question"), CallOptions())
    two = await provider.complete(_request(), CallOptions())
    assert (one.text, two.text) == ("first", "second")
    assert one.usage.source == "estimate" and two.usage.prompt_tokens == 7
    assert [c.phase for c in provider.calls] == ["planning", "planning"]
    assert provider.calls[0].messages == [{"role": "user", "content": "a question"}]
    provider.assert_complete()


async def test_scripted_provider_refuses_calls_past_its_script() -> None:
    from pes_agent.testing import ScriptedProvider

    provider = ScriptedProvider(["only"], name="planner")
    await provider.complete(_request(), CallOptions())
    with pytest.raises(ScriptExhaustedError, match=r"'planner'.*call #2.*given 1"):
        await provider.complete(_request(), CallOptions())
    assert len(provider.calls) == 2, "the refused call is recorded too"


async def test_assert_complete_fails_when_replies_are_left() -> None:
    from pes_agent.testing import ScriptedProvider

    provider = ScriptedProvider(["used", "unused 1", "unused 2"])
    await provider.complete(_request(), CallOptions())
    with pytest.raises(AssertionError, match="2 of 3 replies unused"):
        provider.assert_complete()


async def test_scripted_exceptions_come_out_as_provider_errors() -> None:
    from pes_agent.testing import ScriptedProvider

    provider = ScriptedProvider([ConnectionResetError("peer went away")])
    with pytest.raises(ProviderError, match="peer went away"):
        await provider.complete(_request(), CallOptions())
