"""From the `storage` section of a config to a store: the one place that knows every backend."""

from __future__ import annotations

import os
from pathlib import Path

from pes_agent.config import StorageConfig
from pes_agent.errors import ConfigError
from pes_agent.state.memory import MemoryStore
from pes_agent.state.sqlite import SQLiteStore
from pes_agent.state.store import StateStore


def open_store(config: StorageConfig, *, base_dir: str | None = None) -> StateStore:
    """Builds the configured store; nothing touches the disk until the store is first used.

    ``base_dir`` is where a relative SQLite path is anchored (typically the config file's folder);
    without it the working directory at this call is used, resolved now so a later ``chdir`` cannot
    move the database.
    """
    if config.type == "memory":
        return MemoryStore()
    if config.type == "sqlite":
        return SQLiteStore(resolve_sqlite_path(config.path, base_dir))
    raise ConfigError(
        f"`storage.type: {config.type}` is not available in this version yet; use sqlite or memory",
        key_path="storage.type",
        value=config.type,
        allowed=["sqlite", "memory"],
    )


def resolve_sqlite_path(path: str, base_dir: str | None = None) -> str:
    if path == ":memory:":
        return path
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = Path(base_dir if base_dir is not None else os.getcwd()).expanduser() / resolved
    return str(resolved.absolute())
