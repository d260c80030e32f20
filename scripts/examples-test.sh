#!/usr/bin/env bash
# Runs the example suites of the test controls (issue 17) against a private nubis on 127.0.0.1:
# examples/pytest (the official Python SDK; its pinned clients in a venv of its own under
# target/pyenv-examples, installed from PyPI by pip) and the Rust recipe
# (crates/nubis/examples/test_controls.rs). Fails when no Python test ran.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${NUBIS_EXAMPLES_PYENV:-target/pyenv-examples}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check -r examples/pytest/requirements.txt

if [ -z "${NUBIS_BIN:-}" ]; then
  cargo test --workspace --locked --no-run
  export NUBIS_BIN=$PWD/target/debug/nubis
fi

echo "--> examples/pytest (official Python SDK)"
set +e
"$VENV/bin/python" -m pytest -q -p no:cacheprovider examples/pytest -rs
rc=$?
set -e
if [ "$rc" = 5 ]; then
  echo "!!! the example suite collected no tests: failing" >&2
  exit 1
fi
[ "$rc" = 0 ] || exit "$rc"

echo "--> crates/nubis/examples/test_controls.rs (Rust)"
# Built by `cargo test --workspace` (examples are compiled with the tests, same features).
cargo test --workspace --locked --no-run
target/debug/examples/test_controls
