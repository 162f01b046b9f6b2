"""A plan update proposed mid-run, applied as a diff by item id.

Completed items and the item being executed are never touched: their status, results and
planning fields stay. Other items are added, modified (when a planning field differs) or removed.
"""

from __future__ import annotations

from dataclasses import dataclass

from pes_agent.agent.context import RunContext
from pes_agent.agent.plan_items import plan_event_data, todo_from_plan
from pes_agent.events import EventType
from pes_agent.llm.replies import ParsedPlan
from pes_agent.state.models import ItemStatus, TodoItem


@dataclass(frozen=True, kw_only=True)
class PlanDiff:
    added: tuple[str, ...]
    modified: tuple[str, ...]
    removed: tuple[str, ...]

    def as_dict(self) -> dict[str, list[str]]:
        return {"added": list(self.added), "modified": list(self.modified), "removed": list(self.removed)}


def _frozen(item: TodoItem, current_id: str | None) -> bool:
    return item.id == current_id or item.status is not ItemStatus.PENDING


def merge_plan(
    items: list[TodoItem], proposal: ParsedPlan, *, current_id: str | None, validation_mode: str, now: float
) -> tuple[list[TodoItem], PlanDiff]:
    existing = {item.id: item for item in items}
    proposed_ids = {p.id for p in proposal.items}
    added: list[str] = []
    modified: list[str] = []
    merged: list[TodoItem] = [it for it in items if _frozen(it, current_id) and it.id not in proposed_ids]
    for planned in proposal.items:
        old = existing.get(planned.id)
        new = todo_from_plan(planned, validation_mode=validation_mode, now=now)
        if old is None:
            added.append(planned.id)
            merged.append(new)
        elif _frozen(old, current_id) or old.planning_fields() == new.planning_fields():
            merged.append(old)
        else:
            modified.append(planned.id)
            merged.append(new.model_copy(update={"created_at": old.created_at}))
    removed = [it.id for it in items if it.id not in proposed_ids and not _frozen(it, current_id)]
    # Items the proposal dropped but that must stay (done, or running) keep their place at the front.
    return merged, PlanDiff(added=tuple(added), modified=tuple(modified), removed=tuple(removed))


async def apply_plan_update(ctx: RunContext, proposal: ParsedPlan, *, current_id: str | None) -> PlanDiff:
    merged, diff = merge_plan(
        ctx.state.todo_list,
        proposal,
        current_id=current_id,
        validation_mode=ctx.limits.validation_mode,
        now=ctx.clock(),
    )
    ctx.state.todo_list = merged
    ctx.state.unplanned = list(proposal.unplanned)  # a revised plan answers to its own parts
    if proposal.title:
        ctx.state.title = proposal.title
    if proposal.intent:
        ctx.state.intent = proposal.intent
    if proposal.plan:
        ctx.state.plan = proposal.plan
    await ctx.save()
    await ctx.emit(
        EventType.PLAN_UPDATE, {**plan_event_data(ctx), "diff": diff.as_dict()}, step_id=current_id
    )
    return diff
