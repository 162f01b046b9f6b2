"""Which queue a run goes to, and the DBOS options each queue gets from the ``workers`` section.

One queue per provider, so that a provider's rate limit and concurrency cap apply to the runs that
use it. Every queue is partitioned by thread with one run per partition at a time: two runs of one
thread never start together, whichever workers they land on (the thread's lease still guards runs
made outside the queue).
"""

from __future__ import annotations

from typing import Any

from pes_agent.config import ArtInstanceConfig, ThreadConfig, WorkersConfig
from pes_agent.errors import ConfigError

QUEUE_PREFIX = "pes-agent"


def queue_name(provider: str | None) -> str:
    return f"{QUEUE_PREFIX}.{provider or 'default'}"


def queue_names(config: ArtInstanceConfig) -> list[str]:
    """Every queue of a config: one per provider (one ``default`` when providers are injected)."""
    return [queue_name(p) for p in sorted(config.providers)] or [queue_name(None)]


def provider_of(config: ArtInstanceConfig, options: ThreadConfig | None) -> str | None:
    """The provider a run will call: the call's choice, else the thread defaults', else the
    default provider (or the only one). A thread's stored config is not consulted."""
    chosen = options.provider_config.provider_name if options and options.provider_config else None
    defaults = config.thread_defaults.provider_config if config.thread_defaults else None
    chosen = chosen or config.default_provider or (defaults.provider_name if defaults else None)
    if chosen is None and len(config.providers) == 1:
        chosen = next(iter(config.providers))
    return chosen


def queue_options(
    config: WorkersConfig, provider: str | None, *, concurrency: int | None = None
) -> dict[str, Any]:
    """Keyword arguments of ``register_queue`` for the queue of ``provider``."""
    limits = config.providers.get(provider or "")
    options: dict[str, Any] = {
        "worker_concurrency": concurrency or config.concurrency,
        "partition_concurrency": 1,
        "polling_interval_sec": config.poll_interval_s,
    }
    if limits is not None and limits.runs_per_period is not None:
        options["limiter"] = {"limit": limits.runs_per_period, "period": limits.period_s}
    if limits is not None and limits.concurrency is not None:
        options["global_concurrency"] = limits.concurrency
    return options


def system_database(config: ArtInstanceConfig, source: str | None = None) -> str:
    """The DBOS system database URL, or a ConfigError saying how to set it."""
    url = config.workers.system_database
    if url is None:
        raise ConfigError(
            "workers need a DBOS system database: set `workers.systemDatabase` to a PostgreSQL URL "
            "(`postgresql://user:${PGPASSWORD}@host:5432/pes_agent_dbos`) or, on one machine, "
            "`sqlite:///pes-agent-dbos.sqlite`",
            source=source,
            key_path="workers.systemDatabase",
        )
    return url.get_secret_value()
