"""The service example under load: N concurrent runs from 2 users, served by uvicorn in a child process.

Usage, from the repo root:
``python benchmarks/service_load.py [--runs 200] [--users 2] [--workers 1 2] [--config config/demo.yaml]``

For each uvicorn worker count the service (``examples.service.app:app``) is started as a child process
on 127.0.0.1, built from ``--config`` (by default ``config/demo.yaml``: the JWST replay, replayed per
thread, two deterministic tools, SQLite; copied into a temporary directory so the database lands
there). Its access settings give each user room for every run at once (no 429 from the service's own
limits: what is measured is the service, not its refusals). Then ``--runs`` requests
``POST /threads/<uuid>/messages`` start together, alternating between the users, each on a thread
of its own, and each is timed from its send to its whole answer.

Reported per worker count: answers by HTTP status (the target: no 5xx), runs answered ``success``,
latency p50 / p99 / max, wall time and runs per second, and the peak resident memory of the
service (its processes' RSS summed, sampled every 50 ms). A table is printed and, with the
machine's load average, saved with the JSON under ``benchmarks/results/service_load-<UTC time>.*``.
The client (threads with blocking ``http.client`` connections) shares the machine's cores with the
service, so runs/s is a floor for what the service does alone.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import REPO_ROOT, format_table

QUERY = (
    "Find recent articles about the James Webb Space Telescope's discoveries and summarize the key findings."
)
TOKENS = {"tok-load-ana": "ana", "tok-load-ben": "ben", "tok-load-cy": "cy", "tok-load-di": "di"}
START_WAIT_S = 60.0
REQUEST_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Outcome:
    workers: int
    runs: int
    users: int
    statuses: dict[str, int]
    """HTTP status -> answers (``error`` for a request that got no answer)."""
    succeeded: int
    """Answers with run status ``success``."""
    p50_s: float
    p99_s: float
    max_s: float
    wall_s: float
    runs_per_s: float
    peak_rss_mb: float
    first_problem: str


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _prepare(workdir: Path, config: Path, runs: int) -> tuple[Path, Path]:
    """The config copied with its script and database made absolute, and access settings with room."""
    raw = yaml.safe_load(config.read_text(encoding="utf-8"))
    for provider in (raw.get("providers") or {}).values():
        if isinstance(provider, dict) and provider.get("script"):
            provider["script"] = str((config.parent / provider["script"]).resolve())
    raw["storage"] = {"type": "sqlite", "path": str(workdir / "service.db")}
    copied = workdir / "service-config.yaml"
    copied.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    access = workdir / "access.yaml"
    room = {"requests_per_minute": 60 * runs, "burst": runs, "concurrent_runs": runs}
    access.write_text(yaml.safe_dump({"limits": room}), encoding="utf-8")
    return copied, access


def _tree_rss_kb(root: int) -> int:
    """Resident memory of ``root`` and every process below it, in kB (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            with open(f"/proc/{pid}/status", encoding="utf-8") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            continue
    return total


def _request(port: int, method: str, path: str, token: str, body: Any = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    try:
        payload = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {token}"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=payload, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw.decode("utf-8", "replace")
    finally:
        conn.close()


def measure(config: Path, runs: int, users: int, workers: int) -> Outcome:
    tokens = list(TOKENS)[:users]
    with tempfile.TemporaryDirectory(prefix="pes-service-load-") as tmp:
        workdir = Path(tmp)
        service_config, access = _prepare(workdir, config, runs)
        port = _free_port()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(
                os.pathsep
            ),
            "PES_AGENT_CONFIG": str(service_config),
            "PES_AGENT_SERVICE_CONFIG": str(access),
            "PES_AGENT_TOKENS": ",".join(f"{t}:{TOKENS[t]}" for t in tokens),
        }
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "examples.service.app:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--timeout-graceful-shutdown",
            "5",
            "--log-level",
            "warning",
        ]
        log = (workdir / "server.log").open("w+b")
        server = subprocess.Popen(command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_up(server, port, tokens[0], workers)
            peak = [_tree_rss_kb(server.pid)]
            sampling = threading.Event()

            def sample() -> None:
                while not sampling.wait(0.05):
                    peak[0] = max(peak[0], _tree_rss_kb(server.pid))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            start = threading.Barrier(runs + 1)

            def one(n: int) -> tuple[str, float, str]:
                start.wait()
                began = time.perf_counter()
                try:
                    status, body = _request(
                        port, "POST", f"/threads/{uuid.uuid4()}/messages", tokens[n % users], {"query": QUERY}
                    )
                except OSError as exc:
                    return "error", time.perf_counter() - began, f"{type(exc).__name__}: {exc}"
                took = time.perf_counter() - began
                run_status = body.get("status") if isinstance(body, dict) else None
                problem = "" if status == 200 and run_status == "success" else json.dumps(body)[:300]
                return f"{status}:{run_status}", took, problem

            with ThreadPoolExecutor(max_workers=runs) as pool:
                futures = [pool.submit(one, n) for n in range(runs)]
                start.wait()
                began = time.perf_counter()
                results = [f.result() for f in futures]
                wall = time.perf_counter() - began
            sampling.set()
            sampler.join()
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
            log.seek(0)
            server_log = log.read().decode("utf-8", "replace")
            log.close()
    statuses = Counter(kind.split(":")[0] for kind, _, _ in results)
    latencies = sorted(took for _, took, _ in results)
    problems = [p for _, _, p in results if p]
    if not problems and "Traceback" in server_log:
        problems = [server_log[-600:]]
    return Outcome(
        workers=workers,
        runs=runs,
        users=users,
        statuses=dict(sorted(statuses.items())),
        succeeded=sum(1 for kind, _, _ in results if kind == "200:success"),
        p50_s=statistics.median(latencies),
        p99_s=latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))],
        max_s=latencies[-1],
        wall_s=wall,
        runs_per_s=runs / wall,
        peak_rss_mb=peak[0] / 1024,
        first_problem=problems[0] if problems else "",
    )


def _wait_until_up(server: subprocess.Popen[bytes], port: int, token: str, workers: int) -> None:
    """Until ``/me`` answers 200 several times in a row (with several workers, each must be up)."""
    deadline = time.monotonic() + START_WAIT_S
    answered = 0
    while answered < 4 * workers:
        if server.poll() is not None:
            raise RuntimeError(f"the service exited at start-up with {server.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the service did not answer within {START_WAIT_S:g} s")
        try:
            status, _ = _request(port, "GET", "/me", token)
            answered = answered + 1 if status == 200 else 0
        except OSError:
            answered = 0
            time.sleep(0.1)
    time.sleep(0.5 * workers)  # the last worker's start-up (its providers, its store) settles


def report(outcomes: list[Outcome]) -> str:
    headers = [
        "workers",
        "runs",
        "answers by status",
        "success",
        "p50 s",
        "p99 s",
        "max s",
        "wall s",
        "runs/s",
        "peak RSS MB",
    ]
    rows = [
        [
            str(o.workers),
            str(o.runs),
            ", ".join(f"{k}: {v}" for k, v in o.statuses.items()),
            str(o.succeeded),
            f"{o.p50_s:.2f}",
            f"{o.p99_s:.2f}",
            f"{o.max_s:.2f}",
            f"{o.wall_s:.2f}",
            f"{o.runs_per_s:.1f}",
            f"{o.peak_rss_mb:.0f}",
        ]
        for o in outcomes
    ]
    return format_table(headers, rows, "rrlrrrrrrr")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--users", type=int, default=2, choices=range(1, len(TOKENS) + 1))
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--config", type=Path, default=REPO_ROOT / "config" / "demo.yaml")
    parser.add_argument(
        "--no-save", action="store_true", help="print only; write nothing under benchmarks/results"
    )
    args = parser.parse_args(argv)
    outcomes = [measure(args.config.resolve(), args.runs, args.users, workers) for workers in args.workers]
    table = report(outcomes)
    load = os.getloadavg()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    command = "python benchmarks/service_load.py " + " ".join(argv if argv is not None else sys.argv[1:])
    config = args.config.resolve()
    shown = config.relative_to(REPO_ROOT) if config.is_relative_to(REPO_ROOT) else config
    text = (
        f"# service_load {stamp}\n\n`{command.strip()}`, config `{shown}`, {os.cpu_count()} CPUs, "
        f"load average before the report {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}\n\n```\n{table}\n```\n"
    )
    for outcome in outcomes:
        if outcome.first_problem:
            text += f"\nfirst problem with {outcome.workers} worker(s): {outcome.first_problem}\n"
    print(text)
    if not args.no_save:
        results = REPO_ROOT / "benchmarks" / "results"
        (results / f"service_load-{stamp}.md").write_text(text, encoding="utf-8")
        data = {
            "command": command.strip(),
            "stamp": stamp,
            "load": load,
            "outcomes": [asdict(o) for o in outcomes],
        }
        (results / f"service_load-{stamp}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    five_xx = sum(n for o in outcomes for k, n in o.statuses.items() if k.startswith("5") or k == "error")
    return 1 if five_xx else 0


if __name__ == "__main__":
    sys.exit(main())
