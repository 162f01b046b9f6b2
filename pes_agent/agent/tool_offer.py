"""Which tools the planner is shown: all of them, or the few the index finds for the query.

With more than ``retrieval.threshold`` enabled tools, a manifesto of every tool costs about 20
tokens a tool on every planning call (19,500 at 1,000 tools, beyond a small model's whole context),
so the planner sees the ``k`` best matches instead, the next ``names`` by name only, and may ask for
more (``findTools``). Every choice is a ``TOOLS_OFFERED`` event with the scores, so a user can see
why a tool was missing.

Without the ``retrieval`` extra the planner sees every tool, as before, and says so: a warning in
the log once per instance and a ``reason`` in each event. Never a silent fallback.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from pes_agent.config.retrieval import RetrievalConfig
from pes_agent.guided.arithmetic import operation_words
from pes_agent.tools.finder import ToolFinder
from pes_agent.tools.index import EXTRA_HINT, ToolHit
from pes_agent.tools.semantic import Searcher

OfferMode = Literal["all", "retrieved", "all_unindexed"]

GUIDED_PART_HITS = 5
"""In guided mode each part of the query adds its own best few tools to those of the whole query:
the small model chooses a tool per part, so every part needs its candidates."""


@dataclass(frozen=True, kw_only=True)
class ToolOffer:
    """The tools the planner is shown, best first when retrieved, and how they were chosen."""

    names: tuple[str, ...]
    """Shown with their manifesto line."""
    total: int
    mode: OfferMode
    hits: tuple[ToolHit, ...] = ()
    named: tuple[ToolHit, ...] = ()
    """Shown by name only, after ``names`` (``retrieval.names``)."""
    searches: tuple[str, ...] = ()
    """What was searched for: the query, or the planner's ``findTools`` phrases."""
    ranking: str = "bm25"
    reason: str = ""
    """Why every tool is shown (mode ``all`` or ``all_unindexed``), or why configured embeddings
    were not used."""

    @property
    def retrieved(self) -> bool:
        return self.mode == "retrieved"

    @property
    def searchable(self) -> bool:
        """Whether asking ``findTools`` could show more: retrieval chose, and left some tools out."""
        return self.retrieved and len(self.names) + len(self.named) < self.total

    @property
    def plannable(self) -> tuple[str, ...]:
        """Every tool a plan may name: those described, then those named only."""
        return self.names + tuple(h.name for h in self.named)

    def event_data(self, k: int, *, added: Sequence[ToolHit] = ()) -> dict[str, Any]:
        """``TOOLS_OFFERED``: enough to debug a missing tool (was it searched for, how did it score)."""
        data: dict[str, Any] = {"mode": self.mode, "total": self.total, "shown": len(self.names), "k": k}
        if self.retrieved:
            data["ranking"] = self.ranking
            data["searches"] = list(self.searches)
            data["tools"] = [_hit_data(h) for h in (added or self.hits)]
            data["named"] = [_hit_data(h) for h in self.named]
        if self.reason:
            data["reason"] = self.reason
        return data


def _hit_data(hit: ToolHit) -> dict[str, Any]:
    data: dict[str, Any] = {"name": hit.name, "score": hit.score}
    if hit.lexical is not None or hit.semantic is not None:
        data.update(bm25=hit.lexical, cosine=hit.semantic)
    return data


def every_tool(enabled: Sequence[str], config: RetrievalConfig, finder: ToolFinder | None) -> ToolOffer | None:
    """The offer of every enabled tool when retrieval does not apply (off, few tools, the extra
    missing), with the reason; None when the tools are to be searched."""
    total = len(enabled)
    everything = tuple(enabled)
    if not config.enabled or finder is None:
        return ToolOffer(names=everything, total=total, mode="all", reason="retrieval is off (`retrieval.enabled`)")
    if total <= config.threshold:
        reason = f"{total} tools: no more than `retrieval.threshold` ({config.threshold})"
        return ToolOffer(names=everything, total=total, mode="all", reason=reason)
    if finder.index() is None:
        return unindexed(enabled, finder)
    return None


def unindexed(enabled: Sequence[str], finder: ToolFinder) -> ToolOffer:
    """Every enabled tool, because there is no index to search (the extra missing, or broken on a
    rebuild), and saying so: a warning once per instance and the reason in the event."""
    finder.warn_once(len(enabled))
    reason = f"{len(enabled)} tools are enabled but tool retrieval is not installed: {EXTRA_HINT}"
    return ToolOffer(names=tuple(enabled), total=len(enabled), mode="all_unindexed", reason=reason)


def choose_tools(
    query: str,
    enabled: Sequence[str],
    config: RetrievalConfig,
    searcher: Searcher,
    *,
    parts: Sequence[str] = (),
    keep: Iterable[str] = (),
) -> ToolOffer:
    """The tools to show for ``query``: the best ``k`` described, the next ``names`` by name.
    ``parts``: the query's parts (guided mode), each adding its own best tools, and no names-only
    tier (a small model chooses among a few per part); ``keep``: tools shown whatever their score
    (a plan being refined uses them)."""
    allowed = frozenset(enabled)
    named_only = 0 if parts else config.named_only
    found = searcher.search(query, config.k + named_only, allowed)
    hits = list(found[: config.k])
    for part in parts:  # arithmetic named in other words is searched as its verb ("12 * 7": multiply)
        hits += searcher.search(part, GUIDED_PART_HITS, allowed, words=operation_words(part))
    chosen = _merge([n for n in keep if n in allowed], hits)
    described = {h.name for h in chosen}
    named = tuple(h for h in found[config.k :] if h.name not in described)
    return ToolOffer(names=tuple(h.name for h in chosen), total=len(enabled), mode="retrieved", hits=tuple(chosen),
                     named=named, searches=(query, *parts), ranking=searcher.ranking, reason=searcher.note)


def widen(offer: ToolOffer, phrases: Sequence[str], enabled: Collection[str], config: RetrievalConfig,
          searcher: Searcher) -> tuple[ToolOffer, tuple[ToolHit, ...]]:
    """``offer`` with up to ``k`` more tools described, found for the planner's ``phrases``: the best
    of each phrase in turn, never one already described (one named only is described now).
    Returns the new offer and what was added."""
    shown = set(offer.names)
    allowed = frozenset(n for n in enabled if n not in shown)
    per_phrase = [list(searcher.search(p, config.k, allowed)) for p in phrases]
    added: list[ToolHit] = []
    while len(added) < config.k and any(per_phrase):
        for hits in per_phrase:
            while hits and hits[0].name in shown:
                hits.pop(0)
            if hits and len(added) < config.k:
                hit = hits.pop(0)
                shown.add(hit.name)
                added.append(hit)
    wider = replace(offer, names=offer.names + tuple(h.name for h in added), hits=offer.hits + tuple(added),
                    named=tuple(h for h in offer.named if h.name not in shown), searches=tuple(phrases),
                    ranking=searcher.ranking, reason=searcher.note)
    return wider, tuple(added)


def _merge(kept: Sequence[str], hits: Iterable[ToolHit]) -> list[ToolHit]:
    """The kept tools first (score 0 unless found too), then the found ones by best score."""
    best: dict[str, ToolHit] = {}
    for hit in hits:
        if hit.name not in best or hit.score > best[hit.name].score:
            best[hit.name] = hit
    first = [best.get(name) or ToolHit(name=name, score=0.0) for name in dict.fromkeys(kept)]
    firsts = {h.name for h in first}
    return first + sorted((h for h in best.values() if h.name not in firsts), key=lambda h: -h.score)
