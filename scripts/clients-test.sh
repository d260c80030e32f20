#!/usr/bin/env bash
# Runs the client suite (tests/clients): the official Python SDK and linode-cli against a freshly
# started `nubis serve` on 127.0.0.1. Installs the pinned clients into a venv under target/pyenv
# (PyPI through pip; nothing else leaves the machine). Fails when no test ran (pytest exit 5).
# Extra arguments go to pytest (e.g. `scripts/clients-test.sh -k sdk`).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${NUBIS_PYENV:-target/pyenv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check -r tests/clients/requirements.txt

if [ -z "${NUBIS_BIN:-}" ]; then
  cargo test --workspace --locked --no-run
  export NUBIS_BIN=$PWD/target/debug/nubis
fi

set +e
"$VENV/bin/python" -m pytest -q -p no:cacheprovider --durations=8 tests/clients "$@"
rc=$?
set -e
if [ "$rc" = 5 ]; then
  echo "!!! the client suite collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
