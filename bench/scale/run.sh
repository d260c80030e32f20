#!/usr/bin/env bash
# Scale benchmark: does a request cost what it returns, not what the account holds?
#
# For each engine (SQLite, PostgreSQL on a throwaway server from scripts/pg.sh), two databases:
# an account of SMALL VPCs, and an account of VPCS VPCs (one subnet each) with EVENTS events,
# filled by direct SQL into the database nubis then opens. nubis serve (release, rate limit off,
# no data plane) is measured with wrk -t1 on loopback for GET one VPC, a page of 100, a filtered
# page and a create, idle and under a steady write load (RATE VPC creates per second through
# the API), beside the in-memory axum ceiling (examples/api_baseline.rs) and a minimal axum
# server reading one row by primary key from the same database (examples/one_row_baseline.rs).
# Writes the table and the commands to docs/performance.md (section "scale").
#
# Usage: bench/scale/run.sh   env: ENGINES ("sqlite postgres"), D (5s), C (50), VPCS (100000),
#        EVENTS (1000000), SMALL (100), RATE (20), SKIP_BUILD (1 to skip the release build)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
ENGINES=${ENGINES:-"sqlite postgres"}; D=${D:-5s}; C=${C:-50}
VPCS=${VPCS:-100000}; EVENTS=${EVENTS:-1000000}; SMALL=${SMALL:-100}; RATE=${RATE:-20}
OUT=${OUT:-$ROOT/bench/out/scale}
rm -rf "$OUT"; mkdir -p "$OUT"

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
if [ -z "${SKIP_BUILD:-}" ]; then
  echo "==> building (release)"
  cargo build --release --locked -p nubis --bin nubis --example api_baseline --example one_row_baseline >&2
fi
NUBIS=$ROOT/target/release/nubis
CEIL=$ROOT/target/release/examples/api_baseline
ONEROW=$ROOT/target/release/examples/one_row_baseline

TOKEN=bench-bootstrap-token-0123456789abcdef
NADDR=127.0.0.1:18291; CADDR=127.0.0.1:18290; OADDR=127.0.0.1:18292
AUTH="Authorization: Bearer $TOKEN"
DATA=$(mktemp -d /tmp/nubis-scale.XXXXXX)
cat > "$DATA/config.toml" <<CONF
[limits]
rate_limit_requests = 1000000000000
rate_limit_window_secs = 60
CONF
PIDS=(); PG_STARTED=
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "$PG_STARTED" ] && scripts/pg.sh stop "$PGBASE" >/dev/null 2>&1 || true
  rm -rf "$DATA"
}
trap cleanup EXIT

wait_http() { for _ in $(seq 1 500); do curl -sf -o /dev/null "$1" && return 0; sleep 0.02; done; echo "no answer from $1" >&2; return 1; }
load() { cut -d' ' -f1 /proc/loadavg; }

start_nubis() { # DB_URL NAME
  "$NUBIS" serve --listen $NADDR --data-dir "$DATA/$2" --database "$1" --bootstrap-token $TOKEN \
    --config "$DATA/config.toml" --no-dataplane >"$DATA/$2.out" 2>"$DATA/$2.log" &
  NPID=$!; PIDS+=($NPID)
  wait_http "http://$NADDR/healthz"
}
stop_pid() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# run FILE LABEL ARGS... : one wrk run; appends "label rps p50 p99 errors load" to FILE
run() {
  local file=$1 label=$2; shift 2
  local res l
  l=$(load)
  res=$(wrk -t1 -c"$C" -d"$D" --latency "$@")
  python3 - "$label" "$l" <<PY "$res" >>"$file"
import re, sys
label, l, text = sys.argv[1], sys.argv[2], sys.argv[3]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
def ms(p):
    m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)" % p, text, re.M)
    v, u = float(m.group(1)), m.group(2)
    return v / 1000 if u == "us" else v * 1000 if u == "s" else v
m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
errs = int(m.group(1)) if m else 0
m = re.search(r"Socket errors: .*", text)
print(f"{label} {rps:.0f} {ms(50):.2f} {ms(99):.2f} {errs} {l}")
PY
  tail -1 "$file" >&2
}

prepare() { # ENGINE SIZE VPC_COUNT EVENT_COUNT -> sets DB
  local engine=$1 size=$2 n=$3 e=$4 acct
  if [ "$engine" = sqlite ]; then
    mkdir -p "$DATA/$engine-$size"
    DB="sqlite://$DATA/$engine-$size/nubis.db"
  else
    psql -q "$TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS scale_$size" -c "CREATE DATABASE scale_$size"
    DB="${TEST_DATABASE_URL%/*}/scale_$size"
  fi
  start_nubis "$DB" "$engine-$size"; stop_pid $NPID
  if [ "$engine" = sqlite ]; then
    acct=$(sqlite3 "${DB#sqlite://}" "SELECT account_id FROM users WHERE username = 'admin'")
    bench/scale/fill.sql.sh sqlite "$acct" "$n" "$e" | sqlite3 "${DB#sqlite://}"
  else
    acct=$(psql -qtA "$DB" -c "SELECT account_id FROM users WHERE username = 'admin'")
    bench/scale/fill.sql.sh postgres "$acct" "$n" "$e" | psql -q "$DB" >/dev/null
  fi
}

for engine in $ENGINES; do
  if [ "$engine" = postgres ] && [ -z "$PG_STARTED" ]; then
    eval "$(scripts/pg.sh start)"; PG_STARTED=1
  fi
  F="$OUT/$engine.tsv"; : >"$F"
  "$CEIL" $CADDR >"$DATA/ceil.out" 2>&1 & CPID=$!; PIDS+=($CPID)
  wait_http "http://$CADDR/v4/profile/tokens"
  wrk -t1 -c"$C" -d2s "http://$CADDR/v4/profile/tokens/2" >/dev/null
  run "$F" "ceiling get-one" "http://$CADDR/v4/profile/tokens/2"
  stop_pid $CPID
  for size in small large; do
    if [ $size = small ]; then n=$SMALL; e=$((SMALL * 10)); else n=$VPCS; e=$EVENTS; fi
    echo "==> $engine, $size account ($n VPCs, $e events): filling"
    t0=$(date +%s); prepare "$engine" "$size" "$n" "$e"; echo "filled in $(( $(date +%s) - t0 )) s" >&2
    start_nubis "$DB" "$engine-$size"
    "$ONEROW" $OADDR "$DB" >"$DATA/onerow.out" 2>&1 & OPID=$!; PIDS+=($OPID)
    wait_http "http://$OADDR/v4/vpcs/1"
    mid=$(printf 'vpc-%06d' $((n / 2)))
    MID=$(curl -sf -H "$AUTH" -H "X-Filter: {\"label\": \"$mid\"}" "http://$NADDR/v4/vpcs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
    # 100 ids around the middle VPC, half of them in us-west: 50 results on either account.
    LO=$((MID - 50)); [ $LO -lt 1 ] && LO=1
    FILTER="{\"region\": \"us-west\", \"id\": {\"+gte\": $LO, \"+lt\": $((LO + 100))}}"
    echo "$FILTER" >"$OUT/filter.txt"
    GET=(-H "$AUTH" "http://$NADDR/v4/vpcs/$MID")
    PAGE=(-H "$AUTH" "http://$NADDR/v4/vpcs")
    FILT=(-H "$AUTH" -H "X-Filter: $FILTER" "http://$NADDR/v4/vpcs")
    wrk -t1 -c"$C" -d2s "${GET[@]}" >/dev/null
    run "$F" "$size one-row" "http://$OADDR/v4/vpcs/$MID"
    run "$F" "$size get-one" "${GET[@]}"
    run "$F" "$size page" "${PAGE[@]}"
    run "$F" "$size filtered" "${FILT[@]}"
    python3 bench/scale/writer.py $NADDR $TOKEN "$RATE" 2>>"$OUT/writer.log" & WPID=$!; PIDS+=($WPID)
    sleep 1
    run "$F" "$size get-one+writes" "${GET[@]}"
    run "$F" "$size page+writes" "${PAGE[@]}"
    run "$F" "$size filtered+writes" "${FILT[@]}"
    run "$F" "$size create+writes" -H "$AUTH" -s bench/scale/post-vpc.lua "http://$NADDR/v4/vpcs"
    stop_pid $WPID
    run "$F" "$size create" -H "$AUTH" -s bench/scale/post-vpc.lua "http://$NADDR/v4/vpcs"
    stop_pid $OPID; stop_pid $NPID
  done
done
cat "$OUT/writer.log" >&2

python3 - "$OUT" "$ENGINES" "$SMALL" "$VPCS" "$EVENTS" <<'PY' | tee "$OUT/summary.md"
import sys
out, engines, small, vpcs, events = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
print("| engine | request | 100-record account req/s (p50 / p99 ms) | large account req/s (p50 / p99 ms) | large / small | goal |")
print("|---|---|---|---|---|---|")
notes = []
for eng in engines:
    rows = {}
    for line in open(f"{out}/{eng}.tsv"):
        *label, rps, p50, p99, errs, load = line.split()
        rows[" ".join(label)] = (float(rps), float(p50), float(p99), int(errs), load)
    ceil = rows["ceiling get-one"]
    name = {"sqlite": "SQLite", "postgres": "PostgreSQL"}[eng]
    def cell(r):
        e = f", {r[3]} errors" if r[3] else ""
        return f"{r[0]:,.0f} ({r[1]:.2f} / {r[2]:.2f}{e}; load {r[4]})"
    for req in ["one-row", "get-one", "page", "filtered", "get-one+writes", "page+writes", "filtered+writes", "create", "create+writes"]:
        s, l = rows[f"small {req}"], rows[f"large {req}"]
        ratio = s[0] / l[0]
        goal = []
        if req not in ("one-row", "create", "create+writes"):
            goal.append(f"small/large {ratio:.2f} {'met' if ratio <= 1.2 else 'MISSED'} (<= 1.2)")
            if req in ("page", "filtered", "page+writes", "filtered+writes"):
                goal.append(f"p99 {l[2]:.2f} ms {'met' if l[2] < 5 else 'MISSED'} (< 5)")
        if req == "get-one" and eng == "sqlite":
            goal.append(f"{l[0] / ceil[0]:.2f} of the in-memory ceiling ({ceil[0]:,.0f}) {'met' if l[0] / ceil[0] >= 0.6 else 'MISSED'} (>= 0.6)")
        if req == "get-one" and eng == "postgres":
            o = rows["large one-row"]
            goal.append(f"{l[0] / o[0]:.2f} of the one-row server {'met' if l[0] / o[0] >= 0.5 else 'MISSED'} (>= 0.5)")
        label = {"one-row": "axum + one-row SELECT (comparison)", "get-one": "GET one VPC", "page": "GET a page of 100",
                 "filtered": "GET a filtered page", "get-one+writes": f"GET one VPC, writes going on",
                 "page+writes": "GET a page of 100, writes going on", "filtered+writes": "GET a filtered page, writes going on",
                 "create": "POST a VPC", "create+writes": "POST a VPC, writes going on"}[req]
        print(f"| {name} | {label} | {cell(s)} | {cell(l)} | {1 / ratio:.2f} | {'; '.join(goal)} |")
    print(f"| {name} | in-memory axum ceiling, GET one | {cell(ceil)} | | | |")
PY
{
  echo "Produced by \`bench/scale/run.sh\` (ENGINES=\"$ENGINES\" D=$D C=$C VPCS=$VPCS EVENTS=$EVENTS SMALL=$SMALL RATE=$RATE) on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores. \"load\" is the 1-minute load average just before each run (other work shares this machine)."
  echo
  cat "$OUT/summary.md"
  echo
  echo "Writer during the \"writes going on\" rows (VPC creates through the API): $(tr '\n' ' ' <"$OUT/writer.log")"
  echo
  echo "Commands (nubis on $NADDR with \`-H 'Authorization: Bearer ...'\`, one-row server on $OADDR, ceiling on $CADDR):"
  echo
  echo "- GET one: \`wrk -t1 -c$C -d$D --latency http://HOST/v4/vpcs/ID\` (the VPC labelled vpc-N/2)"
  echo "- page: \`wrk -t1 -c$C -d$D --latency http://HOST/v4/vpcs\` (page 1 of 100, \`results\` from the kept count)"
  echo "- filtered page: the same with \`-H 'X-Filter: $(cat "$OUT/filter.txt")'\` (50 results on either account; the id range is around the middle VPC)"
  echo "- create: \`wrk -t1 -c$C -d$D --latency -s bench/scale/post-vpc.lua http://HOST/v4/vpcs\`"
  echo "- writes going on: \`bench/scale/writer.py HOST TOKEN $RATE\` in the background"
  echo "- fill: \`bench/scale/fill.sql.sh ENGINE ACCOUNT VPCS EVENTS | sqlite3 FILE\` (or \`| psql URL\`) after nubis made and bootstrapped the database"
} > "$OUT/section.md"
python3 bench/splice.py scale "$OUT/section.md"
