"""Loading tools named in a config file by import path (``"package.module:attr"``).

Every failure is a ``ConfigError`` pointing at the ``tools[i]`` entry, because the person who sees it
is editing a config file, not the tool's code.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from pes_agent.errors import ConfigError, ToolDefinitionError
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolSpec

_EXPECTED = "a ToolSpec (what `@tool` returns), a list of them, or a typed function"


def load_tools(paths: Sequence[str], *, source: str | None = None) -> list[ToolSpec]:
    if isinstance(paths, str):
        raise ConfigError(
            "`tools` must be a list of import paths, not a single string",
            source=source,
            key_path="tools",
            value=paths,
        )
    specs: list[ToolSpec] = []
    for i, path in enumerate(paths):
        specs.extend(_load_one(path, source=source, key_path=f"tools[{i}]"))
    return specs


def _load_one(path: Any, *, source: str | None, key_path: str) -> list[ToolSpec]:
    def fail(message: str) -> ConfigError:
        return ConfigError(message, source=source, key_path=key_path, value=path)

    module_name, attr = _split(path)
    if not module_name or not attr:
        raise fail(f"{path!r} is not an import path: write it as `package.module:attr`")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise fail(f"module {module_name!r} was not found (is it installed or on `sys.path`?)") from exc
        raise fail(f"importing module {module_name!r} failed: {exc}") from exc
    except Exception as exc:
        raise fail(f"importing module {module_name!r} raised {type(exc).__name__}: {exc}") from exc
    found: Any = module
    for part in attr.split("."):
        if not hasattr(found, part):
            raise fail(f"module {module_name!r} has no attribute {attr!r}")
        found = getattr(found, part)
    items = list(found) if isinstance(found, (list, tuple)) else [found]
    if not items and isinstance(found, (list, tuple)):
        raise fail(f"{path!r} is an empty {type(found).__name__}; expected {_EXPECTED}")
    return [_as_spec(item, fail, index=i if item is not found else None) for i, item in enumerate(items)]


def _split(path: Any) -> tuple[str, str]:
    if not isinstance(path, str) or path.count(":") != 1:
        return "", ""
    module_name, attr = (part.strip() for part in path.split(":"))
    return module_name, attr


def _as_spec(item: Any, fail: Callable[[str], ConfigError], *, index: int | None) -> ToolSpec:
    where = f" (item {index})" if index is not None else ""
    if isinstance(item, ToolSpec):
        return item
    if inspect.isfunction(item):
        try:
            return tool(item)
        except ToolDefinitionError as exc:
            raise fail(f"the function{where} cannot be used as a tool: {exc}") from exc
    raise fail(f"expected {_EXPECTED}; found {type(item).__name__}{where}")
