"""From the `storage` section of a config to a store: the one place that knows every backend."""

from __future__ import annotations

import os
from pathlib import Path

from pes_agent.config import StorageConfig
from pes_agent.errors import ConfigError
from pes_agent.state.memory import MemoryStore
from pes_agent.state.postgres import PostgresStore
from pes_agent.state.sqlite import SQLiteStore
from pes_agent.state.store import StateStore


def open_store(config: StorageConfig, *, base_dir: str | None = None) -> StateStore:
    """Builds the configured store; nothing touches the disk until the store is first used.

    ``base_dir`` is where a relative SQLite path is anchored (typically the config file's folder);
    without it the working directory at this call is used, resolved now so a later ``chdir`` cannot
    move the database. PostgreSQL needs ``storage.dsn`` and the optional driver; both are checked
    here, so a missing one is reported when the instance is created, not at the first run.
    """
    if config.type == "memory":
        return MemoryStore()
    if config.type == "sqlite":
        return SQLiteStore(resolve_sqlite_path(config.path, base_dir))
    if config.type == "postgres":
        if config.dsn is None:
            raise ConfigError(
                "`storage.type: postgres` needs a DSN such as "
                "`postgresql://user:${PGPASSWORD}@host:5432/database`; set `storage.dsn` "
                "(an environment reference keeps the password out of the file).",
                key_path="storage.dsn",
            )
        return PostgresStore(config.dsn.get_secret_value())
    raise ConfigError(
        f"`storage.type: {config.type}` is not a known store",
        key_path="storage.type",
        value=config.type,
        allowed=["sqlite", "memory", "postgres"],
    )


def resolve_sqlite_path(path: str, base_dir: str | None = None) -> str:
    if path == ":memory:":
        return path
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = Path(base_dir if base_dir is not None else os.getcwd()).expanduser() / resolved
    return str(resolved.absolute())
