#!/usr/bin/env bash
# What the data plane's http mode would cost on hyper (the choice recorded in docs/decisions.md):
# HAProxy, the data plane alone (examples/lb.rs, the hand-written proxy) and a minimal reverse proxy on
# hyper 1 + hyper-util's pooled client (examples/hyper_proxy.rs), each in front of the same two nginx
# back ends, measured in turn with `wrk -t1 --latency` (N rounds, alternating): req/s and the proxy's CPU
# time per request (the steadier figure when other work shares the box). Same method as run.sh: compare
# ratios, not absolute figures. Everything binds and dials 127.0.0.0/8 only; every process is
# started and stopped by pid.
#
# Usage: bench/lb/hyper.sh   (env: N rounds [3], D duration [5s], C connections [50], NT threads per proxy [2])
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
N=${N:-3}; D=${D:-5s}; C=${C:-50}; NT=${NT:-2}
W=${BENCH_DIR:-${TMPDIR:-/tmp}/nubis-lb-hyper}; mkdir -p "$W"
for t in haproxy wrk nginx; do command -v $t >/dev/null || { echo "$t is needed (apt-get install haproxy wrk nginx)" >&2; exit 1; }; done
(cd "$ROOT" && cargo build --release -q -p nubis-dataplane --example lb --example hyper_proxy) || exit 1
EX=$ROOT/target/release/examples
BE1=127.168.77.1:18080; BE2=127.168.77.2:18080

cat > "$W/nginx.conf" <<NGX
worker_processes 1;
daemon off;
pid $W/nginx.pid;
error_log $W/nginx.err warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    server { listen $BE1 reuseport backlog=4096; location / { return 200 "ok\n"; } }
    server { listen $BE2 reuseport backlog=4096; location / { return 200 "ok\n"; } }
}
NGX
cat > "$W/haproxy.cfg" <<HAP
global
    nbthread $NT
    maxconn 8000
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 30s
frontend fe
    bind 127.0.0.2:18081
    default_backend be
backend be
    balance roundrobin
    http-reuse always
    server s1 $BE1
    server s2 $BE2
HAP
cat > "$W/lb.json" <<JSON
{ "worker_threads": $NT, "dataplane": { "client_idle_timeout_ms": 30000 },
  "balancers": [ { "id": 1, "ipv4": "127.0.0.4", "client_conn_throttle": 0,
    "configs": [ { "id": 1, "port": 18081, "protocol": "http", "algorithm": "roundrobin", "check": "connection",
      "nodes": [ { "id": 1, "address": "$BE1", "weight": 1, "mode": "accept" },
                 { "id": 2, "address": "$BE2", "weight": 1, "mode": "accept" } ] } ] } ] }
JSON

PROXY_PID=; BACKEND_PID=; TCK=$(getconf CLK_TCK)
cputicks() { awk '{print $14+$15}' "/proc/$1/stat"; }
wait_port() { for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && return 0; sleep 0.05; done; echo "$1:$2 did not open" >&2; return 1; }
stop_pid() { local p=${1:-}; [ -n "$p" ] && [ -d /proc/$p ] || return 0; kill -TERM "$p" 2>/dev/null
  for _ in $(seq 1 50); do [ -d /proc/$p ] || return 0; sleep 0.1; done; kill -KILL "$p" 2>/dev/null; }
trap 'stop_pid "$PROXY_PID"; stop_pid "$BACKEND_PID"' EXIT
nginx -c "$W/nginx.conf" & BACKEND_PID=$!
wait_port 127.168.77.1 18080 && wait_port 127.168.77.2 18080 || exit 1

start() {
  case $1 in
    haproxy) haproxy -db -f "$W/haproxy.cfg" > "$W/haproxy.log" 2>&1 & PROXY_PID=$!; HOSTPORT=127.0.0.2:18081 ;;
    nubis) "$EX/lb" "$W/lb.json" > "$W/lb.log" 2>&1 & PROXY_PID=$!; HOSTPORT=127.0.0.4:18081 ;;
    hyper) NT=$NT "$EX/hyper_proxy" 127.0.0.5:18081 $BE1 $BE2 > "$W/hyper.log" 2>&1 & PROXY_PID=$!; HOSTPORT=127.0.0.5:18081 ;;
  esac
  wait_port "${HOSTPORT%:*}" 18081 && sleep 1
}

: > "$W/results.tsv"
echo "hyper comparison: N=$N D=$D C=$C NT=$NT, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$N"); do
  for who in haproxy nubis hyper; do
    start $who || exit 1
    wrk -t1 -c"$C" -d2s "http://$HOSTPORT/" > /dev/null 2>&1
    t0=$(cputicks "$PROXY_PID")
    wrk -t1 -c"$C" -d"$D" --latency "http://$HOSTPORT/" > "$W/wrk.txt"
    t1=$(cputicks "$PROXY_PID")
    rps=$(awk '/Requests\/sec/{print $2}' "$W/wrk.txt"); reqs=$(awk '/requests in/{print $1}' "$W/wrk.txt")
    us=$(echo "($t1-$t0)/$TCK*1000000/$reqs" | bc -l)
    printf "%s\t%s\t%s\n" "$who" "$rps" "$us" >> "$W/results.tsv"
    printf "  round %s %-8s %10s req/s  %6.1f CPU us/req\n" "$i" "$who" "$rps" "$us"
    stop_pid "$PROXY_PID"; PROXY_PID=; sleep 1
  done
done
python3 - "$W/results.tsv" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
who = ("haproxy", "nubis", "hyper")
med = {w: statistics.median(float(r[1]) for r in rows if r[0] == w) for w in who}
cpu = {w: statistics.median(float(r[2]) for r in rows if r[0] == w) for w in who}
print("medians: " + ", ".join(f"{w} {med[w]:,.0f} req/s {cpu[w]:.1f} CPU us/req" for w in who))
print(f"req/s  nubis/HAProxy {med['nubis']/med['haproxy']:.2f}  hyper/HAProxy {med['hyper']/med['haproxy']:.2f}  hyper/nubis {med['hyper']/med['nubis']:.2f}")
print(f"CPU/req  nubis/HAProxy {cpu['nubis']/cpu['haproxy']:.2f}  hyper/HAProxy {cpu['hyper']/cpu['haproxy']:.2f}  hyper/nubis {cpu['hyper']/cpu['nubis']:.2f}")
PY
