#!/usr/bin/env bash
# The TypeScript original's framework time per S1 run, timed like benchmarks/overhead.py (scripted
# model answering at once, in-memory storage, each run on a new thread, 200 warm-up + 2000 timed runs).
#
# Usage, from the repo root: ART_MIRROR=<git dir of InferQ/ART> bash benchmarks/original/run.sh
# (the tool library's `fetch github:InferQ/ART` gives /work/.mirror/InferQ+ART/repo, the default).
# The source is exported unmodified to $BUILD (default /tmp/art-bench-build) and built with its own
# tsup config; nothing of it enters this repo. Needs Node 18+ and npm with registry access.
# Prints one line per configuration: `2tools` / `200tools` keep every thread in the store (as the
# original does); `*_clear100` empty it every 100 runs outside the timed part, as overhead.py does.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
MIRROR="${ART_MIRROR:-/work/.mirror/InferQ+ART/repo}"
BUILD="${BUILD:-/tmp/art-bench-build}"
WARMUP="${WARMUP:-200}"; RUNS="${RUNS:-2000}"

if [ ! -f "$BUILD/art/dist/index.js" ]; then
  [ -d "$MIRROR" ] || { echo "no ART checkout at $MIRROR: set ART_MIRROR" >&2; exit 2; }
  rm -rf "$BUILD/art" && mkdir -p "$BUILD/art"
  # Blob by blob: `git archive` stops at the two images the mirror lacks (docs/*.png).
  git -C "$MIRROR" ls-tree -r -z HEAD | while IFS= read -r -d '' entry; do
    sha=$(echo "${entry%%$'\t'*}" | awk '{print $3}'); path=${entry#*$'\t'}
    mkdir -p "$BUILD/art/$(dirname "$path")"
    git -C "$MIRROR" cat-file blob "$sha" > "$BUILD/art/$path" 2>/dev/null || rm -f "$BUILD/art/$path"
  done
  (cd "$BUILD/art" && npm install --ignore-scripts --no-audit --no-fund >/dev/null 2>&1 && npx tsup >/dev/null 2>&1)
fi

export ART_DIST="$BUILD/art/dist/index.js"
printf '%-18s %5s %5s %10s %8s %11s\n' config runs fail "median ms" "p90 ms" "peakRSS MB"
for spec in "2tools 2 0" "200tools 200 0" "2tools_clear100 2 100" "200tools_clear100 200 100"; do
  set -- $spec
  # ART's StateManager writes one console.warn per run to stderr: kept out of the report.
  line=$(CLEAR_EVERY=$3 node "$here/bench.mjs" "$2" "$WARMUP" "$RUNS" 2>/dev/null | grep '^RESULT ')
  node -e 'const r = JSON.parse(process.argv[2].slice(7)); const f = (x, d = 3) => x.toFixed(d);
    console.log(`${process.argv[1].padEnd(18)} ${String(r.runs).padStart(5)} ${String(r.failures).padStart(5)} ${f(r.medianMs).padStart(10)} ${f(r.p90Ms).padStart(8)} ${f(r.peakRssMb, 1).padStart(11)}`);
    if (r.failures) console.log(`  first error: ${JSON.stringify(r.firstError)}`);' "$1" "$line"
done
