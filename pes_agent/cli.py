"""The `pes-agent` command: run a query, check a config, show the prompt and the tools, serve over A2A.

Exit codes: 0 success, 1 the run ended in error, 2 bad usage or config, 3 the run needs the user
(partial, needs_input or suspended: the output says what is missing).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from typing import Any, TextIO

from pes_agent.errors import ConfigError, PesAgentError
from pes_agent.events import Event, EventType

_EXIT = {"success": 0, "error": 1, "partial": 3, "needs_input": 3, "suspended": 3}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pes-agent", description=__doc__.splitlines()[0] if __doc__ else None
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="answer a query (progress on stderr, answer on stdout)")
    run.add_argument("--config", required=True, help="ArtInstanceConfig file (.yaml, .json, .toml)")
    run.add_argument("--thread", help="thread id to continue (default: a new thread)")
    run.add_argument("--json", action="store_true", help="print the whole AgentFinalResponse as JSON")
    run.add_argument("query")
    validate = sub.add_parser("validate", help="check a config file, its tools and templates")
    validate.add_argument("file")
    prompts = sub.add_parser("prompts", help="print the planning prompt for a query and its token count")
    prompts.add_argument("--config", required=True)
    prompts.add_argument("query")
    tools = sub.add_parser("tools", help="list every tool the config yields: source, name, one line")
    tools.add_argument("--config", required=True)
    serve = sub.add_parser("serve-a2a", help="serve the instance as an A2A agent (needs the `a2a` extra)")
    serve.add_argument("--config", required=True)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=9100)
    serve.add_argument(
        "--url", help="the address clients reach it by, put in the card (default http://HOST:PORT/)"
    )
    serve.add_argument("--name", help="the agent's name on its card (default: the persona's name)")
    serve.add_argument("--description", help="what the agent does, on its card")
    serve.add_argument(
        "--open",
        action="store_true",
        help="serve without auth on a non-loopback address (PES_AGENT_TOKENS unset)",
    )
    worker = sub.add_parser("worker", help="run queued runs (the `workers` section; needs the dbos extra)")
    worker.add_argument("--config", required=True)
    worker.add_argument(
        "--concurrency", type=int, help="runs at once in this process (default: workers.concurrency)"
    )
    worker.add_argument(
        "--id", help="stable worker id: restarted with it, a worker resumes its unfinished runs"
    )
    enqueue = sub.add_parser(
        "enqueue", help="queue a run for the workers; prints its thread and workflow ids"
    )
    enqueue.add_argument("--config", required=True)
    enqueue.add_argument("--thread", help="thread id to continue (default: a new thread)")
    enqueue.add_argument("--wait", action="store_true", help="wait for the run's response and print it")
    enqueue.add_argument("query")
    return parser


def progress_line(event: Event) -> str | None:
    """One short human line per event worth showing while a run works."""
    d = event.data
    match event.type:
        case EventType.NOTICE:
            return f"notice: {d.get('message')}"
        case EventType.TOOLS_OFFERED:
            if d.get("mode") == "retrieved":
                named = f" (+{len(d['named'])} by name)" if d.get("named") else ""
                why = f"; {d['reason']}" if d.get("reason") else ""  # configured embeddings not used
                return (
                    f"tools: {d.get('shown')}{named} of {d.get('total')} shown to the planner, ranked by "
                    f"{d.get('ranking', 'bm25')} (searched {d.get('searches')}){why}"
                )
            return f"tools: all {d.get('total')} shown to the planner: {d.get('reason')}"
        case EventType.PLAN:
            return f"plan: {d.get('title') or '(untitled)'} ({len(d.get('todo_list', []))} steps)"
        case EventType.PLAN_UPDATE:
            return f"plan updated: {d.get('diff')}"
        case EventType.ITEM_STATUS:
            return f"{event.step_id}: {d.get('status')}"
        case EventType.TOOL_EXECUTION:
            return f"{event.step_id}: {d.get('tool_name')} -> {d.get('status')}"
        case EventType.REASK | EventType.PARSE_WARNING | EventType.ERROR:
            return f"{event.type.value.lower()}: {d.get('message') or d.get('detail') or d.get('reason')}"
        case EventType.SUSPENDED:
            return f"suspended: {d.get('message')}"
    return None


async def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from pes_agent.factory import create_art_instance

    art = await create_art_instance(args.config)
    async with art:
        if any(p.adapter == "scripted" for p in art.config.providers.values()):
            print("[replay] model replies come from a recorded conversation, not a live model", file=err)

        def show(event: Event) -> None:
            line = progress_line(event)
            if line:
                print(f"[pes-agent] {line}", file=err, flush=True)

        art.subscribe(show, types=[t for t in EventType if t is not EventType.TOKEN])
        response = await art.process(args.query, thread_id=args.thread)
    if args.json:
        print(json.dumps(response.to_dict(), indent=2, ensure_ascii=False, default=str), file=out)
    else:
        print(response.response, file=out)
        print(f"[pes-agent] status: {response.status} · thread: {response.thread_id}", file=err)
    return _EXIT[response.status]


async def _validate(args: argparse.Namespace, out: TextIO) -> int:
    """Build everything `run` builds before its first model call: a config that validates also starts.

    Loading alone would pass a file whose storage backend or adapter this version lacks.
    """
    from pes_agent.config.guidance import provider_notices
    from pes_agent.factory import create_art_instance
    from pes_agent.llm.providers import build_provider

    art = await create_art_instance(args.file)
    async with art:
        for name, provider_config in art.config.providers.items():
            await build_provider(name, provider_config).aclose()  # constructing sends nothing
        cfg, tools = art.config, art.registry.names()
    print(
        f"{args.file}: OK — providers: {', '.join(cfg.providers) or '(none)'}; storage: {cfg.storage.type}; "
        f"tools: {', '.join(tools) or '(none)'}",
        file=out,
    )
    for name, provider_config in cfg.providers.items():
        for notice in provider_notices(name, provider_config):
            print(f"note: {notice.message}", file=out)
    return 0


async def _prompts(args: argparse.Namespace, out: TextIO) -> int:
    from pes_agent.factory import create_art_instance
    from pes_agent.llm.tokens import count_messages
    from pes_agent.state.memory import MemoryStore

    art = await create_art_instance(args.config, store=MemoryStore())
    async with art:
        request = art.planning_prompt(args.query)
    for message in request.messages:
        print(f"## {message.role}\n{message.content}\n", file=out)
    count = count_messages(request.messages)
    label = "o200k_base" if count.source == "tiktoken" else "estimate: characters/4, no tokenizer cache"
    print(f"# planning prompt: {count.tokens} tokens ({label})", file=out)
    return 0


async def _tools(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """What the planner will see: every tool the config yields (Python and MCP servers), one line each."""
    from pes_agent.factory import create_art_instance
    from pes_agent.state.memory import MemoryStore

    art = await create_art_instance(args.config, store=MemoryStore())
    async with art:
        rows = [(art.tool_sources.get(spec.name, "python"), spec.name, spec.summary) for spec in art.registry]
    source_width = max((len(source) for source, _, _ in rows), default=0)
    name_width = max((len(name) for _, name, _ in rows), default=0)
    for source, name, summary in rows:
        print(f"{source:<{source_width}}  {name:<{name_width}}  {summary}".rstrip(), file=out)
    print(f"# {len(rows)} tool(s)", file=err)
    return 0


async def _serve_a2a(args: argparse.Namespace, err: TextIO) -> int:
    """Serve until interrupted (Ctrl-C or SIGTERM); the instance is closed on the way out."""
    try:
        import uvicorn

        from pes_agent.serving.a2a import a2a_app
    except ImportError as exc:
        raise ConfigError(
            f"serving over A2A needs the A2A SDK and uvicorn ({exc}); install `pes-agent[a2a]`"
        ) from exc
    from pes_agent.factory import create_art_instance
    from pes_agent.serving.a2a_auth import TOKENS_VARIABLE, parse_tokens

    tokens = parse_tokens(os.environ.get(TOKENS_VARIABLE, ""))
    if not tokens and not args.open and not _is_loopback(args.host):
        raise ConfigError(
            f"serving on {args.host} with no {TOKENS_VARIABLE} would let anyone who reaches it use any "
            f"conversation; set {TOKENS_VARIABLE}=token:user,... or pass --open to serve without auth"
        )
    url = args.url or f"http://{args.host}:{args.port}/"
    art = await create_art_instance(args.config)
    async with art:
        app = a2a_app(art, url=url, name=args.name, description=args.description, tokens=tokens)
        server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning"))
        auth = f"bearer tokens of {len(set(tokens.values()))} user(s)" if tokens else "no auth"
        print(
            f"pes-agent: serving {art.config.persona.name!r} over A2A at {url} ({auth})", file=err, flush=True
        )
        await server.serve()
    return 0


def _is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one command and return its exit code; ``out``/``err`` default to the current sys streams."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        with redirect_stdout(out), redirect_stderr(err):  # argparse prints help and usage errors itself
            args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2): a return value, like every other outcome
        return exc.code if isinstance(exc.code, int) else 2
    source = args.file if args.command == "validate" else args.config
    try:
        with _naming_the_file(source):
            if args.command == "run":
                return asyncio.run(_run(args, out, err))
            if args.command == "validate":
                return asyncio.run(_validate(args, out))
            if args.command == "tools":
                return asyncio.run(_tools(args, out, err))
            if args.command == "serve-a2a":
                return asyncio.run(_serve_a2a(args, err))
            if args.command in ("worker", "enqueue"):
                from pes_agent.workers.cli import enqueue_command, worker_command

                command = worker_command if args.command == "worker" else enqueue_command
                return asyncio.run(command(args, out, err))
            return asyncio.run(_prompts(args, out))
    except PesAgentError as exc:
        print(f"pes-agent: {exc}", file=err)
        return 2


@contextmanager
def _naming_the_file(path: str) -> Iterator[None]:
    """Config errors found after loading (storage, adapters) name the file, as loading errors do."""
    try:
        yield
    except ConfigError as exc:
        if exc.source:
            raise
        raise ConfigError(str(exc), source=path) from exc


def _entry() -> Any:  # pragma: no cover - console script shim
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
