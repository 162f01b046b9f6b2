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
from pes_agent.guided.parts import query_parts
from pes_agent.tools.finder import ToolFinder
from pes_agent.tools.index import EXTRA_HINT, Hits, ToolHit, hit_names
from pes_agent.tools.semantic import Searcher

OfferMode = Literal["all", "retrieved", "all_unindexed"]

GUIDED_PART_HITS = 5
"""In guided mode each part of the query adds its own best few tools to those of the whole query:
the small model chooses a tool per part, so every part needs its candidates (the free-form planner
is shown each part's list merged fairly, ``fair_merge``)."""


@dataclass(frozen=True, kw_only=True)
class ToolOffer:
    """The tools the planner is shown, best first when retrieved, and how they were chosen."""

    names: tuple[str, ...]
    """Shown with their manifesto line."""
    total: int
    mode: OfferMode
    hits: tuple[ToolHit, ...] = ()
    named: Sequence[ToolHit] = ()
    """Shown by name only, after ``names`` (``retrieval.names``); hits made when read (``Hits``)."""
    searches: tuple[str, ...] = ()
    """What was searched for: the query (and its parts), or the planner's ``findTools`` phrases."""
    parts: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Each part of the query searched on its own, with its best tools (``PART_SHOWN``)."""
    producers: tuple[str, ...] = ()
    """Described too, found by no word of the request: tools whose output gives an id an offered
    tool requires (``guided.producers``)."""
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
        return self.names + tuple(hit_names(self.named))

    def with_producers(self, producers: Sequence[str]) -> ToolOffer:
        """This offer with ``producers`` described after the tools retrieval found."""
        if not producers:
            return self
        hits = tuple(ToolHit(name=name, score=0.0) for name in producers)
        return replace(
            self,
            names=self.names + tuple(producers),
            hits=self.hits + hits,
            producers=self.producers + tuple(producers),
        )

    def event_data(self, k: int, *, added: Sequence[ToolHit] = ()) -> dict[str, Any]:
        """``TOOLS_OFFERED``: enough to debug a missing tool (was it searched for, how did it score)."""
        data: dict[str, Any] = {"mode": self.mode, "total": self.total, "shown": len(self.names), "k": k}
        if self.retrieved:
            data["ranking"] = self.ranking
            data["searches"] = list(self.searches)
            if self.parts and not added:
                data["parts"] = [{"part": part, "found": list(found)} for part, found in self.parts]
            data["tools"] = [_hit_data(h) for h in (added or self.hits)]
            data["named"] = [_hit_data(h) for h in self.named]
            if self.producers and not added:
                data["producers"] = list(self.producers)
        if self.reason:
            data["reason"] = self.reason
        return data


def _hit_data(hit: ToolHit) -> dict[str, Any]:
    data: dict[str, Any] = {"name": hit.name, "score": hit.score}
    if hit.lexical is not None or hit.semantic is not None:
        data.update(bm25=hit.lexical, cosine=hit.semantic)
    return data


def every_tool(
    enabled: Sequence[str], config: RetrievalConfig, finder: ToolFinder | None
) -> ToolOffer | None:
    """The offer of every enabled tool when retrieval does not apply (off, few tools, the extra
    missing), with the reason; None when the tools are to be searched."""
    total = len(enabled)
    everything = tuple(enabled)
    if not config.enabled or finder is None:
        return ToolOffer(
            names=everything, total=total, mode="all", reason="retrieval is off (`retrieval.enabled`)"
        )
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


def preview_offer(
    query: str, enabled: Sequence[str], config: RetrievalConfig, finder: ToolFinder
) -> ToolOffer:
    """The tools a free-form run's first planning call is shown for ``query`` when they are to be
    searched (``every_tool`` said None), ranked as a preview can (``ToolFinder.preview``): what
    ``pes-agent prompts`` shows and ``benchmarks/retrieval.py`` measures."""
    parts = query_parts(query)
    searcher = finder.preview(search_texts(query, parts))
    return (
        unindexed(enabled, finder)
        if searcher is None
        else choose_tools(query, enabled, config, searcher, parts=parts)
    )


def search_texts(query: str, parts: Sequence[str], *, guided: bool = False) -> tuple[str, ...]:
    """What ``choose_tools`` searches for, and so what is embedded first: the query, and its parts
    when it has more than one (a single part is the query itself) or in guided mode."""
    return (query, *parts) if len(parts) > 1 or guided else (query,)


def choose_tools(
    query: str,
    enabled: Sequence[str],
    config: RetrievalConfig,
    searcher: Searcher,
    *,
    parts: Sequence[str] = (),
    guided: bool = False,
    keep: Iterable[str] = (),
) -> ToolOffer:
    """The tools to show for ``query`` (of ``parts``, as planning splits it): the best ``k``
    described, the next ``names`` by name. ``keep``: tools shown whatever their score (a plan being
    refined uses them).

    Each part is searched on its own: ranked as a whole, the part with more specific words took the
    budget and a short generic part ("look on the internet") lost its tool (issue 30). The free-form
    planner is shown the parts' lists merged fairly (``fair_merge``: every part's best first, then
    every part's second...) and the whole query's list beside them, for tools only the whole names.
    Guided mode (``guided``): the query's best ``k`` and each part's best ``GUIDED_PART_HITS``, by
    score, and no names-only tier (a small model chooses among a few per part)."""
    allowed = frozenset(enabled)
    kept = [n for n in keep if n in allowed]
    several = tuple(parts) if len(parts) > 1 or guided else ()
    depth = max(config.k, GUIDED_PART_HITS) if guided else config.k + config.named_only
    whole, *per_part = searcher.search_each(  # one pass over the catalogue for all of them
        [query, *several], depth, allowed, words=[(), *(operation_words(part) for part in several)]
    )
    named: Sequence[ToolHit] = ()
    if guided:
        per_part = [hits[:GUIDED_PART_HITS] for hits in per_part]
        chosen = _merge(kept, [h for hits in (whole[: config.k], *per_part) for h in hits])
    else:
        ranked = fair_merge([*per_part, whole], depth)
        chosen = _merge(kept, ranked[: config.k], by_score=not several)
        described = {h.name for h in chosen}
        named = ranked.pick(
            [
                at
                for at in range(config.k, min(len(ranked), config.k + config.named_only))
                if ranked.names[at] not in described
            ]
        )
    shown = tuple(
        (part, tuple(hit_names(hits)[:PART_SHOWN])) for part, hits in zip(several, per_part, strict=True)
    )
    return ToolOffer(
        names=tuple(h.name for h in chosen),
        total=len(enabled),
        mode="retrieved",
        hits=tuple(chosen),
        named=named,
        searches=(query, *several),
        ranking=searcher.ranking,
        reason=searcher.note,
        parts=shown,
    )


PART_SHOWN = 5
"""How many of each part's best tools the ``TOOLS_OFFERED`` event lists under ``parts``."""


def fair_merge(lists: Sequence[Sequence[ToolHit]], limit: int | None = None) -> Hits:
    """One ranking of several: each list in turn gives its best tool not yet taken (round robin),
    so any budget cut from the front is shared equally, whatever the lists' scores (a short generic
    part's scores are lower than a long specific one's). At most ``limit`` tools, each hit made
    when read."""
    taken: dict[str, tuple[int, int]] = {}
    budget = sum(len(hits) for hits in lists) if limit is None else limit
    rows = [enumerate(hit_names(hits)) for hits in lists]  # each list's cursor
    live = list(range(len(lists)))
    while live and len(taken) < budget:
        still = []
        for i in live:
            if len(taken) >= budget:
                break
            for at, name in rows[i]:
                if name not in taken:
                    taken[name] = (i, at)
                    still.append(i)
                    break
        live = still
    where = list(taken.values())
    return Hits(list(taken), lambda n: lists[where[n][0]][where[n][1]])


def widen(
    offer: ToolOffer,
    phrases: Sequence[str],
    enabled: Collection[str],
    config: RetrievalConfig,
    searcher: Searcher,
) -> tuple[ToolOffer, tuple[ToolHit, ...]]:
    """``offer`` with up to ``k`` more tools described, found for the planner's ``phrases``: the best
    of each phrase in turn, never one already described (one named only is described now).
    Returns the new offer and what was added."""
    shown = set(offer.names)
    allowed = frozenset(n for n in enabled if n not in shown)
    per_phrase = [list(hits) for hits in searcher.search_each(phrases, config.k, allowed)]
    added: list[ToolHit] = []
    while len(added) < config.k and any(per_phrase):
        for hits in per_phrase:
            while hits and hits[0].name in shown:
                hits.pop(0)
            if hits and len(added) < config.k:
                hit = hits.pop(0)
                shown.add(hit.name)
                added.append(hit)
    wider = replace(
        offer,
        names=offer.names + tuple(h.name for h in added),
        hits=offer.hits + tuple(added),
        named=tuple(h for h in offer.named if h.name not in shown),
        searches=tuple(phrases),
        ranking=searcher.ranking,
        reason=searcher.note,
    )
    return wider, tuple(added)


def _merge(kept: Sequence[str], hits: Iterable[ToolHit], *, by_score: bool = True) -> list[ToolHit]:
    """The kept tools first (score 0 unless found too), then the found ones by best score (or in
    their given order: a fair merge's)."""
    best: dict[str, ToolHit] = {}
    for hit in hits:
        if hit.name not in best or hit.score > best[hit.name].score:
            best[hit.name] = hit
    first = [best.get(name) or ToolHit(name=name, score=0.0) for name in dict.fromkeys(kept)]
    firsts = {h.name for h in first}
    rest = [h for h in best.values() if h.name not in firsts]
    return first + (sorted(rest, key=lambda h: -h.score) if by_score else rest)
