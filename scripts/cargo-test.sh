#!/usr/bin/env bash
# Runs `cargo test` with the given arguments, as it is, and when it fails prints again at the end
# what each failing test said: its name, where it panicked and the message (the first lines
# after the panic), without the backtraces and server logs between them. A CI log that keeps
# only its head and tail still shows why a test failed.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" != 0 ]; then
  echo
  echo "==> why the tests above failed (the panics, repeated)"
  awk '
    /^---- .* stdout ----$/ { print; next }
    /panicked at / { print; left = 4; next }
    left > 0 { if ($0 ~ /^stack backtrace:|^   [0-9]+: /) { left = 0; next } print; left--; if (left == 0) print "" }
  ' "$log"
fi
exit "$rc"
