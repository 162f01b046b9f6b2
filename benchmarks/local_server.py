"""The local-model benchmark through a server: the same tasks, the same model, over HTTP, beside
the in-process figures (issue 28).

``python benchmarks/local_model.py --base-url http://127.0.0.1:8000/v1 [--server-log FILE]`` runs each
setting twice: in-process (the ``llamacpp`` adapter, ``config/local.yaml``) and through the server at
``--base-url`` (the ``openai`` adapter with the same settings and ``guided: true``; the dialect is
left to ``auto``, which finds ``grammar`` on a llama.cpp server). Both passes run one after the other
on the same machine, so the wall times compare under the same load; ``--in-process-from`` takes a
saved run's in-process figures instead (of the same set and settings).

The server's outcomes carry the setting's name with ``@server`` (``plans@server``). The comparison is
judged against the issue's targets:

- fully right: as many as in-process, within one task;
- provider errors: none (a run that ended in ``provider_error``, the server refused or failed);
- grammar parse failures in the server's log: none (``--server-log``, the file its output goes to;
  without it, not checked and said so);
- mean wall per task: at most 1.5 times in-process.

Start the server as the in-process adapter loads the model (one thread for prompts too), e.g.
``python -m llama_cpp.server --model <gguf> --n_ctx 4096 --n_threads 1 --n_threads_batch 1``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks._common import format_table
from benchmarks.local_tasks import Outcome

__all__ = [
    "SERVER_SUFFIX",
    "Comparison",
    "LogFindings",
    "comparison_table",
    "compare",
    "read_server_log",
    "saved_outcomes",
    "server_provider",
    "server_report",
]

SERVER_SUFFIX = "@server"
WALL_RATIO = 1.5
RIGHT_MARGIN = 1
_PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")
_PARSE_FAILURES = ("parse: error", "failed to parse grammar", "error parsing grammar")


def server_provider(local: Mapping[str, Any], base_url: str, model: str) -> dict[str, Any]:
    """The in-process provider's settings as an ``openai`` provider of the server at ``base_url``:
    the same sampling, reply cap and timeout; guided, as in-process runs by default."""
    kept = {k: v for k, v in local.items() if k in ("temperature", "maxTokens", "max_tokens", "timeoutS")}
    return {"adapter": "openai", "baseUrl": base_url, "model": model, "guided": True, **kept}


@dataclass(frozen=True)
class LogFindings:
    requests: int
    """Requests that evaluated a prompt (one ``prefix-match`` line each after the first)."""
    reused_tokens: int
    prompt_tokens: int
    """Over those requests: tokens reused from the one before, and all prompt tokens."""
    parse_failures: list[str]
    """Lines where llama.cpp could not read a grammar."""


def read_server_log(path: Path, start: int = 0) -> LogFindings:
    """What the server's log says from byte ``start`` on (its size before the run)."""
    with path.open("rb") as log:
        log.seek(start)
        text = log.read().decode("utf-8", "replace")
    hits = [(int(h), int(r)) for h, r in _PREFIX_HIT.findall(text)]
    failures = [line.strip() for line in text.splitlines() if any(m in line.lower() for m in _PARSE_FAILURES)]
    return LogFindings(
        requests=len(hits),
        reused_tokens=sum(h for h, _ in hits),
        prompt_tokens=sum(h + r for h, r in hits),
        parse_failures=failures[:20],
    )


@dataclass(frozen=True)
class Comparison:
    setting: str
    runs: int
    right_in_process: int
    right_server: int
    provider_errors: int
    wall_in_process: float | None
    wall_server: float | None
    parse_failures: int | None
    """None: the server's log was not given."""


@dataclass(frozen=True)
class Check:
    measure: str
    shown: str
    met: Callable[[Comparison], bool]
    figure: Callable[[Comparison], str]


def _ratio(c: Comparison) -> float | None:
    if c.wall_in_process is None or c.wall_server is None or c.wall_in_process <= 0:
        return None
    return c.wall_server / c.wall_in_process


CHECKS = (
    Check(
        "fully right, server vs in-process",
        f"within {RIGHT_MARGIN}",
        met=lambda c: c.right_server >= c.right_in_process - RIGHT_MARGIN,
        figure=lambda c: f"{c.right_server}/{c.runs} vs {c.right_in_process}/{c.runs}",
    ),
    Check(
        "provider errors",
        "0",
        met=lambda c: c.provider_errors == 0,
        figure=lambda c: str(c.provider_errors),
    ),
    Check(
        "grammar parse failures (server log)",
        "0",
        met=lambda c: c.parse_failures == 0,
        figure=lambda c: "not checked" if c.parse_failures is None else str(c.parse_failures),
    ),
    Check(
        "mean wall per task, server / in-process",
        f"<= {WALL_RATIO:g}x",
        met=lambda c: (r := _ratio(c)) is not None and r <= WALL_RATIO,
        figure=lambda c: (
            "-"
            if (r := _ratio(c)) is None
            else f"{r:.2f}x ({c.wall_server:.1f} s vs {c.wall_in_process:.1f} s)"
        ),
    ),
)


def compare(
    setting: str,
    in_process: Sequence[Mapping[str, Any]],
    server: Sequence[Mapping[str, Any]],
    parse_failures: int | None,
) -> Comparison:
    """One setting's figures from both passes' outcomes (dicts, as saved)."""

    def wall(outcomes: Sequence[Mapping[str, Any]]) -> float | None:
        finished = [o["seconds"] for o in outcomes if o.get("crash") is None]
        return sum(finished) / len(finished) if finished else None

    return Comparison(
        setting=setting,
        runs=len(server),
        right_in_process=sum(bool(o["right"]) for o in in_process),
        right_server=sum(bool(o["right"]) for o in server),
        provider_errors=sum("provider_error" in str(o["status"]) for o in server),
        wall_in_process=wall(in_process),
        wall_server=wall(server),
        parse_failures=parse_failures,
    )


def comparison_table(comparisons: Sequence[Comparison]) -> str:
    rows = []
    for check in CHECKS:
        cells = [f"{check.figure(c)}{'' if check.met(c) else '  MISS'}" for c in comparisons]
        rows.append([check.measure, check.shown, *cells])
    headers = ["server target", "target", *(c.setting for c in comparisons)]
    return format_table(headers, rows, "ll" + "l" * len(comparisons))


def comparison_lines(comparisons: Sequence[Comparison]) -> list[str]:
    return [
        f"SERVER {c.setting}: "
        + "; ".join(
            f"{k.measure} {k.figure(c)} (target {k.shown}){'' if k.met(c) else ': MISS'}" for k in CHECKS
        )
        for c in comparisons
    ]


def prefix_line(findings: LogFindings | None) -> str:
    if findings is None:
        return "server log: not given (--server-log): grammar parse failures and prefix reuse not checked"
    share = findings.reused_tokens / findings.prompt_tokens if findings.prompt_tokens else 0.0
    return (
        f"server log: {findings.requests} prompts evaluated after a first; {findings.reused_tokens} of "
        f"{findings.prompt_tokens} prompt tokens ({share:.0%}) reused from the call before; "
        f"{len(findings.parse_failures)} grammar parse failures"
    )


def saved_outcomes(path: Path, task_ids: Sequence[str], settings: Sequence[str]) -> list[Outcome]:
    """A saved run's outcomes for these tasks and settings (``--in-process-from``)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    wanted = set(task_ids)
    kept = [Outcome(**o) for o in data["outcomes"] if o["task"] in wanted and o["setting"] in settings]
    missing = len(wanted) * len(settings) - len(kept)
    if missing:
        raise SystemExit(f"--in-process-from {path}: {missing} of the task runs asked for are not in it")
    return kept


def server_report(settings: Sequence[str], outcomes: Sequence[Outcome], findings: LogFindings | None) -> str:
    """The server's figures against issue 28's targets, beside the in-process ones."""
    failures = None if findings is None else len(findings.parse_failures)
    comparisons = [
        compare(
            setting,
            [asdict(o) for o in outcomes if o.setting == setting],
            [asdict(o) for o in outcomes if o.setting == setting + SERVER_SUFFIX],
            failures,
        )
        for setting in settings
    ]
    return "\n".join(
        [comparison_table(comparisons), "", prefix_line(findings), *comparison_lines(comparisons)]
    )
