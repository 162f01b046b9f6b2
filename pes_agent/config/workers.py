"""The ``workers`` section: runs queued over a database to worker processes (``pes_agent.workers``)."""

from __future__ import annotations

from pydantic import Field

from pes_agent.config.base import ConfigModel
from pes_agent.secrets import SecretValue


class ProviderQueueConfig(ConfigModel):
    """The queue of runs whose model is one provider: how many start, and how many run at once."""

    runs_per_period: int | None = Field(default=None, ge=1)
    """At most this many runs of this provider start in any window of ``periodS`` seconds, across
    all workers (DBOS's queue limiter: it paces run starts, not each model request)."""
    period_s: float = Field(default=60.0, gt=0)
    """The limiter's window."""
    concurrency: int | None = Field(default=None, ge=1)
    """At most this many runs of this provider at once across all workers (None: no global cap)."""


class WorkersConfig(ConfigModel):
    """Runs as durable workflows (``pip install 'pes-agent[dbos]'``): enqueued by any process,
    executed by ``pes-agent worker`` processes, recovered when a worker dies."""

    enabled: bool = False
    """Producers built from this config (the service example) hand runs to workers instead of
    running them in their own process. Workers need the section whether or not this is set."""
    system_database: SecretValue | None = None
    """The DBOS system database: ``postgresql://user:${PGPASSWORD}@host/db`` (several machines) or
    ``sqlite:///path/file.sqlite`` (one machine, development). A secret: it usually holds a password."""
    concurrency: int = Field(default=4, ge=1)
    """Runs one worker process executes at once (``pes-agent worker --concurrency`` overrides it).
    DBOS keeps this per queue in the database: the worker started last sets it for all."""
    providers: dict[str, ProviderQueueConfig] = Field(default_factory=dict)
    """Per-provider rate limit and concurrency; a provider not listed has neither."""
    approval_wait_s: float = Field(default=0.0, ge=0)
    """How long a paused run's workflow waits for a decision sent by ``resume``, holding its worker
    slot all that time. 0 (the default): it ends `suspended` at once and frees the slot, so paused
    runs never keep others from starting; ``resume`` then enqueues a run that continues the same
    item (a queue poll later). Above 0, a decision within the wait reaches the same workflow."""
    store_outage_s: float = Field(default=60.0, ge=0)
    """How long a worker rides out an unreachable database (a restart, a failover, an outage): each
    store operation is tried again, with a warning per attempt, until the database has been
    unreachable this long in a run; then the run ends `failed`, saying so, and continues from its
    journal with ``Producer.recover``. A worker starting waits as long for both databases."""
    poll_interval_s: float = Field(default=0.2, gt=0)
    """How often a worker looks for queued runs (the delay before an idle worker starts one)."""
    app_name: str = "pes-agent"
    """Name of the DBOS application: workers and producers of one deployment share it."""
