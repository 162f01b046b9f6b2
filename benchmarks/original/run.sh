#!/usr/bin/env bash
# The TypeScript original's framework time per S1 run, timed like benchmarks/overhead.py (scripted
# model answering at once, in-memory storage, each run on a new thread, 200 warm-up + 2000 timed runs).
#
# Usage, from the repo root:
#   bash benchmarks/original/run.sh <ART git dir> <build dir>
# or ART_MIRROR=<ART git dir> ART_BUILD=<build dir> bash benchmarks/original/run.sh
# <ART git dir> is a clone (or bare mirror) of InferQ/ART; <build dir> is any directory outside this
# repo, kept between runs so the build happens once (once built, the ART git dir is not read again).
# The source is exported unmodified to <build dir>/art and built with its own tsup config; nothing of
# it enters this repo. Needs Node 18+ and npm with registry access.
# Prints one line per configuration: `2tools` / `200tools` keep every thread in the store (as the
# original does); `*_clear100` empty it every 100 runs outside the timed part, as overhead.py does.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
MIRROR="${1:-${ART_MIRROR:-}}"
BUILD="${2:-${ART_BUILD:-}}"
usage="usage: bash benchmarks/original/run.sh <ART git dir> <build dir>  (or set ART_MIRROR and ART_BUILD)"
[ -n "$BUILD" ] || { printf 'no build directory given: pass it as the second argument or set ART_BUILD\n%s\n' "$usage" >&2; exit 2; }
BUILD="$(mkdir -p "$BUILD" && cd "$BUILD" && pwd)"  # absolute: node imports ART_DIST by path
WARMUP="${WARMUP:-200}"; RUNS="${RUNS:-2000}"

if [ ! -f "$BUILD/art/dist/index.js" ]; then
  if [ -z "$MIRROR" ]; then
    printf 'no ART build in %s yet and no ART git dir given: pass a clone of InferQ/ART as the first argument or set ART_MIRROR\n%s\n' "$BUILD" "$usage" >&2
    exit 2
  fi
  [ -d "$MIRROR" ] || { echo "no ART git dir at $MIRROR: pass a clone of InferQ/ART (first argument or ART_MIRROR)" >&2; exit 2; }
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
