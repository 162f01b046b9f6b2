"""A deterministic catalogue of 1,000 realistic tools, for the retrieval tests and benchmark.

Company API catalogues and MCP servers look like this: many domains, each with a handful of records,
and for every record a family of tools that differ in one respect (``billing_get_invoice``,
``billing_list_invoices``, ``billing_get_invoice_pdf``, ``billing_send_invoice``). Those near
neighbours are what makes finding the right tool hard: the query's domain words match the whole
family, only the verb or the format tells them apart. A few domains add tools of their own
(``weather_get_forecast`` beside ``weather_get_air_quality``).

Nothing is random at run time: the domains, records and action families below are data, and the
order of the catalogue is fixed, so ``catalogue(1000)`` is the same list on every machine. Smaller
catalogues are seeded samples that always keep the tools the given queries need (``catalogue(n,
keep=...)``), so a recall figure at N = 50 or 200 is measured on queries whose answer is present.

The tools do nothing (``fn`` returns None): the benchmark measures which tools are offered to the
planner, not what they return.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from functools import cache
from typing import Any

from benchmarks.catalogue_domains import DOMAINS, Domain, Record
from benchmarks.retrieval_queries import needed_tools
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.spec import ToolSpec

SIZE = 1000
SEED = 18


_ACTION_TEXT: Mapping[str, str] = {
    "get": "Get one {noun} by its id: {about}.",
    "list": "List {many} with filters and paging, newest first.",
    "search": "Search {many} by keyword across their fields.",
    "create": "Create a new {noun} in {service}.",
    "update": "Change fields of an existing {noun}.",
    "delete": "Delete {a} {noun} permanently.",
    "pdf": "Get {a} {noun} as a PDF file to download or print.",
    "send": "Send {a} {noun} to its recipient from {service}.",
    "void": "Void {a} {noun} so it no longer counts, keeping it on record.",
    "approve": "Approve a pending {noun}.",
    "reject": "Reject a pending {noun} with a reason.",
    "cancel": "Cancel {a} {noun}.",
    "assign": "Assign {a} {noun} to a person.",
    "comment": "Add a comment to {a} {noun}.",
    "archive": "Archive {a} {noun}: hidden from lists, kept for records.",
    "restore": "Restore an archived or deleted {noun}.",
    "history": "The change history of {a} {noun}: who changed what and when.",
    "export": "Export {many} as a CSV spreadsheet.",
    "count": "Count {many} matching filters.",
}
_IDS = {
    "get",
    "update",
    "delete",
    "pdf",
    "send",
    "void",
    "approve",
    "reject",
    "cancel",
    "assign",
    "comment",
    "archive",
    "restore",
    "history",
}
_PLURAL_NAME = {"list", "search", "export", "count"}


def _action_description(action: str, record: Record, domain: Domain) -> str:
    known = _ACTION_TEXT.get(action)
    words = record.noun.replace("_", " ")
    many = record.many.replace("_", " ")
    if known is None:
        verb = action.replace("_", " ")
        return f"{verb.capitalize()} {_article(words)} {words}: {record.about}."
    return known.format(a=_article(words), noun=words, many=many, about=record.about, service=domain.service)


def _article(noun: str) -> str:
    return "an" if noun[0] in "aeiou" else "a"


def _action_name(action: str, record: Record) -> str:
    noun = record.many if action in _PLURAL_NAME else record.noun
    if action == "pdf":
        return f"get_{record.noun}_pdf"
    if action == "history":
        return f"get_{record.noun}_history"
    if action == "export":
        return f"export_{record.many}_csv"
    return f"{action}_{noun}"


def _schema(action: str, record: Record, required: Sequence[str] = ()) -> dict[str, Any]:
    props: dict[str, Any] = {}
    id_name = f"{record.noun}_id"
    if required:
        for name in required:
            props[name] = {"type": "string"}
        return {"type": "object", "properties": props, "required": list(required)}
    if action in _IDS or action not in _PLURAL_NAME | {"create"}:
        props[id_name] = {"type": "string", "description": f"Id of the {record.noun.replace('_', ' ')}."}
    if action in ("list", "export", "count"):
        props.update(
            status={"type": "string"},
            created_after={"type": "string", "format": "date"},
            limit={"type": "integer", "minimum": 1},
        )
    if action == "search":
        props["query"] = {"type": "string", "description": "Words to look for."}
    if action in ("create", "update"):
        props["fields"] = {"type": "object", "description": f"Fields of the {record.noun.replace('_', ' ')}."}
    if action in ("reject", "comment"):
        props["text"] = {"type": "string"}
    if action == "assign":
        props["assignee"] = {"type": "string", "description": "Who takes it."}
    required_names = [n for n in props if n in (id_name, "query", "fields", "text", "assignee")]
    return {"type": "object", "properties": props, "required": required_names}


def _noop(**_: Any) -> None:
    return None


@cache  # ToolSpecs are frozen: every caller may share them
def _all_tools() -> tuple[ToolSpec, ...]:
    specs: list[ToolSpec] = []
    for domain in DOMAINS:
        for record in domain.records:
            for action in record.actions:
                name = f"{domain.prefix}_{_action_name(action, record)}"
                specs.append(
                    tool_from_schema(
                        name, _action_description(action, record, domain), _schema(action, record), _noop
                    )
                )
        for suffix, description, required in domain.extras:
            schema = {
                "type": "object",
                "properties": {n: {"type": "string"} for n in required},
                "required": list(required),
            }
            specs.append(tool_from_schema(f"{domain.prefix}_{suffix}", description, schema, _noop))
    return tuple(specs)


def catalogue(n: int = SIZE, *, keep: Collection[str] | None = None) -> list[ToolSpec]:
    """``n`` tools in catalogue order: a seeded sample that holds every tool named in ``keep`` (by
    default every tool a labelled query needs, so each query's answer is present at any size of 252
    or more; smaller catalogues keep what fits). Deterministic: the same call gives the same list."""
    keep = needed_tools() if keep is None else keep
    specs = _all_tools()
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise AssertionError(
            f"duplicate tool names in the catalogue: {sorted({x for x in names if names.count(x) > 1})}"
        )
    if len(specs) < SIZE:
        raise AssertionError(f"the catalogue has {len(specs)} tools, fewer than {SIZE}")
    rng = random.Random(SEED)
    order = list(range(len(specs)))
    rng.shuffle(order)
    kept = [i for i in order if specs[i].name in keep]
    rest = [i for i in order if specs[i].name not in keep]
    chosen = sorted((kept + rest)[: max(n, 0)])
    return [specs[i] for i in chosen]
