#!/usr/bin/env bash
# API benchmark: nubis (release build, SQLite) against a minimal in-memory axum server holding
# the same records, measured in the same run with wrk on loopback. Prints the ratios and writes
# them with the commands to docs/performance.md (section "API").
#
# Usage: bench/api/run.sh            env: N (runs per row, default 3), D (duration, default 10s), C (connections, default 50)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
N=${N:-3}; D=${D:-10s}; C=${C:-50}
OUT=${OUT:-$ROOT/bench/out/api}
mkdir -p "$OUT"

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }

echo "==> building (release)"
cargo build --release --locked -p nubis --bin nubis --example api_baseline >&2
NUBIS=$ROOT/target/release/nubis
BASE=$ROOT/target/release/examples/api_baseline

TOKEN=bench-bootstrap-token-0123456789abcdef
NADDR=127.0.0.1:18191
BADDR=127.0.0.1:18190
DATA=$(mktemp -d /tmp/nubis-bench.XXXXXX)
cat > "$DATA/config.toml" <<CONF
[limits]
rate_limit_requests = 1000000000000
rate_limit_window_secs = 60
CONF
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DATA"; }
trap cleanup EXIT

wait_http() { for _ in $(seq 1 300); do curl -sf -o /dev/null "$1" && return 0; sleep 0.02; done; echo "no answer from $1" >&2; return 1; }
cpu_ticks() { awk '{print $14+$15}' /proc/$1/stat; }
rss_kb() { awk '/VmRSS/ {print $2}' /proc/$1/status; }

start_nubis() {
  "$NUBIS" serve --listen $NADDR --data-dir "$DATA" --bootstrap-token $TOKEN --config "$DATA/config.toml" \
    >"$DATA/nubis.out" 2>"$DATA/nubis.log" &
  NPID=$!; PIDS+=($NPID)
  wait_http "http://$NADDR/healthz"
}

echo "==> starting servers"
"$BASE" $BADDR >"$DATA/base.out" 2>&1 &
BPID=$!; PIDS+=($BPID)
wait_http "http://$BADDR/v4/profile/tokens"
start_nubis
AUTH="Authorization: Bearer $TOKEN"
for i in $(seq 1 100); do
  curl -sf -H "$AUTH" -H 'Content-Type: application/json' -X POST "http://$NADDR/v4/profile/tokens" -d "{\"label\":\"token-$i\"}" >/dev/null
done
IDLE_RSS=$(rss_kb $NPID)

# run LABEL PID ARGS... -> prints "rps p50 p99 cpu_us_per_req"
run() {
  local pid=$1; shift
  local c0 c1 res
  c0=$(cpu_ticks "$pid")
  res=$(wrk -t1 -c"$C" -d"$D" --latency "$@")
  c1=$(cpu_ticks "$pid")
  python3 - "$c0" "$c1" <<PY "$res"
import re, sys
c0, c1 = int(sys.argv[1]), int(sys.argv[2])
text = sys.argv[3]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
def ms(p):
    m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)" % p, text, re.M)
    v, u = float(m.group(1)), m.group(2)
    return v / 1000 if u == "us" else v * 1000 if u == "s" else v
dur = float(re.search(r"requests in ([\d.]+)s", text).group(1))
reqs = rps * dur
cpu_s = (c1 - c0) / 100.0
print(f"{rps:.0f} {ms(50):.2f} {ms(99):.2f} {cpu_s * 1e6 / max(reqs, 1):.1f}")
PY
}

median() { sort -n | awk '{a[NR]=$0} END {print a[int((NR+1)/2)]}'; }

# measure NAME: N alternating runs of baseline and nubis; prints the medians
declare -A RESULT
measure() {
  local name=$1 bpath=$2 npath=$3; shift 3
  local extra=("$@")
  : >"$OUT/$name.base"; : >"$OUT/$name.nubis"
  wrk -t1 -c"$C" -d2s "${extra[@]}" "http://$BADDR$bpath" >/dev/null
  wrk -t1 -c"$C" -d2s -H "$AUTH" "${extra[@]}" "http://$NADDR$npath" >/dev/null
  for _ in $(seq 1 "$N"); do
    run $BPID "${extra[@]}" "http://$BADDR$bpath" >>"$OUT/$name.base"
    run $NPID -H "$AUTH" "${extra[@]}" "http://$NADDR$npath" >>"$OUT/$name.nubis"
  done
  RESULT[$name.base]=$(sort -n -k1 "$OUT/$name.base" | awk '{a[NR]=$0} END {print a[int((NR+1)/2)]}')
  RESULT[$name.nubis]=$(sort -n -k1 "$OUT/$name.nubis" | awk '{a[NR]=$0} END {print a[int((NR+1)/2)]}')
  echo "$name: baseline ${RESULT[$name.base]} | nubis ${RESULT[$name.nubis]}   (rps p50ms p99ms cpu-us/req)"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "==> measuring (N=$N, D=$D, C=$C; load before: $LOAD_BEFORE)"
measure get-one /v4/profile/tokens/2 /v4/profile/tokens/2
measure get-page /v4/profile/tokens /v4/profile/tokens
measure create /v4/profile/tokens /v4/profile/tokens -s bench/api/post-token.lua

echo "==> start-up on an existing database"
kill -TERM $NPID; wait $NPID 2>/dev/null || true
STARTS=()
for _ in 1 2 3 4 5; do
  t0=$(date +%s%N)
  start_nubis
  t1=$(date +%s%N)
  STARTS+=($(( (t1 - t0) / 1000000 )))
  kill -TERM $NPID; wait $NPID 2>/dev/null || true
done
START_MS=$(printf '%s\n' "${STARTS[@]}" | median)
echo "start-up ms: ${STARTS[*]} (median $START_MS); idle RSS after start and 100 creates: $((IDLE_RSS / 1024)) MiB"

python3 - "$OUT" "$START_MS" "$IDLE_RSS" "$N" "$D" "$C" <<'PY' | tee "$OUT/summary.md"
import sys, os
out, start_ms, rss, n, d, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
def med(name, who):
    rows = [list(map(float, l.split())) for l in open(f"{out}/{name}.{who}") if l.strip()]
    rows.sort(key=lambda r: r[0])
    return rows[(len(rows) - 1) // 2]
print("| request | baseline req/s | nubis req/s | ratio | nubis p50 / p99 ms | baseline p50 / p99 ms | nubis CPU µs/req | baseline CPU µs/req | target |")
print("|---|---|---|---|---|---|---|---|---|")
targets = {"get-one": ("ratio >= 0.5", lambda b, x: x[0] / b[0] >= 0.5),
           "get-page": (">= 10,000 req/s", lambda b, x: x[0] >= 10000),
           "create": (">= 5,000 req/s", lambda b, x: x[0] >= 5000)}
for name in ["get-one", "get-page", "create"]:
    b, x = med(name, "base"), med(name, "nubis")
    t, ok = targets[name]
    print(f"| {name} | {b[0]:,.0f} | {x[0]:,.0f} | {x[0]/b[0]:.2f} | {x[1]:.2f} / {x[2]:.2f} | {b[1]:.2f} / {b[2]:.2f} | {x[3]:.1f} | {b[3]:.1f} | {t}: {'met' if ok(b, x) else 'MISSED'} |")
print()
print(f"Start-up on an existing database (median of 5, to the first answer of /healthz): {start_ms} ms (target < 300 ms: {'met' if start_ms < 300 else 'MISSED'}).")
print(f"Resident memory after start and 100 creates: {rss/1024:.1f} MiB (target < 40 MB: {'met' if rss/1024 < 38.1 else 'MISSED'}).")
PY
{
  echo "Produced by \`bench/api/run.sh\` (N=$N D=$D C=$C) on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, 1-min load before: $LOAD_BEFORE."
  echo
  cat "$OUT/summary.md"
  echo
  echo "Commands (baseline on $BADDR, nubis on $NADDR with \`-H 'Authorization: Bearer ...'\`):"
  echo
  echo "- get-one: \`wrk -t1 -c$C -d$D --latency http://HOST/v4/profile/tokens/2\`"
  echo "- get-page: \`wrk -t1 -c$C -d$D --latency http://HOST/v4/profile/tokens\` (100 tokens, one page)"
  echo "- create: \`wrk -t1 -c$C -d$D --latency -s bench/api/post-token.lua http://HOST/v4/profile/tokens\`"
} > "$OUT/section.md"
python3 bench/splice.py api "$OUT/section.md"
