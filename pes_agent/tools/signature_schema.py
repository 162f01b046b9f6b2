"""The input schema a typed function describes: its parameters read with resolved annotations, a
compact JSON Schema derived from them with pydantic, and the ``Args:`` section of its docstring as the
properties' descriptions. What ``@tool`` builds a bare function's schema from, so the schema the model
sees and the types the author wrote cannot drift apart.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, create_model
from pydantic.fields import FieldInfo

from pes_agent.errors import ToolDefinitionError
from pes_agent.tools.spec import ToolContext

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


def context_param_of(fn: Callable[..., Any]) -> str | None:
    """The parameter typed ``ToolContext`` (handed the call's context, never shown to the model)."""
    try:
        hints = typing.get_type_hints(fn)
    except (TypeError, ValueError, NameError):
        return None
    return next((name for name, hint in hints.items() if hint is ToolContext), None)


def parameters(fn: Callable[..., Any], tool_name: str) -> list[inspect.Parameter]:
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
