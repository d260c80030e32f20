#!/usr/bin/env bash
# Requests that write many rows in one transaction (bench/writes/many_rows.py), on SQLite and on a
# throwaway PostgreSQL (scripts/pg.sh): a balancer rebuild with SMALL and LARGE nodes, a firewall
# created with SMALL and LARGE devices. The comparison is the same request at the small size in
# the same run: its cost per row over the large size's (goal: 1.0 or more, a row costs the same
# however many rows the request writes). Everything talks to 127.0.0.1 only.
#
# Usage: bench/writes/many_rows.sh
# env: ENGINES ("sqlite postgres"), SMALL (100), LARGE (1000), NUBIS (a release binary: no build)
set -euo pipefail
cd "$(dirname "$0")/../.."
ENGINES=${ENGINES:-"sqlite postgres"}
export SMALL=${SMALL:-100} LARGE=${LARGE:-1000}
if [ -z "${NUBIS:-}" ]; then
  cargo build --release --locked -p nubis --bin nubis >&2
  NUBIS=target/release/nubis
fi
TOKEN=bench-bootstrap-token-0123456789abcdef
ADDR=127.0.0.1:18293
DATA=$(mktemp -d /tmp/nubis-writes.XXXXXX)
printf '[limits]\nrate_limit_requests = 1000000000000\nrate_limit_window_secs = 60\n' > "$DATA/config.toml"
PID=; PGBASE=
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
  [ -n "$PGBASE" ] && scripts/pg.sh stop "$PGBASE" >/dev/null 2>&1 || true
  rm -rf "$DATA"
}
trap cleanup EXIT
for engine in $ENGINES; do
  if [ "$engine" = sqlite ]; then
    DB="sqlite://$DATA/sqlite/nubis.db"; mkdir -p "$DATA/sqlite"
  else
    if [ -z "$PGBASE" ]; then eval "$(scripts/pg.sh start)"; fi
    psql -q "$TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS writes" -c "CREATE DATABASE writes"
    DB="${TEST_DATABASE_URL%/*}/writes"
  fi
  "$NUBIS" serve --listen $ADDR --data-dir "$DATA/$engine" --database "$DB" --bootstrap-token $TOKEN \
    --config "$DATA/config.toml" --no-dataplane >"$DATA/$engine.out" 2>"$DATA/$engine.log" &
  PID=$!
  for _ in $(seq 1 500); do curl -sf -o /dev/null "http://$ADDR/healthz" && break; sleep 0.02; done
  echo "$engine $(BASE=http://$ADDR/v4 TOKEN=$TOKEN python3 bench/writes/many_rows.py)"
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
done
