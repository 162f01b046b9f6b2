"""Running tool calls: allowed-for-step check → lookup → schema check → run with a timeout.

Every outcome is a bound ``ToolResult``; nothing a tool does escapes as an exception (except
cancellation), because the agent feeds results back to the model rather than aborting the run.
A call whose arguments fail the schema is never run: a tool must not see values it did not declare.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Collection, Sequence
from typing import Any

from pes_agent.errors import ToolError
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.spec import ToolCall, ToolContext, ToolResult, ToolSpec
from pes_agent.tools.validation import ArgumentProblem, not_an_object

_MAX_ERROR_CHARS = 2000


class ToolExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    async def execute(self, call: ToolCall, *, allowed: Collection[str], context: ToolContext) -> ToolResult:
        spec = self.registry.get(call.tool_name) if call.tool_name in allowed else None
        if spec is None:
            return _refused(call, allowed)
        if call.non_object_arguments is not None:
            fields = spec.input_schema.get("properties") or {}
            problems: tuple[ArgumentProblem, ...] = (not_an_object(call.non_object_arguments, fields),)
        else:
            problems = self.registry.validator(spec.name).validate(call.arguments)
        if problems:
            return ToolResult(
                status="error",
                error="; ".join(p.message for p in problems),
                metadata={"problems": [p.to_dict() for p in problems]},
            ).bound(call.call_id, spec.name)
        result = await _run(spec, call, context)
        if result.call_id == call.call_id and result.tool_name == spec.name:
            return result
        return result.bound(call.call_id, spec.name)

    async def execute_batch(
        self,
        calls: Sequence[ToolCall],
        *,
        allowed: Collection[str],
        context_for: Callable[[ToolCall], ToolContext],
    ) -> list[ToolResult]:
        """Run in order; a suspended result pauses the run, so later calls must not run yet."""
        results: list[ToolResult] = []
        for call in calls:
            result = await self.execute(call, allowed=allowed, context=context_for(call))
            results.append(result)
            if result.status == "suspended":
                break
        return results


def _refused(call: ToolCall, allowed: Collection[str]) -> ToolResult:
    names = sorted(allowed)
    listing = f"allowed tools: {', '.join(names)}" if names else "no tools are allowed in this step"
    if call.tool_name in allowed:
        reason = f"tool {call.tool_name!r} is not registered"
    else:
        reason = f"tool {call.tool_name!r} is not allowed in this step"
    return ToolResult(
        status="refused",
        error=f"{reason}; {listing}",
        metadata={"allowed": names},
    ).bound(call.call_id, call.tool_name)


async def _run(spec: ToolSpec, call: ToolCall, context: ToolContext) -> ToolResult:
    kwargs: dict[str, Any] = dict(call.arguments)
    if spec.context_param:
        kwargs[spec.context_param] = context
    try:
        async with asyncio.timeout(spec.timeout) as scope:
            output = await _invoke(spec, kwargs)
    except TimeoutError as exc:
        if scope.expired():
            return ToolResult(
                status="error",
                error=f"tool {spec.name!r} timed out after {spec.timeout:g}s",
                metadata={"timeout": spec.timeout},
            )
        return _crashed(exc)
    except ToolError as exc:
        return ToolResult(status="error", error=_clip(str(exc) or type(exc).__name__))
    except Exception as exc:  # noqa: BLE001 -- whatever a tool raises is the step's error, never the host's
        return _crashed(exc)
    if isinstance(output, ToolResult):
        return output
    return ToolResult(call_id=call.call_id, tool_name=spec.name, status="success", output=output)


async def _invoke(spec: ToolSpec, kwargs: dict[str, Any]) -> Any:
    """Async tools are awaited; sync ones go to a thread so they cannot block the event loop."""
    if inspect.iscoroutinefunction(spec.fn):
        return await spec.fn(**kwargs)
    output = await asyncio.to_thread(spec.fn, **kwargs)
    if inspect.isawaitable(output):  # a sync callable that hands back a coroutine
        output = await output
    return output


def _crashed(exc: BaseException) -> ToolResult:
    message = str(exc)
    error = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return ToolResult(status="error", error=_clip(error), metadata={"exception": type(exc).__name__})


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_ERROR_CHARS else text[: _MAX_ERROR_CHARS - 1] + "…"
