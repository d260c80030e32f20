#!/usr/bin/env bash
# Every list of the API at scale, on SQLite and on a throwaway PostgreSQL (scripts/pg.sh).
#
# The rows come from the served /v4/openapi.json: every GET answering a page (`Page_*`), under
# its spec path and, for /v4/compute/..., its hosted name /v4/linode/... . For each engine,
# bench/scale/lists.py fills a small account (every list at SMALL records) and a large one
# (LARGE of each top-level record, INSTANCES instances, EVENTS events, CHILDREN children of one
# parent in per-parent lists, or the spec's limit where lower): one record of each kind through
# the API, the rest copied by SQL. Then, with wrk -t1 -cC -dD on 127.0.0.1, on both accounts:
# a random page of 100 over the whole list, the list filtered by each filterable field (one or
# two records hold the value; `results` says how many match), a random page in each allowed
# order, and /v4/vpcs and /v4/account/events while bench/scale/writer.py creates VPCs.
# Goals per row: large/small req/s >= 0.8 and p99 < 10 ms at 50 connections; per engine, a page
# of 100 events vs a page of 100 VPCs >= 0.5. A list the run could not fill says why.
#
# Writes bench/out/lists/{sqlite,postgres}.md (.json: the numbers) and section.md; splices
# section.md into docs/performance.md (section "lists") when its markers are there and the run
# measured every list (not with ONLY).
#
# Usage: bench/scale/lists.sh
# env: ENGINES ("sqlite postgres"), SMALL (100), LARGE (100000), CHILDREN (10000),
#      EVENTS (1000000), INSTANCES (10000), D (2s), C (50), ONLY (path substrings, a,b),
#      DRY (1: fill and check every row without wrk), HOLD (seconds the large account's server
#      stays up after its rows, for a profiler), NUBIS (a release binary: no build),
#      SKIP_BUILD (1: use target/release/nubis as it is), CACHED_PAGES (0: the server keeps no
#      page of a list, both accounts' pages are read), PGCONF (PostgreSQL settings; default
#      shared_buffers at a quarter of the memory)
# Runtime at the defaults: about 600 rows a size and engine, each measured once for D, plus the
# fills (see "Phases of the large account" under each table).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
ENGINES=${ENGINES:-"sqlite postgres"}
export SMALL=${SMALL:-100} LARGE=${LARGE:-100000} CHILDREN=${CHILDREN:-10000} EVENTS=${EVENTS:-1000000}
export INSTANCES=${INSTANCES:-10000} D=${D:-2s} C=${C:-50}
export OUT=${OUT:-$ROOT/bench/out/lists}
rm -rf "$OUT"; mkdir -p "$OUT"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
if [ -z "${NUBIS:-}" ]; then
  if [ -z "${SKIP_BUILD:-}" ]; then
    cargo build --release --locked -p nubis --bin nubis >&2
  fi
  export NUBIS=$ROOT/target/release/nubis
fi
[ -x "$NUBIS" ] || { echo "no nubis binary at $NUBIS" >&2; exit 1; }
DATA=$(mktemp -d /tmp/nubis-lists.XXXXXX)
PG_STARTED=
cleanup() {
  if [ -n "$PG_STARTED" ]; then scripts/pg.sh stop "$PGBASE" >/dev/null 2>&1 || true; fi
  rm -rf "$DATA"
}
trap cleanup EXIT
START=$(date +%s)
# PostgreSQL keeps a quarter of the machine's memory as its buffer cache, as its documentation
# advises for a dedicated server (the default, 128 MB, holds little of the large account: every
# page it reads is then copied in from the kernel's cache, the small account's stays in).
export PGCONF=${PGCONF:-"-c shared_buffers=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 4096 ))MB"}
for engine in $ENGINES; do
  if [ "$engine" = postgres ]; then
    eval "$(scripts/pg.sh start)"; PG_STARTED=1
    python3 bench/scale/lists.py postgres "$TEST_DATABASE_URL"
    scripts/pg.sh stop "$PGBASE" >/dev/null 2>&1 || true; PG_STARTED=
  else
    python3 bench/scale/lists.py sqlite "$DATA/sqlite"
  fi
done
{
  echo "Produced by \`bench/scale/lists.sh\` (ENGINES=\"$ENGINES\" SMALL=$SMALL LARGE=$LARGE CHILDREN=$CHILDREN" \
       "EVENTS=$EVENTS INSTANCES=$INSTANCES D=$D C=$C CACHED_PAGES=${CACHED_PAGES:-0} PGCONF=\"$PGCONF\"${ONLY:+ ONLY=$ONLY}) on $(date -u '+%Y-%m-%d %H:%M UTC')," \
       "$(nproc) cores, $("$NUBIS" --version) (checkout at $(git rev-parse --short HEAD)), in $(( ($(date +%s) - START) / 60 )) minutes." \
       "Each row: wrk -t1 -c$C -d$D --latency on 127.0.0.1 with a random page of 100 (uniform over the list's pages that hold 100 rows," \
       "\`X-Filter\` from -H for filters and orders); small: every list at $SMALL records."
  echo
  for engine in $ENGINES; do cat "$OUT/$engine.md"; echo; done
} > "$OUT/section.md"
if [ -n "${ONLY:-}" ]; then
  echo "ONLY=$ONLY measured part of the lists: the section is in $OUT/section.md, docs/performance.md is left as it is" >&2
elif grep -q '<!-- lists:begin -->' docs/performance.md && grep -q '<!-- lists:end -->' docs/performance.md; then
  python3 bench/splice.py lists "$OUT/section.md"
else
  echo "docs/performance.md has no lists markers: the section is in $OUT/section.md" >&2
fi
