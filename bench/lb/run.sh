#!/usr/bin/env bash
# Load-balancer data plane benchmark: nubis vs HAProxy vs direct, same back ends, same client, same run.
# Method of shared/PERF-ANCHORS.md: two nginx back ends (1 worker, `return 200 "ok\n"`), HAProxy (roundrobin,
# 2 back ends, health checks, http-reuse always) on 127.0.0.2, and nubis as users run it: `nubis serve`, with a
# balancer made through its API (two instances' private addresses as nodes, connection checks every 2 s) on an
# address of its loopback pool; the back ends listen where those private addresses map (127.168.X.Y:18080).
# `wrk -t1 --latency` runs alternating HAProxy and nubis, a quiet-box gate before each run.
# Everything binds and dials 127.0.0.0/8 only; every process is started and stopped by pid.
#
# Usage: bench/lb/run.sh            (env: N runs per row [3], D duration [10s], NT haproxy nbthread and nubis
#                                     worker threads [2], SCENARIOS [all], IDLE_CONNS [2000], QUIET_MAX longest
#                                     wait for a quiet box before a run [120 s], APPEND=1 keeps
#                                     earlier rows, NUBIS_PREBUILT=1 skips the cargo build, NUBIS_BIN)
# Output: a table on stdout, bench/lb/results.md (ratios nubis/HAProxy and nubis/direct, exact commands) and the
# same in the load-balancer section of docs/performance.md.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
N=${N:-3}; D=${D:-10s}; NT=${NT:-2}; IDLE_CONNS=${IDLE_CONNS:-2000}; QUIET_MAX=${QUIET_MAX:-120}
SCENARIOS=${SCENARIOS:-"direct http tcp https handshakes memory"}
W=${BENCH_DIR:-${TMPDIR:-/tmp}/nubis-lb-bench}; mkdir -p "$W"
OUT=$W/results.tsv; [ -n "${APPEND:-}" ] || : > "$OUT"   # APPEND=1 adds to the previous run's rows
TCK=$(getconf CLK_TCK)
BACKEND_PID=; PROXY_PID=

# ------------------------------------------------------------------ setup
need() { command -v "$1" >/dev/null 2>&1; }
if ! need haproxy || ! need wrk || ! need nginx || ! need bc; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null && apt-get install -y haproxy wrk nginx bc >/dev/null
fi
if [ ! -f "$W/rsa2048.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/rsa2048.key" -out "$W/rsa2048.crt" -days 30 \
    -subj "/CN=lb.test" -addext "subjectAltName=DNS:lb.test,IP:127.0.0.2,IP:127.0.0.4" 2>/dev/null
  cat "$W/rsa2048.crt" "$W/rsa2048.key" > "$W/rsa2048.pem"
fi
if [ ! -f "$W/p256.pem" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$W/p256.key" -out "$W/p256.crt" -days 30 \
    -subj "/CN=lb.test" -addext "subjectAltName=DNS:lb.test,IP:127.0.0.2,IP:127.0.0.4" 2>/dev/null
  cat "$W/p256.crt" "$W/p256.key" > "$W/p256.pem"
fi

# ------------------------------------------------------------------ nubis, provisioned through its API
# The one place that knows how nubis is started. Provisioning (once per run, fresh data directory):
# a region whose public pool is 127.0.4.0/24, two instances with private addresses (their back ends listen
# where those map, 127.168.X.Y:18080), and one balancer with four configs: http 18081, tcp 18083,
# https 18443 (RSA-2048) and https 18444 (P-256), roundrobin, connection checks every 2 s.
NUBIS_BIN=${NUBIS_BIN:-$ROOT/target/release/nubis}
ND=$W/nubis-data; NAPI=127.0.0.1:18090; NTOKEN=bench-token-0123456789abcdef
cat > "$W/nubis.toml" <<TOML
[limits]
rate_limit_requests = 0
[runtime]
provision_ms = 10
boot_ms = 10
shutdown_ms = 10
reboot_ms = 10
[network]
private_ipv4 = "192.168.77.0/24"
[dataplane]
client_idle_timeout_ms = 30000
backend_connect_timeout_ms = 5000
max_connections_per_listener = 8000
worker_threads = $NT
[[regions]]
id = "bench-1"
label = "Bench"
country = "us"
capabilities = ["Linodes", "NodeBalancers"]
public_ipv4 = "127.0.4.0/24"
ipv6_pool = "2001:db8:77::/64"
ipv6_ranges = "2001:db8:7700::/40"
TOML
nubis_serve() { NUBIS_LOG=warn "$NUBIS_BIN" serve --listen $NAPI --data-dir "$ND" --config "$W/nubis.toml" \
  --bootstrap-token $NTOKEN > "$W/nubis.log" 2>&1 & PROXY_PID=$!; }
if [ -z "${NUBIS_PREBUILT:-}" ]; then (cd "$ROOT" && cargo build --release -q -p nubis) || exit 1; fi
rm -rf "$ND"; nubis_serve
for _ in $(seq 1 100); do curl -sf "http://$NAPI/healthz" >/dev/null && break; sleep 0.1; done
read -r NB_HOST BE1 BE2 < <(python3 - "http://$NAPI/v4" $NTOKEN "$W" <<'PY'
import json, sys, time, urllib.request
api, token, w = sys.argv[1], sys.argv[2], sys.argv[3]
def call(method, path, body=None):
    req = urllib.request.Request(api + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)
backends = []
for i in range(2):
    inst = call("POST", "/compute/instances", {"region": "bench-1", "type": "g6-nanode-1", "image": "linode/debian12",
                                               "label": f"backend-{i}", "root_pass": "Bench-pass-2026!", "booted": False})
    while call("GET", f"/compute/instances/{inst['id']}")["status"] != "offline":
        time.sleep(0.05)
    ip = call("POST", "/networking/ips", {"type": "ipv4", "public": False, "instance_id": inst["id"]})["address"]
    backends.append(ip)
nb = call("POST", "/nodebalancers", {"region": "bench-1", "label": "bench-lb"})
pem = lambda f: open(f"{w}/{f}").read()
for port, proto, cert in [(18081, "http", None), (18083, "tcp", None), (18443, "https", "rsa2048"), (18444, "https", "p256")]:
    c = {"port": port, "protocol": proto, "algorithm": "roundrobin", "check": "connection",
         "check_interval": 2, "check_timeout": 1, "check_attempts": 2}
    if cert:
        c.update(ssl_cert=pem(cert + ".crt"), ssl_key=pem(cert + ".key"))
    cfg = call("POST", f"/nodebalancers/{nb['id']}/configs", c)
    for i, ip in enumerate(backends):
        call("POST", f"/nodebalancers/{nb['id']}/configs/{cfg['id']}/nodes", {"label": f"node-{i}", "address": f"{ip}:18080"})
mapped = lambda ip: "127.168." + ".".join(ip.split(".")[2:]) + ":18080"
print(nb["ipv4"], mapped(backends[0]), mapped(backends[1]))
PY
)
stop_pid_now() { kill -TERM "$1" 2>/dev/null; for _ in $(seq 1 50); do [ -d /proc/$1 ] || return 0; sleep 0.1; done; kill -KILL "$1"; }
stop_pid_now "$PROXY_PID"; PROXY_PID=
[ -n "${BE2:-}" ] || { echo "provisioning nubis failed; see $W/nubis.log" >&2; exit 1; }
echo "nubis balancer on $NB_HOST, back ends $BE1 $BE2 (provisioned through the API)"

cat > "$W/nginx-backend.conf" <<NGX
worker_processes 1;
daemon off;
pid $W/nginx-backend.pid;
error_log $W/nginx-backend.err warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    default_type text/plain;
    server { listen $BE1 reuseport backlog=4096; location / { return 200 "ok\n"; } }
    server { listen $BE2 reuseport backlog=4096; location / { return 200 "ok\n"; } }
}
NGX

for mode in http tcp https https-p256; do
  case $mode in
    https) bind="bind 127.0.0.2:18443 ssl crt $W/rsa2048.pem"; m=http ;;
    https-p256) bind="bind 127.0.0.2:18444 ssl crt $W/p256.pem"; m=http ;;
    tcp) bind="bind 127.0.0.2:18083"; m=tcp ;;
    *) bind="bind 127.0.0.2:18081"; m=http ;;
  esac
  if [ $m = http ]; then extra="    option httpchk GET /
    http-reuse always"; else extra=""; fi
  cat > "$W/haproxy-$mode.cfg" <<HAP
global
    nbthread $NT
    maxconn 8000
defaults
    mode $m
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 30s
frontend fe
    $bind
    default_backend be
backend be
    balance roundrobin
$extra
    server s1 $BE1 check
    server s2 $BE2 check
HAP
done

# ------------------------------------------------------------------ process control (by pid only)
wait_port() { local h=$1 p=$2; for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/$h/$p") 2>/dev/null && return 0; sleep 0.05; done; echo "port $h:$p did not open" >&2; return 1; }
stop_pid() { local p=${1:-}; [ -n "$p" ] && [ -d /proc/$p ] || return 0; kill -TERM "$p" 2>/dev/null
  for _ in $(seq 1 50); do [ -d /proc/$p ] || return 0; sleep 0.1; done; kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; }
cleanup() { stop_pid "$PROXY_PID"; stop_pid "$BACKEND_PID"; }
trap cleanup EXIT

start_backend() { nginx -c "$W/nginx-backend.conf" & BACKEND_PID=$!; wait_port ${BE1%:*} 18080 && wait_port ${BE2%:*} 18080; }
start_haproxy() { haproxy -db -f "$W/haproxy-$1.cfg" > "$W/haproxy-$1.log" 2>&1 & PROXY_PID=$!
  case $1 in https) wait_port 127.0.0.2 18443 ;; https-p256) wait_port 127.0.0.2 18444 ;; tcp) wait_port 127.0.0.2 18083 ;; *) wait_port 127.0.0.2 18081 ;; esac; sleep 2.5; }

start_nubis() { nubis_serve
  wait_port $NB_HOST 18081 && wait_port $NB_HOST 18083 && wait_port $NB_HOST 18443 && wait_port $NB_HOST 18444; sleep 2.5; }

# ------------------------------------------------------------------ measurement
cputicks() { local t=0 p s; for p in "$@"; do [ -d /proc/$p ] || continue; s=$(awk '{print $14+$15}' /proc/$p/stat); t=$((t+s)); done; echo $t; }
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
quiet_gate() {  # wait (<= QUIET_MAX s) until the box uses < 0.3 CPU-s/s; echo the last busy figure
  local t0=$SECONDS a b busy
  while :; do a=$(busy_ticks); sleep 1; b=$(busy_ticks); busy=$(echo "($b-$a)/$TCK" | bc -l)
    if (( $(echo "$busy < 0.3" | bc -l) )) || (( SECONDS - t0 > QUIET_MAX )); then printf "%.2f" "$busy"; return; fi; sleep 2; done; }
to_ms() { awk -v s="$1" 'BEGIN{ if (s ~ /us$/) {sub(/us$/,"",s); print s/1000} else if (s ~ /ms$/) {sub(/ms$/,"",s); print s+0} else if (s ~ /s$/) {sub(/s$/,"",s); print s*1000} else print "nan" }'; }

# run LABEL SERVER(haproxy|nubis|direct) wrk-args... : one wrk run, one TSV row
run() {
  local label=$1 who=$2; shift 2
  local q; q=$(quiet_gate)
  local p0 b0 t0 t1 p1 b1 f="$W/$label.$who.$(date +%s%N).txt"
  p0=$(cputicks $PROXY_PID); b0=$(cputicks $BACKEND_PID $(cat /proc/$BACKEND_PID/task/*/children 2>/dev/null))
  TIMEFORMAT='%U %S'; { time wrk "$@" > "$f" 2>&1 ; } 2> "$f.time"
  p1=$(cputicks $PROXY_PID); b1=$(cputicks $BACKEND_PID $(cat /proc/$BACKEND_PID/task/*/children 2>/dev/null))
  local rps p50 p99 errs load reqs
  rps=$(awk '/Requests\/sec/{print $2}' "$f"); reqs=$(awk '/requests in/{print $1}' "$f"); p50=$(to_ms "$(awk '$1=="50%"{print $2}' "$f")"); p99=$(to_ms "$(awk '$1=="99%"{print $2}' "$f")")
  errs=$(awk '/Non-2xx|Socket errors/{printf "%s ", $0}' "$f"); load=$(cut -d' ' -f1 /proc/loadavg)
  local pcpu; pcpu=$(echo "($p1-$p0)/$TCK" | bc -l)
  printf "%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\twrk %s\t%s\n" "$label" "$who" "${rps:-0}" "$p50" "$p99" "$pcpu" "$(awk '{printf "%.2f",$1+$2}' "$f.time")" "$q" "$load" "$*" "${reqs:-0}" >> "$OUT"
  printf "  %-16s %-8s %10s req/s  p50 %6s ms  p99 %6s ms  proxy %5.2f CPU-s  %s\n" "$label" "$who" "${rps:-0}" "$p50" "$p99" "$pcpu" "$errs"
}

# stime LABEL WHO host:port : 4 parallel `openssl s_time -new` (full handshakes), conn/s
stime() {
  local label=$1 who=$2 hp=$3 q; q=$(quiet_gate)
  local p0 p1 t0 t1 c; p0=$(cputicks $PROXY_PID); t0=$(date +%s.%N)
  local pids=()
  for j in 1 2 3 4; do timeout 30 openssl s_time -connect "$hp" -new -time 10 > "$W/$label.$who.c$j.txt" 2>&1 & pids+=($!); done
  wait "${pids[@]}"
  t1=$(date +%s.%N); p1=$(cputicks $PROXY_PID)
  c=$(cat "$W/$label.$who".c*.txt | grep -E "connections in .* real seconds" | awk '{s+=$1} END {print s+0}')
  local cps; cps=$(echo "$c/($t1-$t0)" | bc -l)
  local ms; ms=$(echo "($p1-$p0)/$TCK*1000/($c+0.0001)" | bc -l)
  printf "%s\t%s\t%.1f\t-\t-\t%.2f\t-\t%s\t%s\t4 x openssl s_time -connect %s -new -time 10\t%s\n" "$label" "$who" "$cps" "$(echo "($p1-$p0)/$TCK" | bc -l)" "$q" "$(cut -d' ' -f1 /proc/loadavg)" "$hp" "$c" >> "$OUT"
  printf "  %-16s %-8s %10.1f full handshakes/s  proxy %.3f ms CPU per handshake\n" "$label" "$who" "$cps" "$ms"
}

warm() { wrk -t1 -c50 -d2s "$@" > /dev/null 2>&1; }

# pair LABEL MODE PATH-ON-PROXY wrk-args... : N alternating runs haproxy / nubis
pair() {
  local label=$1 mode=$2 scheme=$3 port=$4; shift 4
  for i in $(seq 1 "$N"); do
    for who in haproxy nubis; do
      if [ $who = haproxy ]; then start_haproxy "$mode"; host=127.0.0.2; else start_nubis; host=$NB_HOST; fi
      warm "$@" "$scheme://$host:$port/"
      run "$label" $who "$@" "$scheme://$host:$port/"
      stop_pid "$PROXY_PID"; PROXY_PID=; sleep 1
    done
  done
}

rss_kb() { awk '/VmRSS/{print $2}' /proc/$1/status; }
idle_memory() {  # WHO HOST PORT : RSS growth for IDLE_CONNS idle connections (connected; then after one request each)
  local who=$1 host=$2 port=$3
  python3 - "$host" "$port" "$IDLE_CONNS" "$PROXY_PID" "$who" >> "$W/memory.txt" <<'PY'
import socket, sys, time
host, port, n, pid, who = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
def rss():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return int(l.split()[1])
time.sleep(0.5); r0 = rss(); socks = []
for i in range(n):
    s = socket.socket(); s.connect((host, port)); socks.append(s)
time.sleep(1.0); r1 = rss()
for s in socks: s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
for s in socks:
    d = b""
    while not d.endswith(b"ok\n"): d += s.recv(4096)
time.sleep(1.0); r2 = rss()
print(f"{who}\t{n}\t{r0}\t{r1}\t{r2}\t{(r1-r0)*1024/n:.0f}\t{(r2-r0)*1024/n:.0f}")
for s in socks: s.close()
PY
  tail -1 "$W/memory.txt" | awk -F'\t' '{printf "  memory %-8s %s idle conns: +%s B/conn connected, +%s B/conn after one keep-alive request (RSS %s -> %s -> %s KiB)\n", $1, $2, $6, $7, $3, $4, $5}'
}

# ------------------------------------------------------------------ run
echo "nubis LB bench: N=$N D=$D NT=$NT, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(haproxy -v | head -1)"
start_backend || exit 1
[ -n "${APPEND:-}" ] || : > "$W/memory.txt"
for s in $SCENARIOS; do case $s in
  direct)
    warm http://$BE1/
    for c in 50 200; do for i in $(seq 1 "$N"); do run direct-c$c direct -t1 -c$c -d$D --latency http://$BE1/; done; done ;;
  http) for c in 50 200; do pair http-c$c http http 18081 -t1 -c$c -d$D --latency; done ;;
  tcp)  for c in 50 200; do pair tcp-c$c tcp http 18083 -t1 -c$c -d$D --latency; done ;;
  https)
    pair https-ka-c50 https https 18443 -t1 -c50 -d$D --latency
    pair https-new-c50 https https 18443 -t1 -c50 -d$D --latency -H 'Connection: close' ;;
  handshakes)
    for i in $(seq 1 "$N"); do for cert in rsa2048 p256; do for who in haproxy nubis; do
      port=18443; cfg=https; [ $cert = p256 ] && { port=18444; cfg=https-p256; }
      if [ $who = haproxy ]; then start_haproxy $cfg; hp=127.0.0.2:$port; else start_nubis; hp=$NB_HOST:$port; fi
      stime tls-full-$cert-p4 $who $hp; stop_pid "$PROXY_PID"; PROXY_PID=; sleep 1
    done; done; done ;;
  memory)
    start_haproxy http; idle_memory haproxy 127.0.0.2 18081; stop_pid "$PROXY_PID"; PROXY_PID=; sleep 1
    start_nubis; idle_memory nubis $NB_HOST 18081; stop_pid "$PROXY_PID"; PROXY_PID=; sleep 1 ;;
esac; done
stop_pid "$BACKEND_PID"; BACKEND_PID=

python3 "$HERE/report.py" "$OUT" "$W/memory.txt" "$HERE/results.md" "N=$N D=$D NT=$NT"
python3 "$HERE/../splice.py" lb "$HERE/results.md"
