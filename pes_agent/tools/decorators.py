"""``@tool``: turn a typed function (or a function plus a JSON Schema) into a ``ToolSpec``.

The bare form derives the input schema from the signature with pydantic, so the schema the model sees
and the types the author wrote cannot drift apart. Arguments are *not* re-validated by pydantic at
call time — the executor's JSON-Schema check is the one gate — except that parameters typed as a
pydantic model, dataclass or enum are converted, so the function receives what it declared.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import inspect
import re
import sys
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, overload

import typing_extensions
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from pes_agent.errors import ToolDefinitionError, ToolError
from pes_agent.prompts.schemas import inline_refs
from pes_agent.tools.registry import check_tool_name
from pes_agent.tools.spec import SEARCH_TERMS, ExecutionMode, ToolContext, ToolSpec
from pes_agent.tools.validation import SchemaValidator

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params):\s*$")
_ARG_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
# Schema keywords whose value is a map of name → subschema, or one subschema, or a list of them.
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
_SCHEMA_LIST = ("anyOf", "allOf", "oneOf", "prefixItems")

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
        context = _context_param(fn)
        return tool_from_schema(tool_name, text, input_schema, fn, context_param=context, **options)
    params = _parameters(fn, tool_name)
    context = next((p.name for p in params if p.annotation is ToolContext), None)
    schema_params = [p for p in params if p.annotation is not ToolContext]
    input_schema = derive_schema(schema_params, arg_docs, tool_name)
    call = _with_conversion(fn, schema_params, tool_name)
    if options.get("output_schema") is None:
        options["output_schema"] = output_schema_of(fn)
    return tool_from_schema(tool_name, text, input_schema, call, context_param=context, **options)


def output_schema_of(fn: Fn) -> dict[str, Any] | None:
    """The JSON Schema of what ``fn`` returns, from its return annotation, when that names fields
    (a ``TypedDict``, a pydantic model, a dataclass, a list of them): planning reads output fields to
    find the step that provides a value the request does not hold (``capital`` for a city). A return
    type without fields (``str``, ``dict[str, Any]``), a missing annotation, or one pydantic cannot
    describe gives None: the output schema is what the tool promises, never a guess."""
    try:
        hint = typing.get_type_hints(fn, include_extras=True).get("return")
    except (TypeError, ValueError, NameError):
        return None
    if hint is None or hint is type(None) or hint is Any:
        return None
    try:
        raw = TypeAdapter(_describable(hint)).json_schema(mode="serialization")
    except Exception:  # noqa: BLE001 -- pydantic refuses an undescribable type in several ways: no schema
        return None
    schema = inline_refs(compact_schema(raw))  # fields where a reader looks, not behind ``$ref``
    return schema if _names_fields(schema) else None


def _describable(hint: Any) -> Any:
    """``hint`` as pydantic can describe it: on Python 3.11 pydantic refuses ``typing.TypedDict``
    (it wants ``typing_extensions``'), the one authors reach for, so its fields are read here."""
    if typing.is_typeddict(hint) and sys.version_info < (3, 12):
        fields = typing.get_type_hints(hint, include_extras=True)
        return typing_extensions.TypedDict(hint.__name__, fields, total=hint.__total__)  # type: ignore[operator]
    if typing.get_origin(hint) is list and len(typing.get_args(hint)) == 1:  # a list of records
        return list[_describable(typing.get_args(hint)[0])]  # type: ignore[misc]
    return hint


def _names_fields(schema: Mapping[str, Any]) -> bool:
    if schema.get("properties") or "$ref" in schema:
        return True
    items = schema.get("items")
    return isinstance(items, Mapping) and _names_fields(items)


def _context_param(fn: Fn) -> str | None:
    try:
        hints = typing.get_type_hints(fn)
    except (TypeError, ValueError, NameError):
        return None
    return next((name for name, hint in hints.items() if hint is ToolContext), None)


def _parameters(fn: Fn, tool_name: str) -> list[inspect.Parameter]:
    """Signature parameters with resolved annotations; the model can only send named JSON values."""
    try:
        signature = inspect.signature(fn)
        hints = typing.get_type_hints(fn, include_extras=True)
    except (TypeError, ValueError, NameError) as exc:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: cannot read the signature or type hints of the function "
            f"({type(exc).__name__}: {exc}); define the types it uses at module level."
        ) from exc
    params = []
    for p in signature.parameters.values():
        where = f"tool {tool_name!r}, parameter {p.name!r}"
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"{where}: `*args`/`**kwargs` cannot be described to the model; declare each "
                "argument, or pass `input_schema=` to `@tool`."
            )
        if p.kind is p.POSITIONAL_ONLY:
            raise ToolDefinitionError(f"{where}: tools are called with keyword arguments; remove the `/`.")
        if p.name not in hints:
            raise ToolDefinitionError(
                f"{where} has no type annotation: annotate it (e.g. `{p.name}: str`) so its schema "
                "can be derived, or pass `input_schema=` to `@tool`."
            )
        params.append(p.replace(annotation=hints[p.name]))
    return params


def derive_schema(
    params: Sequence[inspect.Parameter], arg_docs: Mapping[str, str], tool_name: str
) -> dict[str, Any]:
    """A compact JSON Schema object for the parameters (pydantic's, without ``title`` noise)."""
    fields: dict[str, Any] = {}
    for i, p in enumerate(params):
        doc = arg_docs.get(p.name) if not _annotated_description(p.annotation) else None
        default = ... if p.default is inspect.Parameter.empty else p.default
        # Internal field names + aliases: parameter names like `schema` or `model_x` would clash
        # with BaseModel attributes.
        # description only when present: an explicit None would erase Annotated's description.
        info = Field(default, alias=p.name, description=doc) if doc else Field(default, alias=p.name)
        fields[f"p{i}"] = (p.annotation, info)
    try:
        model = create_model(f"{tool_name}_arguments", **fields)
        raw = model.model_json_schema(by_alias=True)
    except Exception as exc:
        culprit = _first_unschemable(params)
        where = f", parameter {culprit!r}" if culprit else ""
        raise ToolDefinitionError(
            f"tool {tool_name!r}{where}: cannot derive a JSON Schema from the type hints "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); use JSON-friendly "
            "types or pass `input_schema=` to `@tool`."
        ) from exc
    schema: dict[str, Any] = {"type": "object", "properties": compact_schema(raw.get("properties", {}), True)}
    if raw.get("required"):
        schema["required"] = list(raw["required"])
    if raw.get("$defs"):
        schema["$defs"] = compact_schema(raw["$defs"], True)
    return schema


def _first_unschemable(params: Sequence[inspect.Parameter]) -> str | None:
    for p in params:
        try:
            TypeAdapter(p.annotation).json_schema()
        except Exception:  # noqa: BLE001 -- pydantic raises several kinds for a type it cannot describe
            return p.name
    return None


def _annotated_description(annotation: Any) -> bool:
    if typing.get_origin(annotation) is not Annotated:
        return False
    return any(isinstance(m, FieldInfo) and m.description for m in annotation.__metadata__)


def compact_schema(node: Any, is_map: bool = False) -> Any:
    """Drop pydantic's ``title`` keys, but only where they are keywords (a property may be named
    ``title``) and never inside values such as ``default`` or ``enum``."""
    if is_map:
        return {k: compact_schema(v) for k, v in node.items()} if isinstance(node, Mapping) else node
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS:
            out[key] = compact_schema(value, True)
        elif key in _SCHEMA_ONE:
            out[key] = compact_schema(value)
        elif key in _SCHEMA_LIST and isinstance(value, list):
            out[key] = [compact_schema(v) for v in value]
        else:
            out[key] = value
    return out


def _with_conversion(fn: Fn, params: Sequence[inspect.Parameter], tool_name: str) -> Fn:
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


def split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Google-style docstring → (description without the ``Args:`` section, {param: description})."""
    lines = inspect.cleandoc(doc).splitlines() if doc else []
    kept: list[str] = []
    args: dict[str, str] = {}
    current: str | None = None
    in_args = False
    entry_indent: int | None = None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if indent == 0 and _SECTION.match(line):
            in_args, current, entry_indent = True, None, None
            continue
        if in_args and indent == 0 and line.strip():  # the next section (Returns:, ...) or prose
            in_args = False
        if not in_args:
            kept.append(line)
            continue
        if not line.strip():
            continue
        if entry_indent is None:
            entry_indent = indent
        match = _ARG_LINE.match(line.strip()) if indent <= entry_indent else None
        if match:
            current = match.group(1)
            args[current] = match.group(2).strip()
        elif current is not None:
            args[current] = f"{args[current]} {line.strip()}".strip()
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return text, args


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
