#!/usr/bin/env bash
# pes-agent and the original in the same minutes: overhead.py and run.sh take turns, CYCLES times.
# A virtual machine's speed drifts by tens of percent over minutes, so only figures measured side by
# side compare. Usage, from the repo root (CYCLES=3 by default; the arguments go to run.sh):
#   bash benchmarks/original/compare.sh <ART git dir> <build dir>   (or set ART_MIRROR and ART_BUILD)
set -euo pipefail
cd "$(dirname "$0")/../.."
for i in $(seq 1 "${CYCLES:-3}"); do
  echo "=== cycle $i: $(uptime)"
  python benchmarks/overhead.py --profile-runs 0 --rounds 2 | grep -E '^(S1 |SUMMARY)'
  bash benchmarks/original/run.sh "$@" | tail -n +2
done
