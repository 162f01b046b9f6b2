"""``@tool``: turn a typed function (or a function plus a JSON Schema) into a ``ToolSpec``.

The bare form derives the input schema from the signature with pydantic, so the schema the model sees
and the types the author wrote cannot drift apart. Arguments are *not* re-validated by pydantic at
call time — the executor's JSON-Schema check is the one gate — except that parameters typed as a
pydantic model, dataclass or enum are converted, so the function receives what it declared.

This module is the API and its checks of what an author passes; the pieces it builds from are
``signature_schema`` (input schema from signature and docstring), ``output_schema`` (from the return
annotation) and ``argument_conversion`` (arguments as the declared types).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, overload

from pes_agent.errors import ToolDefinitionError
from pes_agent.tools.argument_conversion import with_conversion
from pes_agent.tools.output_schema import output_schema_of
from pes_agent.tools.registry import check_tool_name
from pes_agent.tools.signature_schema import context_param_of, derive_schema, parameters, split_docstring
from pes_agent.tools.spec import SEARCH_TERMS, ExecutionMode, ToolContext, ToolSpec
from pes_agent.tools.validation import SchemaValidator

_OPTIONS = frozenset(
    {
        "name",
        "description",
        "input_schema",
        "output_schema",
        "capabilities",
        "examples",
        "execution_mode",
        "requires_approval",
        "timeout",
        "side_effects",
        "idempotent",
        "deterministic",
        "aliases",
        "value_aliases",
        "keywords",
    }
)

Fn = Callable[..., Any]


@overload
def tool(fn: Fn, /) -> ToolSpec: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    capabilities: Sequence[str] = (),
    examples: Sequence[Mapping[str, Any]] = (),
    execution_mode: ExecutionMode = "automatic",
    requires_approval: bool = False,
    timeout: float | None = 30.0,
    side_effects: bool = False,
    idempotent: bool = False,
    deterministic: bool = True,
    aliases: Mapping[str, str] | None = None,
    value_aliases: Mapping[str, Mapping[str, Any]] | None = None,
    keywords: Sequence[str] = (),
) -> Callable[[Fn], ToolSpec]: ...


def tool(fn: Fn | None = None, /, **options: Any) -> ToolSpec | Callable[[Fn], ToolSpec]:
    """Use bare (``@tool``) or with options (``@tool(name=..., input_schema={...})``)."""
    if fn is not None:
        if options:
            raise ToolDefinitionError("`tool` takes either a function or keyword options, not both.")
        return _from_function(fn)
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise ToolDefinitionError(
            f"`@tool` got unknown option(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_OPTIONS))}."
        )
    return lambda f: _from_function(f, **options)


def tool_from_schema(
    name: str,
    description: str,
    input_schema: Mapping[str, Any],
    fn: Fn,
    *,
    output_schema: Mapping[str, Any] | None = None,
    capabilities: Sequence[str] = (),
    examples: Sequence[Mapping[str, Any]] = (),
    execution_mode: ExecutionMode = "automatic",
    requires_approval: bool = False,
    timeout: float | None = 30.0,
    side_effects: bool = False,
    idempotent: bool = False,
    deterministic: bool = True,
    aliases: Mapping[str, str] | None = None,
    value_aliases: Mapping[str, Mapping[str, Any]] | None = None,
    context_param: str | None = None,
    keywords: Sequence[str] = (),
) -> ToolSpec:
    """Build a tool from data (a scenario catalogue, a remote tool list); ``fn`` gets the arguments
    as keyword arguments, plus the ``ToolContext`` under ``context_param`` when given. ``keywords``:
    words the tool is also found by when tools are retrieved (``x-search-terms``), not shown to the
    model: how users name its job when the description says it otherwise."""
    check_tool_name(name)
    if not callable(fn):
        raise ToolDefinitionError(f"tool {name!r}: `fn` must be callable, got {type(fn).__name__}.")
    return ToolSpec(
        name=name,
        description=description.strip(),
        input_schema=_with_keywords(
            _checked_object_schema(input_schema, name, "input_schema"), keywords, name
        ),
        fn=fn,
        output_schema=_optional_schema(output_schema, name),
        capabilities=tuple(capabilities),
        examples=tuple(examples),
        execution_mode=_checked_mode(execution_mode, name),
        requires_approval=requires_approval,
        timeout=_checked_timeout(timeout, name),
        side_effects=side_effects,
        idempotent=idempotent,
        deterministic=deterministic,
        aliases=dict(aliases or {}),
        value_aliases={k: dict(v) for k, v in (value_aliases or {}).items()},
        context_param=context_param,
    )


def _with_keywords(schema: Mapping[str, Any], keywords: Sequence[str], name: str) -> Mapping[str, Any]:
    """``schema`` with ``keywords`` added to its ``x-search-terms`` (kept once each, in order)."""
    if isinstance(keywords, str) or not all(isinstance(k, str) for k in keywords):
        raise ToolDefinitionError(
            f"tool {name!r}: `keywords` must be a list of strings, e.g. ['google', 'look online']."
        )
    if not keywords:
        return schema
    terms = [*(schema.get(SEARCH_TERMS) or ()), *keywords]
    return {**schema, SEARCH_TERMS: list(dict.fromkeys(t.strip() for t in terms if t.strip()))}


def _from_function(
    fn: Fn,
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    **options: Any,
) -> ToolSpec:
    if isinstance(fn, ToolSpec) or not callable(fn):
        raise ToolDefinitionError(f"`@tool` needs a function, got {type(fn).__name__}.")
    label = getattr(fn, "__name__", repr(fn))
    tool_name = name or label
    summary, arg_docs = split_docstring(inspect.getdoc(fn) or "")
    text = description if description is not None else summary
    if not text.strip():
        raise ToolDefinitionError(
            f"tool {tool_name!r} has no description: the model picks tools by it. Add a docstring to "
            f"`{label}` or pass `description=` to `@tool`."
        )
    if input_schema is not None:  # the schema is the contract: the signature may be loose
        context = context_param_of(fn)
        return tool_from_schema(tool_name, text, input_schema, fn, context_param=context, **options)
    params = parameters(fn, tool_name)
    context = next((p.name for p in params if p.annotation is ToolContext), None)
    schema_params = [p for p in params if p.annotation is not ToolContext]
    input_schema = derive_schema(schema_params, arg_docs, tool_name)
    call = with_conversion(fn, schema_params, tool_name)
    if options.get("output_schema") is None:
        options["output_schema"] = output_schema_of(fn)
    return tool_from_schema(tool_name, text, input_schema, call, context_param=context, **options)


def _checked_object_schema(schema: Any, tool_name: str, key: str) -> dict[str, Any]:
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(
            f"tool {tool_name!r}: `{key}` must be a JSON Schema object (a dict), got {type(schema).__name__}."
        )
    if schema.get("type") != "object":
        raise ToolDefinitionError(
            f"tool {tool_name!r}: `{key}` must describe an object of named arguments "
            f'(`"type": "object"`), got type {schema.get("type")!r}.'
        )
    SchemaValidator(schema, tool_name=tool_name)
    return copy.deepcopy(dict(schema))


def _optional_schema(schema: Mapping[str, Any] | None, tool_name: str) -> Mapping[str, Any] | None:
    if schema is None:
        return None
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(
            f"tool {tool_name!r}: `output_schema` must be a JSON Schema (a dict), got "
            f"{type(schema).__name__}."
        )
    return copy.deepcopy(dict(schema))


def _checked_mode(mode: str, tool_name: str) -> ExecutionMode:
    if mode == "automatic":
        return "automatic"
    if mode == "blocking":
        return "blocking"
    raise ToolDefinitionError(
        f"tool {tool_name!r}: `execution_mode` must be 'automatic' or 'blocking', got {mode!r}."
    )


def _checked_timeout(timeout: float | None, tool_name: str) -> float | None:
    if timeout is not None and not timeout > 0:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: `timeout` must be a positive number of seconds or None, got {timeout!r}."
        )
    return timeout
