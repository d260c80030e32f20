#!/usr/bin/env bash
# Runs every test: the whole workspace on SQLite, the client suite (official SDK and CLI), the
# web console, real instances with the netns driver (as root), then the API suite again on a
# throwaway
# PostgreSQL on 127.0.0.1 (installed with apt-get when missing and possible).
# Says loudly when PostgreSQL had to be skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

# The data plane's differential test compares with HAProxy; it fails without it unless
# NUBIS_SKIP_HAPROXY=1.
scripts/haproxy.sh || echo "!!! HAProxy is not installed: the differential framing test will fail (NUBIS_SKIP_HAPROXY=1 skips it)"

# Each stage says when it starts (seconds since this script began), so a run's log shows where
# its time went.
stage() { echo "==> $1 (at ${SECONDS}s)"; }

stage "cargo test (SQLite)"
scripts/cargo-test.sh --workspace --locked -- --test-threads=4

stage "client suite (official SDK and CLI, tests/clients)"
scripts/clients-test.sh

stage "web console in headless Chromium (tests/console)"
scripts/console-test.sh

stage "real instances: the netns suite and the API suite on the netns driver (root)"
scripts/netns-test.sh

stage "API suite on PostgreSQL"
# The throwaway cluster goes on a tmpfs when one has room: every test creates and drops a
# database of some thousand files, which costs a disk's file system more than the tests' queries.
if [ -z "${PGROOT:-}" ] && [ -d /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')" -gt 4194304 ]; then
  export PGROOT=/dev/shm
fi
if PGENV=$(scripts/pg.sh start); then
  eval "$PGENV"
  trap 'scripts/pg.sh stop "$PGBASE"' EXIT
  # Four tests at a time: each test's requests wait on PostgreSQL more than on the cores (618 s
  # for the suite at four, against about 940 s at the default two, on 2 cores).
  TEST_DATABASE_URL=$TEST_DATABASE_URL scripts/cargo-test.sh --workspace --locked --test api -- --test-threads=4
else
  echo
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  echo "!!! PostgreSQL SKIPPED: no PostgreSQL server could be started or installed. !!!"
  echo "!!! Only the SQLite run above was done.                                     !!!"
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  if [ "${NUBIS_REQUIRE_POSTGRES:-0}" = 1 ]; then exit 1; fi
fi
stage "example suites of the test controls (examples/pytest, Rust recipe)"
scripts/examples-test.sh

stage "all tests passed"
