"""Who may read and continue a thread: the user of its first run.

Thread ids are often chosen by clients, so an id alone proves nothing: every read and every run
checks the caller's ``user_id`` against the owner the thread recorded. The rule is equality, with
one opening: a thread that has never run (none stored, or only settings from `set_thread_config`)
is taken by its first run, whoever that is. A thread started without a user has the owner None and
stays open to calls without one, as before threads had owners; it is closed to calls *with* a user,
so a service that always passes one never hands a user a thread nobody claimed for them.
"""

from __future__ import annotations

from pes_agent.errors import ThreadAccessError
from pes_agent.state.models import ThreadState


def unclaimed(state: ThreadState | None) -> bool:
    """True for a thread whose first run has not started yet: that run takes it."""
    return state is None or (state.owner is None and state.run_count == 0 and state.suspension is None)


def check_access(thread_id: str, state: ThreadState | None, user_id: str | None) -> None:
    """Raise `ThreadAccessError` unless ``user_id`` may read this thread (an unknown one: anyone)."""
    if state is None or state.owner == user_id:
        return
    raise ThreadAccessError(thread_id, user_id)


def check_run(thread_id: str, state: ThreadState | None, user_id: str | None) -> None:
    """Raise `ThreadAccessError` unless ``user_id`` may run on this thread (also its first run)."""
    if not unclaimed(state):
        check_access(thread_id, state, user_id)


def take(state: ThreadState | None, user_id: str | None) -> ThreadState:
    """The state a first run starts from, owned by its user; any other state unchanged."""
    state = state if state is not None else ThreadState()
    if unclaimed(state):
        state.owner = user_id
    return state
