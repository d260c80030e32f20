#!/usr/bin/env bash
# Runs the web console's browser tests (tests/console): a real headless Chromium, driven through
# WebDriver by Selenium, against a freshly started `nubis serve` on 127.0.0.1. Installs Debian's
# chromium and chromium-driver with apt-get when they are missing (as scripts/pg.sh installs
# PostgreSQL) and fails loudly when it cannot; the pinned Selenium and pytest go into a venv under
# target/console-venv (PyPI through pip). The browser only ever talks to 127.0.0.0/8 (see
# tests/console/conftest.py). Screenshots of the main pages are written to docs/console/.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing chromium and chromium-driver with apt-get" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >&2 || true
  fi
fi
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  echo "!!! the console tests need /usr/bin/chromium and /usr/bin/chromedriver (Debian packages" >&2
  echo "!!! chromium and chromium-driver) and they could not be installed: FAILING" >&2
  exit 1
fi

VENV=${NUBIS_CONSOLE_VENV:-target/console-venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check -r tests/console/requirements.txt

if [ -z "${NUBIS_BIN:-}" ]; then
  cargo test --workspace --locked --no-run
  export NUBIS_BIN=$PWD/target/debug/nubis
fi

export SE_OFFLINE=true
set +e
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/console "$@"
rc=$?
set -e
if [ "$rc" = 5 ]; then
  echo "!!! the console suite collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
