"""Event ids are unique within a process and across processes that share a store (forked workers
included): the stores skip an event whose id they already hold, so a repeat would lose an event."""

from __future__ import annotations

import os

import pytest

from pes_agent.events import new_event_id


def test_ids_never_repeat_in_a_process() -> None:
    ids = [new_event_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_worker_draws_ids_of_its_own() -> None:
    read, write = os.pipe()
    before = new_event_id()
    pid = os.fork()
    if pid == 0:  # the child: report its next id and leave at once
        os.write(write, new_event_id().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    parent = new_event_id()
    os.close(read)
    os.close(write)
    assert child[:16] != before[:16], "a forked child must not continue the parent's id sequence"
    assert child != parent
