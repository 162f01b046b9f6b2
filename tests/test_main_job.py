"""The README's main job, exactly as a user types it, on the real local model.

``pes-agent run --config config/local.yaml "Compute 12 * 7, then count the words in 'the answer is 84'."``
runs through the CLI in a child process, with a copy of ``config/local.yaml`` whose state goes to a
temporary folder (the tools, the provider and the execution settings are the README's). The answer
must state both results: 84, and 4 words.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.local_model_check import local_model_missing

REPO = Path(__file__).resolve().parents[1]
QUERY = "Compute 12 * 7, then count the words in 'the answer is 84'."
TIMEOUT_S = 60


@pytest.mark.local_model
def test_the_readme_main_job_states_84_and_4(tmp_path: Path) -> None:
    missing = local_model_missing()
    if missing:
        pytest.skip(missing)
    config = yaml.safe_load((REPO / "config" / "local.yaml").read_text(encoding="utf-8"))
    database = tmp_path / "state" / "local.db"
    config["storage"]["path"] = str(database)
    config_path = tmp_path / "local.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pes_agent.cli", "run", "--config", str(config_path), QUERY],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the main job took longer than {TIMEOUT_S} s; stderr so far: {exc.stderr!r}")
    report = f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, report
    # the query's own "'the answer is 84'" may be echoed: 84 must appear outside it
    answer = done.stdout.replace("'the answer is 84'", "").replace("the answer is 84", "")
    assert re.search(r"\b84\b", answer), f"the answer does not state 12 * 7 = 84:\n{report}"
    assert re.search(r"\b4\b", answer), f"the answer does not state the 4 words:\n{report}"
    assert database.is_file(), f"the run's state was not saved to {database}"
