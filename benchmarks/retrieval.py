"""Tool retrieval before planning: recall, planning-prompt size, speed, and the local model's plans.

Usage, from the repo root, with the `retrieval` extra (``pip install -e '.[retrieval]'``)::

    python benchmarks/retrieval.py [--local] [--json] [--label NAME]
        [--embeddings-url URL --embeddings-model NAME]   # the fused path (benchmarks/retrieval_fused.py)

Over the 1,000-tool catalogue (`benchmarks/tool_catalogue.py`) and its 267 labelled queries
(`benchmarks/retrieval_queries.py`):

- recall@k: of the tools the queries need, the share the planner is shown for the query, at
  N = 1,000 for several k, and at N = 50 and 200 for the configured k (there only over the queries
  whose tools the smaller catalogue holds). Also the lexical reach: the share of needed tools that
  share any word with their query at all, which bounds what BM25 can find at any k.
- planning-prompt tokens (o200k, message contents, as `benchmarks/tokens.py` counts) of
  ``art.planning_prompt`` at N = 10/50/200/1,000 with the default config and with retrieval off,
  mean and max over the queries; and at N = 1,000 for each k.
- index build time at 1,000 tools (median of 5) and the time to choose the tools for one query
  (the whole path a run takes: query words, BM25, top k), median, p95 and max.
- ``--local``: the end-to-end effect on the embedded local model (needs the `local` extra): its
  24 tasks (`benchmarks/local_model.py`) with 200 tools offered, retrieval on and off, counting
  plans that name the right tools. Minutes.

- compound requests (`benchmarks/retrieval_compound.py`, issue 30): two- and three-part requests, each
  part needing its own tool, phrased with synonyms; recall offered (k described + names named) and
  described, by number of parts, the largest planning prompt at 1,000 tools, and the time to choose
  one compound request's tools.

Targets (MISS where missed): recall@k >= 0.95 at the configured k; planning prompt at 1,000 tools
<= 3,000 tokens and flat in N (once the offer is full: k described + ``names`` named); <= 5 ms per
query (the whole choice: the query's vector from the built-in table, BM25, fusion, the offer). Results are
saved to ``benchmarks/results/retrieval-<UTC time>[-<label>].json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table, use_shared_tiktoken_cache
from benchmarks.local_model import machine
from benchmarks.retrieval_compound import COMPOUND
from benchmarks.retrieval_queries import QUERIES, LabelledQuery
from benchmarks.tool_catalogue import catalogue
from pes_agent import create_art_instance
from pes_agent.agent.tool_offer import ToolOffer, preview_offer
from pes_agent.config import RetrievalConfig
from pes_agent.config.retrieval import DEFAULT_NAMES
from pes_agent.llm.tokens import count_messages, tokenizer_available
from pes_agent.state.memory import MemoryStore
from pes_agent.tools.finder import ToolFinder
from pes_agent.tools.index import ToolIndex, index_available
from pes_agent.tools.meaning import BuiltinEmbedder, builtin_table
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.search_terms import words
from pes_agent.tools.spec import ToolSpec

RESULTS_DIR = Path(_ROOT) / "benchmarks" / "results"
K_VALUES = (5, 10, 20, 30, 50, 100)
SIZES = (10, 50, 100, 200, 500, 1000)
RECALL_TARGET = 0.95
TOKENS_TARGET = 3000
LATENCY_TARGET_MS = 5.0
TOKEN_QUERIES = 40
"""Queries whose planning prompts are counted per catalogue size (every 267th/40th one)."""


def finder(registry: ToolRegistry, meaning: bool = True) -> ToolFinder:
    """The default finder (BM25 fused with the built-in meaning table), or BM25 alone."""
    return ToolFinder(registry, BuiltinEmbedder() if meaning else None)


def recall(
    specs: Sequence[ToolSpec],
    queries: Sequence[LabelledQuery],
    k: int,
    names: int = 0,
    *,
    meaning: bool = True,
) -> tuple[float, int]:
    """Share of needed tools among the ``k`` described and ``names`` named only, over the queries
    whose tools are all in ``specs``; ranked as by default, or by BM25 alone (``meaning=False``)."""
    registry = ToolRegistry(specs)
    found_by = finder(registry, meaning)
    config = RetrievalConfig(k=k, threshold=0, names=names)
    present = set(registry.names())
    usable = [q for q in queries if set(q.tools) <= present]
    found = needed = 0
    for query in usable:
        shown = set(offer(found_by, query.text, registry.names(), config).plannable)
        found += sum(t in shown for t in query.tools)
        needed += len(query.tools)
    return (found / needed if needed else float("nan")), len(usable)


def offer(found_by: ToolFinder, text: str, names: Sequence[str], config: RetrievalConfig) -> ToolOffer:
    """The tools a free-form run's first planning call is shown for ``text`` (as the preview ranks:
    each part searched on its own, the lists merged fairly)."""
    return preview_offer(text, names, config, found_by)


def compound_recall(specs: Sequence[ToolSpec], k: int, names: int) -> dict[str, dict[str, float]]:
    """Recall over the compound requests by number of parts (and over all): of the tools offered
    (``k`` described + ``names`` named) and of those described; plus requests with every tool offered."""
    registry = ToolRegistry(specs)
    found_by = finder(registry)
    config = RetrievalConfig(k=k, threshold=0, names=names)
    tally: dict[str, list[int]] = {}
    for query in COMPOUND:
        chosen = offer(found_by, query.text, registry.names(), config)
        shown, described = set(chosen.plannable), set(chosen.names)
        got = sum(t in shown for t in query.tools)
        row = [
            got,
            sum(t in described for t in query.tools),
            len(query.tools),
            int(got == len(query.tools)),
            1,
        ]
        for key in (str(len(query.tools)), "all"):
            tally[key] = [a + b for a, b in zip(tally.get(key, [0] * 5), row, strict=True)]
    return {
        key: {
            "offered": v[0] / v[2],
            "described": v[1] / v[2],
            "needed": v[2],
            "requests": v[4],
            "requests_whole": v[3],
        }
        for key, v in sorted(tally.items())
    }


def lexical_reach(specs: Sequence[ToolSpec], queries: Sequence[LabelledQuery]) -> float:
    """Share of needed tools that share at least one (normalised) word with their query."""
    from pes_agent.tools.search_terms import tool_terms

    terms = {s.name: set(tool_terms(s)) for s in specs}
    pairs = [(set(words(q.text)), t) for q in queries for t in q.tools]
    return sum(bool(qw & terms[t]) for qw, t in pairs) / len(pairs)


async def prompt_tokens(
    specs: Sequence[ToolSpec], texts: Sequence[str], retrieval: Mapping[str, Any]
) -> list[int]:
    config = {"storage": {"type": "memory"}, "retrieval": dict(retrieval)}
    art = await create_art_instance(config, tools=list(specs), store=MemoryStore())
    return [count_messages(art.planning_prompt(text).messages).tokens for text in texts]


def timings(specs: Sequence[ToolSpec], k: int) -> dict[str, float]:
    builds = []
    for _ in range(5):
        registry = ToolRegistry(specs)
        start = time.perf_counter()
        ToolIndex.of(registry)
        builds.append(time.perf_counter() - start)
    builtin_table.cache_clear()
    start = time.perf_counter()
    builtin_table()
    table_s = time.perf_counter() - start
    with_meaning = []
    for _ in range(5):
        fresh = finder(ToolRegistry(specs))
        start = time.perf_counter()
        fresh.preview([])
        with_meaning.append(time.perf_counter() - start)
    registry = ToolRegistry(specs)
    found_by = finder(registry)
    config = RetrievalConfig(k=k)
    names = registry.names()
    found_by.preview([])  # build the index and embed the catalogue outside the clock
    per_query = []
    for _ in range(5):
        for query in QUERIES:
            start = time.perf_counter()
            offer(found_by, query.text, names, config)
            per_query.append((time.perf_counter() - start) * 1000)
    per_query.sort()
    compound = []
    for _ in range(5):
        for query in COMPOUND:
            start = time.perf_counter()
            offer(found_by, query.text, names, config)
            compound.append((time.perf_counter() - start) * 1000)
    compound.sort()
    every = sorted(per_query + compound)
    return {
        "compound_ms_median": statistics.median(compound),
        "compound_ms_p95": compound[int(0.95 * len(compound)) - 1],
        "all_ms_p95": every[int(0.95 * len(every)) - 1],
        "build_s_median": statistics.median(builds),
        "build_meaning_s_median": statistics.median(with_meaning),
        "table_load_s": table_s,
        "query_ms_median": statistics.median(per_query),
        "query_ms_p95": per_query[int(0.95 * len(per_query)) - 1],
        "query_ms_max": per_query[-1],
    }


def local_runs(label: str | None) -> dict[str, Any]:
    """The local-model benchmark with 200 tools, retrieval on and off, in its own processes."""
    out: dict[str, Any] = {}
    for setting in ("on", "off"):
        argv = [
            sys.executable,
            str(Path(_ROOT) / "benchmarks" / "local_model.py"),
            "--settings",
            "plans",
            "--tools",
            "200",
            "--retrieval",
            setting,
            "--json",
            "--label",
            f"retrieval-{setting}-200",
        ]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            out[setting] = {"error": done.stderr[-800:]}
            continue
        data = json.loads(done.stdout)
        summary = data["summary"][0]
        out[setting] = {
            "plans_right": summary["plans_right"],
            "fully_right": summary["fully_right"],
            "runs": summary["runs"],
            "crashes": summary["crashes"],
            "mean_wall_s": summary["mean_wall_s"],
            "saved": f"benchmarks/results/local_model-{data['stamp']}-retrieval-{setting}-200.json",
        }
    return out


def measure(with_local: bool, label: str | None) -> dict[str, Any]:
    full = catalogue()
    k = RetrievalConfig().k
    threshold = RetrievalConfig().threshold
    result: dict[str, Any] = {
        "k": k,
        "threshold": threshold,
        "queries": len(QUERIES),
        "needed_tools": sum(len(q.tools) for q in QUERIES),
    }
    result["names"] = names = RetrievalConfig().named_only  # the default: the built-in meaning table
    result["recall_at_k_1000"] = {str(kk): recall(full, QUERIES, kk)[0] for kk in K_VALUES}
    result["recall_bm25_1000"] = {str(kk): recall(full, QUERIES, kk, meaning=False)[0] for kk in (k, 100)}
    result["recall_offered_1000"] = {
        str(m): [recall(full, half, k, m)[0] for half in (QUERIES, QUERIES[::2], QUERIES[1::2])]
        for m in (0, 100, 200, 270, 340, 400)
    }
    result["recall_by_size"] = {str(n): recall(catalogue(n), QUERIES, k, names) for n in (50, 100, 200, 1000)}
    result["lexical_reach"] = lexical_reach(full, QUERIES)
    texts = [q.text for q in QUERIES[:: max(1, len(QUERIES) // TOKEN_QUERIES)]]
    tokens: dict[str, Any] = {}
    for n in SIZES:
        specs = catalogue(n)
        on = asyncio.run(prompt_tokens(specs, texts, {}))
        off = asyncio.run(prompt_tokens(specs, texts[:5], {"enabled": False}))
        tokens[str(n)] = {"on_mean": statistics.mean(on), "on_max": max(on), "off_mean": statistics.mean(off)}
    result["planning_tokens"] = tokens
    result["tokens_by_k_1000"] = {
        str(kk): max(asyncio.run(prompt_tokens(full, texts, {"k": kk}))) for kk in K_VALUES
    }
    result["compound"] = compound_recall(full, k, names)
    result["compound_tokens_1000"] = asyncio.run(prompt_tokens(full, [q.text for q in COMPOUND], {}))
    load_before = os.getloadavg()
    result["timing"] = timings(full, k)
    result["timing"]["load_avg"] = [round(x, 2) for x in (*load_before, *os.getloadavg())]
    if with_local:
        result["local"] = local_runs(label)
    return result


def _verdict(passed: bool) -> str:
    return "ok" if passed else "MISS"


def report(r: Mapping[str, Any]) -> str:
    k = r["k"]
    rec = r["recall_at_k_1000"]
    head = (
        f"Tool retrieval: {r['queries']} labelled queries needing {r['needed_tools']} tools; "
        f"k = {k}, names = {r['names']}, threshold = {r['threshold']}, embeddings = builtin (the defaults)"
    )
    lines = [head, ""]
    rows = [[kk, f"{rec[kk]:.3f}", str(r["tokens_by_k_1000"][kk])] for kk in rec]
    bm25 = r["recall_bm25_1000"]
    lines += [
        "recall@k (described only) and the largest planning prompt at N = 1,000:",
        format_table(["k", "recall", "max prompt tokens"], rows, "rrr"),
        f"BM25 alone (`embeddings: off`): recall@{k} {bm25[str(k)]:.3f}, @100 {bm25['100']:.3f}",
        "",
    ]
    size_rows = [[n, f"{v[0]:.3f}", str(v[1])] for n, v in r["recall_by_size"].items()]
    offered_rows = [[f"{k} + {m}", *(f"{x:.3f}" for x in v)] for m, v in r["recall_offered_1000"].items()]
    lines += [
        f"recall at N = 1,000 of the k = {k} described plus a names-only tier (names chosen on the even "
        "half):",
        format_table(["offered", "all", "even (tuning)", "odd (held out)"], offered_rows, "rrrr"),
        "",
    ]
    lines += [
        f"recall offered ({k} + {r['names']}) by catalogue size, retrieval forced on (queries whose tools it "
        "holds):",
        format_table(["N", "recall", "queries"], size_rows, "rrr"),
        f"lexical reach (needed tools sharing any word with their query): {r['lexical_reach']:.3f}",
        "",
    ]
    tok_rows = [
        [n, f"{v['on_mean']:.0f}", str(v["on_max"]), f"{v['off_mean']:.0f}"]
        for n, v in r["planning_tokens"].items()
    ]
    lines += [
        "planning prompt tokens (o200k), retrieval on (default) vs off:",
        format_table(["N", "on mean", "on max", "off mean"], tok_rows, "rrrr"),
        "",
    ]
    t = r["timing"]
    lines.append(
        f"index build at 1,000 tools: {t['build_s_median'] * 1000:.0f} ms BM25, "
        f"{t.get('build_meaning_s_median', 0) * 1000:.0f} ms with the catalogue's vectors from the built-in "
        f"table (median of 5; the table is read once per process: {t.get('table_load_s', 0) * 1000:.0f} ms)"
    )
    lines.append(
        "choosing the tools for one query (its vector, BM25, fusion, the offer): median "
        f"{t['query_ms_median']:.2f} ms, p95 {t['query_ms_p95']:.2f} ms, "
        f"max {t['query_ms_max']:.2f} ms"
        + (
            f" (load average 1/5/15 min before {t['load_avg'][:3]}, after {t['load_avg'][3:]}, 2 cores)"
            if "load_avg" in t
            else ""
        )
    )
    if "compound" in r:
        comp = r["compound"]
        comp_rows = [
            [
                key,
                str(v["requests"]),
                str(v["needed"]),
                f"{v['offered']:.3f}",
                f"{v['described']:.3f}",
                f"{v['requests_whole']}/{v['requests']}",
            ]
            for key, v in comp.items()
        ]
        ctok = r["compound_tokens_1000"]
        lines += [
            "",
            f"compound requests at N = 1,000 ({k} described + {r['names']} named), by number of parts:",
            format_table(
                [
                    "parts",
                    "requests",
                    "needed tools",
                    "recall offered",
                    "recall described",
                    "requests with every tool offered",
                ],
                comp_rows,
                "rrrrrr",
            ),
            f"their planning prompts (o200k): mean {statistics.mean(ctok):.0f}, max {max(ctok)}",
            f"choosing one compound request's tools: median {t['compound_ms_median']:.2f} ms, "
            f"p95 {t['compound_ms_p95']:.2f} ms; p95 over every request (single and compound) "
            f"{t['all_ms_p95']:.2f} ms",
        ]
    if "local" in r:
        lines.append("")
        for setting, v in r["local"].items():
            if "error" in v:
                lines.append(f"local model, 200 tools, retrieval {setting}: failed: {v['error']}")
            else:
                lines.append(
                    f"local model, 200 tools, retrieval {setting}: plans naming the right tools "
                    f"{v['plans_right']}/{v['runs']}, runs fully right {v['fully_right']}/{v['runs']}, "
                    f"crashes {v['crashes']}, mean wall {v['mean_wall_s'] or 0:.1f} s ({v['saved']})"
                )
    tokens = r["planning_tokens"]
    on_1000, on_200, on_500 = tokens["1000"]["on_max"], tokens["200"]["on_max"], tokens["500"]["on_max"]
    # the offer is at most k described + names named: it fills up (at k + names tools), then stops growing
    flat = on_1000 <= 1.10 * on_500
    offered_now = r["recall_offered_1000"].get(str(r["names"]), [float("nan")] * 3)[2]
    compound_lines = []
    if "compound" in r:
        whole = r["compound"]["all"]["offered"]
        compound_lines = [
            f"  compound requests, recall offered >= {RECALL_TARGET}: {whole:.3f} "
            f"{_verdict(whole >= RECALL_TARGET)}; largest prompt {max(r['compound_tokens_1000'])} "
            f"{_verdict(max(r['compound_tokens_1000']) <= TOKENS_TARGET)}"
        ]
    lines += [
        "",
        "targets:",
        *compound_lines,
        f"  recall@{k} >= {RECALL_TARGET}: {rec[str(k)]:.3f} {_verdict(rec[str(k)] >= RECALL_TARGET)}",
        (
            f"  recall offered ({k} described + {r['names']} named, held-out half) >= {RECALL_TARGET}: "
            f"{offered_now:.3f} "
            f"{_verdict(offered_now >= RECALL_TARGET)}"
        ),
        f"  planning prompt at 1,000 tools <= {TOKENS_TARGET}: max {on_1000} "
        f"{_verdict(on_1000 <= TOKENS_TARGET)}",
        (
            f"  flat in N once the offer is full ({k} + {r['names']} tools; largest prompt at 1,000 within "
            "10 % "
            f"of that at 500): 200 -> 500 -> 1,000 tools: {on_200} -> {on_500} -> {on_1000}, without "
            "retrieval "
            f"{tokens['200']['off_mean']:.0f} -> {tokens['1000']['off_mean']:.0f} {_verdict(flat)}"
        ),
        (
            f"  <= {LATENCY_TARGET_MS} ms per query: p95 {t['query_ms_p95']:.2f} ms "
            f"{_verdict(t['query_ms_p95'] <= LATENCY_TARGET_MS)}"
        ),
    ]
    return "\n".join(lines)


def save(r: Mapping[str, Any], text: str, label: str | None) -> tuple[Path, Path]:
    now = time.gmtime()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", now)
    stem = f"retrieval-{stamp}" + (f"-{label}" if label else "")
    data = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", now), "machine": machine(), **r}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    json_path, md_path = RESULTS_DIR / f"{stem}.json", RESULTS_DIR / f"{stem}.md"
    json_path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    md_path.write_text(
        f"# Tool retrieval, {data['date']}\n\nMachine: {json.dumps(data['machine'])}\n\n"
        f"Command: `python benchmarks/retrieval.py{' --local' if 'local' in r else ''}{_fused_args(r)}`\n\n"
        f"```\n{text}\n```\n",
        encoding="utf-8",
    )
    return json_path, md_path


def _fused_args(r: Mapping[str, Any]) -> str:
    fused = r.get("fused")
    if not fused:
        return ""
    return (
        f" --embeddings-url {fused['url']} --embeddings-model {fused['model']} --k {fused['k']} "
        f"--names {fused['names']}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--local", action="store_true", help="also run the local model with 200 tools, on and off"
    )
    parser.add_argument("--json", action="store_true", help="print the saved JSON instead of the table")
    parser.add_argument("--label", help="appended to the results' file names")
    parser.add_argument(
        "--embeddings-url", help="an OpenAI-compatible /v1 serving embeddings: measure the fused path"
    )
    parser.add_argument(
        "--embeddings-model", default="all-MiniLM-L6-v2", help="the embedding model's id there"
    )
    parser.add_argument("--k", type=int, default=RetrievalConfig().k, help="k for the fused path")
    parser.add_argument("--names", type=int, default=DEFAULT_NAMES, help="names-only tier for the fused path")
    args = parser.parse_args(argv)
    use_shared_tiktoken_cache()
    if not index_available():
        print("retrieval benchmark: bm25s is not installed: pip install -e '.[retrieval]'", file=sys.stderr)
        return 2
    if not tokenizer_available():
        print(
            "retrieval benchmark: the offline o200k tokenizer is missing (TIKTOKEN_CACHE_DIR)",
            file=sys.stderr,
        )
        return 2
    result = measure(args.local, args.label)
    text = report(result)
    if args.embeddings_url:
        from benchmarks.retrieval_fused import measure_fused, report_fused

        result["fused"] = measure_fused(args.embeddings_url, args.embeddings_model, args.k, args.names, SIZES)
        text += "\n\n" + report_fused(result["fused"])
    json_path, md_path = save(result, text, args.label)
    print(json_path.read_text(encoding="utf-8") if args.json else text)
    print(
        f"SUMMARY recall@{result['k']}={result['recall_at_k_1000'][str(result['k'])]:.3f} "
        f"tokens@1000={result['planning_tokens']['1000']['on_max']} "
        f"p95={result['timing']['query_ms_p95']:.2f}ms",
        file=sys.stderr,
    )
    print(f"saved: {json_path} and {md_path.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
