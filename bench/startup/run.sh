#!/usr/bin/env bash
# Start-up to ready (empty in-memory database) and restore of a small state, for the test
# controls; writes the "Start-up and restore" section of docs/performance.md.
# Usage: bench/startup/run.sh      env: N (runs, default 20), BUILD (release or debug, default release)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-release}
if [ "$BUILD" = release ]; then
  cargo build --release --locked -p nubis --bin nubis --example api_baseline >&2
  DIR=${CARGO_TARGET_DIR:-target}/release
else
  cargo build --locked -p nubis --bin nubis --example api_baseline >&2
  DIR=${CARGO_TARGET_DIR:-target}/debug
fi
exec python3 bench/startup/run.py "$DIR/nubis" "$DIR/examples/api_baseline"
