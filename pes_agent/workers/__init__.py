"""Past one machine: pes-agent runs as durable DBOS workflows, queued to worker processes.

``pip install 'pes-agent[dbos]'``; nothing else in pes-agent imports this package or DBOS.

- ``Producer`` (any process): ``enqueue(query, thread_id=...)`` and ``resume(thread, suspension,
  decision)`` return a ``RunHandle``.
- ``Worker`` (``pes-agent worker --config FILE --concurrency K``): takes runs from the queues and
  runs them with model calls, tool calls and store writes as DBOS steps (``steps``, ``store``).
- ``workflow``: what a worker runs per job; ``queues``: one queue per provider, partitioned by thread;
  ``handles``: what a call returns, following a decision to the run that carried it.
"""

from pes_agent.workers.producer import Producer, RunHandle
from pes_agent.workers.worker import Worker

__all__ = ["Producer", "RunHandle", "Worker"]
