"""Arguments as the function declared them: the executor's JSON-Schema check is the one gate, so
pydantic does not re-validate a call; only parameters typed as a pydantic model, dataclass or enum
(also inside a container) are converted from their JSON form before the function is called.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from pes_agent.errors import ToolError


def with_conversion(
    fn: Callable[..., Any], params: Sequence[inspect.Parameter], tool_name: str
) -> Callable[..., Any]:
    """Wrap ``fn`` so model/dataclass/enum parameters arrive as the declared types."""
    adapters = {p.name: TypeAdapter(p.annotation) for p in params if _needs_conversion(p.annotation)}
    if not adapters:
        return fn

    def convert(kwargs: dict[str, Any]) -> dict[str, Any]:
        out = dict(kwargs)
        for name, adapter in adapters.items():
            if name in out:
                try:
                    out[name] = adapter.validate_python(out[name])
                except ValidationError as exc:
                    first = exc.errors()[0]["msg"] if exc.errors() else str(exc)
                    raise ToolError(
                        f"tool {tool_name!r}: argument `{name}` could not be read: {first}"
                    ) from exc
        return out

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def run_async(**kwargs: Any) -> Any:
            return await fn(**convert(kwargs))

        return run_async

    @functools.wraps(fn)
    def run(**kwargs: Any) -> Any:
        return fn(**convert(kwargs))

    return run


def _needs_conversion(annotation: Any) -> bool:
    if isinstance(annotation, type) and (
        issubclass(annotation, (BaseModel, enum.Enum)) or dataclasses.is_dataclass(annotation)
    ):
        return True
    return any(_needs_conversion(arg) for arg in typing.get_args(annotation))
